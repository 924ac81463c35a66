// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated timekeeper (kernel/time/timekeeping.c, v5.3..6.17 shape).
 * Only what changes the values the vDSO reads is modelled: accumulation
 * into xtime_nsec, NTP mult adjustments, settimeofday, sleep injection,
 * leap seconds, clocksource changes and (v6.17) the auxiliary clocks.
 */
#include "impls/kernel/timekeeper.h"

#include "common/clocks.h"

#include <errno.h>
#include <string.h>

/* kernel/time/clocksource.c clocks_calc_mult_shift() */
static void clocks_calc_mult_shift(u32 *mult, u32 *shift, u64 from, u64 to,
				   u32 maxsec)
{
	u64 tmp;
	u32 sft, sftacc = 32;

	/*
	 * Calculate the shift factor which is limiting the conversion
	 * range:
	 */
	tmp = ((u64)maxsec * from) >> 32;
	while (tmp) {
		tmp >>= 1;
		sftacc--;
	}

	/*
	 * Find the conversion shift/mult pair which has the best
	 * accuracy and fits the maxsec conversion range:
	 */
	for (sft = 32; sft > 0; sft--) {
		tmp = (u64)to << sft;
		tmp += from / 2;
		tmp /= from;
		if ((tmp >> sftacc) == 0)
			break;
	}
	*mult = (u32)tmp;
	*shift = sft;
}

void tk_clocksource_init(struct tk_clocksource *cs, const char *name,
			 u64 freq_hz, u64 mask, bool vdso_capable)
{
	memset(cs, 0, sizeof(*cs));
	cs->name = name;
	cs->mask = mask;
	cs->vdso_capable = vdso_capable;
	clocks_calc_mult_shift(&cs->mult, &cs->shift, freq_hz, NSEC_PER_SEC,
			       600);
}

/*
 * clocks_calc_max_nsecs(): the largest delta whose product with
 * (mult + 11% NTP headroom) still fits in 64 bits, capped by the mask.
 */
static u64 tk_calc_max_cycles(u32 mult, u64 mask)
{
	u64 maxadj = (u64)mult * 11 / 100;
	u64 max_cycles = UINT64_MAX / (mult + maxadj);

	return max_cycles < mask ? max_cycles : mask;
}

u64 tk_clocksource_delta(u64 now, u64 last, u64 mask)
{
	u64 ret = (now - last) & mask;

	/*
	 * CONFIG_CLOCKSOURCE_VALIDATE_LAST_CYCLE (selected by x86): a read
	 * behind cycle_last (TSC skew between CPUs) is a zero delta, not a
	 * huge one.
	 */
	return ret & ~(mask >> 1) ? 0 : ret;
}

static void timespec64_normalize(struct timespec64 *ts)
{
	while (ts->tv_nsec >= NSEC_PER_SEC) {
		ts->tv_nsec -= NSEC_PER_SEC;
		ts->tv_sec++;
	}
	while (ts->tv_nsec < 0) {
		ts->tv_nsec += NSEC_PER_SEC;
		ts->tv_sec--;
	}
}

static void ns_to_timespec64(wide_ns ns, struct timespec64 *ts)
{
	wide_ns sec = ns / NSEC_PER_SEC;
	wide_ns rem = ns % NSEC_PER_SEC;

	if (rem < 0) {
		rem += NSEC_PER_SEC;
		sec--;
	}
	ts->tv_sec = (s64)sec;
	ts->tv_nsec = (long)rem;
}

void ns_to_timespec(wide_ns ns, struct timespec *ts)
{
	struct timespec64 t;

	ns_to_timespec64(ns, &t);
	ts->tv_sec = (time_t)t.tv_sec;
	ts->tv_nsec = t.tv_nsec;
}

