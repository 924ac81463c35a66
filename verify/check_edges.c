// SPDX-License-Identifier: GPL-2.0
/*
 * Edge cases with the fake counter, or a real one trapped (the TSC:
 * verify/tsc_trap.h) to answer what the fake one would: each compares the variant with the
 * oracle and, where the kernel promises something stronger (a clock that
 * must not move, an offset that must be exact), with that promise.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/clocks.h"
#include "impls/kernel/fake_counter.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_vclock.h"
#include "verify/check.h"
#include "verify/tsc_trap.h"

#define LAST 1000000ULL

/* the variant's reading of clk at counter c, in ns; -1 on error */
static int vread(const struct vdso_variant *v, clockid_t clk, u64 c,
		 wide_ns *ns)
{
	struct timespec ts;

	*ns = 0;
	if (!check_set_cycles(c) || v->clock_gettime(clk, &ts))
		return -1;
	*ns = timespec_to_ns(&ts);
	return 0;
}

/* the variant agrees with the oracle for clk at c */
static bool agrees(const struct vdso_variant *v, clockid_t clk, u64 c,
		   const char *what, struct check_report *r)
{
	struct timekeeper tk;
	wide_ns got, want;

	sim_tk_snapshot(&tk);
	if (sim_clock_ns(&tk, clk, c, &want)) {
		check_fail(r, "%s: oracle has no %s", what, check_clock_name(clk));
		return false;
	}
	if (vread(v, clk, c, &got) || got != want) {
		check_fail(r, "%s: %s at counter %llu is %lld ns off the oracle",
			   what, check_clock_name(clk), (unsigned long long)c,
			   (long long)(got - want));
		return false;
	}
	return true;
}

/* every clock the simulated kernel computes, the suite's and the others */
static const struct suite_clock kept_clocks[] = {
	SUITE_CLOCKS(SUITE_CLOCK_ROW) OTHER_CLOCKS(SUITE_CLOCK_ROW)
};

static bool all_agree(const struct vdso_variant *v, u64 c, const char *what,
		      struct check_report *r)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(kept_clocks); i++)
		if (!agrees(v, kept_clocks[i].id, c, what, r))
			return false;
	return true;
}

/*
 * A clocksource `bits` wide at `hz`, cycle_last 1000 below its mask: a
 * read at WRAPPED_AT is past the wrap.
 */
#define WRAPPED_AT 500

static void wrap_ahead(const char *name, u64 hz, unsigned int bits)
{
	const struct timespec64 wall = { 1700000000, 0 };
	const struct timespec64 mono = { 100, 0 };
	struct tk_clocksource cs;
	u64 mask = (1ULL << bits) - 1;

	tk_clocksource_init(&cs, name, hz, mask, true);
	sim_kernel_reset(&cs, mask - 1000, &wall, &mono);
}

static void edge_narrow_mask(const struct vdso_variant *v,
			     struct check_report *r)
{
	u64 calls;

	wrap_ahead("fake32", 1000000000ULL, 32);
	calls = sim_syscall_count();
	if (!all_agree(v, WRAPPED_AT, "32-bit counter wrapped past cycle_last", r))
		return;
	/*
	 * x86 vDSO code never applies the mask: a narrow clocksource gets
	 * no vclock mode (see x86_vclock_mode()), so it is the syscall
	 * that handles the wrap. Seeing no fallback here would mean the
	 * wrap was computed in userspace without the mask. arm64's vDSO
	 * applies a mask, but the 56 bits of VDSO_PRECISION_MASK, which
	 * update_vsyscall() writes over the clocksource's: the arch timer,
	 * the only clocksource it reads, is that wide, and a narrower one
	 * gets no clock mode there either (arm64_vdso_direct()).
	 */
	if (sim_syscall_count() == calls)
		check_fail(r, "32-bit clocksource served in userspace");
}

/*
 * arm64's only: its arch timer is at least 56 bits wide (the Arm ARM's
 * minimum before v8.6), and its vDSO masks every delta with the 56 bits
 * of VDSO_PRECISION_MASK (arch/arm64/include/asm/vdso/vsyscall.h, v5.3
 * on; lib/vdso/gettimeofday.c's generic vdso_calc_ns(), v6.10 on): a
 * 56-bit counter that wrapped past cycle_last is served in userspace and
 * exact (for the arm64 vDSO, v5.3 on: x86's older one, cross-built, has
 * x86's rule). A read path that drops the mask (x86's own vdso_calc_ns() never
 * applies one: its TSC is 64 bits) reads a delta near 2^64 there.
 */
