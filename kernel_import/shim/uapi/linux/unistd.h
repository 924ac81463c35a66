/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Stands for include/uapi/linux/unistd.h, which v6.15's
 * lib/vdso/gettimeofday.c includes for __NR_gettimeofday and __NR_time: it
 * includes <asm/unistd.h>, as upstream's does (the shim's: the system's
 * syscall numbers, the userspace ABI).
 */
#ifndef _UAPI_LINUX_UNISTD_H
#define _UAPI_LINUX_UNISTD_H

#include <asm/unistd.h>

#endif /* _UAPI_LINUX_UNISTD_H */
