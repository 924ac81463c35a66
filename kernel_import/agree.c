// SPDX-License-Identifier: GPL-2.0
/*
 * vdsobench_agree A B: do two variants give the same answers, to the
 * nanosecond? Both are fake-counter variants (the counter a test sets),
 * attached to one simulated kernel, so every reading is a pure function of
 * the timekeeper and the counter value and any difference is a difference
 * of the code. `vdsobench import --agree LAYOUT` runs it between an
 * imported tree and the transcribed layout of the same version.
 *
 * What is compared: every clock id (0..CLOCK_AUX_LAST + 1, -1, INT_MIN,
 * INT_MAX) through clock_gettime() and clock_getres(), gettimeofday() with
 * and without each argument, and time(); return values and results; at
 * counter values around cycle_last (behind it, at it, ahead by up to
 * 200 s, past max_cycles and past a 64-bit product with mult), in a series of kernel states: boot, ticks,
 * NTP adjustments both ways, settimeofday back and forward, injected
 * sleep, an inserted leap second, a timezone, a 32-bit clocksource (the
 * fallback) and back, and, when both have them, time namespaces.
 *
 * Exit status: 0 when every reading agrees, 1 when one differs (the first
 * ten are printed), 2 for bad usage.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "impls/kernel/fake_counter.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/registry.h"

#define LAST 1000000ULL
#define FREQ 2399987654ULL
#define SHOWN 10

static const struct vdso_variant *va, *vb;
static const char *state = "boot";
static unsigned long long compared, differ;

static const s64 deltas[] = { -1000000, -3, 0, 1, 999, 1000000007LL,
			      3 * (s64)FREQ, 200 * (s64)FREQ };

static void differs(u64 c, const char *what, int ra, long long sa, long long na,
		    int rb, long long sb, long long nb)
{
	differ++;
	if (differ > SHOWN)
		return;
	printf("differ: %s, counter %llu: %s: %s %d %lld.%09lld, %s %d %lld.%09lld\n",
	       state, (unsigned long long)c, what, va->name, ra, sa, na, vb->name,
	       rb, sb, nb);
}

static void compare(u64 c, const char *what, int ra, long long sa, long long na,
		    int rb, long long sb, long long nb)
{
	compared++;
	if (ra != rb || (!ra && (sa != sb || na != nb)))
		differs(c, what, ra, sa, na, rb, sb, nb);
}

static void readings_at(u64 c)
{
	static const clockid_t odd[] = { CLOCK_AUX_LAST + 1, -1, INT_MIN, INT_MAX };
	struct timespec a, b;
	struct timeval tva, tvb;
	struct timezone tza, tzb;
	time_t ta, tb, pa = 0, pb = 0;
	char what[64];
	int ra, rb;

	vdso_fake_cycles = c;
	for (int i = 0; i <= CLOCK_AUX_LAST + (int)ARRAY_SIZE(odd); i++) {
		clockid_t clk = i <= CLOCK_AUX_LAST ? i : odd[i - CLOCK_AUX_LAST - 1];
		bool cputime = clk == CLOCK_PROCESS_CPUTIME_ID ||
			       clk == CLOCK_THREAD_CPUTIME_ID;

		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		ra = va->clock_gettime(clk, &a);
		rb = vb->clock_gettime(clk, &b);
		snprintf(what, sizeof(what), "clock_gettime(%d)", clk);
		/* the CPU-time clocks are the host's: only the return value is theirs */
		compare(c, what, ra, cputime ? 0 : a.tv_sec, cputime ? 0 : a.tv_nsec,
			rb, cputime ? 0 : b.tv_sec, cputime ? 0 : b.tv_nsec);
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		ra = va->clock_getres(clk, &a);
		rb = vb->clock_getres(clk, &b);
		snprintf(what, sizeof(what), "clock_getres(%d)", clk);
		compare(c, what, ra, a.tv_sec, a.tv_nsec, rb, b.tv_sec, b.tv_nsec);
	}
	memset(&tva, 0, sizeof(tva));
	memset(&tvb, 0, sizeof(tvb));
	memset(&tza, 0, sizeof(tza));
	memset(&tzb, 0, sizeof(tzb));
	ra = va->gettimeofday(&tva, &tza);
	rb = vb->gettimeofday(&tvb, &tzb);
	compare(c, "gettimeofday(tv, tz)", ra, tva.tv_sec, tva.tv_usec, rb,
		tvb.tv_sec, tvb.tv_usec);
	compare(c, "gettimeofday(tv, tz) tz", ra, tza.tz_minuteswest, tza.tz_dsttime,
		rb, tzb.tz_minuteswest, tzb.tz_dsttime);
	ra = va->gettimeofday(&tva, NULL);
	rb = vb->gettimeofday(&tvb, NULL);
	compare(c, "gettimeofday(tv, NULL)", ra, tva.tv_sec, tva.tv_usec, rb,
		tvb.tv_sec, tvb.tv_usec);
	ra = va->gettimeofday(NULL, &tza);
	rb = vb->gettimeofday(NULL, &tzb);
	compare(c, "gettimeofday(NULL, tz)", ra, tza.tz_minuteswest,
		tza.tz_dsttime, rb, tzb.tz_minuteswest, tzb.tz_dsttime);
	ta = va->time(&pa);
	tb = vb->time(&pb);
	compare(c, "time(&t)", 0, ta, pa, 0, tb, pb);
	compare(c, "time(NULL)", 0, va->time(NULL), 0, 0, vb->time(NULL), 0);
}

