/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's compat vDSO (AArch32, arch/arm64/include/asm/vdso/
 * compat_gettimeofday.h, the same in Debian's 6.1, 6.12 and 7.3 trees):
 * isb; mrrc p15, 1, Rt, Rt2, c14 (CNTVCT, the 64-bit virtual count);
 * isb. The first ISB keeps the counter from being read early, the second
 * keeps the seqlock's re-read from passing it. No ALTERNATIVE and no
 * fake dependency: the compat vDSO never took arm64's later reads.
 *
 * qemu-arm 7.2 has no AArch32 generic timer in user mode: there the mrrc
 * is SIGILL, which verify's counter trap answers (verify/tsc_trap.h).
 */
#if !defined(__arm__)
#error "isb_mrrc_isb is an AArch32 counter read"
#endif

#define VDSO_COUNTER_REAL 1

static __always_inline u64 vdso_read_cycles(void)
{
	u64 res;

	/*
	 * This isb() is required to prevent that the counter value
	 * is speculated.
	 */
	__asm__ __volatile__("isb" : : : "memory");
	asm volatile("mrrc p15, 1, %Q0, %R0, c14" : "=r" (res));
	/*
	 * This isb() is required to prevent that the seq lock is
	 * speculated.
	 */
	__asm__ __volatile__("isb" : : : "memory");

	return res;
}
