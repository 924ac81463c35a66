// SPDX-License-Identifier: GPL-2.0
/*
 * generic_6_17: today's generic vDSO (v6.17 on; the running 6.18 has it).
 * v6.17 added the auxiliary clocks (tglx, Thomas Weißschuh: "timekeeping:
 * Provide auxiliary clocks", "vdso/gettimeofday: Add support for
 * auxiliary clocks"): clock ids CLOCK_AUX + 0..7 (16..23), each an
 * independent timekeeper enabled through sysfs, set with clock_settime()
 * and steered with clock_adjtime(), published into struct vdso_clock
 * aux_clock_data[MAX_AUX_CLOCKS] after clock_data[], each with its own
 * seqcount, read by do_aux(). A disabled one has clock_mode NONE: the
 * fallback's -ENODEV. tz moves to 2320, line 36.
 *
 *	lib/vdso/gettimeofday.c @ v6.17 (impls/layouts/lib_vdso_v6_17.h)
 *	include/vdso/datapage.h, helpers.h, auxclock.h @ v6.17
 *	kernel/time/vsyscall.c @ v6.17 (update_vsyscall(),
 *	vdso_time_update_aux())
 *	kernel/time/timekeeping.c @ v6.17 (the aux timekeepers:
 *	impls/kernel/timekeeper.c, sim_kernel.c)
 *	arch/x86/include/asm/vdso/gettimeofday.h @ v6.17
 */
#define VDSO_KERNEL_VERSION KERNEL_VERSION(6, 17, 0)
/* x86 selects it (arch/x86/Kconfig, v6.10 on); arm64 does not */
#if defined(__x86_64__) || defined(__i386__)
#define CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT 1
#endif
#define CONFIG_GENERIC_VDSO_DATA_STORE 1
#define CONFIG_POSIX_AUX_CLOCKS 1

#include "impls/common/variant_prelude.h"

#include "impls/layouts/generic_time_data.h"
#include "impls/layouts/lib_vdso_v6_17.h"
#include "impls/layouts/vclock_gettime.h"

VDSO_VARIANT_DEFINE(GENERIC_TIME_VARIANT_COMMON,
		    .source = "lib/vdso/gettimeofday.c, "
			      "include/vdso/datapage.h, "
			      "kernel/time/vsyscall.c, "
			      "kernel/time/timekeeping.c @ v6.17",
		    .summary = "v6.17 (today): vdso_time_data plus "
			       "aux_clock_data[8] for CLOCK_AUX..+7, each with "
			       "its own seq");
