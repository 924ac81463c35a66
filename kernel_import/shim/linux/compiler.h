/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/compiler.h and the READ_ONCE()/WRITE_ONCE() of
 * include/asm-generic/rwonce.h: the same branch hints and barrier, and
 * the same volatile access for the word-sized and smaller scalars these
 * macros are used on here (the kernel's version adds a compile-time size
 * check and strips qualifiers for arrays and structs, which the vDSO
 * never passes). Like the kernel's (through asm/rwonce.h), it brings the
 * SMP barriers: helpers.h of v6.1 relies on that.
 */
#ifndef __LINUX_COMPILER_H
#define __LINUX_COMPILER_H

#include <linux/compiler_types.h>

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define barrier() __asm__ __volatile__("" : : : "memory")

#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val)                                                  \
	do {                                                                \
		*(volatile __typeof__(x) *)&(x) = (val);                    \
	} while (0)

#include <asm/barrier.h>

#endif /* __LINUX_COMPILER_H */
