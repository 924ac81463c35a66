/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for arch/x86/include/asm/clocksource.h, whose part the vDSO uses
 * is the tree's own asm/vdso/clocksource.h (the x86 clock modes: TSC,
 * PVCLOCK, HVCLOCK), included the same way; struct arch_clocksource_data
 * is the kernel's alone.
 */
#ifndef _ASM_X86_CLOCKSOURCE_H
#define _ASM_X86_CLOCKSOURCE_H

#include <asm/vdso/clocksource.h>

#endif /* _ASM_X86_CLOCKSOURCE_H */
