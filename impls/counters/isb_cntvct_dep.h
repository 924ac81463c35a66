/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64 after 77ec462536a1 (2021): the trailing ISB is replaced by a fake
 * address dependency (arch_counter_enforce_ordering), so later loads wait
 * for the counter value without a pipeline flush.
 */
#if !defined(__aarch64__)
#error "isb_cntvct_dep is an aarch64 counter read"
#endif
#define VDSO_COUNTER_REAL 1

static __always_inline u64 vdso_read_cycles(void)
{
	u64 res, tmp;

	__asm__ __volatile__("isb" : : : "memory");
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(res) : : "memory");
	__asm__ __volatile__("eor %0, %1, %1\n"
			     "add %0, sp, %0\n"
			     "ldr xzr, [%0]"
			     : "=r"(tmp)
			     : "r"(res)
			     : "memory");
	return res;
}
