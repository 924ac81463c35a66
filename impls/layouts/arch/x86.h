/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86's hooks, following arch/x86/include/asm/vdso/gettimeofday.h and
 * arch/x86/include/asm/vdso/vsyscall.h of the version a layout cites
 * (VDSO_KERNEL_VERSION):
 *
 *	v5.3	the first x86 port of the generic vDSO: the counter read
 *		unmasked, __arch_get_hw_counter(clock_mode), and
 *		vdso_calc_delta() clamping a counter behind cycle_last to a
 *		zero delta (TSC skew between sockets)
 *	v6.10	the counter read masked with S64_MAX (v6.8: the sign bit is
 *		the invalid marker of pvclock/hvclock), vdso_clocksource_ok()
 *		always true (an invalid mode reads U64_MAX, which
 *		vdso_cycles_ok() refuses) and vdso_calc_ns() with the
 *		max_cycles check of CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
 *	v6.15+	the same on struct vdso_clock / struct vdso_time_data (v6.15
 *		split the per-clock data out); the generic data store's
 *		accessors replace __arch_get_vdso_data()
 *
 * With the pvclock read of CONFIG_PARAVIRT_CLOCK (arch/x86_pvclock.h) and
 * the Hyper-V TSC page read of CONFIG_HYPERV_TIMER (arch/x86_hvclock.h),
 * which the simulated host serves when verify runs in their modes.
 * Deliberate deviations are marked "vdsobench:". Not modelled: the
 * 32-bit compat vDSO.
 *
 * The data page header that includes this defines first: struct vdso_data
 * or struct vdso_time_data, and up to v6.14 __vdso_data (and with
 * CONFIG_TIME_NS __timens_vdso_data), as x86's VVAR() did.
 */
#ifndef VDSOBENCH_ARCH_X86_H
#define VDSOBENCH_ARCH_X86_H

#if !defined(VDSO_KERNEL_VERSION) ||                                     \
	(VDSO_KERNEL_VERSION != KERNEL_VERSION(5, 3, 0) &&               \
	 VDSO_KERNEL_VERSION < KERNEL_VERSION(6, 10, 0))
#error "arch/x86.h follows x86 at v5.3 and from v6.10 on"
#endif

/* vdsobench: the kernel builds without -Wunused-parameter */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* vdsobench: rdtsc_ordered() is the variant's counter axis */
#define rdtsc_ordered() vdso_read_cycles()

#include "impls/layouts/arch/x86_hvclock.h"
#include "impls/layouts/arch/x86_pvclock.h"

#define VDSO_HAS_TIME 1

#define VDSO_HAS_CLOCK_GETRES 1

#if VDSO_KERNEL_VERSION < KERNEL_VERSION(6, 10, 0) /* v5.3 */

#define VCLOCK_NONE VDSO_CLOCKMODE_NONE
#define VCLOCK_TSC VDSO_CLOCKMODE_TSC
#define VCLOCK_PVCLOCK VDSO_CLOCKMODE_PVCLOCK
#define VCLOCK_HVCLOCK VDSO_CLOCKMODE_HVCLOCK

static inline u64 __arch_get_hw_counter(s32 clock_mode)
{
	if (clock_mode == VCLOCK_TSC)
		return (u64)rdtsc_ordered();
	/*
	 * For any memory-mapped vclock type, we need to make sure that gcc
	 * doesn't cleverly hoist a load before the mode check.  Otherwise we
	 * might end up touching the memory-mapped page even if the vclock in
	 * question isn't enabled, which will segfault.  Hence the barriers.
	 */
	if (clock_mode == VCLOCK_PVCLOCK) {
		barrier();
		return vread_pvclock();
	}
	if (clock_mode == VCLOCK_HVCLOCK) {
		barrier();
		return vread_hvclock();
	}
	return U64_MAX;
}

static __always_inline const struct vdso_data *__arch_get_vdso_data(void)
{
	return __vdso_data;
}

