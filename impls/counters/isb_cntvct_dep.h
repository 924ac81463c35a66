/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64 from 77ec462536a1 (v5.13, "arm64: vdso: Avoid ISB after reading
 * from cntvct_el0"): isb; mrs cntvct_el0, then a fake address dependency
 * of a stack load on the value (arch_counter_enforce_ordering()), so the
 * seqlock's re-read waits for the counter without a pipeline flush. From
 * 9025cebf12d1 (2022, v6.1) the ARM64_HAS_ECV alternative's first half
 * (the second is cntvctss); from 00b39d150986 (v6.16) as
 * __arch_counter_get_cntvct(), the same instructions without the
 * "memory" clobber on the read. This is the v6.1..v6.15 form.
 */
#if !defined(__aarch64__)
#error "isb_cntvct_dep is an aarch64 counter read"
#endif
#include "impls/counters/arm64_barrier.h"

#define VDSO_COUNTER_REAL 1

static __always_inline u64 vdso_read_cycles(void)
{
	u64 res;

	asm volatile("isb\n"
		     "mrs %0, cntvct_el0"
	: "=r" (res)
	:
	: "memory");

	arch_counter_enforce_ordering(res);

	return res;
}
