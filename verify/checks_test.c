// SPDX-License-Identifier: GPL-2.0
/*
 * Every variant through every check: correct variants pass, and the
 * known-bad one is caught by the concurrency checker within its bound,
 * so the checker cannot silently stop working. A variant whose counter
 * this CPU cannot read (RDTSCP) is skipped with the reason, unless the
 * counter trap emulates it, and the known-bad one's catch where the writer
 * and a reader cannot run at once. Then the trap itself (verify/tsc_trap.h)
 * and the exact check through it, where this machine has a working one.
 */
#define _GNU_SOURCE /* sched_getaffinity() */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "impls/counters/available.h"
#include "impls/kernel/fake_counter.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_vclock.h"
#include "impls/registry.h"
#include "testing/tap.h"
#include "verify/check.h"
#include "verify/tsc_trap.h"

/* per phase; the known-bad variant gets the bound it must be caught in */
#define PHASE_MS 100
#define SYSTEM_MS 1000

/* the CPUs this process may use (its affinity mask); 0 if unknown */
static int usable_cpus(void)
{
	cpu_set_t mask;

	return sched_getaffinity(0, sizeof(mask), &mask) ? 0 : CPU_COUNT(&mask);
}

static void test_variant(const struct vdso_variant *v,
			 const struct check_report *system)
{
	struct check_report r = { 0 };
	const char *emulated = check_counter_emulated(v);
	const char *why = emulated ? NULL : vdso_counter_unavailable(v->counter);

	if (why) {
		tap_ok(true, "%s # SKIP %s", v->name, why);
		return;
	}
	check_exact(v, &r);
	tap_ok(r.ok, "%s exact: %s", v->name, r.detail);
	memset(&r, 0, sizeof(r));
	check_edges(v, &r);
	tap_ok(r.ok, "%s edges: %s", v->name, r.detail);
	memset(&r, 0, sizeof(r));
	if (check_known_bad(v) && usable_cpus() < 2) {
		tap_ok(true,
		       "%s (known bad) caught by the concurrency checker "
		       "# SKIP this process may use one CPU, so the writer "
		       "and a reader cannot run at once",
		       v->name);
	} else if (check_known_bad(v)) {
		check_concurrency(v, CHECK_KNOWN_BAD_BOUND_MS, &r);
		tap_ok(!r.ok && strstr(r.detail, "torn read"),
		       "%s (known bad) caught by the concurrency checker: %s",
		       v->name, r.detail);
	} else {
		check_concurrency(v, PHASE_MS, &r);
		tap_ok(r.ok, "%s concurrency: %s", v->name, r.detail);
	}
	if (v->real_counter && emulated)
		tap_ok(true, "%s against the system # SKIP %s", v->name, emulated);
	else if (v->real_counter)
		tap_ok(system->ok, "%s against the system: %s", v->name,
		       system->detail);
}

/*
 * verify --clock-mode pvclock and hvclock on the fake counter: one layout
 * of each x86 read path passes every check through the host's page (made
 * invalid, the host rewriting it under the readers), and the layout
 * without the retries is caught, by the concurrency check alone.
 */
