/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86's Hyper-V TSC page read in the vDSO (CONFIG_HYPERV_TIMER, which
 * Debian's x86 kernel has): hv_read_tsc_page_tsc() of
 * include/clocksource/hyperv_timer.h and vread_hvclock() of
 * arch/x86/include/asm/vdso/gettimeofday.h, read from the simulated
 * host's page (impls/kernel/sim_vclock.h).
 *
 *	< v6.8	vread_hvclock() is hv_read_tsc_page(): the time whole, or
 *		U64_MAX for a page not valid (tsc_sequence 0)
 *	v6.8+	masked with S64_MAX, U64_MAX as before
 *
 * vdsobench: hv_read_tsc_page_tsc() in its v6.x form (a bool and the time
 * through a pointer) for every version; older ones returned U64_MAX from
 * it for an invalid page, with the same loads in the same order.
 *
 * VDSOBENCH_VCLOCK_NO_RETRY (a known-bad layout only): the read without
 * its sequence retry.
 *
 * Needs rdtsc_ordered() and VDSO_KERNEL_VERSION.
 */
#ifndef VDSOBENCH_ARCH_X86_HVCLOCK_H
#define VDSOBENCH_ARCH_X86_HVCLOCK_H

#include "impls/kernel/sim_vclock.h"

/* vdsobench: the host page's struct is the TLFS's, its first fields */
#define ms_hyperv_tsc_page sim_hvclock
/* vdsobench: vvar's hvclock_page is the simulated host's (as x86_pvclock.h) */
#define hvclock_page (sim_hvclock_page.tsc_pg)
/* arch/x86/include/asm/mshyperv.h: hv_get_raw_timer() is rdtsc_ordered() */
#define hv_get_raw_timer() rdtsc_ordered()

static __always_inline u64 hv_mul_u64_u64_shr(u64 a, u64 mul, unsigned int shift)
{
	/* include/linux/math64.h mul_u64_u64_shr(): time64.h's, 32-bit x86's too */
	return mul_u64_u64_shr(a, mul, shift);
}

static __always_inline
bool hv_read_tsc_page_tsc(const struct ms_hyperv_tsc_page *tsc_pg,
			  u64 *cur_tsc, u64 *time)
{
	u64 scale, offset;
	u32 sequence;

	/*
	 * The protocol for reading Hyper-V TSC page is specified in Hypervisor
	 * Top-Level Functional Specification ver. 3.0 and above. To get the
	 * reference time we must do the following:
	 * - READ ReferenceTscSequence
	 *   A special '0' value indicates the time source is unreliable and we
	 *   need to use something else.
	 * - ReferenceTime =
	 *        ((RDTSC() * ReferenceTscScale) >> 64) + ReferenceTscOffset
	 * - READ ReferenceTscSequence again. In case its value has changed
	 *   since our first reading we need to discard ReferenceTime and repeat
	 *   the whole sequence as the hypervisor was updating the page in
	 *   between.
	 */
	do {
		sequence = READ_ONCE(tsc_pg->tsc_sequence);
		if (!sequence)
			return false;
		/*
		 * Make sure we read sequence before we read other values from
		 * TSC page.
		 */
		smp_rmb();

		scale = READ_ONCE(tsc_pg->tsc_scale);
		offset = READ_ONCE(tsc_pg->tsc_offset);
		*cur_tsc = hv_get_raw_timer();

		/*
		 * Make sure we read sequence after we read all other values
		 * from TSC page.
		 */
		smp_rmb();

#ifdef VDSOBENCH_VCLOCK_NO_RETRY
	} while (0); /* vdsobench: the known-bad control: no retry */
#else
	} while (READ_ONCE(tsc_pg->tsc_sequence) != sequence);
#endif

	*time = hv_mul_u64_u64_shr(*cur_tsc, scale, 64) + offset;
	return true;
}

static u64 vread_hvclock(void)
{
	u64 tsc, time;

	if (hv_read_tsc_page_tsc(&hvclock_page, &tsc, &time))
#if VDSO_KERNEL_VERSION >= KERNEL_VERSION(6, 8, 0)
		return time & S64_MAX;
#else
		return time;
#endif

	return U64_MAX;
}

#endif /* VDSOBENCH_ARCH_X86_HVCLOCK_H */
