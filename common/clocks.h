/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The clocks the suite measures and checks: one row a clock, the one table
 * C and Python both read (scripts/vdsobench_cli/core/clocks.py parses the
 * rows of SUITE_CLOCKS; keep one row a line). The rows' order is the order
 * every list of them is printed: the harness's default --clocks
 * (bench/subjects.c), verify's readers and its comparison with the system,
 * the live sample, the sim driver's --list-json ("default_clocks").
 *
 * X(name, clock id, kind, base, label, short, abbrev)
 *   kind    HRES: reads the counter; COARSE: the last tick's time, no
 *           counter (getres says the tick, verify allows a tick's lag);
 *           RAW: the counter without NTP's frequency correction (its own
 *           base, its own mult and shift)
 *   base    the offset the kernel adds to xtime: REAL none, MONO
 *           wall_to_monotonic, BOOT that and offs_boot, TAI tai_offset (a
 *           RAW clock is MONO here: what settimeofday() and a time
 *           namespace do to it). settimeofday() moves REAL and TAI clocks;
 *           a time namespace offsets MONO and BOOT ones
 *           (kernel/time/namespace.c timens_setup_vdso_data())
 *   label   the clock in the cover letter's block and reports' tables
 *   short   the clock on a chart's axis
 *   abbrev  the clock where a column is narrow (the fleet review's matrix)
 *
 * OTHER_CLOCKS are clocks the simulated kernel computes (its syscall path
 * answers them) that the suite does not list: moving a row from there to
 * SUITE_CLOCKS adds it to every command (docs/variants.md, "Adding a
 * clock"). A layout serves a clock only where its own masks, transcribed
 * from its kernel, name it; every other clock takes the syscall path.
 */
#ifndef VDSOBENCH_COMMON_CLOCKS_H
#define VDSOBENCH_COMMON_CLOCKS_H

#include <time.h>

enum suite_clock_kind { SUITE_HRES, SUITE_COARSE, SUITE_RAW };
enum suite_clock_base { SUITE_REAL, SUITE_MONO, SUITE_BOOT, SUITE_TAI };

/* clang-format off */
#define SUITE_CLOCKS(X) \
	X("realtime", CLOCK_REALTIME, HRES, REAL, "REALTIME", "REALTIME", "RT") \
	X("monotonic", CLOCK_MONOTONIC, HRES, MONO, "MONOTONIC", "MONO", "MONO") \
	X("monotonic_raw", CLOCK_MONOTONIC_RAW, RAW, MONO, "MONOTONIC_RAW", "MONO_RAW", "RAW") \
	X("boottime", CLOCK_BOOTTIME, HRES, BOOT, "BOOTTIME", "BOOTTIME", "BOOT") \
	X("tai", CLOCK_TAI, HRES, TAI, "TAI", "TAI", "TAI") \
	X("realtime_coarse", CLOCK_REALTIME_COARSE, COARSE, REAL, "REALTIME_COARSE", "REAL_COARSE", "RT_C") \
	X("monotonic_coarse", CLOCK_MONOTONIC_COARSE, COARSE, MONO, "MONOTONIC_COARSE", "MONO_COARSE", "MONO_C")

#define OTHER_CLOCKS(X) \
	X("realtime_alarm", CLOCK_REALTIME_ALARM, HRES, REAL, "REALTIME_ALARM", "REAL_ALARM", "RT_AL") \
	X("boottime_alarm", CLOCK_BOOTTIME_ALARM, HRES, BOOT, "BOOTTIME_ALARM", "BOOT_ALARM", "BT_AL")
/* clang-format on */

#define SUITE_CLOCK_ONE(name, id, kind, base, label, short, abbrev) +1
#define NR_SUITE_CLOCKS (0 SUITE_CLOCKS(SUITE_CLOCK_ONE))

/* an initializer item of each: { SUITE_CLOCKS(SUITE_CLOCK_ID) } */
#define SUITE_CLOCK_ID(name, id, kind, base, label, short, abbrev) id,
/* "realtime,monotonic,...," (a list the harness's --clocks parser reads) */
#define SUITE_CLOCK_LIST_ITEM(name, id, kind, base, label, short, abbrev) name ","

struct suite_clock {
	const char *name;
	clockid_t id;
	enum suite_clock_kind kind;
	enum suite_clock_base base;
};

#define SUITE_CLOCK_ROW(name, id, kind, base, label, short, abbrev) \
	{ name, id, SUITE_##kind, SUITE_##base },

/* one case a row: a jump on the id, as the kernel's switch on clk compiles */
#define SUITE_CLOCK_CASE(name, id, kind, base, label, short, abbrev)      \
	case id: {                                                         \
		static const struct suite_clock row = { name, id,          \
							SUITE_##kind, \
							SUITE_##base };   \
		return &row;                                               \
	}

/*
 * The row of clock id clk: NULL for a clock neither table has (the process
 * and thread CPU-time clocks, an aux clock). A switch, not a search: the
 * simulated syscall path calls this on every fallback, and the gate counts
 * its instructions; a row listed twice is a duplicate case, a build error.
 */
static inline const struct suite_clock *suite_clock_of(clockid_t clk)
{
	switch (clk) {
		SUITE_CLOCKS(SUITE_CLOCK_CASE)
		OTHER_CLOCKS(SUITE_CLOCK_CASE)
	default:
		return NULL;
	}
}

static inline int suite_clock_is(clockid_t clk, enum suite_clock_kind kind)
{
	const struct suite_clock *c = suite_clock_of(clk);

	return c && c->kind == kind;
}

#endif /* VDSOBENCH_COMMON_CLOCKS_H */
