/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lib/vdso/gettimeofday.c as of v6.10: do_hres() returns -1 and the entry
 * point falls back; the seq-begin loop is open coded to notice a time
 * namespace page (v5.6, seed 004); CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
 * adds max_cycles and a 128-bit slow path (v6.10, with x86's
 * vdso_calc_ns()). Without the overflow protection vdso_calc_ns() is the
 * v5.6..v6.9 shape: x86's vdso_calc_delta() then vdso_shift_ns().
 *
 * Hooks it needs, besides generic_datapage.h's: with CONFIG_TIME_NS,
 * timens_offset_of(vdns, clk) giving the struct timens_offset to add
 * (an array lookup upstream, a switch in the RFC).
 */
#ifndef VDSOBENCH_LIB_VDSO_H
#define VDSOBENCH_LIB_VDSO_H

#define IS_ENABLED(option) (option)

static __always_inline bool vdso_clocksource_ok(const struct vdso_data *vd)
{
	return vd->clock_mode != VDSO_CLOCKMODE_NONE;
}

/* x86: the sign bit is the "invalid" marker of __arch_get_hw_counter() */
static __always_inline bool vdso_cycles_ok(u64 cycles)
{
	return (s64)cycles >= 0;
}

#if CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
/*
 * arch/x86/include/asm/vdso/gettimeofday.h (v6.10+): negative motion and
 * deltas which can overflow the multiplication are both above max_cycles
 * (unsigned compare); the sign bit is the invalid marker, so the
 * effective mask is S64_MAX and the effective sign bit is bit 62.
 */
static __always_inline u64 vdso_calc_ns(const struct vdso_data *vd,
					u64 cycles, u64 base)
{
	u64 delta = cycles - vd->cycle_last;

	if (unlikely(delta > vd->max_cycles)) {
		/*
		 * Due to the above mentioned TSC wobbles, filter out
		 * negative motion.  Per the above masking, the effective
		 * sign bit is now bit 62.
		 */
		if (delta & (1ULL << 62))
			return base >> vd->shift;

		/* Handle multiplication overflow gracefully */
		return mul_u64_u32_add_u64_shr(delta & INT64_MAX, vd->mult, base,
					       vd->shift);
	}

	return ((delta * vd->mult) + base) >> vd->shift;
}
#else
static __always_inline u64 vdso_calc_ns(const struct vdso_data *vd,
					u64 cycles, u64 base)
{
	u64 ns = base + vdso_calc_delta(cycles, vd->cycle_last, vd->mask,
					vd->mult);

	return ns >> vd->shift;
}
#endif

#if CONFIG_TIME_NS
static noinline int do_hres_timens(const struct vdso_data *vdns, clockid_t clk,
				   struct timespec *ts)
{
	const struct vdso_data *vd = __arch_get_timens_vdso_data();
	const struct timens_offset offs = timens_offset_of(vdns, clk);
	const struct vdso_timestamp *vdso_ts;
	u64 cycles, ns;
	u32 seq;
	s64 sec;

	if (clk != CLOCK_MONOTONIC_RAW)
		vd = &vd[CS_HRES_COARSE];
	else
		vd = &vd[CS_RAW];
	vdso_ts = &vd->basetime[clk];

	do {
		seq = vdso_read_begin(vd);

		if (unlikely(!vdso_clocksource_ok(vd)))
			return -1;

		cycles = __arch_get_hw_counter(vd->clock_mode);
		if (unlikely(!vdso_cycles_ok(cycles)))
			return -1;
		ns = vdso_calc_ns(vd, cycles, vdso_ts->nsec);
		sec = vdso_ts->sec;
	} while (unlikely(vdso_read_retry(vd, seq)));

	/* Add the namespace offset */
	sec += offs.sec;
	ns += offs.nsec;

	/*
	 * Do this outside the loop: a race inside the loop could result
	 * in __iter_div_u64_rem() being extremely slow.
	 */
	ts->tv_sec = sec + __iter_div_u64_rem(ns, NSEC_PER_SEC, &ns);
	ts->tv_nsec = ns;

	return 0;
}

