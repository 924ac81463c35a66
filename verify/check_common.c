// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "impls/counters/available.h"
#include "impls/kernel/fake_counter.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_vclock.h"
#include "impls/registry.h"
#include "verify/check.h"
#include "verify/tsc_trap.h"

void check_fail(struct check_report *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->ok)
		return; /* keep the first failure */
	r->ok = false;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
}

void check_note(struct check_report *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->ok)
		return;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
}

bool check_is_aux(clockid_t clk)
{
	return clk >= CLOCK_AUX && clk <= CLOCK_AUX_LAST;
}

const char *check_clock_name(clockid_t clk)
{
	static __thread char buf[24];
	const char *name = vdso_clock_name(clk);

	if (name)
		return name;
	if (check_is_aux(clk))
		snprintf(buf, sizeof(buf), "aux%d", (int)(clk - CLOCK_AUX));
	else
		snprintf(buf, sizeof(buf), "clock %d", (int)clk);
	return buf;
}

bool variant_serves(const struct vdso_variant *v, clockid_t clk)
{
	u32 all = v->hres_clocks | v->coarse_clocks | v->raw_clocks;

	if (check_is_aux(clk)) {
		struct timekeeper aux;

		if (!(v->aux_clocks & BIT(clk)))
			return false;
		sim_aux_snapshot((unsigned int)(clk - CLOCK_AUX), &aux);
		return aux.clock_valid;
	}
	return clk >= 0 && clk < MAX_CLOCKS && (all & BIT(clk));
}

u64 check_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000 + (u64)ts.tv_nsec / 1000000;
}

int check_clock_ns(const struct vdso_variant *v, const struct timekeeper *tk,
		   clockid_t clk, u64 now, wide_ns *ns)
{
	struct timekeeper aux;

	if (!check_is_aux(clk))
		return sim_clock_ns(tk, clk, now, ns);
	if (!v->aux_clocks)
		return -EINVAL; /* no CONFIG_POSIX_AUX_CLOCKS: before v6.17 */
	sim_aux_snapshot((unsigned int)(clk - CLOCK_AUX), &aux);
	return tk_aux_clock_ns(&aux, now, ns);
}

/*
 * MONOTONIC with the fake kernel's state fixed, read at fake counter X,
 * X + 2^30 and X again. A variant that reads the fake counter moves by
 * what the oracle says for 2^30 cycles (about 0.4 s) and comes back; one
 * that reads the hardware's moves by the time between the calls both
 * times (microseconds) and never comes back. A variant that ignores its
 * counter altogether (a bug) comes back too, and the exact check fails it.
 * A coarse hardware counter can stand still across the three calls (qemu-
 * user's CNTVCT_EL0 moves in whole microseconds): where no answer moved, X
 * is read again until it does, for PROBE_WAIT_MS of the host's time at most.
 */
#define PROBE_WAIT_MS 5

static bool probe_calls_move(const struct vdso_variant *v)
{
	const u64 x = 1000000, d = 1ULL << 30;
	struct timespec a, b, c;
	struct tk_clocksource cs;
	struct timekeeper tk;
	wide_ns want_a, want_b, moved, back, want;
	u64 start;

	check_reset_fake_kernel(&cs, x);
	if (check_attach(v))
		return false; /* the checks say why */
	sim_tk_snapshot(&tk);
	check_set_cycles(x);
	v->clock_gettime(CLOCK_MONOTONIC, &a);
	check_set_cycles(x + d);
	v->clock_gettime(CLOCK_MONOTONIC, &b);
	check_set_cycles(x);
	v->clock_gettime(CLOCK_MONOTONIC, &c);
	start = check_now_ms();
	while (timespec_to_ns(&c) == timespec_to_ns(&a) &&
	       timespec_to_ns(&b) == timespec_to_ns(&a) &&
	       check_now_ms() - start <= PROBE_WAIT_MS)
		v->clock_gettime(CLOCK_MONOTONIC, &c);
	sim_kernel_detach(v);
	if (check_clock_ns(v, &tk, CLOCK_MONOTONIC, x, &want_a) ||
	    check_clock_ns(v, &tk, CLOCK_MONOTONIC, x + d, &want_b))
		return false;
	want = want_b - want_a;
	moved = timespec_to_ns(&b) - timespec_to_ns(&a);
	back = timespec_to_ns(&c) - timespec_to_ns(&a);
	return back != 0 && moved - back < want / 2 && back - moved < want / 2;
}

