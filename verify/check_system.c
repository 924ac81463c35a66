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
 *	OFFSET_NS	the start values are read within 20 us of each other
 *			(sim_kernel_reset_from_system() reads them again
 *			until they are), and a VM can be descheduled between
 *			two reads of a comparison
 *	CAL_PPM		the calibration: +-1 us on each end over 200 ms is
 *			10 ppm; 50 gives room for a noisy VM
 *	NTP_PPM		MONOTONIC, REALTIME, BOOTTIME and TAI may be slewed by
 *			NTP up to 500 ppm (MAXFREQ) against MONOTONIC_RAW,
 *			which the simulation does not follow
 *	COARSE_NS	the coarse clocks lag their kernel's last tick: ours
 *			(4 ms at HZ=250) and the system's (10 ms at HZ=100)
 *	late tick	ours is a thread, not an interrupt: on a loaded machine
 *			it runs late, and our coarse clocks lag by as much
 *			more (measured: the time since its last tick, beyond
 *			one period)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clocks.h"
#include "impls/counters/available.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_system.h"
#include "verify/check.h"

#define CALIBRATE_MS 200
#define OFFSET_NS 50000LL
#define CAL_PPM 50
#define NTP_PPM 500
#define COARSE_NS 15000000LL
#define SAMPLE_MS 20

static const clockid_t compared[] = { SUITE_CLOCKS(SUITE_CLOCK_ID) };

static wide_ns tolerance_ns(clockid_t clk, wide_ns elapsed_ns,
			     wide_ns tick_late_ns)
{
	wide_ns tol = OFFSET_NS + elapsed_ns * CAL_PPM / 1000000;

	if (!suite_clock_is(clk, SUITE_RAW))
		tol += elapsed_ns * NTP_PPM / 1000000;
	if (suite_clock_is(clk, SUITE_COARSE))
		tol += COARSE_NS + (tick_late_ns > 0 ? tick_late_ns : 0);
	return tol;
}

/* how much later than one period after it our last tick is, now */
static wide_ns tick_lateness_ns(void)
{
	wide_ns since = sim_system_ns(CLOCK_MONOTONIC_RAW) -
			 sim_last_tick_raw_ns();

	return since - 1000000000 / HZ;
}

/* one comparison; false if the system reads were too far apart to judge */
static bool compare_once(const struct vdso_variant *v, clockid_t clk,
			 wide_ns elapsed, struct check_report *r)
{
	struct timespec ts;
	wide_ns before, after, got, off = 0, tol, late;
	int ret;

	late = tick_lateness_ns();
	before = sim_system_ns(clk);
	ret = v->clock_gettime(clk, &ts);
	after = sim_system_ns(clk);
	if (after - before > 1000000)
		return false;
	r->calls++;
	got = timespec_to_ns(&ts);
	if (got < before)
		off = got - before;
	else if (got > after)
		off = got - after;
	tol = tolerance_ns(clk, elapsed, late);
	if (ret || off > tol || off < -tol)
		check_fail(r,
			   "%s: ret %d, %lld ns off the system's after %lld ms "
			   "(tolerance %lld ns)",
			   check_clock_name(clk), ret, (long long)off,
			   (long long)(elapsed / 1000000), (long long)tol);
	return true;
}

/*
 * The suite's clocks this system answers, into clks; the others' names into
 * refused (an alarm clock is EINVAL without an RTC, an aux clock until it is
 * enabled): they are not compared, and the report says so.
 */
static unsigned int answered(clockid_t *clks, char *refused, size_t size)
{
	unsigned int m = 0;
	size_t used = 0;

	refused[0] = '\0';
	for (unsigned int k = 0; k < ARRAY_SIZE(compared); k++) {
		struct timespec ts;

		if (!clock_gettime(compared[k], &ts)) {
			clks[m++] = compared[k];
			continue;
		}
		used += (size_t)snprintf(refused + used, size - used, "%s%s",
					 used ? ", " : "",
					 check_clock_name(compared[k]));
		if (used >= size)
			used = size - 1;
	}
	return m;
}

/*
 * The simulated kernel ticks on the real counter, which AArch32 under
 * qemu-arm cannot read: then no comparison, each real variant skipped.
 */
static bool no_real_counter(const struct vdso_variant *const *vs,
			    unsigned int n, struct check_report *reports)
{
	const char *why = IS_ENABLED(__arm__) ?
		vdso_counter_unavailable("isb_mrrc_isb") : NULL;

	if (!why)
		return false;
	for (unsigned int i = 0; i < n; i++) {
		if (!vs[i]->real_counter)
			continue;
		reports[i].skipped = true;
		check_note(&reports[i], "no counter for the simulated kernel "
			   "to tick on: %s", why);
	}
	return true;
}

int check_system_all(const struct vdso_variant *const *vs, unsigned int n,
		     unsigned int duration_ms, struct check_report *reports)
{
	clockid_t clks[ARRAY_SIZE(compared)];
	char refused[256];
	struct tk_clocksource cs;
	unsigned int nclks;
	wide_ns start;
	u64 hz;
	int failed = 0;

	for (unsigned int i = 0; i < n; i++) {
		reports[i] =
			(struct check_report){.name = "system", .ok = true};
		if (!vs[i]->real_counter) {
			reports[i].skipped = true;
			check_note(&reports[i], "needs a real counter");
		}
	}
	if (no_real_counter(vs, n, reports))
		return 0;
	nclks = answered(clks, refused, sizeof(refused));
	hz = sim_calibrate_counter_hz(CALIBRATE_MS);
	sim_kernel_reset_from_system(&cs, hz);
	for (unsigned int i = 0; i < n; i++)
		if (vs[i]->real_counter && sim_kernel_attach(vs[i]))
			check_fail(&reports[i], "attach: %s", strerror(errno));

	if (sim_ticker_start(HZ)) {
		for (unsigned int i = 0; i < n; i++)
			check_fail(&reports[i],
				   "could not start the tick thread");
		return -1;
	}
	start = sim_system_ns(CLOCK_MONOTONIC_RAW);
	for (;;) {
		wide_ns elapsed = sim_system_ns(CLOCK_MONOTONIC_RAW) - start;

		if (elapsed > (wide_ns)duration_ms * 1000000)
			break;
		for (unsigned int i = 0; i < n; i++) {
			if (!vs[i]->real_counter || !reports[i].ok)
				continue;
			for (unsigned int k = 0; k < nclks; k++)
				while (!compare_once(vs[i], clks[k],
						     elapsed, &reports[i]))
					;
		}
		usleep(SAMPLE_MS * 1000);
	}
	sim_ticker_stop();
	sim_kernel_detach_all();

	for (unsigned int i = 0; i < n; i++) {
		if (!reports[i].ok)
			failed = -1;
		else if (!reports[i].skipped)
			check_note(&reports[i],
				   "%llu readings over %u ms within %lld us + "
				   "%d ppm (raw) / %d ppm (NTP-slewed) of the "
				   "system's; counter calibrated at %llu Hz%s%s",
				   (unsigned long long)reports[i].calls,
				   duration_ms, OFFSET_NS / 1000, CAL_PPM,
				   CAL_PPM + NTP_PPM, (unsigned long long)hz,
				   *refused ? "; not compared, the system "
					      "refuses them: " :
					      "",
				   refused);
	}
	return failed;
}

int check_system(const struct vdso_variant *v, unsigned int duration_ms,
		 struct check_report *r)
{
	return check_system_all(&v, 1, duration_ms, r);
}
