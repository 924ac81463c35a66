/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Included first by every layout source: the contract's types, the
 * counter read of this variant, the simulated kernel's syscall entry,
 * and the per-variant naming and inlining macros.
 */
#ifndef VDSOBENCH_VARIANT_PRELUDE_H
#define VDSOBENCH_VARIANT_PRELUDE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create() */
#endif

#include <errno.h>
#include <stddef.h>

#include "impls/common/compiler.h"
#include "impls/common/time64.h"
#include "impls/common/variant.h"
#include "impls/counters/counter.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_vclock.h"

#if !defined(VDSO_PREFIX) || !defined(VDSO_LAYOUT) || !defined(VDSO_COUNTER) || \
	!defined(VDSO_INLINE)
#error "a variant is compiled by impls/variants.bzl, which sets VDSO_PREFIX and the axes"
#endif

#define VDSO_SYM(name) __PASTE(VDSO_PREFIX, __PASTE(__, name))
#define VDSO_ENTRY __attribute__((visibility("default")))

/*
 * The inline axis (seed 002): upstream marks do_hres() and do_coarse()
 * __always_inline; "auto" leaves the decision to the compiler.
 */
#if VDSO_INLINE_ALWAYS
#define __vdso_hot_inline static __always_inline
#else
#define __vdso_hot_inline static
#endif

/*
 * The uapi types lib/vdso names, as userspace has them: on x86-64 and
 * arm64 struct timespec and struct timeval are the kernel's
 * __kernel_timespec and __kernel_old_timeval, time_t its
 * __kernel_old_time_t. So the upstream lines stay as they are.
 */
#define __kernel_timespec timespec
#define __kernel_old_timeval timeval
#define __kernel_old_time_t time_t

/*
 * The fallbacks enter the real kernel (so their cost is real) and return
 * the simulated kernel's answer at this variant's counter value, as the
 * kernel the layout follows would give it (aux clock ids exist from v6.17).
 */
#ifndef VDSO_KERNEL_AUX_CLOCKS /* an import's kbuilt image says its own */
#define VDSO_KERNEL_AUX_CLOCKS IS_ENABLED(CONFIG_POSIX_AUX_CLOCKS)
#endif

static inline long clock_gettime_fallback(clockid_t clk, struct timespec *ts)
{
	return sim_sys_clock_gettime(clk, ts, vdso_read_cycles(), VDSO_KERNEL_AUX_CLOCKS);
}

static inline long clock_getres_fallback(clockid_t clk, struct timespec *res)
{
	return sim_sys_clock_getres(clk, res, VDSO_KERNEL_AUX_CLOCKS);
}

static inline long gettimeofday_fallback(struct timeval *tv,
					 struct timezone *tz)
{
	return sim_sys_gettimeofday(tv, tz, vdso_read_cycles());
}

#define VDSO_VARIANT_DEFINE(...)                                            \
	const struct vdso_variant VDSO_SYM(variant) = {                     \
		.name = __stringify(VDSO_LAYOUT) "+" __stringify(            \
			VDSO_COUNTER) "+" __stringify(VDSO_INLINE),         \
		.layout = __stringify(VDSO_LAYOUT),                          \
		.counter = __stringify(VDSO_COUNTER),                        \
		.inline_mode = __stringify(VDSO_INLINE),                     \
		.real_counter = VDSO_COUNTER_REAL,                           \
		.kernel_version = VDSO_KERNEL_VERSION,                       \
		.clock_gettime = VDSO_SYM(clock_gettime),                    \
		.clock_getres = VDSO_SYM(clock_getres),                      \
		.gettimeofday = VDSO_SYM(gettimeofday),                      \
		.time = VDSO_SYM(time),                                      \
		.update_vsyscall = VDSO_SYM(update_vsyscall),                \
		.update_vsyscall_tz = VDSO_SYM(update_vsyscall_tz),          \
		__VA_ARGS__                                                  \
	}

/* the entry points every layout defines, declared once here */
VDSO_ENTRY int VDSO_SYM(clock_gettime)(clockid_t clock, struct timespec *ts);
VDSO_ENTRY int VDSO_SYM(clock_getres)(clockid_t clock, struct timespec *res);
VDSO_ENTRY int VDSO_SYM(gettimeofday)(struct timeval *tv, struct timezone *tz);
VDSO_ENTRY time_t VDSO_SYM(time)(time_t *t);
VDSO_ENTRY void VDSO_SYM(update_vsyscall)(const struct timekeeper *tk);
VDSO_ENTRY void VDSO_SYM(update_vsyscall_tz)(const struct timezone *tz);
extern const struct vdso_variant VDSO_SYM(variant);

#endif /* VDSOBENCH_VARIANT_PRELUDE_H */