/*
 * x86 specific delta calculation.
 *
 * The regular implementation assumes that clocksource reads are globally
 * monotonic. The TSC can be slightly off across sockets which can cause
 * the regular delta calculation (@cycles - @last) to return a huge time
 * jump.
 *
 * Therefore it needs to be verified that @cycles are greater than
 * @last. If not then use @last, which is the base time of the current
 * conversion period.
 *
 * This variant also removes the masking of the subtraction because the
 * clocksource mask of all VDSO capable clocksources on x86 is U64_MAX
 * which would result in a pointless operation. The compiler cannot
 * optimize it away as the mask comes from the vdso data and is not compile
 * time constant.
 */
static __always_inline
u64 vdso_calc_delta(u64 cycles, u64 last, u64 mask, u32 mult)
{
	if (cycles > last)
		return (cycles - last) * mult;
	return 0;
}
#define vdso_calc_delta vdso_calc_delta

#else /* v6.10 and later */

#if VDSO_KERNEL_VERSION >= KERNEL_VERSION(6, 15, 0)
/* vdsobench: one body for both: v6.15 renamed the types the hooks take */
#define x86_vdso_clock vdso_clock
#define x86_vdso_time_data vdso_time_data
#else
#define x86_vdso_clock vdso_data
#define x86_vdso_time_data vdso_data
#endif

#if defined(CONFIG_TIME_NS) && VDSO_KERNEL_VERSION < KERNEL_VERSION(6, 15, 0)
static __always_inline
const struct vdso_data *__arch_get_timens_vdso_data(const struct vdso_data *vd)
{
	return __timens_vdso_data;
}
#endif

static inline u64 __arch_get_hw_counter(s32 clock_mode,
					const struct x86_vdso_time_data *vd)
{
	if (likely(clock_mode == VDSO_CLOCKMODE_TSC))
		return (u64)rdtsc_ordered() & S64_MAX;
	/*
	 * For any memory-mapped vclock type, we need to make sure that gcc
	 * doesn't cleverly hoist a load before the mode check.  Otherwise we
	 * might end up touching the memory-mapped page even if the vclock in
	 * question isn't enabled, which will segfault.  Hence the barriers.
	 */
	if (clock_mode == VDSO_CLOCKMODE_PVCLOCK) {
		barrier();
		return vread_pvclock();
	}
	if (clock_mode == VDSO_CLOCKMODE_HVCLOCK) {
		barrier();
		return vread_hvclock();
	}
	return U64_MAX;
}

#if VDSO_KERNEL_VERSION < KERNEL_VERSION(6, 15, 0)
static __always_inline const struct vdso_data *__arch_get_vdso_data(void)
{
	return __vdso_data;
}
#endif

static inline bool arch_vdso_clocksource_ok(const struct x86_vdso_clock *vd)
{
	return true;
}
#define vdso_clocksource_ok arch_vdso_clocksource_ok

/*
 * Clocksource read value validation to handle PV and HyperV clocksources
 * which can be invalidated asynchronously and indicate invalidation by
 * returning U64_MAX, which can be effectively tested by checking for a
 * negative value after casting it to s64.
 *
 * This effectively forces a S64_MAX mask on the calculations, unlike the
 * U64_MAX mask normally used by x86 clocksources.
 */
static inline bool arch_vdso_cycles_ok(u64 cycles)
{
	return (s64)cycles >= 0;
}
#define vdso_cycles_ok arch_vdso_cycles_ok

