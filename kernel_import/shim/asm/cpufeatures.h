/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for arch/x86/include/asm/cpufeatures.h, which asm/vdso/sys_call.h
 * (of v7.3) includes for X86_FEATURE_SYSFAST32, named only by its 32-bit
 * syscall alternative: the 64-bit read path needs no feature number.
 */
#ifndef _ASM_X86_CPUFEATURES_H
#define _ASM_X86_CPUFEATURES_H
#endif /* _ASM_X86_CPUFEATURES_H */
