// SPDX-License-Identifier: GPL-2.0
/*
 * What a selection expands to: the subject list, the pattern and name
 * checks behind `run`'s bad-usage errors, and which modes apply to what.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bench/subjects.h"
#include "impls/counters/available.h"
#include "impls/registry.h"
#include "testing/tap.h"

/*
 * names with a counter read every CPU of this architecture has, so that no
 * check here depends on this CPU (the default's own test is below)
 */
#if defined(__aarch64__)
#define EVERY_CPU_COUNTER "isb_cntvct_dep"
#else
#define EVERY_CPU_COUNTER "lfence_rdtsc"
#endif
#define WITH_COUNTER(layout) layout "+" EVERY_CPU_COUNTER "+always"
#define DEFAULT_FLOOR "floor/" EVERY_CPU_COUNTER

static const struct subject *find(const char *name)
{
	for (unsigned int i = 0; i < subjects_nr(); i++)
		if (!strcmp(subject_at(i)->name, name))
			return subject_at(i);
	return NULL;
}

static unsigned int count(const bool *v, unsigned int n)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++)
		k += v[i];
	return k;
}

static void test_subjects(void)
{
	unsigned int real = 0, variants = 0;

	/* libc's wrappers stand in for the vDSO's entry points here */
	bench_vdso_clock_gettime = clock_gettime;
	subjects_init(NULL, NULL);
	for (unsigned int i = 0; i < vdso_variants_nr; i++)
		real += vdso_variants[i]->real_counter;
	for (unsigned int i = 0; i < subjects_nr(); i++)
		variants += subject_at(i)->kind == SUBJECT_VARIANT;
	tap_ok(variants == real,
	       "every real-counter variant is a subject, no fake one (%u of "
	       "%u)",
	       variants, vdso_variants_nr);
	tap_ok(find("generic_5_3+fake+always") == NULL,
	       "the fake counter is not benchmarked");
	/* the floors of the other counters: test_selection, from the table */
	for (const char *const *n =
		     (const char *const[]){"sys/syscall", "sys/libc",
					   "sys/vdso", DEFAULT_FLOOR,
					   "floor/empty", NULL};
	     *n; n++)
		tap_ok(find(*n) != NULL, "subject %s exists", *n);
	tap_ok(find(DEFAULT_FLOOR)->floor &&
		       find(DEFAULT_FLOOR)->loops->floor[BENCH_BODY_NONE],
	       DEFAULT_FLOOR " times a counter read alone");
	tap_ok(find("sys/vdso")->unavailable == NULL,
	       "sys/vdso is available when no reason is given");
	subjects_init("AT_SYSINFO_EHDR is 0", "AT_SYSINFO_EHDR is 0");
	tap_ok(find("sys/vdso")->unavailable &&
		       !strcmp(find("sys/vdso")->unavailable,
			       "AT_SYSINFO_EHDR is 0"),
	       "sys/vdso carries the reason it is unavailable");
	subjects_init(NULL, NULL);
}

/* what the stand-in for __vdso_clock_gettime64 was called with */
static unsigned int standin_calls;
static clockid_t standin_clk;

/* writes every byte of the kernel's 64-bit struct, a tv_sec past 2038 */
static int standin_gettime64(clockid_t clk, struct __kernel_timespec *ts)
{
	standin_calls++;
	standin_clk = clk;
	ts->tv_sec = 1LL << 32;
	ts->tv_nsec = 999999999;
	return 0;
}

/*
 * sys/vdso_gettime64: offered where a 32-bit vDSO has the entry (the i386
 * build), carrying its own reason; its loops call the entry with the
 * kernel's 16-byte struct, clock_gettime alone. Under qemu-i386 there is no
 * vDSO: a stand-in entry takes the calls.
 */
