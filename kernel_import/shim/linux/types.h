/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/types.h (and the u8..s64 of
 * include/asm-generic/int-ll64.h it pulls in): the kernel's fixed-width
 * names, bool, and the typedefs the time code uses (clockid_t, ktime_t,
 * time64_t; ulong for asm/pvclock.h), each the same type the kernel gives
 * it on a 64-bit build.
 */
#ifndef _LINUX_TYPES_H
#define _LINUX_TYPES_H

#include <uapi/linux/types.h>

typedef __s8 s8;
typedef __u8 u8;
typedef __s16 s16;
typedef __u16 u16;
typedef __s32 s32;
typedef __u32 u32;
typedef __s64 s64;
typedef __u64 u64;

typedef _Bool bool;
enum { false = 0, true = 1 };

#define NULL ((void *)0)

typedef __kernel_size_t size_t;
typedef __kernel_ssize_t ssize_t;
typedef __kernel_clockid_t clockid_t;
typedef unsigned long uintptr_t;
typedef unsigned long ulong;
typedef s64 ktime_t;

#endif /* _LINUX_TYPES_H */
