// SPDX-License-Identifier: GPL-2.0
/*
 * generic_6_15: the generic vDSO of v6.15..v6.16. v6.15 split the per-clock
 * data out of struct vdso_data ("vdso: Rework struct vdso_time_data and
 * introduce struct vdso_clock", Anna-Maria Behnsen): the page is struct
 * vdso_time_data { struct vdso_clock clock_data[CS_BASES]; tz_minuteswest,
 * tz_dsttime, hrtimer_res once after them }, and lives in the generic data
 * store. Each vdso_clock is 232 bytes with max_cycles: REALTIME 40..55,
 * MONOTONIC 56..71 (still straddling lines 0 and 1), the raw clock's at
 * 232..463, tz at 464 on line 7 (in v6.10 tz sat in vd[0], line 3).
 *
 *	lib/vdso/gettimeofday.c @ v6.15 (impls/layouts/lib_vdso_v6_15.h)
 *	include/vdso/datapage.h, include/vdso/helpers.h @ v6.15
 *	kernel/time/vsyscall.c @ v6.15 (update_vsyscall())
 *	arch/x86/include/asm/vdso/gettimeofday.h @ v6.15
 */
#define VDSO_KERNEL_VERSION KERNEL_VERSION(6, 15, 0)
/* x86 selects it (arch/x86/Kconfig, v6.10 on); arm64 does not */
#if defined(__x86_64__) || defined(__i386__)
#define CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT 1
#endif
#define CONFIG_GENERIC_VDSO_DATA_STORE 1

#include "impls/common/variant_prelude.h"

#include "impls/layouts/generic_time_data.h"
#include "impls/layouts/lib_vdso_v6_15.h"
#include "impls/layouts/vclock_gettime.h"

VDSO_VARIANT_DEFINE(GENERIC_TIME_VARIANT_COMMON,
		    .source = "lib/vdso/gettimeofday.c, "
			      "include/vdso/datapage.h, "
			      "kernel/time/vsyscall.c @ v6.15",
		    .summary = "v6.15: struct vdso_clock clock_data[] in "
			       "struct vdso_time_data; tz, hrtimer_res after "
			       "them");