static void test_gettime64(void)
{
	const char *why = "the vDSO has no __vdso_clock_gettime64 (LINUX_2.6)";
	const struct subject *s;
	const struct clock_choice *mono = bench_clock_find("monotonic");
	struct bench_env env = {.clk = CLOCK_BOOTTIME};

	tap_ok(sizeof(struct __kernel_timespec) == 16 &&
		       offsetof(struct __kernel_timespec, tv_nsec) == 8,
	       "the loop's struct is the kernel's __kernel_timespec: %zu "
	       "bytes, tv_nsec at %zu",
	       sizeof(struct __kernel_timespec),
	       offsetof(struct __kernel_timespec, tv_nsec));
	bench_vdso_clock_gettime64 = standin_gettime64;
	subjects_init(NULL, NULL);
	s = find("sys/vdso_gettime64");
	if (!BENCH_HAS_GETTIME64) {
		struct selection sel;
		char err[512];

		tap_ok(s == NULL, "a 64-bit build does not offer "
				  "sys/vdso_gettime64 (its vDSO has no "
				  "__vdso_clock_gettime64)");
		tap_ok(selection_parse(&sel, "sys/vdso_gettime64", NULL, NULL,
				       err, sizeof(err)) == -1 &&
			       strstr(err, "--arch i386"),
		       "asking for it says why not: %s", err);
		bench_vdso_clock_gettime64 = NULL;
		return;
	}
	tap_ok(s && s->kind == SUBJECT_SYS && !s->unavailable &&
		       s->clock_gettime64 == standin_gettime64 &&
		       !s->clock_gettime,
	       "sys/vdso_gettime64 is a system reference with its own entry");
	if (!s)
		return;
	standin_calls = 0;
	s->loops->op[BENCH_OP_GETTIME][BENCH_BODY_NONE](&env, 7);
	s->loops->op[BENCH_OP_GETTIME][BENCH_BODY_COMPUTE](&env, 3);
	tap_ok(standin_calls == 10 && standin_clk == CLOCK_BOOTTIME,
	       "its loops call __vdso_clock_gettime64 once per iteration "
	       "with the clock asked (%u calls, clock %d)",
	       standin_calls, (int)standin_clk);
	tap_ok(!s->loops->op[BENCH_OP_GETRES][BENCH_BODY_NONE] &&
		       !s->loops->op[BENCH_OP_GETTIMEOFDAY][BENCH_BODY_NONE] &&
		       !s->loops->op[BENCH_OP_TIME][BENCH_BODY_NONE],
	       "clock_gettime alone: no getres, gettimeofday or time loop");
	tap_ok(subject_applies(s, mono, MODE_HOT) &&
		       subject_applies(s, mono, MODE_COLD) &&
		       subject_applies(s, mono, MODE_FOOTPRINT) &&
		       !subject_applies(s, bench_clock_find("getres:monotonic"),
					MODE_HOT) &&
		       !subject_applies(s, bench_clock_find("gettimeofday"),
					MODE_HOT) &&
		       !subject_applies(s, bench_clock_find("time"), MODE_HOT) &&
		       !subject_applies(s, mono, MODE_POINTER) &&
		       !subject_applies(s, mono, MODE_WRITER) &&
		       !subject_applies(s, &bench_clock_none, MODE_HOT),
	       "it applies to the clocks' clock_gettime in the modes of "
	       "sys/vdso, not to pointer (no 32-bit struct entry)");
	subjects_init(NULL, why);
	s = find("sys/vdso_gettime64");
	tap_ok(s && s->unavailable && !strcmp(s->unavailable, why) &&
		       !find("sys/vdso")->unavailable,
	       "without the symbol it carries its reason, sys/vdso does not");
	bench_vdso_clock_gettime64 = NULL;
	subjects_init(NULL, NULL);
}

/* registry variants whose name matches the glob (the table decides how many) */
static unsigned int variants_matching(const char *glob)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < vdso_variants_nr; i++)
		n += !fnmatch(glob, vdso_variants[i]->name, 0);
	return n;
}

/* distinct real counters in the registry: one floor each */
static unsigned int real_counters(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < vdso_variants_nr; i++) {
		const struct vdso_variant *v = vdso_variants[i];
		bool seen = false;

		for (unsigned int j = 0; j < i && !seen; j++)
			seen = !strcmp(vdso_variants[j]->counter, v->counter);
		n += v->real_counter && !seen;
	}
	return n;
}

