// SPDX-License-Identifier: GPL-2.0
/*
 * generic_6_10: the generic vDSO of v6.10..v6.14. x86 selects
 * CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT from v6.10: struct vdso_data
 * grows u64 max_cycles after cycle_last, so basetime starts at 40 and
 * basetime[CLOCK_MONOTONIC] is 56..71, straddling lines 0 and 1 as seed
 * 000's v3 did in 2019. A delta above max_cycles takes a 128-bit
 * multiply. arm64 does not select it: there the data is v5.3's, MONOTONIC
 * at 48..63. lib/vdso/gettimeofday.c and arch/x86/include/asm/vdso/
 * gettimeofday.h (arch/arm64/... on arm64) @ v6.10; time namespaces
 * (CONFIG_TIME_NS) are not modelled here, generic_timens carries them.
 * generic_6_15 and generic_6_17 are the layouts after it.
 */
#define VDSO_KERNEL_VERSION KERNEL_VERSION(6, 10, 0)
/* x86 selects it (arch/x86/Kconfig, v6.10 on); arm64 does not */
#if defined(__x86_64__) || defined(__i386__)
#define CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT 1
#endif

#include "impls/common/variant_prelude.h"

#include "impls/layouts/generic_datapage.h"
#include "impls/layouts/lib_vdso_v6_10.h"
#include "impls/layouts/vclock_gettime.h"

#ifdef CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
#define GENERIC_6_10_CONFIG "(CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT=y)"
#define GENERIC_6_10_SUMMARY "v6.10..v6.14: max_cycles; MONOTONIC straddles a cache line"
#else
/* arm64: v5.3's struct vdso_data again, read through arm64's v6.10 hooks */
#define GENERIC_6_10_CONFIG "(no CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT on arm64)"
#define GENERIC_6_10_SUMMARY "v6.10..v6.14: no max_cycles on arm64; MONOTONIC in line 0"
#endif

VDSO_VARIANT_DEFINE(GENERIC_VARIANT_COMMON,
		    .source = "lib/vdso/gettimeofday.c, "
			      "include/vdso/datapage.h @ v6.10 "
			      GENERIC_6_10_CONFIG,
		    .summary = GENERIC_6_10_SUMMARY);
