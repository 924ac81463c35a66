// SPDX-License-Identifier: GPL-2.0
/*
 * The lost-CPU decision on made-up samples: nothing here is timed or read
 * from this machine.
 */
#include <math.h>

#include "bench/lost_cpu.h"
#include "testing/tap.h"

/* a batch of wall_ms, of which the thread ran cpu_ms, with switches */
static struct batch_loss batch(double wall_ms, double cpu_ms, long switches)
{
	const struct batch_usage a = {7, 5e9, 1e12};
	const struct batch_usage b = {7 + switches, 5e9 + cpu_ms * 1e6,
				      1e12 + wall_ms * 1e6};

	return batch_lost_cpu(&a, &b);
}

static void expect(double wall_ms, double cpu_ms, long switches, bool lost,
		   double share, const char *what)
{
	struct batch_loss l = batch(wall_ms, cpu_ms, switches);

	tap_ok(l.lost == lost && fabs(l.share - share) < 1e-9 &&
		       l.switches == switches,
	       "%s: %s (share %.4f, %ld switches)", what,
	       lost ? "lost the CPU" : "kept it", l.share, l.switches);
}

int main(void)
{
	expect(10, 10, 0, false, 1.0, "ran the whole batch");
	expect(10, 5, 3, true, 0.5,
	       "a busy loop on the CPU took half of it in three slices");
	expect(10, 9.9, 1, false, 0.99,
	       "a kworker preempted it for 0.1 ms: 1% is no loss");
	expect(10, 9.7, 0, true, 0.97,
	       "3% gone without a switch (a hypervisor's steal): lost");
	expect(10, 9.8, 1, false, 0.98,
	       "exactly the minimum share is kept");
	expect(10, 10.001, 0, false, 1.0,
	       "CPU time read after the wall time can exceed it: share 1");
	expect(0, 0, 0, false, 1.0, "a batch of no time lost nothing");
	expect(-1, 0, 0, false, 1.0, "samples out of order lost nothing");
	expect(10, 0, 12, true, 0.0, "never ran: share 0");
	tap_ok(LOST_CPU_RETRIES >= 1 && LOST_CPU_MIN_SHARE < 1,
	       "a lost batch is retried, and a share below 1 is allowed");
	return tap_done();
}
