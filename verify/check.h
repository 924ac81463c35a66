/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The correctness checks `vdsobench verify` runs on each variant, and
 * the tests assert on. Each check fills a report and returns 0 (passed)
 * or -1 (failed: the report's detail says the first failure).
 *
 * The checks own the simulated kernel while they run: they reset it,
 * attach the variant and detach everything when done. They are not
 * reentrant.
 */
#ifndef VDSOBENCH_CHECK_H
#define VDSOBENCH_CHECK_H

#include <stdarg.h>

#include "impls/common/variant.h"
#include "impls/kernel/wide.h"

struct check_report {
	const char *name;
	bool ok;
	bool skipped; /* not applicable to this variant; ok stays true */
	char detail[512];
	u64 calls; /* how many reader calls the check made */
	/*
	 * how it read the counter: check_counter_name()'s, or "real" (the
	 * concurrency check's hardware reads); NULL where it did not
	 */
	const char *counter;
	bool starved; /* too few reads checked to judge the read path (ok false) */
};

void check_fail(struct check_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void check_note(struct check_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Every clock id 0..CLOCK_AUX_LAST (the v6.17 auxiliary clocks 16..23
 * included: some enabled, one steered, one set, one disabled again),
 * CLOCK_AUX_LAST + 1, -1, INT_MIN and INT_MAX through clock_gettime,
 * clock_getres, gettimeofday and time, against the oracle: exact with the
 * fake counter, bracketed by ordered counter reads with a real one. Also
 * checks which clocks stay in userspace (no fallback syscall). A layout
 * without aux clocks gets -EINVAL for their ids from the fallback, as
 * kernels before v6.17 did; one with them -ENODEV for a disabled one.
 */
/*
 * sim_kernel_attach() for a checker: first the variant's trap_fallbacks(),
 * where it has one (an image's own fallback syscalls answered by the
 * simulated kernel; benchmarks never take it). 0, or -1 with errno.
 */
int check_attach(const struct vdso_variant *v);

int check_exact(const struct vdso_variant *v, struct check_report *r);

/*
 * Where the variant's vDSO and the kernel's syscall answer an aux clock's
 * clock_getres() differently (lib/vdso since v6.17 answers 1 ns for every
 * aux id itself): a line saying so, which check_exact() accepts as the
 * vDSO answers; NULL where they agree.
 */
const char *check_exact_upstream_note(const struct vdso_variant *v);

/*
 * Edge cases, with the fake counter or a trapped one (check_counter_begin();
 * skipped where neither is): narrow-mask wrap, a counter behind
 * cycle_last, a delta above max_cycles (has_max_cycles), a huge ns sum,
 * settimeofday, NTP mult adjustment, a leap second, time namespace
 * offsets, and the auxiliary clocks' life (aux_clocks): enable, set,
 * adjust, tick, disable, enable again.
 */
int check_edges(const struct vdso_variant *v, struct check_report *r);

/*
 * A writer thread publishes as fast as it can while readers check every
 * result against the values some consistent snapshot could give (phase
 * A: large mult changes and base jumps, so a torn read is visibly wrong)
 * and against monotonicity (phase B: ticks and sleep only). duration_ms
 * bounds each phase; a torn read ends the check at once.
 */
int check_concurrency(const struct vdso_variant *v, unsigned int duration_ms,
		      struct check_report *r);

/*
 * The bound within which the concurrency checker must catch the known-bad
 * variant (it stops at the first torn read, typically within a few
 * hundred reads); verify never gives it less, however short --duration-ms.
 */
#define CHECK_KNOWN_BAD_BOUND_MS 2000

/*
 * Real counter only: a timekeeper calibrated against the system's
 * CLOCK_MONOTONIC_RAW, ticking at HZ, read next to the system's clocks
 * for duration_ms. Tolerances are in check_system.c with their reasons.
 */
int check_system(const struct vdso_variant *v, unsigned int duration_ms,
		 struct check_report *r);
/* the same for n variants at once, sharing one calibration and one run */
int check_system_all(const struct vdso_variant *const *vs, unsigned int n,
		     unsigned int duration_ms, struct check_report *reports);

/*
 * An auxiliary clock read through the vDSO can be this far below the
 * kernel's own reading (ktime_get_aux(), the oracle): v6.17's
 * vdso_time_update_aux() stores the base's nanoseconds whole, shifted,
 * dropping xtime_nsec's sub-nanosecond bits, which the syscall adds in.
 */
#define CHECK_AUX_VDSO_SLACK_NS 1

/*
 * Where the counter value of a variant's call comes from, for the checks
 * that need it: the fake counter's vdso_fake_cycles; a real x86 counter
 * trapped (verify/tsc_trap.h), whose own RDTSC or RDTSCP answers the
 * vdso_fake_cycles the check set, so the check is as exact; or, where
 * there is no trap (arm64, PR_SET_TSC refused), the real counter
 * bracketed by two ordered reads.
 */
enum check_counter { CHECK_FAKE, CHECK_TRAPPED, CHECK_BRACKETED };
/* "fake", "trapped" or "bracketed": verify's JSON says so of a check */
const char *check_counter_name(enum check_counter c);

/*
 * Whether a fake-counter variant reads the counter itself: a tree or a
 * patch whose counter read does not go through the function the shim maps
 * to the fake counter (inline RDTSCP in __arch_get_hw_counter(), rdtsc(),
 * its own asm). Then the fake counter cannot stand in for it, and every
 * check treats it as a real counter: trapped where the trap works (its own
 * instruction answers vdso_fake_cycles, as exact as the fake counter),
 * bracketed where not. It resets the fake kernel: call it before a check
 * sets its own up.
 */
bool check_reads_counter_itself(const struct vdso_variant *v);
/* v->real_counter, or a fake-counter variant that reads the counter itself */
bool check_real_read(const struct vdso_variant *v);
/* AArch32 where CNTVCT's mrrc faults and the trap answers it (qemu-arm) */
bool check_mrrc_trapped(void);
/* v's reads are the trap's or nothing: its counter cannot be read here */
bool check_read_needs_trap(const struct vdso_variant *v);

/*
 * v's, with the trap on for the calling thread where it is CHECK_TRAPPED;
 * why: the reason a real counter is CHECK_BRACKETED. check_counter_end()
 * turns the trap off again.
 */
enum check_counter check_counter_begin(const struct vdso_variant *v,
				       char *why, size_t why_len);
void check_counter_end(enum check_counter c);
/*
 * NULL, or the one line that says the trap emulates v's counter, which this
 * CPU lacks (RDTSCP): the variant is checked all the same, all but against
 * the system (check_system), which needs the real counter.
 */
const char *check_counter_emulated(const struct vdso_variant *v);
/* "N reads trapped" and, where RDTSCP was emulated, how many of them */
void check_trapped_note(char *buf, size_t len, u64 reads, u64 emulated);

/*
 * The variant's next fake (or trapped) counter read gives clocksource value
 * c: vdso_fake_cycles is c, or under pvclock the TSC value the simulated
 * host's page turns into c (impls/kernel/sim_vclock.h). False, and the
 * counter unchanged, where no TSC value does (c at or above 2^63).
 */
bool check_set_cycles(u64 c);
/*
 * NULL, or why v cannot run in the clock mode sim_vclock_select() chose
 * (an arm64 build; an image or a rebuild without that mode's read): for
 * verify's SKIP and the sim driver's refusal
 */
const char *check_clock_mode_unavailable(const struct vdso_variant *v);
/*
 * v is a negative control in this clock mode: known_bad, in every mode or
 * in this one (known_bad_clock_mode); elsewhere it must pass
 */
bool check_known_bad(const struct vdso_variant *v);
/* the fake kernel's clocksource frequency (check_reset_fake_kernel()) */
u64 check_cycles_per_sec(void);

/* helpers shared by the checks */
struct tk_clocksource;
struct timekeeper;
void check_reset_fake_kernel(struct tk_clocksource *cs, u64 now);
/* "realtime", ..., "aux0".."aux7", else "clock N" */
const char *check_clock_name(clockid_t clk);
/* served in userspace now (an aux clock only while it is enabled) */
bool variant_serves(const struct vdso_variant *v, clockid_t clk);
bool check_is_aux(clockid_t clk);
/* the host's CLOCK_MONOTONIC in milliseconds: the checks' deadlines */
u64 check_now_ms(void);

/*
 * The oracle for what v's kernel gives for clk at counter now: tk (the
 * core timekeeper) and namespace offsets as sim_clock_ns(), the aux clocks
 * from their timekeepers where the kernel has them (v->aux_clocks: v6.17),
 * -EINVAL for their ids where it does not. 0 or -errno.
 */
int check_clock_ns(const struct vdso_variant *v, const struct timekeeper *tk,
		   clockid_t clk, u64 now, wide_ns *ns);

#endif /* VDSOBENCH_CHECK_H */