static void test_vclock(enum sim_vclock mode)
{
	static const char *const good[] = {
		"generic_6_17+fake+always", "generic_6_10+fake+auto",
		"generic_5_3+fake+always", "generic_timens_switch+fake+always",
		"x86_gtod+fake+always",
	};
	static const char *const invalid[] = { "", "pvclock stable bit cleared",
					       "hvclock sequence 0" };
	const struct vdso_variant *bad =
		vdso_variant_find("generic_vclock_noretry+fake+always");
	const char *name = sim_vclock_name(mode);
	struct check_report r;

	if (!IS_ENABLED(__x86_64__) && !IS_ENABLED(__i386__)) {
		tap_ok(true, "%s mode # SKIP x86's alone", name);
		return;
	}
	sim_vclock_select(mode);
	for (unsigned int i = 0; i < ARRAY_SIZE(good); i++) {
		const struct vdso_variant *v = vdso_variant_find(good[i]);

		if (!v) {
			tap_ok(false, "%s: no %s", name, good[i]);
			continue;
		}
		memset(&r, 0, sizeof(r));
		check_exact(v, &r);
		tap_ok(r.ok, "%s %s exact: %s", name, v->name, r.detail);
		memset(&r, 0, sizeof(r));
		check_edges(v, &r);
		tap_ok(r.ok && strstr(r.detail, invalid[mode]), "%s %s edges: %s", name,
		       v->name, r.detail);
		memset(&r, 0, sizeof(r));
		check_concurrency(v, PHASE_MS, &r);
		tap_ok(r.ok && strstr(r.detail, "phase H"), "%s %s concurrency: %s", name,
		       v->name, r.detail);
	}
	tap_ok(bad && check_known_bad(bad), "the negative control is known bad in %s mode",
	       name);
	if (bad) {
		memset(&r, 0, sizeof(r));
		check_exact(bad, &r);
		tap_ok(r.ok, "%s %s exact: %s", name, bad->name, r.detail);
		memset(&r, 0, sizeof(r));
		check_edges(bad, &r);
		tap_ok(r.ok, "%s %s edges: %s", name, bad->name, r.detail);
		memset(&r, 0, sizeof(r));
		if (usable_cpus() < 2) {
			tap_ok(true, "%s %s caught # SKIP one CPU", name, bad->name);
		} else {
			check_concurrency(bad, CHECK_KNOWN_BAD_BOUND_MS, &r);
			tap_ok(!r.ok && strstr(r.detail, "torn read"),
			       "%s %s (known bad) caught by the concurrency "
			       "checker: %s", name, bad->name, r.detail);
		}
	}
	sim_vclock_select(SIM_VCLOCK_TSC);
	tap_ok(bad && !check_known_bad(bad), "the negative control is a correct "
	       "variant in tsc mode");
}

/* RDTSCP's CPUID bit, from made-up CPUID answers: never this CPU's */
static void test_rdtscp_detection(void)
{
	const char *why;

	tap_ok(!vdso_rdtscp_unavailable(0x80000008U, VDSO_CPUID_RDTSCP),
	       "EDX bit 27 of leaf 0x80000001 set: RDTSCP runs");
	why = vdso_rdtscp_unavailable(0x80000008U, ~VDSO_CPUID_RDTSCP);
	tap_ok(why && strstr(why, "bit 27"),
	       "every other bit set but 27: no RDTSCP (%s)", why);
	why = vdso_rdtscp_unavailable(0x80000000U, VDSO_CPUID_RDTSCP);
	tap_ok(why && strstr(why, "no leaf 0x80000001"),
	       "no leaf 0x80000001: no RDTSCP, whatever EDX says (%s)", why);
	tap_ok(!vdso_counter_unavailable("rdtsc") &&
		       !vdso_counter_unavailable("lfence_rdtsc") &&
		       !vdso_counter_unavailable("isb_cntvct_isb") &&
		       !vdso_counter_unavailable("isb_cntvct_dep") &&
		       !vdso_counter_unavailable("fake"),
	       "the other counters are never refused");
}

/* FEAT_ECV's AT_HWCAP2 bit, from made-up auxv values: never this CPU's */
static void test_cntvctss_detection(void)
{
	const char *why;

	tap_ok(!vdso_cntvctss_unavailable(VDSO_HWCAP2_ECV),
	       "HWCAP2_ECV set: CNTVCTSS_EL0 reads");
	why = vdso_cntvctss_unavailable(~VDSO_HWCAP2_ECV);
	tap_ok(why && strstr(why, "FEAT_ECV") && strstr(why, "HWCAP2_ECV"),
	       "every other AT_HWCAP2 bit set: no CNTVCTSS_EL0 (%s)", why);
#if !defined(__aarch64__)
	why = vdso_counter_unavailable("cntvctss");
	tap_ok(why && strstr(why, "arm64"), "not on arm64: %s", why);
#endif
}