static noinline int do_coarse_timens(const struct vdso_data *vdns,
				     clockid_t clk, struct timespec *ts)
{
	const struct vdso_data *vd = __arch_get_timens_vdso_data();
	const struct vdso_timestamp *vdso_ts = &vd->basetime[clk];
	const struct timens_offset offs = timens_offset_of(vdns, clk);
	u64 nsec;
	s64 sec;
	s32 seq;

	do {
		seq = vdso_read_begin(vd);
		sec = vdso_ts->sec;
		nsec = vdso_ts->nsec;
	} while (unlikely(vdso_read_retry(vd, seq)));

	/* Add the namespace offset */
	sec += offs.sec;
	nsec += offs.nsec;

	/*
	 * Do this outside the loop: a race inside the loop could result
	 * in __iter_div_u64_rem() being extremely slow.
	 */
	ts->tv_sec = sec + __iter_div_u64_rem(nsec, NSEC_PER_SEC, &nsec);
	ts->tv_nsec = nsec;
	return 0;
}
#else
static __always_inline int do_hres_timens(const struct vdso_data *vdns,
					  clockid_t clk, struct timespec *ts)
{
	(void)vdns, (void)clk, (void)ts;
	return -EINVAL;
}

static __always_inline int do_coarse_timens(const struct vdso_data *vdns,
					    clockid_t clk, struct timespec *ts)
{
	(void)vdns, (void)clk, (void)ts;
	return -1;
}

static __always_inline const struct vdso_data *
__arch_get_timens_vdso_data(void)
{
	return NULL;
}
#endif /* CONFIG_TIME_NS */

__vdso_hot_inline int do_hres(const struct vdso_data *vd, clockid_t clk,
			      struct timespec *ts)
{
	const struct vdso_timestamp *vdso_ts = &vd->basetime[clk];
	u64 cycles, sec, ns;
	u32 seq;

	do {
		/*
		 * Open coded function vdso_read_begin() to handle
		 * VDSO_CLOCKMODE_TIMENS. Time namespace enabled tasks have a
		 * special VVAR page installed which has vd->seq set to 1 and
		 * vd->clock_mode set to VDSO_CLOCKMODE_TIMENS. For non time
		 * namespace affected tasks this does not affect performance
		 * because if vd->seq is odd, i.e. a concurrent update is in
		 * progress the extra check for vd->clock_mode is just a few
		 * extra instructions while spin waiting for vd->seq to become
		 * even again.
		 */
		while (unlikely((seq = READ_ONCE(vd->seq)) & 1)) {
			if (IS_ENABLED(CONFIG_TIME_NS) &&
			    vd->clock_mode == VDSO_CLOCKMODE_TIMENS)
				return do_hres_timens(vd, clk, ts);
			cpu_relax();
		}
		smp_rmb();

		if (unlikely(!vdso_clocksource_ok(vd)))
			return -1;

		cycles = __arch_get_hw_counter(vd->clock_mode);
		if (unlikely(!vdso_cycles_ok(cycles)))
			return -1;
		ns = vdso_calc_ns(vd, cycles, vdso_ts->nsec);
		sec = vdso_ts->sec;
	} while (unlikely(vdso_read_retry(vd, seq)));

	/*
	 * Do this outside the loop: a race inside the loop could result
	 * in __iter_div_u64_rem() being extremely slow.
	 */
	ts->tv_sec = sec + __iter_div_u64_rem(ns, NSEC_PER_SEC, &ns);
	ts->tv_nsec = ns;

	return 0;
}

__vdso_hot_inline int do_coarse(const struct vdso_data *vd, clockid_t clk,
				struct timespec *ts)
{
	const struct vdso_timestamp *vdso_ts = &vd->basetime[clk];
	u32 seq;

	do {
		/*
		 * Open coded function vdso_read_begin() to handle
		 * VDSO_CLOCK_TIMENS. See comment in do_hres().
		 */
		while ((seq = READ_ONCE(vd->seq)) & 1) {
			if (IS_ENABLED(CONFIG_TIME_NS) &&
			    vd->clock_mode == VDSO_CLOCKMODE_TIMENS)
				return do_coarse_timens(vd, clk, ts);
			cpu_relax();
		}
		smp_rmb();

		ts->tv_sec = vdso_ts->sec;
		ts->tv_nsec = vdso_ts->nsec;
	} while (unlikely(vdso_read_retry(vd, seq)));

	return 0;
}

