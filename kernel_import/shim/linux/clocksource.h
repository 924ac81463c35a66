/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/clocksource.h, of which the vDSO update path
 * reads two members through tk->tkr_mono.clock (and tkr_raw.clock):
 * vdso_clock_mode (the mode update_vsyscall() publishes) and, with
 * CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT, max_cycles. The kernel's struct
 * has many more (read(), mult, shift, rating, lists...); the timekeeper
 * holds only a pointer to it, so the struct timekeeper of the tree's own
 * definition has the tree's layout whatever else struct clocksource
 * holds. The simulated timekeeper fills both members
 * (kernel_import/glue/writer.c).
 */
#ifndef _LINUX_CLOCKSOURCE_H
#define _LINUX_CLOCKSOURCE_H

#include <linux/types.h>
#include <vdso/clocksource.h>
/* the tree's own, as the kernel's header includes it (v7.3's timekeeper has one) */
#if __has_include(<linux/clocksource_ids.h>)
#include <linux/clocksource_ids.h>
#endif

struct clocksource {
	u64 mask;
	u64 max_cycles;
	u32 mult;
	u32 shift;
	const char *name;
	enum vdso_clock_mode vdso_clock_mode;
};

#endif /* _LINUX_CLOCKSOURCE_H */
