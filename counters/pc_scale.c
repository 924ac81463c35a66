// SPDX-License-Identifier: GPL-2.0
/*
 * pc_scale() of perf_counters.h, alone: both builds of the counters (with
 * libpfm4, perf_counters.c; without, perf_counters_none.c) share it.
 */
#include "counters/perf_counters.h"

double pc_scale(uint64_t count, uint64_t enabled, uint64_t running)
{
	if (!running)
		return 0;
	if (running >= enabled)
		return (double)count;
	/* in double: count * enabled may not fit in 64 bits */
	return (double)count * ((double)enabled / (double)running);
}
