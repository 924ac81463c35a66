/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for arch/x86/include/asm/vgtod.h, which since v5.3 (the generic
 * vDSO on x86) only gathers what the x86 vDSO headers need: the same
 * includes, and linux/cache.h and linux/time64.h, which the kernel's reach
 * through them (asm/pvclock.h needs SMP_CACHE_BYTES, and v6.1's names
 * struct timespec64 in a prototype without declaring it).
 */
#ifndef _ASM_X86_VGTOD_H
#define _ASM_X86_VGTOD_H

#include <linux/compiler.h>
#include <linux/cache.h>
#include <linux/time64.h>
#include <asm/clocksource.h>
#include <vdso/datapage.h>
#include <vdso/helpers.h>
#include <uapi/linux/time.h>

#endif /* _ASM_X86_VGTOD_H */