/*
 * AArch32 where CNTVCT's mrrc faults (qemu-arm): an untrapped read would
 * die of SIGILL, and a trapped one answers the fake value, as a fake read
 * would. So the probe runs trapped, and a trapped read is the answer.
 */
static bool probe_reads_itself(const struct vdso_variant *v)
{
	char why[160];
	u64 reads;

	if (!check_mrrc_trapped())
		return probe_calls_move(v);
	if (tsc_trap_on(why, sizeof(why)))
		return false;
	reads = tsc_trap_reads();
	probe_calls_move(v);
	reads = tsc_trap_reads() - reads;
	tsc_trap_off();
	return reads > 0;
}

bool check_mrrc_trapped(void)
{
	return IS_ENABLED(__arm__) && vdso_counter_unavailable("isb_mrrc_isb") &&
	       !tsc_trap_unavailable();
}

bool check_read_needs_trap(const struct vdso_variant *v)
{
	if (v->real_counter)
		return vdso_counter_unavailable(v->counter) != NULL;
	return check_reads_counter_itself(v) && check_mrrc_trapped();
}

bool check_reads_counter_itself(const struct vdso_variant *v)
{
	/*
	 * every check asks, one variant at a time, from verify's thread: probed
	 * once per variant (by its contents: a test's copies on the stack
	 * share addresses)
	 */
	static struct vdso_variant probed;
	static bool have, itself;

	if (v->real_counter)
		return false;
	if (!have || memcmp(&probed, v, sizeof(*v))) {
		itself = probe_reads_itself(v);
		memcpy(&probed, v, sizeof(*v));
		have = true;
	}
	return itself;
}

const char *check_counter_name(enum check_counter c)
{
	return c == CHECK_FAKE ? "fake" : c == CHECK_TRAPPED ? "trapped" : "bracketed";
}

bool check_real_read(const struct vdso_variant *v)
{
	return v->real_counter || check_reads_counter_itself(v);
}

enum check_counter check_counter_begin(const struct vdso_variant *v,
				       char *why, size_t why_len)
{
	if (!check_real_read(v))
		return CHECK_FAKE;
	return tsc_trap_on(why, why_len) ? CHECK_BRACKETED : CHECK_TRAPPED;
}

void check_counter_end(enum check_counter c)
{
	if (c == CHECK_TRAPPED)
		tsc_trap_off();
}

const char *check_counter_emulated(const struct vdso_variant *v)
{
	if (!v->counter || !vdso_counter_unavailable(v->counter) ||
	    tsc_trap_unavailable())
		return NULL;
	if (!strcmp(v->counter, "rdtscp"))
		return "RDTSCP emulated: this CPU has none";
	if (!strcmp(v->counter, "isb_mrrc_isb"))
		return "CNTVCT's mrrc answered by the trap: no AArch32 "
		       "generic timer here (qemu-arm)";
	return NULL;
}

void check_trapped_note(char *buf, size_t len, u64 reads, u64 emulated)
{
	if (emulated)
		snprintf(buf, len, "%llu reads trapped, %llu of them RDTSCPs "
			 "emulated (this CPU has none)",
			 (unsigned long long)reads, (unsigned long long)emulated);
	else
		snprintf(buf, len, "%llu reads trapped",
			 (unsigned long long)reads);
}

