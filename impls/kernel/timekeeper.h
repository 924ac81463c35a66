/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated kernel timekeeper: what struct timekeeper
 * (include/linux/timekeeper_internal.h) keeps for the clocks the vDSO
 * serves, and the timekeeping.c operations that change it. Every
 * layout's update_vsyscall() copies from this struct, and
 * tk_clock_ns() is the oracle every variant is checked against.
 *
 * All functions are pure: the caller serialises writers (the simulated
 * kernel holds tk_core's seqcount, as the kernel's timekeeping_update()
 * does) and passes the counter value "now" explicitly, so that tests and
 * the concurrency checker know which value was used.
 */
#ifndef VDSOBENCH_TIMEKEEPER_H
#define VDSOBENCH_TIMEKEEPER_H

#include "impls/common/time64.h"
#include "impls/kernel/wide.h"

/*
 * kernel/time/timekeeping.c (v6.17): timekeeper_data[] holds the core
 * timekeeper and, with CONFIG_POSIX_AUX_CLOCKS, one per auxiliary clock.
 */
#define TIMEKEEPER_CORE 0
#define TIMEKEEPER_AUX_FIRST 1
#define TIMEKEEPER_AUX_LAST (TIMEKEEPER_AUX_FIRST + MAX_AUX_CLOCKS - 1)

/* A clocksource as the timekeeper sees it (include/linux/clocksource.h). */
struct tk_clocksource {
	const char *name;
	u64 mask;
	u32 mult;
	u32 shift;
	/* the clocksource has a vDSO clock mode (VCLOCK_TSC, ...) */
	bool vdso_capable;
};

struct tk_read_base {
	u64 cycle_last;
	u64 mask;
	u32 mult;
	u32 shift;
	/* nanoseconds since the last second, shifted left by shift */
	u64 xtime_nsec;
};

struct timekeeper {
	struct tk_read_base tkr_mono;
	struct tk_read_base tkr_raw;
	u64 xtime_sec;
	struct timespec64 wall_to_monotonic;
	union {
		struct timespec64 monotonic_to_boot;
		/* aux: offs_aux split, for the vDSO (v6.17's fix) */
		struct timespec64 monotonic_to_aux;
	};
	union {
		s64 offs_boot; /* ns, MONOTONIC -> BOOTTIME */
		/* aux: ns, "monotonic" (its xtime) -> CLOCK_AUX + n */
		s64 offs_aux;
	};
	s32 tai_offset;
	u64 raw_sec;
	/* clocksource properties the vDSO data copies */
	u64 max_cycles;
	bool vdso_capable;
	/*
	 * v6.17 auxiliary timekeepers: their xtime is their "monotonic"
	 * (wall_to_monotonic stays 0) and the clock reads xtime + offs_aux
	 */
	u8 id; /* TIMEKEEPER_CORE, or TIMEKEEPER_AUX_FIRST + n for CLOCK_AUX + n */
	bool clock_valid; /* aux: enabled (sysfs aux_clocks/<n>/aux_clock_enable) */
	u32 hrtimer_res;
	/* a pending leap second: ntp's time_state, simplified */
	u64 leap_at_sec; /* 0: none */
	int leap; /* +1 insert 23:59:60, -1 delete */
};

/* time namespace offsets (struct timens_offsets) */
struct timens_offsets {
	struct timespec64 monotonic;
	struct timespec64 boottime;
};

/*
 * mult/shift for a counter of freq_hz, as clocks_calc_mult_shift() picks
 * them for a 600 s conversion range.
 */
void tk_clocksource_init(struct tk_clocksource *cs, const char *name,
			 u64 freq_hz, u64 mask, bool vdso_capable);

/* timekeeping_init(): wall time and MONOTONIC at counter value now. */
void tk_setup(struct timekeeper *tk, const struct tk_clocksource *cs, u64 now,
	      const struct timespec64 *wall, const struct timespec64 *mono);

/* timekeeping_forward_now() + accumulate_nsecs_to_secs(): a tick. */
void tk_forward(struct timekeeper *tk, u64 now);

/* timekeeping_apply_adjustment(): NTP changes mono's mult, never raw's. */
void tk_adjust_mult(struct timekeeper *tk, u64 now, s32 mult_adj);

/* do_settimeofday64(): REALTIME and TAI jump, MONOTONIC and BOOTTIME don't. */
void tk_settime(struct timekeeper *tk, u64 now, const struct timespec64 *ts);

/* timekeeping_inject_sleeptime64(): BOOTTIME moves ahead of MONOTONIC. */
void tk_inject_sleep(struct timekeeper *tk, u64 now,
		     const struct timespec64 *delta);

/* a leap second at the end of the second before at_sec (UTC midnight). */
void tk_schedule_leap(struct timekeeper *tk, u64 at_sec, int leap);

/* change_clocksource() / tk_setup_internals(): new mult, shift and mask. */
void tk_change_clocksource(struct timekeeper *tk, u64 now,
			   const struct tk_clocksource *cs);

/*
 * The oracle: clock clk at counter value now, in ns since the epoch of
 * that clock, computed with 128-bit arithmetic straight from the
 * timekeeper (no vDSO code is shared). Returns 0, or -EINVAL for a clock
 * the timekeeper doesn't keep (CPU-time clocks, invalid ids).
 */
int tk_clock_ns(const struct timekeeper *tk, clockid_t clk, u64 now,
		wide_ns *ns);

/*
 * The auxiliary clocks (kernel/time/timekeeping.c, v6.17). Each is its own
 * timekeeper on the core's clocksource; tk_forward() advances one like the
 * core (a tick advances every enabled one).
 *
 * tk_aux_enable(): aux_clock_enable(): a fresh timekeeper on the core's
 * clocksource at its raw (unadjusted) rate, reading 0 at counter now.
 * tk_aux_disable(): aux_clock_disable(): the clock stops being valid.
 * tk_aux_settime(): aux_clock_set(), clock_settime(CLOCK_AUX + n): -EINVAL
 * for a time settimeofday() would refuse, -ENODEV when not enabled.
 * tk_aux_adjust_mult(): clock_adjtime(CLOCK_AUX + n) with ADJ_FREQUENCY,
 * as tk_adjust_mult() models NTP: -ENODEV when not enabled.
 * tk_aux_clock_ns(): the oracle, ktime_get_aux(): -ENODEV when not enabled.
 */
void tk_aux_enable(struct timekeeper *aux, unsigned int id,
		   const struct timekeeper *core, u64 now);
void tk_aux_disable(struct timekeeper *aux);
int tk_aux_settime(struct timekeeper *aux, u64 now,
		   const struct timespec64 *ts);
int tk_aux_adjust_mult(struct timekeeper *aux, u64 now, s32 mult_adj);
int tk_aux_clock_ns(const struct timekeeper *aux, u64 now, wide_ns *ns);

/* the namespace offset a time-namespaced task sees for clk (0 if none). */
wide_ns timens_offset_ns(const struct timens_offsets *offs, clockid_t clk);

/* split ns into a normalised timespec (tv_nsec in [0, 1e9)) */
void ns_to_timespec(wide_ns ns, struct timespec *ts);
wide_ns timespec_to_ns(const struct timespec *ts);
wide_ns timespec64_to_ns(const struct timespec64 *ts);

/* clocksource_delta() with the negative-motion clamp x86 selects */
u64 tk_clocksource_delta(u64 now, u64 last, u64 mask);

#endif /* VDSOBENCH_TIMEKEEPER_H */
