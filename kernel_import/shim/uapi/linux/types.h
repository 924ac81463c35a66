/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Stands for include/uapi/linux/types.h with what it includes on x86-64:
 * asm-generic/int-ll64.h (__u8..__u64, __s8..__s64; 64-bit is long long),
 * asm/bitsperlong.h (__BITS_PER_LONG) and asm-generic/posix_types.h (__kernel_long_t and the __kernel_* types
 * the time structures use). These are the userspace ABI: the same on
 * every kernel, so the shim spells them out rather than take four more
 * headers from the tree.
 *
 * 32-bit arm is arm64's compat vDSO (arch/arm64/kernel/vdso32), and i386
 * x86's 32-bit vDSO (arch/x86/entry/vdso/vdso32), which the kernel
 * compiles with the 32-bit compiler (-m32): long and size_t are 32 bits
 * there, as asm-generic/posix_types.h has them for __BITS_PER_LONG 32 (and
 * x86's posix_types_32.h the same).
 */
#ifndef _UAPI_LINUX_TYPES_H
#define _UAPI_LINUX_TYPES_H

#if defined(__x86_64__) || defined(__aarch64__)
#define __BITS_PER_LONG 64
#elif defined(__arm__) || defined(__i386__)
#define __BITS_PER_LONG 32
#else
#error "the shim's types are x86-64's, arm64's and their 32-bit vDSOs' (32-bit arm, i386)"
#endif
#define __BITS_PER_LONG_LONG 64

typedef signed char __s8;
typedef unsigned char __u8;
typedef signed short __s16;
typedef unsigned short __u16;
typedef signed int __s32;
typedef unsigned int __u32;
typedef signed long long __s64;
typedef unsigned long long __u64;

typedef long __kernel_long_t;
typedef unsigned long __kernel_ulong_t;
#if __BITS_PER_LONG == 64
typedef __kernel_ulong_t __kernel_size_t;
typedef __kernel_long_t __kernel_ssize_t;
#else
typedef unsigned int __kernel_size_t;
typedef int __kernel_ssize_t;
#endif
typedef __kernel_long_t __kernel_old_time_t;
typedef __kernel_long_t __kernel_suseconds_t;
typedef long long __kernel_time64_t;
typedef int __kernel_clockid_t;
typedef int __kernel_timer_t;

typedef __u16 __le16;
typedef __u16 __be16;
typedef __u32 __le32;
typedef __u32 __be32;
typedef __u64 __le64;
typedef __u64 __be64;
#define __aligned_u64 __u64 __attribute__((aligned(8)))

#endif /* _UAPI_LINUX_TYPES_H */