#ifdef VDSO_ARCH_TIMER
static void edge_arch_timer_wrap(const struct vdso_variant *v,
				 struct check_report *r)
{
	u64 calls;

	/*
	 * 24 MHz, as many arch timers run: at 1 GHz mult is a power of two
	 * and the bits a missing mask leaves above 2^56 shift out of the
	 * 64-bit product, hiding it
	 */
	wrap_ahead("arch_sys_counter", 24000000ULL, 56);
	if (!all_agree(v, WRAPPED_AT, "56-bit arch timer wrapped past cycle_last", r))
		return;
	/* x86's pre-v5.3 vDSO (x86_gtod*), cross-built: x86's rule, the syscall */
	if (v->kernel_version < KERNEL_VERSION(5, 3, 0))
		return;
	/* MONOTONIC alone: the alarm clocks of all_agree() are the syscall's */
	calls = sim_syscall_count();
	if (!agrees(v, CLOCK_MONOTONIC, WRAPPED_AT, "56-bit arch timer wrapped", r))
		return;
	if (sim_syscall_count() != calls)
		check_fail(r, "56-bit arch timer not served in userspace");
}
#endif

/*
 * x86's only: arm64's vDSO does not clamp, its counter being the same on
 * every CPU, so it never reads behind cycle_last (see check_exact.c)
 */
#ifndef VDSO_ARCH_TIMER
static void edge_behind_cycle_last(const struct vdso_variant *v,
				   struct check_report *r)
{
	wide_ns at = 0, behind = 0;

	/* TSC skew between CPUs: a read behind cycle_last is a zero delta */
	if (!all_agree(v, LAST - 3, "counter 3 behind cycle_last", r))
		return;
	if (vread(v, CLOCK_MONOTONIC, LAST, &at) ||
	    vread(v, CLOCK_MONOTONIC, LAST - 1000000, &behind) || at != behind)
		check_fail(r, "counter behind cycle_last: MONOTONIC %lld ns "
			      "away from its value at cycle_last",
			   (long long)(behind - at));
}
#endif

static void edge_max_cycles(const struct vdso_variant *v,
			    struct check_report *r)
{
	struct timekeeper tk;
	u64 c;

	sim_tk_snapshot(&tk);
	/* twice the delta whose product with mult overflows 64 bits */
	c = LAST + 2 * (UINT64_MAX / tk.tkr_mono.mult);
	if (!v->has_max_cycles)
		return; /* no overflow protection: the product wraps */
	if (c - LAST <= tk.max_cycles) {
		check_fail(r, "max_cycles: test delta below max_cycles");
		return;
	}
	all_agree(v, c, "delta above max_cycles (128-bit path)", r);
}

static void edge_huge_ns(const struct vdso_variant *v, struct check_report *r)
{
	/* 200 s since cycle_last: __iter_div_u64_rem() loops 200 times */
	all_agree(v, LAST + 200 * check_cycles_per_sec(), "200 s since the last update",
		  r);
}

/* settimeofday() moves the REAL and TAI clocks by the jump, no other */
static bool moves(const struct suite_clock *c)
{
	return c->base == SUITE_REAL || c->base == SUITE_TAI;
}

static void edge_settimeofday(const struct vdso_variant *v,
			      struct check_report *r)
{
	static const struct suite_clock clocks[] = { SUITE_CLOCKS(
		SUITE_CLOCK_ROW) };
	const wide_ns jump = 1000 * (wide_ns)NSEC_PER_SEC + 500000000;
	struct timekeeper *tk, now;
	wide_ns before[ARRAY_SIZE(clocks)], rt;
	struct timespec64 ts;
	u64 c = LAST + 77777777;

	for (unsigned int i = 0; i < ARRAY_SIZE(clocks); i++)
		vread(v, clocks[i].id, c, &before[i]);

	/* set the wall clock 1000.5 s ahead, at cycle_last, whole ns */
	sim_tk_snapshot(&now);
	tk_clock_ns(&now, CLOCK_REALTIME, LAST, &rt);
	ts.tv_sec = (s64)((rt + jump) / NSEC_PER_SEC);
	ts.tv_nsec = (long)((rt + jump) % NSEC_PER_SEC);
	tk = sim_tk_write_begin();
	tk_settime(tk, LAST, &ts);
	sim_tk_write_end();