/*
 * x86 specific calculation of nanoseconds for the current cycle count
 *
 * The regular implementation assumes that clocksource reads are globally
 * monotonic. The TSC can be slightly off across sockets which can cause
 * the regular delta calculation (@cycles - @last) to return a huge time
 * jump.
 *
 * Therefore it needs to be verified that @cycles are greater than
 * @vd->cycles_last. If not then use @vd->cycles_last, which is the base
 * time of the current conversion period.
 *
 * This variant also uses a custom mask because while the clocksource mask of
 * all the VDSO capable clocksources on x86 is U64_MAX, the above code uses
 * U64_MASK as an exception value, additionally arch_vdso_cycles_ok() above
 * declares everything with the MSB/Sign-bit set as invalid. Therefore the
 * effective mask is S64_MAX.
 */
#ifdef CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
static __always_inline u64 vdso_calc_ns(const struct x86_vdso_clock *vd, u64 cycles, u64 base)
{
	u64 delta = cycles - vd->cycle_last;

	/*
	 * Negative motion and deltas which can cause multiplication
	 * overflow require special treatment. This check covers both as
	 * negative motion is guaranteed to be greater than @vd::max_cycles
	 * due to unsigned comparison.
	 *
	 * Due to the MSB/Sign-bit being used as invalid marker (see
	 * arch_vdso_cycles_valid() above), the effective mask is S64_MAX,
	 * but that case is also unlikely and will also take the unlikely path
	 * here.
	 */
	if (unlikely(delta > vd->max_cycles)) {
		/*
		 * Due to the above mentioned TSC wobbles, filter out
		 * negative motion.  Per the above masking, the effective
		 * sign bit is now bit 62.
		 */
		if (delta & (1ULL << 62))
			return base >> vd->shift;

		/* Handle multiplication overflow gracefully */
		return mul_u64_u32_add_u64_shr(delta & S64_MAX, vd->mult, base, vd->shift);
	}

	return ((delta * vd->mult) + base) >> vd->shift;
}
#else
/*
 * vdsobench: x86 selects CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT from v6.10 on.
 * A layout without it (generic_timens*) gets x86's vdso_calc_ns() as
 * "vdso: Consolidate nanoseconds calculation" (v6.10-rc1) left it just
 * before: the v6.8..v6.9 delta (S64_MAX mask, negative motion filtered
 * at bit 62) with no max_cycles.
 */
static __always_inline u64 vdso_calc_ns(const struct x86_vdso_clock *vd, u64 cycles, u64 base)
{
	/*
	 * Due to the MSB/Sign-bit being used as invalid marker (see
	 * arch_vdso_cycles_valid() above), the effective mask is S64_MAX.
	 */
	u64 delta = (cycles - vd->cycle_last) & S64_MAX;

	/*
	 * Due to the above mentioned TSC wobbles, filter out negative motion.
	 * Per the above masking, the effective sign bit is now bit 62.
	 */
	if (unlikely(delta & (1ULL << 62)))
		return base >> vd->shift;

	return ((delta * vd->mult) + base) >> vd->shift;
}
#endif /* CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT */
#define vdso_calc_ns vdso_calc_ns

#endif /* v6.10 and later */

/*
 * vdsobench: the simulated clocksource's vDSO clock mode, what
 * update_vsyscall() stores: tk->tkr_mono.clock->vdso_clock_mode (tsc.c
 * sets VDSO_CLOCKMODE_TSC, kvmclock.c VDSO_CLOCKMODE_PVCLOCK, hyperv_timer.c
 * VDSO_CLOCKMODE_HVCLOCK: the simulated host's, sim_vclock_clock_mode()), v5.3's
 * __x86_get_clock_mode() read it from archdata. Every x86 vDSO
 * clocksource (TSC, pvclock, hvclock) has a 64-bit mask and the delta
 * code above relies on it, so a narrower one never had a clock mode: its
 * readers fall back.
 */
static __always_inline s32 __arch_get_clock_mode(const struct timekeeper *tk)
{
	if (tk->vdso_capable && tk->tkr_mono.mask == U64_MAX)
		return sim_vclock_clock_mode();
	return VDSO_CLOCKMODE_NONE;
}

#pragma GCC diagnostic pop

#endif /* VDSOBENCH_ARCH_X86_H */
