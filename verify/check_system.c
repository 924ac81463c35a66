// SPDX-License-Identifier: GPL-2.0
/*
 * Real-counter variants against the real system's clocks.
 *
 * The simulated timekeeper is calibrated against the system's
 * CLOCK_MONOTONIC_RAW (counter frequency from two bracketed readings
 * CALIBRATE_MS apart), started from the system's own clock values, and
 * ticks at HZ on a thread of its own, as a kernel does. Then every
 * variant is read between two readings of the system clock, for
 * duration_ms. A reading may be off the system's by at most:
 *
 *	OFFSET_NS	the start values are read a few hundred ns apart, and a
 *			VM can be descheduled between two reads
 *	CAL_PPM		the calibration: +-1 us on each end over 200 ms is
 *			10 ppm; 50 gives room for a noisy VM
 *	NTP_PPM		MONOTONIC, REALTIME, BOOTTIME and TAI may be slewed by
 *			NTP up to 500 ppm (MAXFREQ) against MONOTONIC_RAW,
 *			which the simulation does not follow
 *	COARSE_NS	the coarse clocks lag their kernel's last tick: ours
 *			(4 ms at HZ=250) and the system's (10 ms at HZ=100)
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "impls/kernel/sim_kernel.h"
#include "verify/check.h"

#define CALIBRATE_MS 200
#define OFFSET_NS 50000LL
#define CAL_PPM 50
#define NTP_PPM 500
#define COARSE_NS 15000000LL
#define SAMPLE_MS 20

static __int128 sys_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return timespec_to_ns(&ts);
}

/* a counter reading and the raw clock at the same moment, +- a few 100 ns */
static void paired_read(u64 *cycles, __int128 *raw)
{
	__int128 a, b;

	do {
		a = sys_ns(CLOCK_MONOTONIC_RAW);
		*cycles = sim_read_tsc_ordered();
		b = sys_ns(CLOCK_MONOTONIC_RAW);
	} while (b - a > 2000); /* descheduled in between: again */
	*raw = (a + b) / 2;
}

static u64 calibrate_hz(void)
{
	u64 c0, c1;
	__int128 r0, r1;

	paired_read(&c0, &r0);
	usleep(CALIBRATE_MS * 1000);
	paired_read(&c1, &r1);
	return (u64)((__int128)(c1 - c0) * NSEC_PER_SEC / (r1 - r0));
}

static void ns_to_ts64(__int128 ns, struct timespec64 *ts)
{
	struct timespec t;

	ns_to_timespec(ns, &t);
	ts->tv_sec = t.tv_sec;
	ts->tv_nsec = t.tv_nsec;
}

/* a timekeeper that reads what the system reads, now */
static void setup_from_system(struct tk_clocksource *cs, u64 hz)
{
	struct timespec64 wall, mono, sleep;
	struct timekeeper *tk;
	__int128 raw, real, mon, boot, tai;
	u64 now;

	tk_clocksource_init(cs, "tsc", hz, UINT64_MAX, true);
	real = sys_ns(CLOCK_REALTIME);
	mon = sys_ns(CLOCK_MONOTONIC);
	boot = sys_ns(CLOCK_BOOTTIME);
	tai = sys_ns(CLOCK_TAI);
	paired_read(&now, &raw);
	/* the others were read up to a microsecond before now: close enough */
	ns_to_ts64(real, &wall);
	ns_to_ts64(mon, &mono);
	sim_kernel_reset(cs, now, &wall, &mono);

	tk = sim_tk_write_begin();
	tk->raw_sec = (u64)(raw / NSEC_PER_SEC);
	tk->tkr_raw.xtime_nsec = (u64)(raw % NSEC_PER_SEC) << tk->tkr_raw.shift;
	tk->tai_offset = (s32)((tai - real + NSEC_PER_SEC / 2) / NSEC_PER_SEC);
	ns_to_ts64(boot - mon, &sleep);
	tk_inject_sleep(tk, now, &sleep);
	sim_tk_write_end();
}

static int ticker_stop;

static void *ticker_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&ticker_stop, __ATOMIC_RELAXED)) {
		struct timekeeper *tk = sim_tk_write_begin();

		tk_forward(tk, sim_read_tsc_ordered());
		sim_tk_write_end();
		usleep(1000000 / HZ);
	}
	return NULL;
}