/* the array and the switch give the same answers in the same namespace */
static void test_timens_array_vs_switch(void)
{
	const struct vdso_variant *a = vdso_variant_find("generic_timens+fake+always");
	const struct vdso_variant *b =
		vdso_variant_find("generic_timens_switch+fake+always");
	const struct timens_offsets offs = { { 86400, 5 }, { 172800, 999999999 } };
	struct tk_clocksource cs;
	bool same = true;

	if (!tap_ok(a && b, "timens variants exist"))
		return;
	check_reset_fake_kernel(&cs, 1000000);
	sim_kernel_attach(a);
	sim_kernel_attach(b);
	sim_timens_enter(a, &offs);
	sim_timens_enter(b, &offs);
	for (clockid_t clk = 0; clk < MAX_CLOCKS; clk++) {
		struct timespec ta = { 0, 0 }, tb = { 1, 1 };
		int ra, rb;

		vdso_fake_cycles = 1000000 + 123456789ULL * (u64)(clk + 1);
		ra = a->clock_gettime(clk, &ta);
		rb = b->clock_gettime(clk, &tb);
		if (clk == CLOCK_PROCESS_CPUTIME_ID || clk == CLOCK_THREAD_CPUTIME_ID)
			continue; /* the host's CPU time moves between the calls */
		if (ra != rb || (!ra && (ta.tv_sec != tb.tv_sec ||
					 ta.tv_nsec != tb.tv_nsec))) {
			tap_diag("clock %d: array %d %lld.%09ld, switch %d %lld.%09ld",
				 clk, ra, (long long)ta.tv_sec, ta.tv_nsec, rb,
				 (long long)tb.tv_sec, tb.tv_nsec);
			same = false;
		}
	}
	sim_timens_leave(a);
	sim_timens_leave(b);
	sim_kernel_detach_all();
	tap_ok(same, "generic_timens and generic_timens_switch agree on every "
		     "clock inside a namespace");
}

/* the handler's decoding, from made-up registers: never this CPU's */
static void test_trap_answer(void)
{
	static const u8 rdtsc[] = { 0x0f, 0x31, 0x90 }, rdtscp[] = { 0x0f, 0x01, 0xf9 },
			ud2[] = { 0x0f, 0x0b, 0x90 }, swapgs[] = { 0x0f, 0x01, 0xf8 };
	const u64 now = 0x0123456789abcdefULL, junk = ~0ULL;
	struct tsc_trap_regs r = { junk, junk, junk, 0x1000 };
	int len;

	len = tsc_trap_answer(&r, rdtsc, now);
	tap_ok(len == 2 && r.rax == 0x89abcdefULL && r.rdx == 0x01234567ULL &&
		       r.rcx == junk && r.rip == 0x1002,
	       "RDTSC: EDX:EAX is the counter, upper halves zero, RCX kept, "
	       "RIP + 2");
	r = (struct tsc_trap_regs){ junk, junk, junk, 0x1000 };
	len = tsc_trap_answer(&r, rdtscp, now);
	tap_ok(len == 3 && r.rax == 0x89abcdefULL && r.rdx == 0x01234567ULL &&
		       r.rcx == TSC_TRAP_AUX && r.rip == 0x1003,
	       "RDTSCP: the same, ECX the fixed TSC_AUX %#x, RIP + 3",
	       TSC_TRAP_AUX);
	r = (struct tsc_trap_regs){ junk, junk, junk, 0x1000 };
	tap_ok(!tsc_trap_answer(&r, ud2, now) && !tsc_trap_answer(&r, swapgs, now) &&
		       r.rax == junk && r.rcx == junk && r.rdx == junk &&
		       r.rip == 0x1000,
	       "UD2 and 0f 01 f8 are not answered, the registers untouched");
}