	if (!all_agree(v, c, "after settimeofday", r))
		return;
	for (unsigned int i = 0; i < ARRAY_SIZE(clocks); i++) {
		wide_ns after, d;

		vread(v, clocks[i].id, c, &after);
		d = after - before[i];
		/* do_settimeofday64() drops xtime_nsec's sub-ns fraction */
		if (!moves(&clocks[i]) && (d > 0 || d < -1))
			return check_fail(r, "settimeofday moved %s by %lld ns",
					  check_clock_name(clocks[i].id),
					  (long long)d);
		if (moves(&clocks[i]) && (d < jump - 1 || d > jump))
			return check_fail(r, "settimeofday moved %s by %lld ns, "
					     "want %lld",
					  check_clock_name(clocks[i].id),
					  (long long)d, (long long)jump);
	}
}

static void edge_ntp(const struct vdso_variant *v, struct check_report *r)
{
	u64 c0 = LAST + 5000, c1 = LAST + 2 * check_cycles_per_sec();
	wide_ns mono0, mono1, raw1, mono0b, mono1b, raw1b;
	struct timekeeper *tk;

	vread(v, CLOCK_MONOTONIC, c0, &mono0);
	vread(v, CLOCK_MONOTONIC, c1, &mono1);
	vread(v, CLOCK_MONOTONIC_RAW, c1, &raw1);

	tk = sim_tk_write_begin();
	tk_adjust_mult(tk, c0, 1000); /* +1000 mult units: speeds mono up */
	sim_tk_write_end();

	if (!all_agree(v, c1, "after an NTP mult adjustment", r))
		return;
	vread(v, CLOCK_MONOTONIC, c0, &mono0b);
	vread(v, CLOCK_MONOTONIC, c1, &mono1b);
	vread(v, CLOCK_MONOTONIC_RAW, c1, &raw1b);
	if (mono0b != mono0)
		return check_fail(r, "NTP adjustment: MONOTONIC not continuous "
				     "at the adjustment (%lld ns)",
				  (long long)(mono0b - mono0));
	if (mono1b <= mono1)
		return check_fail(r, "NTP adjustment: MONOTONIC did not speed up");
	if (raw1b != raw1)
		return check_fail(r, "NTP adjustment moved MONOTONIC_RAW by %lld ns",
				  (long long)(raw1b - raw1));
}

static void edge_leap_second(const struct vdso_variant *v,
			     struct check_report *r)
{
	const struct timespec64 wall = { 1483228799, 500000000 }; /* 2016-12-31 23:59:59.5 */
	const struct timespec64 mono = { 1000, 0 };
	struct tk_clocksource cs;
	struct timekeeper *tk;
	const u64 hz = 1000000000ULL;
	wide_ns real, tai0, tai, mono_ns;
	u64 c = LAST + 2 * hz; /* 2 s later: 00:00:01.5 less the leap */

	tk_clocksource_init(&cs, "fake1g", hz, UINT64_MAX, true);
	sim_kernel_reset(&cs, LAST, &wall, &mono);
	tk = sim_tk_write_begin();
	tk->tai_offset = 36;
	tk_schedule_leap(tk, 1483228800, +1);
	sim_tk_write_end();
	vread(v, CLOCK_TAI, LAST, &tai0);

	/* the tick that crosses midnight applies the leap */
	tk = sim_tk_write_begin();
	tk_forward(tk, LAST + hz);
	sim_tk_write_end();
	if (!all_agree(v, c, "across a leap second", r))
		return;
	vread(v, CLOCK_REALTIME, c, &real);
	vread(v, CLOCK_TAI, c, &tai);
	vread(v, CLOCK_MONOTONIC, c, &mono_ns);
	/* 23:59:59.5 + 2 s = 00:00:01.5, minus the inserted 23:59:60 */
	if (real != (wide_ns)1483228800 * NSEC_PER_SEC + 500000000)
		return check_fail(r, "leap second: REALTIME %lld, want 00:00:00.5",
				  (long long)real);
	if (tai - tai0 != 2 * (wide_ns)NSEC_PER_SEC)
		return check_fail(r, "leap second: TAI moved %lld ns in 2 s",
				  (long long)(tai - tai0));
	if (mono_ns != 1002 * (wide_ns)NSEC_PER_SEC)
		return check_fail(r, "leap second: MONOTONIC %lld, want 1002 s",
				  (long long)mono_ns);
}

