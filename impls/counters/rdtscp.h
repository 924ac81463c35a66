/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RDTSCP: rdtsc_ordered() has used it where the CPU has it since
 * 093ae8f9a86a (2018); it waits for earlier instructions to retire and
 * clobbers ECX with TSC_AUX.
 */
#define VDSO_COUNTER_REAL 1

static __always_inline u64 vdso_read_cycles(void)
{
	u32 low, high;

	__asm__ __volatile__("rdtscp" : "=a"(low), "=d"(high) : : "ecx");
	return ((u64)high << 32) | low;
}