/*
 * v with its counter one cycle ahead of the check's: the exact check must
 * see it (with the fake counter here, with the trap below)
 */
static const struct vdso_variant *plus_one_of;

static int plus_one_gettime(clockid_t clk, struct timespec *ts)
{
	int ret;

	vdso_fake_cycles++;
	ret = plus_one_of->clock_gettime(clk, ts);
	vdso_fake_cycles--;
	return ret;
}

static int plus_one_gettimeofday(struct timeval *tv, struct timezone *tz)
{
	int ret;

	vdso_fake_cycles++;
	ret = plus_one_of->gettimeofday(tv, tz);
	vdso_fake_cycles--;
	return ret;
}

static bool exact_catches_plus_one(const struct vdso_variant *v,
				   struct check_report *r)
{
	struct vdso_variant off = *v;

	plus_one_of = v;
	off.clock_gettime = plus_one_gettime;
	off.gettimeofday = plus_one_gettimeofday;
	memset(r, 0, sizeof(*r));
	return check_exact(&off, r) && !r->ok && strstr(r->detail, "want");
}

static int constant_gettime(clockid_t clk, struct timespec *ts)
{
	(void)clk;
	*ts = (struct timespec){ 12345, 678 };
	return 0;
}

/*
 * A hardware counter coarser than three calls (qemu-user's CNTVCT_EL0 moves
 * in whole microseconds): the same answer three times, then a later one.
 */
static unsigned int coarse_calls;

static int coarse_gettime(clockid_t clk, struct timespec *ts)
{
	(void)clk;
	*ts = (struct timespec){ 12345, coarse_calls++ < 3 ? 678 : 1678 };
	return 0;
}

/*
 * A tree or a patch that reads the counter itself under a fake-counter
 * variant's name (the patch's own RDTSCP in __arch_get_hw_counter()): here
 * a real-counter variant presented as the fake one. Seen, and checked as a
 * real counter (trapped where the trap works, bracketed where not), never
 * failed for it; the fake variant and one that ignores its counter are not.
 */
static void test_reads_counter_itself(void)
{
	const struct vdso_variant *real = vdso_variant_find(
		IS_ENABLED(__x86_64__) || IS_ENABLED(__i386__) ?
			"generic_6_17+lfence_rdtsc+always" :
		IS_ENABLED(__arm__) ? "generic_6_17+isb_mrrc_isb+always" :
				      "generic_6_17+isb_cntvct_isb+always");
	const struct vdso_variant *fake =
		vdso_variant_find("generic_6_17+fake+always");
	struct vdso_variant itself, constant, coarse;
	struct check_report r = { 0 };
	char why[160];
	bool trap;

	if (!tap_ok(real && fake, "the generic_6_17 variants exist"))
		return;
	itself = *real;
	itself.real_counter = false;
	itself.counter = "fake";
	constant = *fake;
	constant.clock_gettime = constant_gettime;
	tap_ok(check_reads_counter_itself(&itself) &&
		       !check_reads_counter_itself(fake) &&
		       !check_reads_counter_itself(&constant) &&
		       !check_reads_counter_itself(real),
	       "a fake-counter variant that reads the counter itself is seen; "
	       "the fake one, one that ignores its counter and a real one are not");
	coarse = *fake;
	coarse.clock_gettime = coarse_gettime;
	if (check_mrrc_trapped())
		/* the trap counts reads: moving answers alone are no read */
		tap_ok(!check_reads_counter_itself(&coarse),
		       "AArch32 trapped: answers that move without a counter "
		       "read are not one");
	else
		tap_ok(check_reads_counter_itself(&coarse) && coarse_calls > 3,
		       "one whose counter stood still across the probe's three "
		       "calls is seen once it moves (%u calls)", coarse_calls);
	trap = !tsc_trap_on(why, sizeof(why));
	if (trap)
		tsc_trap_off();
	check_exact(&itself, &r);
	tap_ok(r.ok && strstr(r.detail, "the variant reads the counter itself, not the fake one") &&
		       strstr(r.detail, trap ? "reads trapped" : "bracketed") &&
		       !strcmp(r.counter, trap ? "trapped" : "bracketed"),
	       "exact checks it as a real counter (%s): %s",
	       trap ? "trapped" : "bracketed", r.detail);
	memset(&r, 0, sizeof(r));
	check_edges(&itself, &r);
	tap_ok(r.ok && (trap ? !r.skipped : r.skipped &&
			strstr(r.detail, "needs the counter trap")),
	       "edges %s: %s", trap ? "trapped" : "skipped, saying why", r.detail);
	memset(&r, 0, sizeof(r));
	check_concurrency(&itself, PHASE_MS, &r);
	tap_ok(r.ok && !strcmp(r.counter, check_mrrc_trapped() ? "trapped" : "real") &&
		       !r.starved,
	       "concurrency races it as a real counter: %s", r.detail);
	memset(&r, 0, sizeof(r));
	check_exact(&constant, &r);
	tap_ok(!r.ok, "exact FAILs a variant that ignores its counter: %s",
	       r.detail);
}