static void edge_timens(const struct vdso_variant *v, struct check_report *r)
{
	const struct timens_offsets offs = { .monotonic = { 100, 250000000 },
					     .boottime = { -20, 750000000 } };
	u64 c = LAST + 31415926;
	wide_ns host[ARRAY_SIZE(kept_clocks)], ns, want;

	if (!v->has_timens)
		return;
	for (unsigned int i = 0; i < ARRAY_SIZE(kept_clocks); i++)
		vread(v, kept_clocks[i].id, c, &host[i]);
	if (sim_timens_enter(v, &offs))
		return check_fail(r, "time namespace: enter failed: %s",
				  strerror(errno));
	for (unsigned int i = 0; i < ARRAY_SIZE(kept_clocks); i++) {
		clockid_t clk = kept_clocks[i].id;

		want = host[i] + timens_offset_ns(&offs, clk);
		if (vread(v, clk, c, &ns) || ns != want) {
			check_fail(r, "time namespace: %s is %lld ns off host + "
				      "offset", check_clock_name(clk),
				   (long long)(ns - want));
			break;
		}
	}
	all_agree(v, c, "inside a time namespace", r);
	if (sim_timens_leave(v))
		check_fail(r, "time namespace: leave failed: %s", strerror(errno));
	for (unsigned int i = 0; i < ARRAY_SIZE(kept_clocks); i++)
		if (vread(v, kept_clocks[i].id, c, &ns) || ns != host[i])
			return check_fail(r, "time namespace: %s not restored",
					  check_clock_name(kept_clocks[i].id));
}

/* aux clock clk at c: the oracle's reading, or the vDSO's up to its slack below */
static bool aux_agrees(const struct vdso_variant *v, clockid_t clk, u64 c,
		       const char *what, wide_ns *got, struct check_report *r)
{
	struct timekeeper aux;
	wide_ns want;

	sim_aux_snapshot((unsigned int)(clk - CLOCK_AUX), &aux);
	if (tk_aux_clock_ns(&aux, c, &want)) {
		check_fail(r, "%s: %s is not enabled", what, check_clock_name(clk));
		return false;
	}
	if (vread(v, clk, c, got) || *got > want ||
	    *got < want - CHECK_AUX_VDSO_SLACK_NS) {
		check_fail(r, "%s: %s at counter %llu is %lld ns off the oracle",
			   what, check_clock_name(clk), (unsigned long long)c,
			   (long long)(*got - want));
		return false;
	}
	return true;
}

/* one syscall and this return value, for clk at c */
static bool falls_back_with(const struct vdso_variant *v, clockid_t clk, u64 c,
			    int want, const char *what, struct check_report *r)
{
	struct timespec ts;
	u64 calls = sim_syscall_count();
	int ret;

	check_set_cycles(c);
	ret = v->clock_gettime(clk, &ts);
	calls = sim_syscall_count() - calls;
	if (ret != want || calls != 1)
		check_fail(r, "%s: %s returned %d after %llu syscalls, want %d "
			      "after 1", what, check_clock_name(clk), ret,
			   (unsigned long long)calls, want);
	return r->ok;
}

/*
 * The life of an auxiliary clock (v6.17), as its syscalls allow:
 * enabled, it starts at 0 on the core's raw rate; clock_settime() moves it
 * and nothing else; clock_adjtime() changes its rate and not its value;
 * a tick keeps it continuous; disabled, the vDSO falls back to -ENODEV
 * (its getres still answers); enabled again, it starts afresh.
 */
