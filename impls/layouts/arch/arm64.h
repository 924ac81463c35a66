/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's hooks, following arch/arm64/include/asm/vdso/gettimeofday.h and
 * arch/arm64/include/asm/vdso/vsyscall.h of the version a layout cites
 * (VDSO_KERNEL_VERSION):
 *
 *	v5.3	28b1a824a4f4 ("arm64: vdso: Substitute gettimeofday() with C
 *		implementation") with 27e11a9fe2e2 ("arm64: Fix
 *		__arch_get_hw_counter() implementation"): the clock mode is
 *		use_syscall, 0 when the clocksource is vdso_direct;
 *		__arch_get_hw_counter(clock_mode) returns __VDSO_USE_SYSCALL
 *		(ULLONG_MAX: negative as s64, so do_hres() falls back) unless
 *		it is 0, else isb; mrs cntvct_el0; isb. update_vsyscall()
 *		updates the hres part only when __arch_use_vsyscall() (clock
 *		mode 0), and __arch_update_vsyscall() sets both masks to
 *		VDSO_PRECISION_MASK.
 *	v6.10	5e3c6a312a09 (v5.7): the generic clock mode,
 *		VDSO_CLOCKMODE_ARCHTIMER, and 0 returned for
 *		VDSO_CLOCKMODE_NONE (the core checked the mode already: this
 *		raced with an update, and the next round falls back);
 *		77ec462536a1 (v5.13): the trailing ISB replaced by
 *		arch_counter_enforce_ordering()'s fake address dependency;
 *		9025cebf12d1 (v6.1): the ARM64_HAS_ECV alternative,
 *		"nop; mrs CNTVCTSS_EL0"; __arch_update_vsyscall(vdata, tk)
 *		still sets VDSO_PRECISION_MASK.
 *	v6.15	the same read on struct vdso_time_data, its data from the
 *		generic data store's accessor (4 KiB pages: arm64's
 *		GCC + 64 KiB-page workaround does not apply);
 *		__arch_update_vsyscall(vdata) sets the masks of clock_data[].
 *	v6.17	00b39d150986 (v6.16): __arch_counter_get_cntvct(), the same
 *		instructions (without the "memory" clobber);
 *		__arch_update_vdso_clock(vc) sets one clock's mask, the
 *		auxiliary clocks' too.
 *
 * The counter read is the variant's counter axis, vdso_read_cycles():
 * isb_cntvct_isb is v5.3's sequence, isb_cntvct_dep v5.13's without
 * FEAT_ECV, cntvctss the ECV alternative (the kernel patches in one of
 * the last two at boot; a variant is built with one). The delta is the
 * generic code's, masked, ((cycles - cycle_last) & mask) * mult with the
 * mask VDSO_PRECISION_MASK: none of x86's clamp of a counter behind
 * cycle_last (the architected counter is the same on every CPU) and no
 * max_cycles (only x86 selects CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT).
 * arm64's vDSO has no time() (VDSO_HAS_TIME is not defined).
 *
 * Deliberate deviations are marked "vdsobench:". Not modelled: the
 * timer errata that clear vdso_direct / set VDSO_CLOCKMODE_NONE on
 * affected CPUs (a clocksource here is vDSO-capable or not) and 64 KiB
 * pages. The compat (AArch32) vDSO's reader is arch/arm64_compat.h's, on
 * this header's update side.
 */
#ifndef VDSOBENCH_ARCH_ARM64_H
#define VDSOBENCH_ARCH_ARM64_H

#if !defined(VDSO_KERNEL_VERSION) ||                                     \
	(VDSO_KERNEL_VERSION != KERNEL_VERSION(5, 3, 0) &&               \
	 VDSO_KERNEL_VERSION < KERNEL_VERSION(6, 10, 0))
#error "arch/arm64.h follows arm64 at v5.3 and from v6.10 on"
#endif

#ifdef CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
#error "arm64 does not select CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT: the layout must not set it"
#endif

/* vdsobench: the kernel builds without -Wunused-parameter */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* arch/arm64/include/asm/vdso/vsyscall.h: 56 bits of the counter */
#define VDSO_PRECISION_MASK	~(0xFF00ULL<<48)

#define VDSO_HAS_CLOCK_GETRES		1

/*
 * vdsobench: the clocksource's vDSO clock mode, from the simulated one:
 * arm_arch_timer.c's arch_sys_counter is the only clocksource arm64's
 * vDSO reads, and it is at least 56 bits wide (update_vsyscall() writes
 * VDSO_PRECISION_MASK over its mask, so a narrower counter would wrap
 * wrongly in userspace): a narrower one never had the mode, its readers
 * fall back, as on x86.
 */
static __always_inline bool arm64_vdso_direct(const struct timekeeper *tk)
{
	return tk->vdso_capable && tk->tkr_mono.mask >= VDSO_PRECISION_MASK;
}

#if VDSO_KERNEL_VERSION < KERNEL_VERSION(6, 10, 0) /* v5.3 */

#define __VDSO_USE_SYSCALL		ULLONG_MAX

static __always_inline u64 __arch_get_hw_counter(s32 clock_mode)
{
	u64 res;

	/*
	 * clock_mode == 0 implies that vDSO are enabled otherwise
	 * fallback on syscall.
	 */
	if (clock_mode)
		return __VDSO_USE_SYSCALL;

	/* vdsobench: isb(); mrs cntvct_el0; isb(): the counter axis */
	res = vdso_read_cycles();

	return res;
}

static __always_inline
const struct vdso_data *__arch_get_vdso_data(void)
{
	return __vdso_data;
}

