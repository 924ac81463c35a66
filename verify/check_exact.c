// SPDX-License-Identifier: GPL-2.0
/*
 * Every clock id through every reader, against the oracle (the simulated
 * timekeeper's own arithmetic, tk_clock_ns()).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/clocks.h"
#include "impls/kernel/fake_counter.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_vclock.h"
#include "verify/check.h"
#include "verify/tsc_trap.h"

/* 0..CLOCK_AUX_LAST, then these */
static const clockid_t odd_ids[] = { CLOCK_AUX_LAST + 1, -1, INT_MIN,
				     INT_MAX };
#define NR_IDS (CLOCK_AUX_LAST + 1 + (int)ARRAY_SIZE(odd_ids))

static clockid_t id_at(int i)
{
	return i <= CLOCK_AUX_LAST ? i : odd_ids[i - CLOCK_AUX_LAST - 1];
}

/*
 * counter values relative to cycle_last: behind it, at it, and ahead.
 * Behind it only on x86, whose vDSO clamps such a reading (the TSCs of
 * two sockets may disagree): arm64's vDSO applies the mask and no clamp,
 * because its architected counter is the same on every CPU, so a reading
 * behind cycle_last does not happen there (impls/layouts/arch/arm64.h).
 */
static const s64 fake_deltas[] = {
#ifndef VDSO_ARCH_TIMER
	-5,
#endif
	0, 1, 999, 1000000007LL, 3 * 2399987654LL
};

static bool is_cputime(clockid_t clk)
{
	return clk == CLOCK_PROCESS_CPUTIME_ID || clk == CLOCK_THREAD_CPUTIME_ID;
}

static bool ts_normalized(const struct timespec *ts)
{
	return ts->tv_nsec >= 0 && ts->tv_nsec < NSEC_PER_SEC;
}

/* served in userspace from the counter: a trapped call must read it */
static bool reads_counter(const struct vdso_variant *v, clockid_t clk)
{
	return variant_serves(v, clk) &&
	       (check_is_aux(clk) || !(v->coarse_clocks & BIT(clk)));
}

/*
 * One clock_gettime() call, checked. [lo, hi] are the counter values
 * that bracket the variant's own read (equal, lo_hint, for the fake
 * counter and a trapped one).
 */
static void check_one_gettime(const struct vdso_variant *v, clockid_t clk,
			      u64 lo_hint, enum check_counter mode,
			      struct check_report *r)
{
	struct timekeeper tk;
	struct timespec ts = { -1, -1 }, before, after;
	wide_ns lo_ns, hi_ns, got;
	u64 lo, hi, calls, reads;
	int ret, want;

	sim_tk_snapshot(&tk);
	if (is_cputime(clk))
		clock_gettime(clk, &before);
	calls = sim_syscall_count();
	reads = tsc_trap_reads();
	if (mode == CHECK_BRACKETED) {
		/*
		 * a fake-counter variant here reads the counter itself; its
		 * fallback (the simulated syscall) still reads the fake one,
		 * where the kernel's would read the clocksource: the bracket's
		 * start keeps it inside the bracket
		 */
		vdso_fake_cycles = sim_read_tsc_ordered();
		lo = sim_vclock_cycles(vdso_fake_cycles);
		ret = v->clock_gettime(clk, &ts);
		hi = sim_read_clocksource();
	} else {
		lo = hi = lo_hint;
		check_set_cycles(lo);
		ret = v->clock_gettime(clk, &ts);
	}
	reads = tsc_trap_reads() - reads;
	calls = sim_syscall_count() - calls;
	r->calls++;

	if (mode == CHECK_TRAPPED && reads_counter(v, clk) && !reads)
		return check_fail(r, "%s: the trap saw no counter read: the "
				     "variant did not read its counter",
				  check_clock_name(clk));
	if (variant_serves(v, clk) && calls)
		return check_fail(r, "%s is served in userspace but took the "
				     "fallback syscall", check_clock_name(clk));
	if (!variant_serves(v, clk) && calls != 1)
		return check_fail(r, "%s is not served in userspace but made %llu "
				     "fallback syscalls", check_clock_name(clk),
				  (unsigned long long)calls);