/*
 * The fake kernel every deterministic check starts from: a 2.4 GHz-ish
 * counter (an odd frequency, so mult and shift are not round numbers;
 * under pvclock kvm-clock's 1 GHz, its odd rate the host page's),
 * a wall clock in 2023, MONOTONIC at 12345.987654321 s, 37 s of TAI
 * offset, 4.5 s asleep, and mono's mult NTP-adjusted away from raw's.
 */
const char *check_clock_mode_unavailable(const struct vdso_variant *v)
{
	if (sim_vclock_mode() == SIM_VCLOCK_TSC)
		return NULL;
	if (!IS_ENABLED(__x86_64__) && !IS_ENABLED(__i386__))
		return "pvclock and hvclock are x86's (kvm-clock, Hyper-V): no "
		       "arm64 vDSO reads them";
	if (sim_vclock_mode() == SIM_VCLOCK_PVCLOCK && v->no_pvclock_page)
		return "pvclock mode: the image's vvar area has no pvclock page "
		       "the loader knows (no pvclock_page symbol), so its read "
		       "cannot be given the simulated host's";
	if (sim_vclock_mode() == SIM_VCLOCK_HVCLOCK && v->no_hvclock_page)
		return strcmp(v->inline_mode, "image") ?
			       "hvclock mode: the shim builds an imported tree "
			       "without CONFIG_HYPERV_TIMER (its kbuild image "
			       "has it)" :
			       "hvclock mode: the image's vvar area has no "
			       "hvclock page the loader knows (no hvclock_page "
			       "symbol)";
	return NULL;
}

bool check_known_bad(const struct vdso_variant *v)
{
	const char *mode = sim_vclock_name(sim_vclock_mode()), *at;
	size_t n = strlen(mode);

	if (!v->known_bad || !v->known_bad_clock_mode)
		return v->known_bad != NULL;
	/* a word of the list */
	for (at = strstr(v->known_bad_clock_mode, mode); at; at = strstr(at + 1, mode))
		if ((at == v->known_bad_clock_mode || at[-1] == ' ') &&
		    (at[n] == '\0' || at[n] == ' '))
			return true;
	return false;
}

u64 check_cycles_per_sec(void)
{
	/*
	 * kvm-clock counts nanoseconds (clocksource_register_hz(NSEC_PER_SEC)),
	 * Hyper-V's reference time 100 ns units (HV_CLOCK_HZ)
	 */
	switch (sim_vclock_mode()) {
	case SIM_VCLOCK_PVCLOCK:
		return 1000000000ULL;
	case SIM_VCLOCK_HVCLOCK:
		return 10000000ULL;
	default:
		return 2399987654ULL;
	}
}

bool check_set_cycles(u64 c)
{
	u64 tsc;

	if (!sim_vclock_tsc_for(c, &tsc))
		return false;
	vdso_fake_cycles = tsc;
	return true;
}

int check_attach(const struct vdso_variant *v)
{
	if (v->trap_fallbacks && v->trap_fallbacks())
		return -1;
	return sim_kernel_attach(v);
}

void check_reset_fake_kernel(struct tk_clocksource *cs, u64 now)
{
	const struct timespec64 wall = { 1700000000, 123456789 };
	const struct timespec64 mono = { 12345, 987654321 };
	const struct timespec64 sleep = { 4, 500000000 };
	struct timekeeper *tk;

	static const char *const name[] = { "fake", "kvm-clock",
					    "hyperv_clocksource_tsc_page" };

	tk_clocksource_init(cs, name[sim_vclock_mode()], check_cycles_per_sec(),
			    UINT64_MAX, true);
	sim_vclock_select(sim_vclock_mode()); /* the host's page afresh, stable */
	sim_kernel_detach_all();
	sim_kernel_reset(cs, now, &wall, &mono);
	tk = sim_tk_write_begin();
	tk->tai_offset = 37;
	tk_inject_sleep(tk, now, &sleep);
	tk_adjust_mult(tk, now, 3);
	sim_tk_write_end();
	sim_set_sys_tz(&(struct timezone){ .tz_minuteswest = -60,
					   .tz_dsttime = 1 });
}
