// SPDX-License-Identifier: GPL-2.0
/*
 * generic_6_10: today's upstream layout. x86 selects
 * CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT from v6.10: struct vdso_data grows
 * u64 max_cycles after cycle_last, so basetime starts at 40 and
 * basetime[CLOCK_MONOTONIC] is 56..71, straddling lines 0 and 1 as seed
 * 000's v3 did in 2019. A delta above max_cycles takes a 128-bit
 * multiply. lib/vdso/gettimeofday.c and arch/x86/include/asm/vdso/
 * gettimeofday.h @ v6.10; time namespaces (CONFIG_TIME_NS) are not
 * modelled here, generic_timens carries them.
 */
#include "impls/common/variant_prelude.h"

#define CONFIG_TIME_NS 0
#define CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT 1

#include "impls/layouts/generic_datapage.h"
#include "impls/layouts/lib_vdso.h"

VDSO_VARIANT_DEFINE(GENERIC_VARIANT_COMMON,
		    .source = "lib/vdso/gettimeofday.c, "
			      "include/vdso/datapage.h @ v6.10 "
			      "(CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT=y)",
		    .summary = "upstream today: max_cycles; MONOTONIC "
			       "straddles a cache line");
