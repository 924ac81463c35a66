/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/time64.h: time64_t and struct timespec64, the
 * same types (the vDSO's constants, NSEC_PER_SEC and the like, come from
 * the tree's own include/vdso/time64.h).
 */
#ifndef _LINUX_TIME64_H
#define _LINUX_TIME64_H

#include <linux/types.h>
#include <vdso/time64.h>

typedef __s64 time64_t;
typedef __u64 timeu64_t;

struct timespec64 {
	time64_t tv_sec; /* seconds */
	long tv_nsec; /* nanoseconds */
};

#endif /* _LINUX_TIME64_H */
