/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MFENCE; RDTSC: rdtsc_ordered() on old AMD (X86_FEATURE_MFENCE_RDTSC),
 * removed by be261ffce6f1 (2019) once LFENCE was made serialising there.
 */
#define VDSO_COUNTER_REAL 1

static __always_inline u64 vdso_read_cycles(void)
{
	u32 low, high;

	__asm__ __volatile__("mfence; rdtsc" : "=a"(low), "=d"(high));
	return ((u64)high << 32) | low;
}