static __always_inline int
__cvdso_clock_gettime_common(const struct vdso_data *vd, clockid_t clock,
			     struct timespec *ts)
{
	u32 msk;

	/* Check for negative values or invalid clocks */
	if (unlikely((u32)clock >= MAX_CLOCKS))
		return -1;

	/*
	 * Convert the clockid to a bitmask and use it to check which
	 * clocks are handled in the VDSO directly.
	 */
	msk = BIT(clock);
	if (likely(msk & VDSO_HRES))
		vd = &vd[CS_HRES_COARSE];
	else if (msk & VDSO_COARSE)
		return do_coarse(&vd[CS_HRES_COARSE], clock, ts);
	else if (msk & VDSO_RAW)
		vd = &vd[CS_RAW];
	else
		return -1;

	return do_hres(vd, clock, ts);
}

VDSO_ENTRY int VDSO_SYM(clock_gettime)(clockid_t clock, struct timespec *ts)
{
	int ret = __cvdso_clock_gettime_common(__arch_get_vdso_data(), clock,
					       ts);

	if (unlikely(ret))
		return clock_gettime_fallback(clock, ts);
	return 0;
}

VDSO_ENTRY int VDSO_SYM(gettimeofday)(struct timeval *tv, struct timezone *tz)
{
	const struct vdso_data *vd = __arch_get_vdso_data();

	if (likely(tv != NULL)) {
		struct timespec ts;

		if (do_hres(&vd[CS_HRES_COARSE], CLOCK_REALTIME, &ts))
			return gettimeofday_fallback(tv, tz);

		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = (u32)ts.tv_nsec / NSEC_PER_USEC;
	}

	if (unlikely(tz != NULL)) {
		if (IS_ENABLED(CONFIG_TIME_NS) &&
		    vd->clock_mode == VDSO_CLOCKMODE_TIMENS)
			vd = __arch_get_timens_vdso_data();

		tz->tz_minuteswest = vd[CS_HRES_COARSE].tz_minuteswest;
		tz->tz_dsttime = vd[CS_HRES_COARSE].tz_dsttime;
	}

	return 0;
}

VDSO_ENTRY time_t VDSO_SYM(time)(time_t *time)
{
	const struct vdso_data *vd = __arch_get_vdso_data();
	time_t t;

	if (IS_ENABLED(CONFIG_TIME_NS) &&
	    vd->clock_mode == VDSO_CLOCKMODE_TIMENS)
		vd = __arch_get_timens_vdso_data();

	t = READ_ONCE(vd[CS_HRES_COARSE].basetime[CLOCK_REALTIME].sec);

	if (time)
		*time = t;

	return t;
}

static __always_inline int
__cvdso_clock_getres_common(const struct vdso_data *vd, clockid_t clock,
			    struct timespec *res)
{
	u32 msk;
	u64 ns;

	/* Check for negative values or invalid clocks */
	if (unlikely((u32)clock >= MAX_CLOCKS))
		return -1;

	if (IS_ENABLED(CONFIG_TIME_NS) &&
	    vd->clock_mode == VDSO_CLOCKMODE_TIMENS)
		vd = __arch_get_timens_vdso_data();

	/*
	 * Convert the clockid to a bitmask and use it to check which
	 * clocks are handled in the VDSO directly.
	 */
	msk = BIT(clock);
	if (msk & (VDSO_HRES | VDSO_RAW)) {
		/*
		 * Preserves the behaviour of posix_get_hrtimer_res().
		 */
		ns = READ_ONCE(vd[CS_HRES_COARSE].hrtimer_res);
	} else if (msk & VDSO_COARSE) {
		/*
		 * Preserves the behaviour of posix_get_coarse_res().
		 */
		ns = LOW_RES_NSEC;
	} else {
		return -1;
	}

	if (likely(res)) {
		res->tv_sec = 0;
		res->tv_nsec = ns;
	}
	return 0;
}

VDSO_ENTRY int VDSO_SYM(clock_getres)(clockid_t clock, struct timespec *res)
{
	int ret = __cvdso_clock_getres_common(__arch_get_vdso_data(), clock,
					      res);

	if (unlikely(ret))
		return clock_getres_fallback(clock, res);
	return 0;
}

#endif /* VDSOBENCH_LIB_VDSO_H */
