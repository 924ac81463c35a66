/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LFENCE; RDTSC: rdtsc_ordered() on CPUs with X86_FEATURE_LFENCE_RDTSC
 * and without RDTSCP (arch/x86/include/asm/msr.h, v5.3).
 */
#define VDSO_COUNTER_REAL 1

static __always_inline u64 vdso_read_cycles(void)
{
	u32 low, high;

	__asm__ __volatile__("lfence; rdtsc" : "=a"(low), "=d"(high));
	return ((u64)high << 32) | low;
}
