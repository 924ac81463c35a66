/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated kernel running on the real counter, in step with the
 * system's clocks: what the real-system check and the benchmarks need so
 * that every variant reads plausible times and takes the paths a real
 * system takes (a delta of one tick, never one above max_cycles).
 */
#ifndef VDSOBENCH_SIM_SYSTEM_H
#define VDSOBENCH_SIM_SYSTEM_H

#include "impls/kernel/timekeeper.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the system's clock now, in ns */
wide_ns sim_system_ns(clockid_t clk);

/*
 * The counter's frequency, from two readings of it bracketed by
 * CLOCK_MONOTONIC_RAW, ms apart.
 */
u64 sim_calibrate_counter_hz(unsigned int ms);

/*
 * Reset the simulated kernel to a "tsc" clocksource of hz whose clocks
 * read what the system's read now (REALTIME, MONOTONIC, MONOTONIC_RAW,
 * BOOTTIME, TAI), and detach every variant.
 */
void sim_kernel_reset_from_system(struct tk_clocksource *cs, u64 hz);

/* one kernel tick: forward to the counter's value now and publish */
void sim_kernel_tick(void);

/*
 * The system's CLOCK_MONOTONIC_RAW, in ns, when sim_kernel_tick() last read
 * the counter it published (0 before the first): a tick thread is not an
 * interrupt, and under load it runs late, or is descheduled before it
 * publishes; the coarse clocks lag by as much.
 */
s64 sim_last_tick_raw_ns(void);

/* a thread that calls sim_kernel_tick() at hz; 0, or -1 with errno */
int sim_ticker_start(unsigned int hz);
void sim_ticker_stop(void);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_SIM_SYSTEM_H */
