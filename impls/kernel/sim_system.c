// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated kernel on the real counter, started from the system's
 * clock values and ticking like a kernel.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_system.h"

wide_ns sim_system_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return timespec_to_ns(&ts);
}

/* how far apart the start values may be read (check_system's OFFSET_NS is 50 us) */
#define START_SKEW_NS 20000

/* a counter reading and the raw clock at the same moment, +- a few 100 ns */
static void paired_read(u64 *cycles, wide_ns *raw)
{
	wide_ns a, b;

	do {
		a = sim_system_ns(CLOCK_MONOTONIC_RAW);
		*cycles = sim_read_tsc_ordered();
		b = sim_system_ns(CLOCK_MONOTONIC_RAW);
	} while (b - a > 2000); /* descheduled in between: again */
	*raw = (a + b) / 2;
}

u64 sim_calibrate_counter_hz(unsigned int ms)
{
	u64 c0, c1;
	wide_ns r0, r1;

	paired_read(&c0, &r0);
	usleep(ms * 1000);
	paired_read(&c1, &r1);
	return (u64)((wide_ns)(c1 - c0) * NSEC_PER_SEC / (r1 - r0));
}

static void ns_to_ts64(wide_ns ns, struct timespec64 *ts)
{
	struct timespec t;

	ns_to_timespec(ns, &t);
	ts->tv_sec = t.tv_sec;
	ts->tv_nsec = t.tv_nsec;
}

void sim_kernel_reset_from_system(struct tk_clocksource *cs, u64 hz)
{
	struct timespec64 wall, mono, sleep;
	struct timekeeper *tk;
	wide_ns raw, real, mon, boot, tai;
	u64 now;

	sim_kernel_detach_all();
	tk_clocksource_init(cs, "tsc", hz, UINT64_MAX, true);
	/*
	 * The others are read just before now. A thread descheduled in between
	 * (a loaded VM, qemu-user) would start our clocks that much behind the
	 * system's for the whole run: read them again until all were read
	 * within START_SKEW_NS of now.
	 */
	for (int tries = 0;; tries++) {
		wide_ns first = sim_system_ns(CLOCK_MONOTONIC_RAW);

		real = sim_system_ns(CLOCK_REALTIME);
		mon = sim_system_ns(CLOCK_MONOTONIC);
		boot = sim_system_ns(CLOCK_BOOTTIME);
		tai = sim_system_ns(CLOCK_TAI);
		paired_read(&now, &raw);
		if (raw - first <= START_SKEW_NS || tries == 1000)
			break;
	}
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

/*
 * the system's MONOTONIC_RAW when the last tick read its counter: read just
 * before it, so that a tick descheduled before it publishes (a loaded
 * machine, qemu-user) counts as late by as much, never as fresh
 */
static s64 last_tick_raw_ns;

void sim_kernel_tick(void)
{
	struct timekeeper *tk = sim_tk_write_begin();
	s64 raw = (s64)sim_system_ns(CLOCK_MONOTONIC_RAW);
	u64 now = sim_read_tsc_ordered();

	tk_forward(tk, now);
	sim_tk_write_end();
	/* update_wall_time(): then every enabled auxiliary clock */
	sim_aux_advance(now);
	__atomic_store_n(&last_tick_raw_ns, raw, __ATOMIC_RELEASE);
}

s64 sim_last_tick_raw_ns(void)
{
	return __atomic_load_n(&last_tick_raw_ns, __ATOMIC_ACQUIRE);
}

static pthread_t ticker;
static unsigned int ticker_hz;
static int ticker_stop;

static void *ticker_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&ticker_stop, __ATOMIC_RELAXED)) {
		sim_kernel_tick();
		usleep(1000000 / ticker_hz);
	}
	return NULL;
}

int sim_ticker_start(unsigned int hz)
{
	int err;

	if (!hz || hz > 1000000) {
		errno = EINVAL;
		return -1;
	}
	ticker_hz = hz;
	__atomic_store_n(&ticker_stop, 0, __ATOMIC_RELAXED);
	err = pthread_create(&ticker, NULL, ticker_main, NULL);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

void sim_ticker_stop(void)
{
	__atomic_store_n(&ticker_stop, 1, __ATOMIC_RELAXED);
	pthread_join(ticker, NULL);
}