static void edge_aux(const struct vdso_variant *v, struct check_report *r)
{
	const clockid_t clk = CLOCK_AUX + 3, off = CLOCK_AUX + 4;
	const u64 sec = check_cycles_per_sec(); /* the fake clocksource's 1 s */
	const struct timespec64 t = { 1800000000, 123456789 };
	u64 c1 = LAST + sec, c2 = LAST + 2 * sec, c3 = LAST + 3 * sec;
	wide_ns a, b, mono0, mono1;
	struct timespec res = { -1, -1 };
	u64 calls;

	if (!v->aux_clocks)
		return; /* their ids fall back to -EINVAL: check_exact() */
	sim_aux_clock_enable(3, true, LAST);
	if (!aux_agrees(v, clk, c1, "aux clock enabled 1 s ago", &a, r))
		return;
	if (a < 999000000 || a > 1001000000)
		return check_fail(r, "aux clock enabled 1 s ago reads %lld ns, "
				     "not about 1 s from 0", (long long)a);
	/* behind cycle_last: x86's clamp only (edge_behind_cycle_last()) */
	if (!IS_ENABLED(VDSO_ARCH_TIMER)) {
		if (!aux_agrees(v, clk, LAST - 5, "aux counter behind cycle_last",
				&b, r))
			return;
		if (b != 0)
			return check_fail(r, "aux counter behind cycle_last: "
					     "%lld ns, want 0", (long long)b);
	}

	vread(v, CLOCK_MONOTONIC, c1, &mono0);
	if (sim_aux_clock_settime(clk, c1, &t))
		return check_fail(r, "aux clock_settime failed");
	vread(v, CLOCK_MONOTONIC, c1, &mono1);
	if (!aux_agrees(v, clk, c1, "after aux clock_settime", &a, r))
		return;
	if (a > timespec64_to_ns(&t) ||
	    a < timespec64_to_ns(&t) - CHECK_AUX_VDSO_SLACK_NS || mono0 != mono1)
		return check_fail(r, "aux clock_settime: aux %lld ns off the "
				     "time set, MONOTONIC moved %lld ns",
				  (long long)(a - timespec64_to_ns(&t)),
				  (long long)(mono1 - mono0));

	if (sim_aux_clock_adjtime(clk, c1, 100000) ||
	    !aux_agrees(v, clk, c1, "after aux clock_adjtime", &b, r))
		return;
	if (b < a - 1 || b > a + 1)
		return check_fail(r, "aux clock_adjtime: not continuous (%lld ns)",
				  (long long)(b - a));
	if (!aux_agrees(v, clk, c2, "1 s after aux clock_adjtime", &b, r))
		return;
	if (b - a <= NSEC_PER_SEC)
		return check_fail(r, "aux clock_adjtime: 1 s took %lld ns, the "
				     "clock did not speed up", (long long)(b - a));

	sim_aux_advance(c2);
	if (!aux_agrees(v, clk, c3, "after an aux tick", &a, r))
		return;

	if (sim_aux_clock_settime(clk, c3, &(struct timespec64){ 1, NSEC_PER_SEC }) != -EINVAL ||
	    sim_aux_clock_settime(CLOCK_MONOTONIC, c3, &t) != -EINVAL ||
	    sim_aux_clock_settime(off, c3, &t) != -ENODEV ||
	    sim_aux_clock_adjtime(off, c3, 1) != -ENODEV)
		return check_fail(r, "aux clock_settime/adjtime: a bad time "
				     "is -EINVAL, a disabled clock -ENODEV");

	sim_aux_clock_enable(3, false, c3);
	if (!falls_back_with(v, clk, c3, -ENODEV, "disabled aux clock", r))
		return;
	calls = sim_syscall_count();
	if (v->clock_getres(clk, &res) || res.tv_sec || res.tv_nsec != 1 ||
	    sim_syscall_count() != calls)
		return check_fail(r, "getres(%s) of a disabled aux clock: not "
				     "the vDSO's 1 ns", check_clock_name(clk));

	sim_aux_clock_enable(3, true, c3);
	if (aux_agrees(v, clk, c3, "aux clock enabled again", &a, r) && a != 0)
		check_fail(r, "aux clock enabled again reads %lld ns, want 0",
			   (long long)a);
}

/*
 * pvclock: the host clears PVCLOCK_TSC_STABLE_BIT (a migration, a host TSC
 * found unstable); hvclock: it sets tsc_sequence to 0 (the page not valid).
 * vread_pvclock() or vread_hvclock() then answers U64_MAX and every clock
 * that reads the counter must take the syscall, which still reads the
 * clocksource and is exact; valid again, the vDSO serves them again.
 */
static void edge_vclock_invalid(const struct vdso_variant *v,
				struct check_report *r)
{
	static const struct suite_clock clocks[] = { SUITE_CLOCKS(
		SUITE_CLOCK_ROW) };
	const u32 counted = v->hres_clocks | v->raw_clocks;