static const clockid_t compared[] = {
	CLOCK_REALTIME,	      CLOCK_MONOTONIC,	      CLOCK_MONOTONIC_RAW,
	CLOCK_BOOTTIME,	      CLOCK_TAI,	      CLOCK_REALTIME_COARSE,
	CLOCK_MONOTONIC_COARSE,
};

static __int128 tolerance_ns(clockid_t clk, __int128 elapsed_ns)
{
	__int128 tol = OFFSET_NS + elapsed_ns * CAL_PPM / 1000000;

	if (clk != CLOCK_MONOTONIC_RAW)
		tol += elapsed_ns * NTP_PPM / 1000000;
	if (clk == CLOCK_REALTIME_COARSE || clk == CLOCK_MONOTONIC_COARSE)
		tol += COARSE_NS;
	return tol;
}

/* one comparison; false if the system reads were too far apart to judge */
static bool compare_once(const struct vdso_variant *v, clockid_t clk,
			 __int128 elapsed, struct check_report *r)
{
	struct timespec ts;
	__int128 before, after, got, off = 0, tol;
	int ret;

	before = sys_ns(clk);
	ret = v->clock_gettime(clk, &ts);
	after = sys_ns(clk);
	if (after - before > 1000000)
		return false;
	r->calls++;
	got = timespec_to_ns(&ts);
	if (got < before)
		off = got - before;
	else if (got > after)
		off = got - after;
	tol = tolerance_ns(clk, elapsed);
	if (ret || off > tol || off < -tol)
		check_fail(r, "%s: ret %d, %lld ns off the system's after %lld ms "
			      "(tolerance %lld ns)", check_clock_name(clk), ret,
			   (long long)off, (long long)(elapsed / 1000000),
			   (long long)tol);
	return true;
}

int check_system_all(const struct vdso_variant *const *vs, unsigned int n,
		     unsigned int duration_ms, struct check_report *reports)
{
	struct tk_clocksource cs;
	pthread_t ticker;
	__int128 start;
	u64 hz;
	int failed = 0;

	for (unsigned int i = 0; i < n; i++) {
		reports[i] = (struct check_report){ .name = "system", .ok = true };
		if (!vs[i]->real_counter) {
			reports[i].skipped = true;
			check_note(&reports[i], "needs a real counter");
		}
	}
	hz = calibrate_hz();
	sim_kernel_detach_all();
	setup_from_system(&cs, hz);
	for (unsigned int i = 0; i < n; i++)
		if (vs[i]->real_counter && sim_kernel_attach(vs[i]))
			check_fail(&reports[i], "attach: %s", strerror(errno));

	__atomic_store_n(&ticker_stop, 0, __ATOMIC_RELAXED);
	if (pthread_create(&ticker, NULL, ticker_main, NULL)) {
		for (unsigned int i = 0; i < n; i++)
			check_fail(&reports[i], "could not start the tick thread");
		return -1;
	}
	start = sys_ns(CLOCK_MONOTONIC_RAW);
	for (;;) {
		__int128 elapsed = sys_ns(CLOCK_MONOTONIC_RAW) - start;

		if (elapsed > (__int128)duration_ms * 1000000)
			break;
		for (unsigned int i = 0; i < n; i++) {
			if (!vs[i]->real_counter || !reports[i].ok)
				continue;
			for (unsigned int k = 0; k < ARRAY_SIZE(compared); k++)
				while (!compare_once(vs[i], compared[k], elapsed,
						     &reports[i]))
					;
		}
		usleep(SAMPLE_MS * 1000);
	}
	__atomic_store_n(&ticker_stop, 1, __ATOMIC_RELAXED);
	pthread_join(ticker, NULL);
	sim_kernel_detach_all();

	for (unsigned int i = 0; i < n; i++) {
		if (!reports[i].ok)
			failed = -1;
		else if (!reports[i].skipped)
			check_note(&reports[i],
				   "%llu readings over %u ms within %lld us + "
				   "%d ppm (raw) / %d ppm (NTP-slewed) of the "
				   "system's; counter calibrated at %llu Hz",
				   (unsigned long long)reports[i].calls,
				   duration_ms, OFFSET_NS / 1000, CAL_PPM,
				   CAL_PPM + NTP_PPM, (unsigned long long)hz);
	}
	return failed;
}

int check_system(const struct vdso_variant *v, unsigned int duration_ms,
		 struct check_report *r)
{
	return check_system_all(&v, 1, duration_ms, r);
}
