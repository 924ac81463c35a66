// SPDX-License-Identifier: GPL-2.0
#include "impls/registry.h"

#include "common/clocks.h"

#include <string.h>

#define CLOCK_NAME(name, id, kind, base, label, short, abbrev) [id] = name,

/* every uapi clock id's name: the clock table's, and the CPU-time clocks */
static const char *const clock_names[MAX_CLOCKS] = {
	[CLOCK_PROCESS_CPUTIME_ID] = "process_cputime",
	[CLOCK_THREAD_CPUTIME_ID] = "thread_cputime",
	SUITE_CLOCKS(CLOCK_NAME) OTHER_CLOCKS(CLOCK_NAME)
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
