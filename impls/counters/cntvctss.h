/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64 with FEAT_ECV, from 9025cebf12d1 (2022, v6.1): the ARM64_HAS_ECV
 * alternative of __arch_get_hw_counter(), "nop; mrs CNTVCTSS_EL0" in
 * place of "isb; mrs cntvct_el0" (the self-synchronised view needs no
 * ISB), the fake dependency after it all the same. S3_3_C14_C0_6 is the register's
 * encoding (SYS_CNTVCTSS_EL0, __mrs_s()), so assemblers without ECV
 * accept it. The register is undefined without FEAT_ECV: a variant with
 * this counter runs only where AT_HWCAP2 has HWCAP2_ECV
 * (impls/counters/available.h).
 */
#if !defined(__aarch64__)
#error "cntvctss is an aarch64 counter read"
#endif
#include "impls/counters/arm64_barrier.h"

#define VDSO_COUNTER_REAL 1

static __always_inline u64 vdso_read_cycles(void)
{
	u64 res;

	asm volatile("nop\n"
		     "mrs %0, S3_3_C14_C0_6"
	: "=r" (res)
	:
	: "memory");

	arch_counter_enforce_ordering(res);

	return res;
}
