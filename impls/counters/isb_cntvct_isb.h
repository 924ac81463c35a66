/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64 at v5.3 (arch/arm64/include/asm/vdso/gettimeofday.h):
 * isb; mrs cntvct_el0; isb.
 */
#if !defined(__aarch64__)
#error "isb_cntvct_isb is an aarch64 counter read"
#endif
#define VDSO_COUNTER_REAL 1

static __always_inline u64 vdso_read_cycles(void)
{
	u64 res;

	__asm__ __volatile__("isb" : : : "memory");
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(res) : : "memory");
	__asm__ __volatile__("isb" : : : "memory");
	return res;
}
