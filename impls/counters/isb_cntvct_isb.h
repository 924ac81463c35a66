/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64 at v5.3 (arch/arm64/include/asm/vdso/gettimeofday.h, 27e11a9fe2e2
 * "arm64: Fix __arch_get_hw_counter() implementation"): isb; mrs
 * cntvct_el0; isb. The first ISB keeps the counter from being read
 * early, the second keeps the seqlock's re-read from passing it. Until
 * 77ec462536a1 (v5.13) replaced the second with a fake dependency
 * (isb_cntvct_dep).
 */
#if !defined(__aarch64__)
#error "isb_cntvct_isb is an aarch64 counter read"
#endif
#include "impls/counters/arm64_barrier.h"

#define VDSO_COUNTER_REAL 1

static __always_inline u64 vdso_read_cycles(void)
{
	u64 res;

	/*
	 * This isb() is required to prevent that the counter value
	 * is speculated.
	 */
	isb();
	asm volatile("mrs %0, cntvct_el0" : "=r" (res) :: "memory");
	/*
	 * This isb() is required to prevent that the seq lock is
	 * speculated.#
	 */
	isb();

	return res;
}