static void test_selection(void)
{
	struct selection sel;
	char with_default[64];
	unsigned int layouts;

	snprintf(with_default, sizeof(with_default), "*+%s+always",
		 bench_default_counter());
	layouts = variants_matching(with_default);
	unsigned int floors = real_counters() + 1; /* and floor/empty */
	char err[1024];
	int ret;

	ret = selection_parse(&sel, NULL, NULL, NULL, err, sizeof(err));
	tap_ok(ret == 0 && layouts >= 1 &&
		       count(sel.subject, BENCH_MAX_SUBJECTS) ==
			       layouts + BENCH_NR_SYS_SUBJECTS + floors &&
		       count(sel.clock, NR_CLOCK_CHOICES) == NR_SUITE_CLOCKS &&
		       count(sel.mode, NR_MODES) == 1 && sel.mode[MODE_HOT],
	       "default: every layout with %s (%u), sys/*, a floor "
	       "per counter and floor/empty (%u); the suite's clocks; hot (%d: "
	       "%u "
	       "subjects)",
	       with_default, layouts, floors, ret,
	       count(sel.subject, BENCH_MAX_SUBJECTS));
	const char *floorless = NULL;

	for (unsigned int i = 0; i < vdso_variants_nr && !floorless; i++) {
		const struct vdso_variant *v = vdso_variants[i];
		char name[64];

		snprintf(name, sizeof(name), "floor/%s", v->counter);
		if (v->real_counter && !find(name))
			floorless = v->counter;
	}
	tap_ok(!floorless, "every real counter in the table has a floor (%s)",
	       floorless ? floorless : "all do");

	ret = selection_parse(&sel, "generic_*+" EVERY_CPU_COUNTER "+*",
			      "getres:*", "hot,pointer", err, sizeof(err));
	tap_ok(ret == 0 &&
		       variants_matching("generic_*+" EVERY_CPU_COUNTER
					 "+*") >= 2 &&
		       count(sel.subject, BENCH_MAX_SUBJECTS) ==
			       variants_matching(
				       "generic_*+" EVERY_CPU_COUNTER
				       "+*") &&
		       count(sel.clock, NR_CLOCK_CHOICES) == NR_SUITE_CLOCKS &&
		       count(sel.mode, NR_MODES) == 2,
	       "globs: every generic layout x 2 inlines, every suite clock's "
	       "getres");

	ret = selection_parse(&sel, WITH_COUNTER("generic_5_3") ", sys/vdso",
			      "monotonic", "hot", err, sizeof(err));
	tap_ok(ret == 0 && count(sel.subject, BENCH_MAX_SUBJECTS) == 2,
	       "exact names, a space after the comma");

	ret = selection_parse(&sel, WITH_COUNTER("generic_5_3") ",nope*", NULL,
			      NULL, err, sizeof(err));
	tap_ok(ret == -1 && strstr(err, "--variants") && strstr(err, "'nope*'"),
	       "a pattern that matches nothing is an error naming it: %s", err);
	ret = selection_parse(&sel, NULL, "monotonic,bogus", NULL, err,
			      sizeof(err));
	tap_ok(ret == -1 && strstr(err, "'bogus'") &&
		       strstr(err, "getres:monotonic"),
	       "an unknown clock is named, with the valid ones: %s", err);
	ret = selection_parse(&sel, NULL, NULL, "hot,frozen", err, sizeof(err));
	tap_ok(ret == -1 && strstr(err, "'frozen'") && strstr(err, "pressure"),
	       "an unknown mode is named, with the valid ones: %s", err);
	ret = selection_parse(&sel, ",", NULL, NULL, err, sizeof(err));
	tap_ok(ret == -1 && strstr(err, "--variants") && strstr(err, "empty"),
	       "an empty list is an error: %s", err);
}

static void test_applies(void)
{
	const struct subject *g53 = find(WITH_COUNTER("generic_5_3"));
	const struct subject *tns = find(WITH_COUNTER("generic_timens"));
	const struct subject *sys = find("sys/vdso");
	const struct subject *fl = find(DEFAULT_FLOOR);
	const struct clock_choice *mono = bench_clock_find("monotonic");

	tap_ok(subject_applies(g53, mono, MODE_WRITER) &&
		       !subject_applies(sys, mono, MODE_WRITER),
	       "writer: variants only (the real kernel's writer is not ours)");
	tap_ok(subject_applies(tns, mono, MODE_TIMENS) &&
		       !subject_applies(g53, mono, MODE_TIMENS) &&
		       !subject_applies(sys, mono, MODE_TIMENS),
	       "timens: time-namespace layouts only");
	tap_ok(subject_applies(sys, mono, MODE_POINTER) &&
		       subject_applies(g53, mono, MODE_POINTER) &&
		       !subject_applies(fl, &bench_clock_none, MODE_POINTER),
	       "pointer: every subject with entry points, no floor");
	tap_ok(subject_applies(fl, &bench_clock_none, MODE_PRESSURE) &&
		       !subject_applies(fl, mono, MODE_HOT) &&
		       !subject_applies(g53, &bench_clock_none, MODE_HOT),
	       "floors have the one clock none, and only floors have it");
	for (unsigned int m = 0; m < NR_MODES; m++)
		tap_ok(bench_modes[m].name && bench_modes[m].help &&
			       strlen(bench_modes[m].help) > 20,
		       "mode %s says what it exposes", bench_modes[m].name);
}

