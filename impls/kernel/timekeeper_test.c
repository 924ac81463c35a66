// SPDX-License-Identifier: GPL-2.0
/* The simulated timekeeper on its own, against hand-computed values. */
#include <errno.h>

#include "impls/kernel/timekeeper.h"
#include "testing/tap.h"

static wide_ns ns_of(const struct timekeeper *tk, clockid_t clk, u64 now)
{
	wide_ns ns = -1;

	tk_clock_ns(tk, clk, now, &ns);
	return ns;
}

#define SEC ((wide_ns)NSEC_PER_SEC)

int main(void)
{
	const struct timespec64 wall = { 1000000, 0 }, mono = { 100, 0 };
	struct tk_clocksource cs;
	struct timekeeper tk;
	wide_ns ns;
	u64 hi, lo;

	/* clocks_calc_mult_shift: 1 GHz over 600 s is mult 2^23, shift 23 */
	tk_clocksource_init(&cs, "1g", 1000000000ULL, UINT64_MAX, true);
	tap_ok(cs.mult == 1u << 23 && cs.shift == 23,
	       "1 GHz: mult %u shift %u", cs.mult, cs.shift);

	tk_setup(&tk, &cs, 5000, &wall, &mono);
	tap_ok(ns_of(&tk, CLOCK_REALTIME, 5000) == 1000000 * SEC &&
		       ns_of(&tk, CLOCK_MONOTONIC, 5000) == 100 * SEC &&
		       ns_of(&tk, CLOCK_MONOTONIC_RAW, 5000) == 100 * SEC,
	       "setup: REALTIME, MONOTONIC and RAW start where asked");
	tap_ok(ns_of(&tk, CLOCK_MONOTONIC, 5000 + 1500000000ULL) == 101500000000LL,
	       "1.5e9 cycles at 1 GHz are 1.5 s");
	tap_ok(ns_of(&tk, CLOCK_MONOTONIC, 4000) == 100 * SEC,
	       "a counter behind cycle_last is a zero delta");
	tap_ok(tk_clock_ns(&tk, CLOCK_PROCESS_CPUTIME_ID, 0, &ns) == -EINVAL &&
		       tk_clock_ns(&tk, 10, 0, &ns) == -EINVAL &&
		       tk_clock_ns(&tk, -1, 0, &ns) == -EINVAL &&
		       tk_clock_ns(&tk, 16, 0, &ns) == -EINVAL,
	       "clocks the timekeeper does not keep are -EINVAL");

	tk_forward(&tk, 5000 + 2500000000ULL);
	tap_ok(tk.xtime_sec == 1000002 && (tk.tkr_mono.xtime_nsec >> 23) == 500000000,
	       "forward 2.5 s accumulates whole seconds into xtime_sec");
	tap_ok(ns_of(&tk, CLOCK_REALTIME_COARSE, 0) == 1000002 * SEC + 500000000,
	       "coarse clocks read the last tick");

	tk_adjust_mult(&tk, 5000 + 2500000000ULL, 1 << 13);
	tap_ok(ns_of(&tk, CLOCK_MONOTONIC, 5000 + 3500000000ULL) ==
			       103500000000LL + 1000000000LL / 1024 &&
		       ns_of(&tk, CLOCK_MONOTONIC_RAW, 5000 + 3500000000ULL) ==
			       103500000000LL,
	       "NTP +1/1024 on mult: mono 1 s runs 1/1024 s fast, raw does not");

	tk_setup(&tk, &cs, 0, &wall, &mono);
	tk_settime(&tk, 0, &(struct timespec64){ 2000000, 250 });
	tap_ok(ns_of(&tk, CLOCK_REALTIME, 0) == 2000000 * SEC + 250 &&
		       ns_of(&tk, CLOCK_MONOTONIC, 0) == 100 * SEC &&
		       ns_of(&tk, CLOCK_TAI, 0) == 2000000 * SEC + 250,
	       "settimeofday moves REALTIME and TAI only");

	tk_inject_sleep(&tk, 0, &(struct timespec64){ 7, 5 });
	tap_ok(ns_of(&tk, CLOCK_BOOTTIME, 0) == 107 * SEC + 5 &&
		       ns_of(&tk, CLOCK_MONOTONIC, 0) == 100 * SEC,
	       "sleep moves BOOTTIME only");

	tk_setup(&tk, &cs, 0, &(struct timespec64){ 86399, 0 }, &mono);
	tk_schedule_leap(&tk, 86400, +1);
	tk_forward(&tk, 2000000000ULL);
	tap_ok(tk.xtime_sec == 86400 && tk.tai_offset == 1 &&
		       ns_of(&tk, CLOCK_MONOTONIC, 2000000000ULL) == 102 * SEC,
	       "an inserted leap second repeats 86399 and adds a TAI second");

	tk_setup(&tk, &cs, 0, &wall, &mono);
	tk_clocksource_init(&cs, "3g", 3000000000ULL, UINT64_MAX, true);
	tk_change_clocksource(&tk, 1000000000ULL, &cs);
	/*
	 * 3e9 cycles at mult/shift's 3 GHz are 1 s less the rounding of mult:
	 * under one 2^-shift ns per cycle
	 */
	ns = ns_of(&tk, CLOCK_MONOTONIC, 4000000000ULL);
	mul_u64_u32_wide(3000000000ULL, cs.mult, &hi, &lo);
	tap_ok(ns_of(&tk, CLOCK_MONOTONIC, 1000000000ULL) == 101 * SEC &&
		       ns == 101 * SEC +
				     (wide_ns)((hi << (64 - cs.shift)) |
					       (lo >> cs.shift)) &&
		       ns > 102 * SEC - (wide_ns)3000000000ULL / (1 << 23) &&
		       ns <= 102 * SEC,
	       "a clocksource change is continuous and uses the new rate "
	       "(mult %u shift %u: %lld ns)", cs.mult, cs.shift,
	       (long long)(ns - 102 * SEC));
	tap_ok(tk.max_cycles < UINT64_MAX / tk.tkr_mono.mult,
	       "max_cycles leaves headroom for NTP (%llu)",
	       (unsigned long long)tk.max_cycles);

	/* v6.17 auxiliary clocks: 1 GHz core, NTP-adjusted; aux on raw */
	{
		struct timekeeper aux;

		tk_clocksource_init(&cs, "1g", 1000000000ULL, UINT64_MAX, true);
		tk_setup(&tk, &cs, 0, &wall, &mono);
		tk_adjust_mult(&tk, 0, 1 << 13);
		tk_aux_enable(&aux, TIMEKEEPER_AUX_FIRST + 3, &tk, 1000);
		tap_ok(tk_aux_clock_ns(&aux, 1000, &ns) == 0 && ns == 0 &&
			       tk_aux_clock_ns(&aux, 1000 + 2000000000ULL, &ns) == 0 &&
			       ns == 2 * SEC && aux.id == 4,
		       "an aux clock starts at 0 when enabled and runs at the "
		       "raw rate, not the core's NTP-adjusted one");
		tap_ok(tk_aux_settime(&aux, 1000 + SEC, &(struct timespec64){ 5000, 7 }) == 0 &&
			       tk_aux_clock_ns(&aux, 1000 + SEC, &ns) == 0 &&
			       ns == 5000 * SEC + 7 && aux.offs_aux == 4999 * SEC + 7 &&
			       aux.monotonic_to_aux.tv_sec == 4999 &&
			       aux.monotonic_to_aux.tv_nsec == 7,
		       "clock_settime sets the aux offset to its \"monotonic\"");
		tap_ok(tk_aux_settime(&aux, 0, &(struct timespec64){ 1, NSEC_PER_SEC }) == -EINVAL &&
			       tk_aux_settime(&aux, 0, &(struct timespec64){ -1, 0 }) == -EINVAL,
		       "clock_settime refuses what settimeofday would: -EINVAL");
		tap_ok(tk_aux_adjust_mult(&aux, 1000 + SEC, 1 << 13) == 0 &&
			       tk_aux_clock_ns(&aux, 1000 + 2 * SEC, &ns) == 0 &&
			       ns == 5001 * SEC + 7 + SEC / 1024,
		       "clock_adjtime speeds the aux clock up from then on");
		tk_aux_disable(&aux);
		tap_ok(tk_aux_clock_ns(&aux, 0, &ns) == -ENODEV &&
			       tk_aux_settime(&aux, 0, &(struct timespec64){ 1, 0 }) == -ENODEV &&
			       tk_aux_adjust_mult(&aux, 0, 1) == -ENODEV,
		       "a disabled aux clock is -ENODEV");
	}
	return tap_done();
}