	if (is_cputime(clk)) {
		clock_gettime(clk, &after);
		if (ret || !ts_normalized(&ts) ||
		    timespec_to_ns(&ts) < timespec_to_ns(&before) ||
		    timespec_to_ns(&ts) > timespec_to_ns(&after))
			check_fail(r, "%s: ret %d, %lld.%09ld not within the host "
				      "kernel's readings", check_clock_name(clk),
				   ret, (long long)ts.tv_sec, ts.tv_nsec);
		return;
	}

	want = check_clock_ns(v, &tk, clk, lo, &lo_ns);
	if (want) {
		if (ret != want)
			check_fail(r, "%s: returned %d, want %d (%s)",
				   check_clock_name(clk), ret, want,
				   want == -ENODEV ? "-ENODEV" : "-EINVAL");
		return;
	}
	check_clock_ns(v, &tk, clk, hi, &hi_ns);
	if (check_is_aux(clk) && variant_serves(v, clk))
		lo_ns -= CHECK_AUX_VDSO_SLACK_NS;
	got = timespec_to_ns(&ts);
	if (ret || !ts_normalized(&ts) || got < lo_ns || got > hi_ns) {
		struct timespec want_lo;

		ns_to_timespec(lo_ns, &want_lo);
		check_fail(r,
			   "%s at counter %llu: got ret %d %lld.%09ld, want "
			   "%lld.%09ld%s",
			   check_clock_name(clk), (unsigned long long)lo, ret,
			   (long long)ts.tv_sec, ts.tv_nsec,
			   (long long)want_lo.tv_sec, want_lo.tv_nsec,
			   mode == CHECK_BRACKETED ? " (or up to the bracket's end)" : "");
	}
}

static void check_one_getres(const struct vdso_variant *v, clockid_t clk,
			     struct check_report *r)
{
	struct timespec res = { -1, -1 }, want;
	u64 calls = sim_syscall_count();
	int ret = v->clock_getres(clk, &res);
	bool aux_enabled;
	int want_ret;

	calls = sim_syscall_count() - calls;
	/* clk may be -1 or INT_MAX here: BIT() only of an aux id */
	aux_enabled = check_is_aux(clk) && (v->aux_clocks & BIT(clk));
	if (v->has_getres && (variant_serves(v, clk) || aux_enabled) && calls)
		return check_fail(r, "getres(%s) is served in userspace but "
				     "took the fallback", check_clock_name(clk));
	if (is_cputime(clk)) {
		want_ret = clock_getres(clk, &want) ? -errno : 0;
	} else if (check_is_aux(clk)) {
		/*
		 * v6.17's vDSO answers aux_clock_resolution_ns() for every aux
		 * id, enabled or not (its syscall says -ENODEV for a disabled
		 * one), configured or not (getres_aux); before v6.17 the ids
		 * are -EINVAL
		 */
		want_ret = aux_enabled || (v->has_getres && v->getres_aux) ? 0 : -EINVAL;
		want.tv_sec = 0;
		want.tv_nsec = 1;
	} else {
		struct timekeeper tk;
		wide_ns unused;

		sim_tk_snapshot(&tk);
		want_ret = tk_clock_ns(&tk, clk, 0, &unused);
		want.tv_sec = 0;
		want.tv_nsec = suite_clock_is(clk, SUITE_COARSE) ?
				       LOW_RES_NSEC :
				       tk.hrtimer_res;
	}
	if (ret != want_ret)
		return check_fail(r, "getres(%s) returned %d, want %d",
				  check_clock_name(clk), ret, want_ret);
	if (!ret && (res.tv_sec != want.tv_sec || res.tv_nsec != want.tv_nsec))
		return check_fail(r, "getres(%s) = %lld.%09ld, want %lld.%09ld",
				  check_clock_name(clk), (long long)res.tv_sec,
				  res.tv_nsec, (long long)want.tv_sec,
				  want.tv_nsec);
	/* a NULL res is legal: only the return value is asked for */
	if (v->clock_getres(clk, NULL) != want_ret)
		check_fail(r, "getres(%s, NULL) returned another value",
			   check_clock_name(clk));
}