wide_ns timespec_to_ns(const struct timespec *ts)
{
	return (wide_ns)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

wide_ns timespec64_to_ns(const struct timespec64 *ts)
{
	return (wide_ns)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

void tk_setup(struct timekeeper *tk, const struct tk_clocksource *cs, u64 now,
	      const struct timespec64 *wall, const struct timespec64 *mono)
{
	memset(tk, 0, sizeof(*tk));
	tk->tkr_mono.cycle_last = now;
	tk->tkr_mono.mask = cs->mask;
	tk->tkr_mono.mult = cs->mult;
	tk->tkr_mono.shift = cs->shift;
	tk->tkr_mono.xtime_nsec = (u64)wall->tv_nsec << cs->shift;
	tk->tkr_raw = tk->tkr_mono;
	tk->tkr_raw.xtime_nsec = (u64)mono->tv_nsec << cs->shift;
	tk->xtime_sec = (u64)wall->tv_sec;
	tk->raw_sec = (u64)mono->tv_sec;
	tk->wall_to_monotonic.tv_sec = mono->tv_sec - wall->tv_sec;
	tk->wall_to_monotonic.tv_nsec = mono->tv_nsec - wall->tv_nsec;
	timespec64_normalize(&tk->wall_to_monotonic);
	tk->max_cycles = tk_calc_max_cycles(cs->mult, cs->mask);
	tk->vdso_capable = cs->vdso_capable;
	tk->hrtimer_res = 1; /* high-resolution timers on: 1 ns */
}

/* kernel/time/ntp.c second_overflow(), reduced to a scheduled leap */
static int second_overflow(struct timekeeper *tk, u64 secs)
{
	int leap = 0;

	if (!tk->leap_at_sec)
		return 0;
	if (tk->leap > 0 && secs == tk->leap_at_sec) {
		leap = -1; /* insert: 23:59:59 is followed by 23:59:60 */
		tk->leap_at_sec = 0;
	} else if (tk->leap < 0 && secs + 1 == tk->leap_at_sec) {
		leap = 1; /* delete: 23:59:58 is followed by 00:00:00 */
		tk->leap_at_sec = 0;
	}
	return leap;
}

/* accumulate_nsecs_to_secs() and tk_normalize_xtime() for raw */
static void tk_normalize(struct timekeeper *tk)
{
	u64 nsecps = (u64)NSEC_PER_SEC << tk->tkr_mono.shift;
	u64 raw_nsecps = (u64)NSEC_PER_SEC << tk->tkr_raw.shift;

	while (tk->tkr_mono.xtime_nsec >= nsecps) {
		int leap;

		tk->tkr_mono.xtime_nsec -= nsecps;
		tk->xtime_sec++;

		leap = second_overflow(tk, tk->xtime_sec);
		if (unlikely(leap)) {
			tk->xtime_sec += leap;
			tk->wall_to_monotonic.tv_sec -= leap;
			tk->tai_offset -= leap;
		}
	}
	while (tk->tkr_raw.xtime_nsec >= raw_nsecps) {
		tk->tkr_raw.xtime_nsec -= raw_nsecps;
		tk->raw_sec++;
	}
}

/*
 * Add delta * mult to a shifted-ns accumulator one whole second at a
 * time, so that a long gap can neither overflow nor skip a leap second.
 */
static void tk_accumulate(struct timekeeper *tk, u64 delta)
{
	u64 nsecps = (u64)NSEC_PER_SEC << tk->tkr_mono.shift;
	u64 raw_nsecps = (u64)NSEC_PER_SEC << tk->tkr_raw.shift;
	u64 hi, lo, mono, raw, secs;

	/* delta * mult, in whole seconds and the shifted ns left over */
	mul_u64_u32_wide(delta, tk->tkr_mono.mult, &hi, &lo);
	secs = div_u128_u64(hi, lo, nsecps, &mono);
	while (secs--) {
		tk->tkr_mono.xtime_nsec += nsecps;
		tk_normalize(tk);
	}
	mul_u64_u32_wide(delta, tk->tkr_raw.mult, &hi, &lo);
	tk->raw_sec += div_u128_u64(hi, lo, raw_nsecps, &raw);
	tk->tkr_mono.xtime_nsec += mono;
	tk->tkr_raw.xtime_nsec += raw;
	tk_normalize(tk);
}

void tk_forward(struct timekeeper *tk, u64 now)
{
	u64 delta = tk_clocksource_delta(now, tk->tkr_mono.cycle_last,
					 tk->tkr_mono.mask);

	/* a read behind cycle_last doesn't move cycle_last backwards */
	if (delta) {
		tk->tkr_mono.cycle_last = now & tk->tkr_mono.mask;
		tk->tkr_raw.cycle_last = tk->tkr_mono.cycle_last;
	}
	tk_accumulate(tk, delta);
}

void tk_adjust_mult(struct timekeeper *tk, u64 now, s32 mult_adj)
{
	/*
	 * timekeeping_apply_adjustment() subtracts offset * mult_adj from
	 * xtime_nsec for the cycles not yet accumulated; forwarding first
	 * makes that offset zero, so time is continuous at cycle_last.
	 */
	tk_forward(tk, now);
	tk->tkr_mono.mult = (u32)((s64)tk->tkr_mono.mult + mult_adj);
}

void tk_settime(struct timekeeper *tk, u64 now, const struct timespec64 *ts)
{
	struct timespec64 xt, ts_delta;

	tk_forward(tk, now);

	xt.tv_sec = (s64)tk->xtime_sec;
	xt.tv_nsec = (long)(tk->tkr_mono.xtime_nsec >> tk->tkr_mono.shift);
	ts_delta.tv_sec = ts->tv_sec - xt.tv_sec;
	ts_delta.tv_nsec = ts->tv_nsec - xt.tv_nsec;
	timespec64_normalize(&ts_delta);

	/* tk_set_wall_to_mono(tk, timespec64_sub(tk->wall_to_monotonic, ts_delta)) */
	tk->wall_to_monotonic.tv_sec -= ts_delta.tv_sec;
	tk->wall_to_monotonic.tv_nsec -= ts_delta.tv_nsec;
	timespec64_normalize(&tk->wall_to_monotonic);

	/* tk_set_xtime(): whole nanoseconds, the shifted fraction is dropped */
	tk->xtime_sec = (u64)ts->tv_sec;
	tk->tkr_mono.xtime_nsec = (u64)ts->tv_nsec << tk->tkr_mono.shift;
}

void tk_inject_sleep(struct timekeeper *tk, u64 now,
		     const struct timespec64 *delta)
{
	tk_forward(tk, now);
	tk->offs_boot += (s64)timespec64_to_ns(delta);
	ns_to_timespec64(tk->offs_boot, &tk->monotonic_to_boot);
}

void tk_schedule_leap(struct timekeeper *tk, u64 at_sec, int leap)
{
	tk->leap_at_sec = at_sec;
	tk->leap = leap;
}

void tk_change_clocksource(struct timekeeper *tk, u64 now,
			   const struct tk_clocksource *cs)
{
	int shift_change = (int)cs->shift - (int)tk->tkr_mono.shift;

	tk_forward(tk, now);

	/* tk_setup_internals(): convert xtime_nsec to the new shift units */
	if (shift_change < 0) {
		tk->tkr_mono.xtime_nsec >>= -shift_change;
		tk->tkr_raw.xtime_nsec >>= -shift_change;
	} else {
		tk->tkr_mono.xtime_nsec <<= shift_change;
		tk->tkr_raw.xtime_nsec <<= shift_change;
	}
	tk->tkr_mono.cycle_last = now & cs->mask;
	tk->tkr_raw.cycle_last = now & cs->mask;
	tk->tkr_mono.mask = tk->tkr_raw.mask = cs->mask;
	tk->tkr_mono.mult = tk->tkr_raw.mult = cs->mult;
	tk->tkr_mono.shift = tk->tkr_raw.shift = cs->shift;
	tk->max_cycles = tk_calc_max_cycles(cs->mult, cs->mask);
	tk->vdso_capable = cs->vdso_capable;
}

static wide_ns tkr_ns(const struct tk_read_base *tkr, u64 now)
{
	u64 delta = tk_clocksource_delta(now, tkr->cycle_last, tkr->mask);

#if defined(__SIZEOF_INT128__)
	return (wide_ns)(((unsigned __int128)delta * tkr->mult +
			   tkr->xtime_nsec) >>
			  tkr->shift);
#else
	/* 32-bit x86: the kernel's own (the result fits: +-292 years) */
	return (wide_ns)mul_u64_u32_add_u64_shr(delta, tkr->mult,
						tkr->xtime_nsec, tkr->shift);
#endif
}

/* the offset a clock's base adds to xtime (timekeeping.c's offs_*) */
static wide_ns tk_base_ns(const struct timekeeper *tk,
			   enum suite_clock_base base)
{
	wide_ns wtm = timespec64_to_ns(&tk->wall_to_monotonic);

	switch (base) {
	case SUITE_MONO:
		return wtm;
	case SUITE_BOOT:
		return wtm + tk->offs_boot;
	case SUITE_TAI:
		return (wide_ns)tk->tai_offset * NSEC_PER_SEC;
	default:
		return 0;
	}
}

/*
 * ktime_get_{real,,boot,clocktai,raw}_ts64() and their coarse twins, by
 * the clock's row in common/clocks.h: its kind picks the read, its base
 * the offset.
 */
int tk_clock_ns(const struct timekeeper *tk, clockid_t clk, u64 now,
		wide_ns *ns)
{
	const struct suite_clock *c = suite_clock_of(clk);
	wide_ns sec_ns = (wide_ns)tk->xtime_sec * NSEC_PER_SEC;

	if (!c)
		return -EINVAL;
	switch (c->kind) {
	case SUITE_RAW:
		*ns = (wide_ns)tk->raw_sec * NSEC_PER_SEC +
		      tkr_ns(&tk->tkr_raw, now);
		return 0;
	case SUITE_COARSE:
		*ns = sec_ns + tk_base_ns(tk, c->base) +
		      (tk->tkr_mono.xtime_nsec >> tk->tkr_mono.shift);
		return 0;
	default:
		*ns = sec_ns + tk_base_ns(tk, c->base) +
		      tkr_ns(&tk->tkr_mono, now);
		return 0;
	}
}

void tk_aux_enable(struct timekeeper *aux, unsigned int id,
		   const struct timekeeper *core, u64 now)
{
	/* Remove leftovers of a previous registration */
	memset(aux, 0, sizeof(*aux));
	aux->id = (u8)id;
	/* tk_setup_internals(aux_tks, tkr_raw->clock) */
	aux->tkr_mono.cycle_last = now & core->tkr_raw.mask;
	aux->tkr_mono.mask = core->tkr_raw.mask;
	aux->tkr_mono.mult = core->tkr_raw.mult;
	aux->tkr_mono.shift = core->tkr_raw.shift;
	aux->tkr_raw = aux->tkr_mono;
	aux->max_cycles = core->max_cycles;
	aux->vdso_capable = core->vdso_capable;
	aux->hrtimer_res = core->hrtimer_res;
	aux->clock_valid = true;
}

void tk_aux_disable(struct timekeeper *aux)
{
	aux->clock_valid = false;
}

/* include/linux/time64.h timespec64_valid_settod() */
static bool timespec64_valid_settod(const struct timespec64 *ts)
{
	/* KTIME_SEC_MAX less the 30 years settimeofday() keeps in hand */
	const s64 max = INT64_MAX / NSEC_PER_SEC - 30LL * 365 * 86400;

	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 &&
	       ts->tv_nsec < NSEC_PER_SEC && ts->tv_sec < max;
}

int tk_aux_settime(struct timekeeper *aux, u64 now,
		   const struct timespec64 *ts)
{
	wide_ns tnow;

	if (!timespec64_valid_settod(ts))
		return -EINVAL;
	if (!aux->clock_valid)
		return -ENODEV;
	/* Forward the timekeeper base time: tnow is "monotonic" at cycle_last */
	tk_forward(aux, now);
	tnow = (wide_ns)aux->xtime_sec * NSEC_PER_SEC +
	       (aux->tkr_mono.xtime_nsec >> aux->tkr_mono.shift);
	/* tk_update_aux_offs() */
	aux->offs_aux = (s64)(timespec64_to_ns(ts) - tnow);
	ns_to_timespec64(aux->offs_aux, &aux->monotonic_to_aux);
	return 0;
}

int tk_aux_adjust_mult(struct timekeeper *aux, u64 now, s32 mult_adj)
{
	if (!aux->clock_valid)
		return -ENODEV;
	tk_adjust_mult(aux, now, mult_adj);
	return 0;
}

int tk_aux_clock_ns(const struct timekeeper *aux, u64 now, wide_ns *ns)
{
	if (!aux->clock_valid)
		return -ENODEV;
	/* tkr_mono.base + offs_aux + timekeeping_get_ns() */
	*ns = (wide_ns)aux->xtime_sec * NSEC_PER_SEC + aux->offs_aux +
	      tkr_ns(&aux->tkr_mono, now);
	return 0;
}

wide_ns timens_offset_ns(const struct timens_offsets *offs, clockid_t clk)
{
	/* kernel/time/namespace.c timens_setup_vdso_data() */
	const struct suite_clock *c = suite_clock_of(clk);

	if (c && c->base == SUITE_MONO)
		return timespec64_to_ns(&offs->monotonic);
	if (c && c->base == SUITE_BOOT)
		return timespec64_to_ns(&offs->boottime);
	return 0;
}
