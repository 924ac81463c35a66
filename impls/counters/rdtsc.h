/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Plain RDTSC, no ordering: never used upstream for the vDSO because it
 * may execute before earlier loads (the seqlock's), which is what the
 * suite measures the price of avoiding. arch/x86/include/asm/msr.h rdtsc().
 */
#define VDSO_COUNTER_REAL 1

static __always_inline u64 vdso_read_cycles(void)
{
	u32 low, high;

	__asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high));
	return ((u64)high << 32) | low;
}