const char *check_exact_upstream_note(const struct vdso_variant *v)
{
	if (!v->has_getres || !v->getres_aux)
		return NULL;
	return v->aux_clocks ?
		       "upstream's own difference: getres of a disabled aux "
		       "clock is 1 ns from the vDSO, -ENODEV from the syscall" :
		       "upstream's own difference: getres of an aux clock is "
		       "1 ns from the vDSO, -EINVAL from the syscall (built "
		       "without CONFIG_POSIX_AUX_CLOCKS)";
}

static void check_gettimeofday(const struct vdso_variant *v, u64 c,
			       enum check_counter mode, struct check_report *r)
{
	struct timekeeper tk;
	struct timeval tv = { -1, -1 };
	struct timezone tz = { 12345, 12345 };
	wide_ns lo_ns, hi_ns;
	u64 lo, hi;
	s64 got_us;
	int ret;

	sim_tk_snapshot(&tk);
	if (mode == CHECK_BRACKETED) {
		vdso_fake_cycles = sim_read_tsc_ordered(); /* as above */
		lo = sim_vclock_cycles(vdso_fake_cycles);
		ret = v->gettimeofday(&tv, &tz);
		hi = sim_read_clocksource();
	} else {
		lo = hi = c;
		check_set_cycles(c);
		ret = v->gettimeofday(&tv, &tz);
	}
	sim_clock_ns(&tk, CLOCK_REALTIME, lo, &lo_ns);
	sim_clock_ns(&tk, CLOCK_REALTIME, hi, &hi_ns);
	got_us = (s64)tv.tv_sec * USEC_PER_SEC + tv.tv_usec;
	if (ret || tv.tv_usec < 0 || tv.tv_usec >= USEC_PER_SEC ||
	    got_us < lo_ns / NSEC_PER_USEC || got_us > hi_ns / NSEC_PER_USEC)
		return check_fail(r, "gettimeofday: ret %d, %lld.%06ld, want "
				     "%lld us", ret, (long long)tv.tv_sec,
				  (long)tv.tv_usec,
				  (long long)(lo_ns / NSEC_PER_USEC));
	if (tz.tz_minuteswest != -60 || tz.tz_dsttime != 1)
		return check_fail(r, "gettimeofday: timezone %d/%d, want -60/1",
				  tz.tz_minuteswest, tz.tz_dsttime);

	tz.tz_minuteswest = tz.tz_dsttime = 777;
	if (v->gettimeofday(NULL, &tz) || tz.tz_minuteswest != -60 ||
	    tz.tz_dsttime != 1)
		return check_fail(r, "gettimeofday(NULL, tz) did not give the "
				     "timezone alone");
	if (v->gettimeofday(&tv, NULL) || v->gettimeofday(NULL, NULL))
		return check_fail(r, "gettimeofday with a NULL pointer failed");
}

static void check_time(const struct vdso_variant *v, struct check_report *r)
{
	struct timekeeper tk;
	time_t t = 0, ret;

	sim_tk_snapshot(&tk);
	ret = v->time(&t);
	if (ret != (time_t)tk.xtime_sec || t != ret)
		check_fail(r, "time() = %lld (stored %lld), want %llu",
			   (long long)ret, (long long)t,
			   (unsigned long long)tk.xtime_sec);
	if (v->time(NULL) != (time_t)tk.xtime_sec)
		check_fail(r, "time(NULL) differs from xtime_sec");
}

