/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/jiffies.h, which timekeeper_internal.h
 * includes and the vDSO's update path uses nothing of beyond what the
 * tree's own include/vdso/jiffies.h (TICK_NSEC, HZ) provides.
 */
#ifndef _LINUX_JIFFIES_H
#define _LINUX_JIFFIES_H

#include <vdso/jiffies.h>

#endif /* _LINUX_JIFFIES_H */
