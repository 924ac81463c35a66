/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/time.h: struct timespec64, struct timezone
 * (from the tree's own uapi/linux/time.h) and sys_tz, the timezone
 * settimeofday() sets, which update_vsyscall_tz() copies. Here sys_tz is
 * the variant's own (kimport/prefix.h), set from the simulated kernel's
 * before each update_vsyscall_tz().
 */
#ifndef _LINUX_TIME_H
#define _LINUX_TIME_H

#include <linux/time64.h>
#include <uapi/linux/time.h>

extern struct timezone sys_tz;

#endif /* _LINUX_TIME_H */