/*
 * The aux clocks as a v6.17 kernel could have them: 0 and 1 enabled (1
 * steered), 2 set to a date, 5 enabled and disabled again (its vDSO data
 * says so), 7 set close to 0, the others never enabled. Layouts without
 * aux clocks see the same kernel state and must answer -EINVAL.
 */
static void setup_aux_clocks(u64 last)
{
	static const unsigned int on[] = { 0, 1, 2, 5, 7 };

	for (unsigned int i = 0; i < ARRAY_SIZE(on); i++)
		sim_aux_clock_enable(on[i], true, last);
	sim_aux_clock_adjtime(CLOCK_AUX + 1, last, 777);
	sim_aux_clock_settime(CLOCK_AUX + 2, last,
			      &(struct timespec64){ 1800000000, 999999999 });
	sim_aux_clock_settime(CLOCK_AUX + 7, last,
			      &(struct timespec64){ 0, 5 });
	sim_aux_clock_enable(5, false, last);
}

/* what the counter values were, for the report */
static void describe_counter(const struct vdso_variant *v,
			     enum check_counter mode, const char *why,
			     u64 reads, u64 emulated, char *buf, size_t len)
{
	/* a fake-counter variant checked so reads the counter itself */
	const char *itself = v->real_counter ? "" :
				"; the variant reads the counter itself, not "
				"the fake one";
	size_t n;

	if (mode == CHECK_FAKE) {
		snprintf(buf, len, "exact to the nanosecond");
	} else if (mode == CHECK_BRACKETED) {
		snprintf(buf, len, "bracketed by ordered counter reads (no "
			 "trap: %s%s)", why, itself);
	} else {
		n = (size_t)snprintf(buf, len, "exact to the nanosecond, ");
		if (n < len)
			check_trapped_note(buf + n, len - n, reads, emulated);
		n = strlen(buf);
		if (*itself && n < len)
			snprintf(buf + n, len - n, " (%s)", itself + 2);
	}
}

int check_exact(const struct vdso_variant *v, struct check_report *r)
{
	struct tk_clocksource cs;
	u64 last = 1000000, reads, emulated;
	char why[160] = "", how[320];
	enum check_counter mode;

	r->name = "exact";
	r->ok = true;
	mode = check_counter_begin(v, why, sizeof(why));
	r->counter = check_counter_name(mode);
	reads = tsc_trap_reads();
	emulated = tsc_trap_emulated();
	if (mode == CHECK_BRACKETED) {
		/* any mult/shift will do: the oracle uses the same ones */
		last = sim_read_clocksource();
	}
	check_reset_fake_kernel(&cs, last);
	setup_aux_clocks(last);
	if (check_attach(v)) {
		check_fail(r, "attach: %m");
		check_counter_end(mode);
		return -1;
	}

	for (int i = 0; i < NR_IDS; i++) {
		if (mode == CHECK_BRACKETED) {
			check_one_gettime(v, id_at(i), 0, mode, r);
		} else {
			for (unsigned int d = 0; d < ARRAY_SIZE(fake_deltas); d++)
				check_one_gettime(v, id_at(i),
						  last + (u64)fake_deltas[d],
						  mode, r);
		}
		check_one_getres(v, id_at(i), r);
	}
	check_gettimeofday(v, last + 123456789, mode, r);
	check_time(v, r);
	reads = tsc_trap_reads() - reads;
	emulated = tsc_trap_emulated() - emulated;
	check_counter_end(mode);

	sim_kernel_detach(v);
	describe_counter(v, mode, why, reads, emulated, how, sizeof(how));
	if (r->ok)
		check_note(r, "%llu calls: clock ids 0..%d (aux %s), %d, -1, "
			      "INT_MIN, INT_MAX %s; getres, gettimeofday, time",
			   (unsigned long long)r->calls, CLOCK_AUX_LAST,
			   v->aux_clocks ? "in userspace while enabled" :
					   "-EINVAL, as before v6.17",
			   CLOCK_AUX_LAST + 1, how);
	return r->ok ? 0 : -1;
}
