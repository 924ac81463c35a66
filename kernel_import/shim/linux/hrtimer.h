/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/hrtimer.h, of which update_vsyscall() reads
 * hrtimer_resolution (what clock_getres() returns for the hres clocks).
 * Here it is the variant's own (kimport/prefix.h), set from the simulated
 * timekeeper's hrtimer_res before each update. Like the kernel's (through
 * linux/ktime.h), it brings linux/math64.h, whose __iter_div_u64_rem()
 * vsyscall.c uses without including it.
 */
#ifndef _LINUX_HRTIMER_H
#define _LINUX_HRTIMER_H

#include <linux/math64.h>
#include <linux/types.h>

extern unsigned int hrtimer_resolution;

#endif /* _LINUX_HRTIMER_H */
