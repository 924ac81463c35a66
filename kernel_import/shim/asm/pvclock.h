/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for arch/x86/include/asm/pvclock.h, which the x86 vDSO needs
 * only with CONFIG_PARAVIRT_CLOCK. The imported configuration leaves it
 * out: the simulated clocksource is the TSC (as impls/layouts/arch/x86.h
 * says, pvclock and hvclock are not simulated), so a tree's pvclock read
 * is not compiled, as on a kernel built without it.
 */
#ifndef _ASM_X86_PVCLOCK_H
#define _ASM_X86_PVCLOCK_H
#endif /* _ASM_X86_PVCLOCK_H */
