// SPDX-License-Identifier: GPL-2.0
/*
 * Every variant through every check: correct variants pass, and the
 * known-bad one is caught by the concurrency checker within its bound,
 * so the checker cannot silently stop working. A variant whose counter
 * this CPU cannot read (RDTSCP) is skipped with the reason, and the
 * known-bad one's catch where the writer and a reader cannot run at once.
 */
#define _GNU_SOURCE /* sched_getaffinity() */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "impls/counters/available.h"
#include "impls/kernel/fake_counter.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/registry.h"
#include "testing/tap.h"
#include "verify/check.h"

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
	const char *why = vdso_counter_unavailable(v->counter);

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
	if (v->known_bad && usable_cpus() < 2) {
		tap_ok(true,
		       "%s (known bad) caught by the concurrency checker "
		       "# SKIP this process may use one CPU, so the writer "
		       "and a reader cannot run at once",
		       v->name);
	} else if (v->known_bad) {
		check_concurrency(v, CHECK_KNOWN_BAD_BOUND_MS, &r);
		tap_ok(!r.ok && strstr(r.detail, "torn read"),
		       "%s (known bad) caught by the concurrency checker: %s",
		       v->name, r.detail);
	} else {
		check_concurrency(v, PHASE_MS, &r);
		tap_ok(r.ok, "%s concurrency: %s", v->name, r.detail);
	}
	if (v->real_counter)
		tap_ok(system->ok, "%s against the system: %s", v->name,
		       system->detail);
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

int main(void)
{
	struct check_report *system = calloc(vdso_variants_nr, sizeof(*system));
	unsigned int known_bad = 0;

	const struct vdso_variant **runnable =
		calloc(vdso_variants_nr, sizeof(*runnable));
	unsigned int n = 0, k = 0;

	if (!system || !runnable)
		return 1;
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
		known_bad += v->known_bad != NULL;
	}
	/* the negative control exists in every counter x inline build */
	tap_ok(known_bad >= 2, "the known-bad negative control is built (%u variants)",
	       known_bad);
	test_timens_array_vs_switch();
	free(runnable);
	free(system);
	return tap_done();
}