/* vsyscall.h */
static __always_inline
int __arm64_get_clock_mode(const struct timekeeper *tk)
{
	/* vdsobench: archdata.vdso_direct is arm64_vdso_direct() */
	u32 use_syscall = !arm64_vdso_direct(tk);

	return use_syscall;
}
#define __arch_get_clock_mode __arm64_get_clock_mode

static __always_inline
int __arm64_use_vsyscall(struct vdso_data *vdata)
{
	return !vdata[CS_HRES_COARSE].clock_mode;
}
#define __arch_use_vsyscall __arm64_use_vsyscall

static __always_inline
void __arm64_update_vsyscall(struct vdso_data *vdata, const struct timekeeper *tk)
{
	vdata[CS_HRES_COARSE].mask	= VDSO_PRECISION_MASK;
	vdata[CS_RAW].mask		= VDSO_PRECISION_MASK;
}
#define __arch_update_vsyscall __arm64_update_vsyscall

#else /* v6.10 and later */

/* vdsobench: the simulator's one mode for a counter the vDSO reads */
#define VDSO_CLOCKMODE_ARCHTIMER VDSO_CLOCKMODE_TSC

#if VDSO_KERNEL_VERSION >= KERNEL_VERSION(6, 15, 0)
/* vdsobench: one body for both: v6.15 renamed the type the hook takes */
#define arm64_vdso_time_data vdso_time_data
#else
#define arm64_vdso_time_data vdso_data
#endif

#if defined(VDSOBENCH_ARM64_COMPAT)
/* arch/arm64_compat.h: compat_gettimeofday.h's read instead */
#elif VDSO_KERNEL_VERSION >= KERNEL_VERSION(6, 16, 0)
static __always_inline u64 __arch_get_hw_counter(s32 clock_mode,
						 const struct vdso_time_data *vd)
{
	/*
	 * Core checks for mode already, so this raced against a concurrent
	 * update. Return something. Core will do another round and then
	 * see the mode change and fallback to the syscall.
	 */
	if (clock_mode == VDSO_CLOCKMODE_NONE)
		return 0;

	/* vdsobench: __arch_counter_get_cntvct(): the counter axis */
	return vdso_read_cycles();
}
#else
static __always_inline u64 __arch_get_hw_counter(s32 clock_mode,
						 const struct arm64_vdso_time_data *vd)
{
	u64 res;

	/*
	 * Core checks for mode already, so this raced against a concurrent
	 * update. Return something. Core will do another round and then
	 * see the mode change and fallback to the syscall.
	 */
	if (clock_mode == VDSO_CLOCKMODE_NONE)
		return 0;

	/*
	 * If FEAT_ECV is available, use the self-synchronizing counter.
	 * Otherwise the isb is required to prevent that the counter value
	 * is speculated.
	 */
	/*
	 * vdsobench: the ALTERNATIVE("isb; mrs cntvct_el0", "nop; mrs
	 * CNTVCTSS_EL0", ARM64_HAS_ECV) and arch_counter_enforce_ordering()
	 * after it: the counter axis
	 */
	res = vdso_read_cycles();

	return res;
}
#endif

#if VDSO_KERNEL_VERSION < KERNEL_VERSION(6, 15, 0)
static __always_inline
const struct vdso_data *__arch_get_vdso_data(void)
{
	return __vdso_data;
}

#ifdef CONFIG_TIME_NS
static __always_inline
const struct vdso_data *__arch_get_timens_vdso_data(const struct vdso_data *vd)
{
	return __timens_vdso_data;
}
#endif
#endif

/*
 * vsyscall.h; vdsobench: the generic clock mode
 * (tk->tkr_mono.clock->vdso_clock_mode) of the simulated clocksource
 */
static __always_inline s32 __arch_get_clock_mode(const struct timekeeper *tk)
{
	return arm64_vdso_direct(tk) ? VDSO_CLOCKMODE_ARCHTIMER :
				       VDSO_CLOCKMODE_NONE;
}
#define __arch_get_clock_mode __arch_get_clock_mode

#if VDSO_KERNEL_VERSION >= KERNEL_VERSION(6, 17, 0)
/*
 * Update the vDSO data page to keep in sync with kernel timekeeping.
 */
static __always_inline
void __arch_update_vdso_clock(struct vdso_clock *vc)
{
	vc->mask	= VDSO_PRECISION_MASK;
}
#define __arch_update_vdso_clock __arch_update_vdso_clock
#elif VDSO_KERNEL_VERSION >= KERNEL_VERSION(6, 15, 0)
/*
 * Update the vDSO data page to keep in sync with kernel timekeeping.
 */
static __always_inline
void __arm64_update_vsyscall(struct vdso_time_data *vdata)
{
	vdata->clock_data[CS_HRES_COARSE].mask	= VDSO_PRECISION_MASK;
	vdata->clock_data[CS_RAW].mask		= VDSO_PRECISION_MASK;
}
#define __arch_update_vsyscall __arm64_update_vsyscall
#else
/*
 * Update the vDSO data page to keep in sync with kernel timekeeping.
 */
static __always_inline
void __arm64_update_vsyscall(struct vdso_data *vdata, const struct timekeeper *tk)
{
	vdata[CS_HRES_COARSE].mask	= VDSO_PRECISION_MASK;
	vdata[CS_RAW].mask		= VDSO_PRECISION_MASK;
}
#define __arch_update_vsyscall __arm64_update_vsyscall
#endif

#endif /* v6.10 and later */

#pragma GCC diagnostic pop

#endif /* VDSOBENCH_ARCH_ARM64_H */