#if defined(__x86_64__) || defined(__i386__)
/* the child's status after fn ran in it with the trap on */
static int trapped_child(void (*fn)(void))
{
	char why[160];
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		/* the default actions under the trap (not ASan's, which exits) */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGILL, SIG_DFL);
		if (tsc_trap_on(why, sizeof(why)))
			_exit(3);
		fn();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static void null_write(void)
{
	static volatile uintptr_t bad = 8; /* no page there */

	*(volatile int *)bad = 1;
}

static void undefined_insn(void)
{
	__asm__ __volatile__("ud2");
}

/* this CPU's trap, where it works: the instructions as a variant has them */
static void test_trap_live(void)
{
	const u64 x = 0xfedcba9876543210ULL;
	const struct vdso_variant *rdtscp = vdso_variant_find("generic_6_17+rdtscp+always");
	const struct vdso_variant *lfence =
		vdso_variant_find("generic_6_17+lfence_rdtsc+always");
	const struct vdso_variant *fake = vdso_variant_find("generic_6_17+fake+always");
	struct vdso_variant substituted;
	struct check_report r = { 0 };
	struct sigaction segv0, ill0;
	u32 lo, hi, aux, lo2, hi2;
	u64 reads;
	char why[160];
	int st;

	/* what was there before (ASan's own SIGSEGV handler, under --asan) */
	sigaction(SIGSEGV, NULL, &segv0);
	sigaction(SIGILL, NULL, &ill0);
	if (tsc_trap_on(why, sizeof(why))) {
		struct sigaction segv, ill;

		sigaction(SIGSEGV, NULL, &segv);
		sigaction(SIGILL, NULL, &ill);
		tap_ok(strlen(why) > 0 && !strchr(why, '\n') && !tsc_trap_active() &&
			       segv.sa_sigaction == segv0.sa_sigaction &&
			       ill.sa_sigaction == ill0.sa_sigaction,
		       "a refused trap says why in one line, is off and leaves "
		       "the handlers as they were: %s", why);
		tap_ok(true, "the trap's own cases # SKIP no trap here: %s", why);
		return;
	}
	reads = tsc_trap_reads();
	vdso_fake_cycles = x;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	tap_ok((((u64)hi << 32) | lo) == x, "RDTSC answers the chosen value");
	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	tap_ok((((u64)hi << 32) | lo) == x && aux == TSC_TRAP_AUX,
	       "RDTSCP answers it, ECX = %#x", aux);
	tap_ok(tsc_trap_reads() == reads + 2, "two reads counted");
	tap_ok(!tsc_trap_off() && !tsc_trap_active(), "the trap turns off");
	__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi));
	__asm__ __volatile__("lfence; rdtsc" : "=a"(lo2), "=d"(hi2));
	tap_ok((((u64)hi << 32) | lo) != x &&
		       (((u64)hi2 << 32) | lo2) > (((u64)hi << 32) | lo) &&
		       tsc_trap_reads() == reads + 2,
	       "off, RDTSC reads the real counter again, uncounted");

	st = trapped_child(null_write);
	tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
	       "a write to address 8 under the trap still dies of SIGSEGV "
	       "(status %#x)", st);
	st = trapped_child(undefined_insn);
	tap_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGILL,
	       "UD2 under the trap still dies of SIGILL (status %#x)", st);

	if (!tap_ok(rdtscp && lfence && fake, "the generic_6_17 variants exist"))
		return;
	check_exact(rdtscp, &r);
	tap_ok(r.ok && strstr(r.detail, "reads trapped"), "%s exact, trapped: %s",
	       rdtscp->name, r.detail);
	memset(&r, 0, sizeof(r));
	check_exact(lfence, &r);
	tap_ok(r.ok && strstr(r.detail, "reads trapped"), "%s exact, trapped: %s",
	       lfence->name, r.detail);
	tap_ok(exact_catches_plus_one(lfence, &r),
	       "exact FAILs a trapped counter one cycle ahead: %s", r.detail);
	/* the fake read under a real counter's name: no instruction to trap */
	substituted = *fake;
	substituted.real_counter = true;
	substituted.counter = "lfence_rdtsc";
	memset(&r, 0, sizeof(r));
	check_exact(&substituted, &r);
	tap_ok(!r.ok && strstr(r.detail, "did not read its counter"),
	       "exact FAILs a counter substituted for the trapped one: %s",
	       r.detail);
}
#elif defined(__arm__)
/* AArch32: CNTVCT's mrrc answered where it faults (qemu-arm) */
static void test_trap_live(void)
{
	const u64 x = 0xfedcba9876543210ULL;
	const struct vdso_variant *real =
		vdso_variant_find("generic_6_17+isb_mrrc_isb+always");
	const struct vdso_variant *fake = vdso_variant_find("generic_6_17+fake+always");
	struct vdso_variant substituted;
	struct check_report r = { 0 };
	u32 regs[13] = { 0 };
	char why[160];
	u64 reads, got;

	/* mrrc p15, 1, r2, r3, c14: ARM's word, Thumb-2's halfwords alike */
	tap_ok(cntvct_trap_answer(regs, 0xec532f1e, x) == 4 &&
		       regs[2] == (u32)x && regs[3] == (u32)(x >> 32) &&
		       !cntvct_trap_answer(regs, 0xec532f0e, x) &&
		       !cntvct_trap_answer(regs, 0xec432f1e, x) &&
		       !cntvct_trap_answer(regs, 0xec522f1e, x),
	       "CNTVCT's mrrc is answered, CNTPCT's, an mcrr and Rt == Rt2 not");
	if (tsc_trap_on(why, sizeof(why))) {
		tap_ok(strlen(why) > 0 && !strchr(why, '\n') && !tsc_trap_active(),
		       "a refused trap says why in one line and is off: %s", why);
		tap_ok(true, "the trap's own cases # SKIP no trap here: %s", why);
		return;
	}
	reads = tsc_trap_reads();
	vdso_fake_cycles = x;
	__asm__ __volatile__("mrrc p15, 1, %Q0, %R0, c14" : "=r"(got));
	tap_ok(got == x && tsc_trap_reads() == reads + 1,
	       "the mrrc answers the chosen value, counted");
	tap_ok(!tsc_trap_off() && !tsc_trap_active(), "the trap turns off");
	if (!tap_ok(real && fake, "the generic_6_17 variants exist"))
		return;
	check_exact(real, &r);
	tap_ok(r.ok && strstr(r.detail, "reads trapped"), "%s exact, trapped: %s",
	       real->name, r.detail);
	/* the fake read under the real counter's name: no instruction to trap */
	substituted = *fake;
	substituted.real_counter = true;
	substituted.counter = "isb_mrrc_isb";
	memset(&r, 0, sizeof(r));
	check_exact(&substituted, &r);
	tap_ok(!r.ok && strstr(r.detail, "did not read its counter"),
	       "exact FAILs a counter substituted for the trapped one: %s",
	       r.detail);
}
#else
static void test_trap_live(void)
{
	char why[160];

	tap_ok(tsc_trap_on(why, sizeof(why)) == -1 && errno == ENOSYS &&
		       strstr(why, "no counter trap on this architecture"),
	       "no trap here: %s", why);
}
#endif

