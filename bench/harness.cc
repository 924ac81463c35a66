// SPDX-License-Identifier: GPL-2.0
#include "bench/harness.h"
#include "bench/prepared_run.h"

extern "C" {
#include "bench/cpu_lock.h"
#include "bench/pin.h"
#include "counters/perf_counters.h"
#include "impls/kernel/sim_kernel.h"
}

harness_context &harness()
{
	static harness_context ctx;

	return ctx;
}

int harness_bind(int cpu)
{
	harness_context &ctx = harness();

	return ctx.pinned ? pin_bind_thread(ctx.topo, cpu) : 0;
}

void harness_teardown()
{
	harness_context &ctx = harness();

	sim_kernel_detach_all();
	for (auto *l : ctx.cpu_locks)
		cpu_lock_release(l);
	ctx.cpu_locks.clear();
	if (ctx.group)
		pc_group_destroy(ctx.group);
	if (ctx.topo)
		pin_topology_destroy(ctx.topo);
	run_buffers_free();
}