static void readings(void)
{
	struct timekeeper tk;

	sim_tk_snapshot(&tk);
	for (unsigned int i = 0; i < ARRAY_SIZE(deltas); i++)
		readings_at(tk.tkr_mono.cycle_last + (u64)deltas[i]);
	if (tk.max_cycles) {
		readings_at(tk.tkr_mono.cycle_last + tk.max_cycles - 1);
		readings_at(tk.tkr_mono.cycle_last + tk.max_cycles + 1);
	}
	/* a delta whose product with mult overflows 64 bits (twice over) */
	readings_at(tk.tkr_mono.cycle_last + 2 * (U64_MAX / tk.tkr_mono.mult));
}

/* one change of the kernel's state at counter `at`, then every reading */
#define STEP(name, at, change)                                              \
	do {                                                                \
		struct timekeeper *tk = sim_tk_write_begin();               \
		u64 now = (at);                                             \
		(void)now;                                                  \
		change;                                                     \
		sim_tk_write_end();                                         \
		state = (name);                                             \
		readings();                                                 \
	} while (0)

static void states(bool timens)
{
	const struct timespec64 wall = { 1700000000, 123456789 };
	const struct timespec64 mono = { 1000, 5 };
	const struct timespec64 back = { 1600000000, 999999999 };
	const struct timespec64 fwd = { 1800000000, 1 };
	const struct timespec64 sleep = { 30, 500000000 };
	const struct timezone tz = { -60, 1 };
	struct tk_clocksource tsc, narrow;
	u64 t = LAST;

	tk_clocksource_init(&tsc, "fake-tsc", FREQ, U64_MAX, true);
	tk_clocksource_init(&narrow, "fake-32", 1000000000ULL, (1ULL << 32) - 1, true);
	sim_kernel_reset(&tsc, t, &wall, &mono);
	state = "boot";
	readings();
	STEP("a tick 1 s later", t += FREQ + 12345, tk_forward(tk, now));
	STEP("NTP: mult + 1000", t += FREQ / 250, tk_adjust_mult(tk, now, 1000));
	STEP("a tick after it", t += FREQ / 250, tk_forward(tk, now));
	STEP("NTP: mult - 3000", t += FREQ / 3, tk_adjust_mult(tk, now, -3000));
	STEP("settimeofday back", t += 777, tk_settime(tk, now, &back));
	STEP("settimeofday forward", t += 1, tk_settime(tk, now, &fwd));
	STEP("30.5 s of sleep injected", t += 5, tk_inject_sleep(tk, now, &sleep));
	STEP("a leap second scheduled", t += 9, tk_schedule_leap(tk, 1800000003, +1));
	STEP("4 s later, past the leap", t += 4 * FREQ, tk_forward(tk, now));
	sim_set_sys_tz(&tz);
	state = "a timezone set";
	readings();
	STEP("a 32-bit clocksource", t += 1000, tk_change_clocksource(tk, now, &narrow));
	STEP("back to the 64-bit one", t += 1000, tk_change_clocksource(tk, now, &tsc));
	if (timens) {
		const struct timens_offsets offs = { { 86400 * 365, 250000000 },
						     { -3600, 750000000 } };

		if (sim_timens_enter(va, &offs) || sim_timens_enter(vb, &offs)) {
			fprintf(stderr, "vdsobench_agree: cannot enter a time namespace\n");
			differ++;
			return;
		}
		state = "in a time namespace";
		readings();
		STEP("a tick in the namespace", t += FREQ, tk_forward(tk, now));
		sim_timens_leave(va);
		sim_timens_leave(vb);
		state = "out of it again";
		readings();
	}
}

static const struct vdso_variant *variant(const char *name)
{
	const struct vdso_variant *v = vdso_variant_find(name);

	if (!v) {
		fprintf(stderr, "vdsobench_agree: %s: no such variant\n", name);
		return NULL;
	}
	if (v->real_counter) {
		fprintf(stderr, "vdsobench_agree: %s: not a fake-counter variant "
				"(valid: LAYOUT+fake+INLINE)\n", name);
		return NULL;
	}
	return v;
}

int main(int argc, char **argv)
{
	bool timens;

	if (argc == 2 && !strcmp(argv[1], "--help")) {
		printf("usage: vdsobench_agree A B\n"
		       "Compares two fake-counter variants reading by reading (every\n"
		       "clock, getres, gettimeofday, time) in a series of kernel\n"
		       "states; exit 0 if they agree to the nanosecond, 1 if not.\n");
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: vdsobench_agree A B (two fake-counter variants)\n");
		return 2;
	}
	va = variant(argv[1]);
	vb = variant(argv[2]);
	if (!va || !vb)
		return 2;
	if (sim_kernel_attach(va) || sim_kernel_attach(vb)) {
		perror("vdsobench_agree: attach");
		return 1;
	}
	timens = va->has_timens && vb->has_timens;
	states(timens);
	sim_kernel_detach_all();
	if (differ > SHOWN)
		printf("differ: ... %llu more\n", differ - SHOWN);
	printf("agree: %s and %s: %llu of %llu readings differ%s\n", va->name,
	       vb->name, differ, compared,
	       timens ? "" : " (time namespaces: not in both)");
	return differ ? 1 : 0;
}
