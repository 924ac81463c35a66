/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64 with FEAT_ECV: the self-synchronising CNTVCTSS_EL0 needs no ISB
 * (__arch_counter_get_cntvct, ~v6.4). S3_3_C14_C0_6 is its encoding, so
 * assemblers without ECV support accept it.
 */
#if !defined(__aarch64__)
#error "cntvctss is an aarch64 counter read"
#endif
#define VDSO_COUNTER_REAL 1

static __always_inline u64 vdso_read_cycles(void)
{
	u64 res;

	__asm__ __volatile__("mrs %0, S3_3_C14_C0_6" : "=r"(res) : : "memory");
	return res;
}
