/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for arch/x86/include/asm/cache.h, which v6.15's include/vdso/cache.h
 * includes for L1_CACHE_BYTES (____cacheline_aligned on struct
 * vdso_time_data): 1 << CONFIG_X86_L1_CACHE_SHIFT, 64 on every x86-64
 * configuration (and arm64's L1_CACHE_BYTES is 64 too).
 */
#ifndef _ASM_X86_CACHE_H
#define _ASM_X86_CACHE_H

#define L1_CACHE_SHIFT 6
#define L1_CACHE_BYTES (1 << L1_CACHE_SHIFT)

#endif /* _ASM_X86_CACHE_H */