/* the line verify adds where lib/vdso and the syscall disagree by design */
static void test_upstream_note(void)
{
	const struct vdso_variant *v =
		vdso_variant_find("generic_6_17+fake+always");
	struct vdso_variant unconfigured, configured, before;
	const char *a, *b;

	if (!tap_ok(v, "the generic_6_17 fake variant exists"))
		return;
	unconfigured = configured = before = *v;
	unconfigured.has_getres = configured.has_getres = true;
	unconfigured.getres_aux = configured.getres_aux = true;
	unconfigured.aux_clocks = 0;
	configured.aux_clocks = 0xff;
	before.getres_aux = false;
	a = check_exact_upstream_note(&unconfigured);
	b = check_exact_upstream_note(&configured);
	tap_ok(a && strstr(a, "-EINVAL") && strstr(a, "CONFIG_POSIX_AUX_CLOCKS") &&
		       b && strstr(b, "-ENODEV") && !check_exact_upstream_note(&before),
	       "getres of aux ids: the vDSO's 1 ns against the syscall's -EINVAL "
	       "(unconfigured) or -ENODEV (disabled) is said; none before v6.17");
}

int main(void)
{
	struct check_report *system = calloc(vdso_variants_nr, sizeof(*system));
	unsigned int known_bad = 0;

	const struct vdso_variant **runnable =
		calloc(vdso_variants_nr, sizeof(*runnable));
	unsigned int n = 0, k = 0;

	if (!system || !runnable)
		return 1;
	/* verify/trap_vm.sh --arch i386 reads it: which build ran */
	tap_diag("checks_test built for %s, %zu-bit pointers",
		 IS_ENABLED(__x86_64__) ? "x86-64" : IS_ENABLED(__i386__) ? "i386" :
		 IS_ENABLED(__aarch64__) ? "arm64" : "another architecture",
		 sizeof(void *) * 8);
	test_rdtscp_detection();
	test_cntvctss_detection();
	/* the system check runs every variant: only those this CPU can read */
	for (unsigned int i = 0; i < vdso_variants_nr; i++)
		if (!vdso_counter_unavailable(vdso_variants[i]->counter))
			runnable[n++] = vdso_variants[i];
	check_system_all(runnable, n, SYSTEM_MS, system);
	for (unsigned int i = 0; i < vdso_variants_nr; i++) {
		const struct vdso_variant *v = vdso_variants[i];

		/* runnable[] keeps the registry's order: system[k] is v's */
		test_variant(v, k < n && runnable[k] == v ? &system[k++] : NULL);
		known_bad += check_known_bad(v);
	}
	/* the negative control exists in every counter x inline build */
	tap_ok(known_bad >= 2, "the known-bad negative control is built (%u variants)",
	       known_bad);
	test_timens_array_vs_switch();
	test_upstream_note();
	test_trap_answer();
	{
		const struct vdso_variant *fake =
			vdso_variant_find("generic_6_17+fake+always");
		struct check_report r;

		tap_ok(fake && exact_catches_plus_one(fake, &r),
		       "exact FAILs a fake counter one cycle ahead: %s",
		       fake ? r.detail : "no generic_6_17+fake+always");
	}
	test_trap_live();
	test_reads_counter_itself();
	test_vclock(SIM_VCLOCK_PVCLOCK);
	test_vclock(SIM_VCLOCK_HVCLOCK);
	free(runnable);
	free(system);
	return tap_done();
}