	if (sim_vclock_mode() == SIM_VCLOCK_TSC)
		return;
	for (int stable = 0; stable <= 1 && r->ok; stable++) {
		sim_vclock_set_valid(stable);
		for (unsigned int i = 0; i < ARRAY_SIZE(clocks); i++) {
			clockid_t clk = clocks[i].id;
			u64 calls = sim_syscall_count();

			if (!(counted & BIT(clk)))
				continue;
			if (!agrees(v, clk, LAST + 123456789,
				    stable ? "the host's page valid again" :
					     "the host's page not valid", r))
				return;
			calls = sim_syscall_count() - calls;
			if (calls != (u64)!stable)
				return check_fail(r, "%s with the %s page %s: %llu "
						  "syscalls, want %d",
						  check_clock_name(clk),
						  sim_vclock_name(sim_vclock_mode()),
						  stable ? "valid" : "not valid",
						  (unsigned long long)calls, !stable);
		}
	}
}

typedef void (*edge_fn)(const struct vdso_variant *v, struct check_report *r);

static const struct {
	const char *name;
	edge_fn fn;
} edges[] = {
	{ "narrow mask wrap", edge_narrow_mask },
#ifdef VDSO_ARCH_TIMER
	{ "arch timer wrap", edge_arch_timer_wrap },
#endif
#ifndef VDSO_ARCH_TIMER
	{ "behind cycle_last", edge_behind_cycle_last },
#endif
	{ "max_cycles", edge_max_cycles },
	{ "huge ns", edge_huge_ns },
	{ "settimeofday", edge_settimeofday },
	{ "ntp", edge_ntp },
	{ "leap second", edge_leap_second },
	{ "time namespace", edge_timens },
	{ "aux clocks", edge_aux },
	{ "paravirtual page not valid", edge_vclock_invalid },
};

int check_edges(const struct vdso_variant *v, struct check_report *r)
{
	struct tk_clocksource cs;
	char why[160] = "", trapped[96] = "";
	enum check_counter mode;
	u64 reads, emulated;

	r->name = "edges";
	r->ok = true;
	mode = check_counter_begin(v, why, sizeof(why));
	if (mode == CHECK_BRACKETED) {
		r->skipped = true;
		if (!v->real_counter)
			check_note(r, "the variant reads the counter itself, not "
				      "the fake one: needs the counter trap "
				      "(%s)", why);
		else
			check_note(r, "needs the fake counter (see %s+fake+%s) "
				      "or the counter trap (%s)",
				   v->layout, v->inline_mode, why);
		return 0;
	}
	r->counter = check_counter_name(mode);
	reads = tsc_trap_reads();
	emulated = tsc_trap_emulated();
	for (unsigned int i = 0; i < ARRAY_SIZE(edges) && r->ok; i++) {
		if (edges[i].fn == edge_vclock_invalid &&
		    sim_vclock_mode() == SIM_VCLOCK_TSC)
			continue;
		/* each edge case starts from a fresh kernel, which detaches all */
		check_reset_fake_kernel(&cs, LAST);
		if (check_attach(v)) {
			check_fail(r, "attach: %m");
			break;
		}
		edges[i].fn(v, r);
		r->calls++;
	}
	reads = tsc_trap_reads() - reads;
	emulated = tsc_trap_emulated() - emulated;
	check_counter_end(mode);
	sim_kernel_detach_all();
	if (mode == CHECK_TRAPPED && !reads)
		check_fail(r, "the trap saw no counter read: the variant did "
			      "not read its counter");
	if (mode == CHECK_TRAPPED) {
		trapped[0] = ';';
		trapped[1] = ' ';
		check_trapped_note(trapped + 2, sizeof(trapped) - 2, reads,
				   emulated);
	}
	if (r->ok)
		check_note(r, "%llu edge cases: narrow-mask wrap, %s%s200 s "
			      "delta, settimeofday, NTP, leap second%s%s%s%s",
			   (unsigned long long)r->calls,
			   IS_ENABLED(VDSO_ARCH_TIMER) ? "56-bit arch timer wrap, " :
						     "behind cycle_last, ",
			   v->has_max_cycles ? "max_cycles, " : "",
			   v->has_timens ? ", time namespace" : "",
			   v->aux_clocks ? ", aux clocks" : "",
			   sim_vclock_mode() == SIM_VCLOCK_PVCLOCK ?
				   ", pvclock stable bit cleared" :
			   sim_vclock_mode() == SIM_VCLOCK_HVCLOCK ?
				   ", hvclock sequence 0" : "",
			   trapped);
	return r->ok ? 0 : -1;
}
