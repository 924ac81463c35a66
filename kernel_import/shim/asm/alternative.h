/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for arch/arm64/include/asm/alternative.h (v6.12), of which the
 * arm64 vDSO uses one ALTERNATIVE(): the counter read in its
 * asm/vdso/gettimeofday.h __arch_get_hw_counter(), "isb; mrs cntvct_el0"
 * or, with ARM64_HAS_ECV, "nop; mrs CNTVCTSS_EL0", patched at boot.
 *
 * Here the choice between the two is the variant's counter axis (the
 * counters isb_cntvct_dep and cntvctss, and isb_cntvct_isb of v5.3), as
 * rdtsc_ordered()'s alternative is on x86 (shim asm/msr.h): the asm
 * statement is left with no instructions, its output written by
 * arch_counter_enforce_ordering() just after it (shim asm/sysreg.h says
 * how). It keeps its volatile and "memory" clobber, so the compiler may
 * move nothing across it, as across the kernel's.
 */
#ifndef __ASM_ALTERNATIVE_H
#define __ASM_ALTERNATIVE_H

#define ALTERNATIVE(oldinstr, newinstr, feature, ...) ""

/* arch/arm64/include/generated/asm/cpucaps.h: only its name is used */
#define ARM64_HAS_ECV 0

#endif /* __ASM_ALTERNATIVE_H */