/*
 * The default counter is the kernel's read on this CPU: whichever CPU runs
 * this, it is the optional instruction when available.h says it runs and
 * the read every CPU has when not, and the default selection names it.
 */
static void test_default_counter(void)
{
	const char *c = bench_default_counter();
#if defined(__aarch64__)
	const char *optional = "cntvctss", *everyone = "isb_cntvct_dep";
#else
	const char *optional = "rdtscp", *everyone = "lfence_rdtsc";
#endif
	const char *why = vdso_counter_unavailable(optional);
	char expect[96];

	tap_ok(!strcmp(c, why ? everyone : optional),
	       "default counter %s: %s is %s", c, optional,
	       why ? why : "available");
	snprintf(expect, sizeof(expect), "*+%s+always,sys/*,floor/*", c);
	tap_ok(!strcmp(bench_default_subjects(), expect),
	       "default subjects '%s'", bench_default_subjects());
	tap_ok(find(WITH_COUNTER("generic_5_3")) != NULL,
	       "the every-CPU counter names variants of the table");
}

/*
 * A system subject's refusal in its own convention: the vDSO's entries
 * return -errno and leave errno as it was (plan.cc once said the stale
 * errno), libc's and syscall() return -1 and set it.
 */
static void test_errors(void)
{
	char want[64];

	subjects_init(NULL, NULL);
	snprintf(want, sizeof(want), "%s", strerror(EINVAL));
	errno = ENOENT;
	tap_ok(!strcmp(subject_error(find("sys/vdso"), -EINVAL), want),
	       "sys/vdso's -EINVAL is said as itself, not as errno's ENOENT");
	errno = EINVAL;
	tap_ok(!strcmp(subject_error(find("sys/libc"), -1), want),
	       "sys/libc's -1 is said from errno");
	errno = EINVAL;
	tap_ok(!strcmp(subject_error(find("sys/syscall"), -1), want),
	       "sys/syscall's -1 is said from errno");
	tap_ok(find("sys/vdso")->raw_errno && !find("sys/libc")->raw_errno,
	       "only the vDSO's subjects return -errno");
}

/* what the stand-in for arm64's __kernel_clock_gettime was called with */
static clockid_t standin_gettime_clk = -1;

static int standin_gettime(clockid_t clk, struct timespec *ts)
{
	standin_gettime_clk = clk;
	ts->tv_sec = 1234567890;
	ts->tv_nsec = 999999999;
	return clk == CLOCK_REALTIME_COARSE ? 0 : -1;
}

/*
 * sys/vdso's time where the vDSO has none (arm64): the vDSO's
 * clock_gettime(CLOCK_REALTIME_COARSE), its seconds, as glibc's time()
 */
static void test_time_coarse(void)
{
	time_t t = 0, r;

	bench_vdso_clock_gettime = standin_gettime;
	r = bench_vdso_time_coarse(&t);
	tap_ok(standin_gettime_clk == CLOCK_REALTIME_COARSE &&
		       r == 1234567890 && t == r &&
		       bench_vdso_time_coarse(NULL) == r,
	       "time without a vDSO time entry: clock_gettime(%d) gives %lld",
	       (int)standin_gettime_clk, (long long)r);
	bench_vdso_clock_gettime = NULL;
}

int main(void)
{
	test_subjects();
	test_errors();
	test_gettime64();
	test_selection();
	test_applies();
	test_default_counter();
	test_time_coarse();
	return tap_done();
}
