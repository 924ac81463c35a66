// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <errno.h>
#include <sys/resource.h>
#include <time.h>

#include "bench/lost_cpu.h"

static int clock_ns(clockid_t clk, double *ns)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return -1;
	*ns = ts.tv_sec * 1e9 + ts.tv_nsec;
	return 0;
}

int batch_usage_now(struct batch_usage *u)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) ||
	    clock_ns(CLOCK_THREAD_CPUTIME_ID, &u->cpu_ns) ||
	    clock_ns(CLOCK_MONOTONIC, &u->wall_ns))
		return -1;
	u->nivcsw = ru.ru_nivcsw;
	return 0;
}

struct batch_loss batch_lost_cpu(const struct batch_usage *a,
				 const struct batch_usage *b)
{
	struct batch_loss l = {1.0, b->nivcsw - a->nivcsw, false};
	double wall = b->wall_ns - a->wall_ns, cpu = b->cpu_ns - a->cpu_ns;

	if (wall <= 0)
		return l;
	/* the samples are taken one after the other: cpu can exceed wall */
	l.share = cpu < wall ? (cpu > 0 ? cpu / wall : 0) : 1.0;
	l.lost = l.share < LOST_CPU_MIN_SHARE;
	return l;
}
