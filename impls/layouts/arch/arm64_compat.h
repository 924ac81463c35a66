/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's compat vDSO (arch/arm64/kernel/vdso32, AArch32 processes on an
 * arm64 kernel), following arch/arm64/include/asm/vdso/
 * compat_gettimeofday.h where it differs from the native vDSO's hooks
 * (arch/arm64.h, included for the rest). The data page is the native
 * vDSO's, written by arm64's update_vsyscall(): its clock mode and its
 * 56-bit VDSO_PRECISION_MASK are arm64.h's. Transcribed from Debian's 6.1
 * and 6.12 trees (vdso_data) and 7.3's (vdso_time_data, vdso_clock):
 *
 *	__arch_get_hw_counter()	0 unless the mode is
 *				VDSO_CLOCKMODE_ARCHTIMER (arm64 tests for
 *				NONE), else isb; mrrc p15, 1 (CNTVCT); isb:
 *				the counter axis, isb_mrrc_isb or fake
 *	vdso_clocksource_ok()	the mode is VDSO_CLOCKMODE_ARCHTIMER
 *	VDSO_HAS_CLOCK_GETRES	as arm64's; no time() either
 *
 * Why the compat reader tests for ARCHTIMER where arm64's tests for NONE:
 * arm64's asm/vdso/clocksource.h has a second mode,
 * VDSO_CLOCKMODE_ARCHTIMER_NOCOMPAT, for a counter 64-bit tasks may read
 * and 32-bit ones may not (the ARM64_WORKAROUND_1418040 erratum). Not
 * modelled: the simulated clocksource is vDSO-capable for both or neither,
 * so the two tests agree here.
 *
 * The 32-bit syscall fallbacks (swi #0 with __NR_compat32_*) are every
 * layout's: the simulated kernel's. __arch_get_vdso_data()'s "mov %0, %1"
 * (a relocation trick) is arm64.h's plain __vdso_data. Not followed:
 * v5.3's compat header (not among the trees here), so the v5.3 layout is
 * not built for AArch32.
 */
#ifndef VDSOBENCH_ARCH_ARM64_COMPAT_H
#define VDSOBENCH_ARCH_ARM64_COMPAT_H

#if !defined(VDSO_KERNEL_VERSION) || VDSO_KERNEL_VERSION < KERNEL_VERSION(6, 10, 0)
#error "arch/arm64_compat.h follows arm64's compat vDSO from v6.10 on"
#endif

#define VDSOBENCH_ARM64_COMPAT 1
#include "impls/layouts/arch/arm64.h"

/* vdsobench: the kernel builds without -Wunused-parameter */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

static __always_inline u64 __arch_get_hw_counter(s32 clock_mode,
						 const struct arm64_vdso_time_data *vd)
{
	u64 res;

	/*
	 * Core checks for mode already, so this raced against a concurrent
	 * update. Return something. Core will do another round and then
	 * see the mode change and fallback to the syscall.
	 */
	if (clock_mode != VDSO_CLOCKMODE_ARCHTIMER)
		return 0;

	/* vdsobench: isb(); mrrc p15, 1, %Q0, %R0, c14; isb(): the counter axis */
	res = vdso_read_cycles();

	return res;
}

#if VDSO_KERNEL_VERSION >= KERNEL_VERSION(6, 15, 0)
static inline bool vdso_clocksource_ok(const struct vdso_clock *vc)
{
	return vc->clock_mode == VDSO_CLOCKMODE_ARCHTIMER;
}
#else
static inline bool vdso_clocksource_ok(const struct vdso_data *vd)
{
	return vd->clock_mode == VDSO_CLOCKMODE_ARCHTIMER;
}
#endif
#define vdso_clocksource_ok	vdso_clocksource_ok

#pragma GCC diagnostic pop

#endif /* VDSOBENCH_ARCH_ARM64_COMPAT_H */
