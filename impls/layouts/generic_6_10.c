// SPDX-License-Identifier: GPL-2.0
/*
 * generic_6_10: the generic vDSO of v6.10..v6.14. x86 selects
 * CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT from v6.10: struct vdso_data
 * grows u64 max_cycles after cycle_last, so basetime starts at 40 and
 * basetime[CLOCK_MONOTONIC] is 56..71, straddling lines 0 and 1 as seed
 * 000's v3 did in 2019. A delta above max_cycles takes a 128-bit
 * multiply. lib/vdso/gettimeofday.c and arch/x86/include/asm/vdso/
 * gettimeofday.h @ v6.10; time namespaces (CONFIG_TIME_NS) are not
 * modelled here, generic_timens carries them. generic_6_15 and
 * generic_6_17 are the layouts after it.
 */
#define VDSO_KERNEL_VERSION KERNEL_VERSION(6, 10, 0)
#define CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT 1

#include "impls/common/variant_prelude.h"

#include "impls/layouts/generic_datapage.h"
#include "impls/layouts/lib_vdso.h"
#include "impls/layouts/vclock_gettime.h"

VDSO_VARIANT_DEFINE(GENERIC_VARIANT_COMMON,
		    .source = "lib/vdso/gettimeofday.c, "
			      "include/vdso/datapage.h @ v6.10 "
			      "(CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT=y)",
		    .summary = "v6.10..v6.14: max_cycles; MONOTONIC "
			       "straddles a cache line");
