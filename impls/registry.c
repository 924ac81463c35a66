// SPDX-License-Identifier: GPL-2.0
#include "impls/registry.h"

#include <string.h>

static const char *const clock_names[MAX_CLOCKS] = {
	[CLOCK_REALTIME] = "realtime",
	[CLOCK_MONOTONIC] = "monotonic",
	[CLOCK_PROCESS_CPUTIME_ID] = "process_cputime",
	[CLOCK_THREAD_CPUTIME_ID] = "thread_cputime",
	[CLOCK_MONOTONIC_RAW] = "monotonic_raw",
	[CLOCK_REALTIME_COARSE] = "realtime_coarse",
	[CLOCK_MONOTONIC_COARSE] = "monotonic_coarse",
	[CLOCK_BOOTTIME] = "boottime",
	[CLOCK_REALTIME_ALARM] = "realtime_alarm",
	[CLOCK_BOOTTIME_ALARM] = "boottime_alarm",
	[CLOCK_TAI] = "tai",
};

const struct vdso_variant *vdso_variant_find(const char *name)
{
	for (unsigned int i = 0; i < vdso_variants_nr; i++)
		if (!strcmp(vdso_variants[i]->name, name))
			return vdso_variants[i];
	return NULL;
}

const char *vdso_clock_name(clockid_t clk)
{
	if (clk < 0 || clk >= MAX_CLOCKS)
		return NULL;
	return clock_names[clk];
}

clockid_t vdso_clock_by_name(const char *name)
{
	for (clockid_t clk = 0; clk < MAX_CLOCKS; clk++)
		if (clock_names[clk] && !strcmp(clock_names[clk], name))
			return clk;
	return -1;
}
