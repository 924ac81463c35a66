// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "bench/subjects.h"
#include "impls/counters/available.h"
#include "impls/registry.h"

const struct mode_info bench_modes[NR_MODES] = {
	[MODE_HOT] = {"hot", BENCH_BODY_NONE,
		      "back-to-back calls, the seeds' microbenchmark: the "
		      "data page and the code stay in L1"},
	[MODE_PRESSURE] = {"pressure", BENCH_BODY_PRESSURE,
			   "between calls, read every line of an L1D-sized "
			   "buffer (hwloc's L1D size), so the data page is "
			   "evicted and each call pays for the cache lines "
			   "its layout touches"},
	[MODE_COMPUTE] = {"compute", BENCH_BODY_COMPUTE,
			  "20 dependent multiply-adds between calls: "
			  "out-of-order execution overlaps part of a call "
			  "with real work, which can hide a hot-loop "
			  "advantage"},
	[MODE_WRITER] = {"writer", BENCH_BODY_NONE,
			 "a thread on --writer-cpu runs update_vsyscall() "
			 "at --hz: readers pay for invalidated lines and "
			 "seqlock retries (variants only)"},
	[MODE_TIMENS] = {"timens", BENCH_BODY_NONE,
			 "the reader is a task in a time namespace: its vvar "
			 "is the timens page and the offsets are added "
			 "(generic_timens* only; their hot mode is the host "
			 "task)"},
	[MODE_POINTER] = {"pointer", BENCH_BODY_NONE,
			  "each call through a function pointer loaded from "
			  "memory, as glibc calls the vDSO"},
	[MODE_COLD] = {"cold", BENCH_BODY_COLD,
		       "before each call, evict the data page's lines from "
		       "L1D (2 x hwloc's L1D ways of loads per set); time the "
		       "call alone between two ordered counter reads, net of "
		       "that bracket (floor/empty cold): what the lines found "
		       "in L2 cost the call"},
	[MODE_COLD_L2] = {"cold-l2", BENCH_BODY_COLD,
			  "as cold, the lines evicted from L2 as well "
			  "(hwloc's L2 size and ways): each call finds its "
			  "data in L3 or memory"},
	[MODE_WARM] = {"warm", BENCH_BODY_COLD,
		       "each call timed alone as in cold, nothing evicted: "
		       "cold minus warm is what the evicted lines cost"},
	[MODE_FOOTPRINT] = {"footprint", BENCH_BODY_FOOTPRINT,
			    "after each call, walk a dependent chain of ways "
			    "lines in each L1D set the call's data maps to: "
			    "ns of call + walk net of the walk alone, and the "
			    "lines the call displaced (the walk's extra over "
			    "the cost of a line, from controls loading 0-3 "
			    "lines, same batch)"},
};

#define GETTIME_CHOICE(name, id, kind, base, label, short, abbrev) \
	{name, BENCH_OP_GETTIME, id},
#define GETRES_CHOICE(name, id, kind, base, label, short, abbrev) \
	{"getres:" name, BENCH_OP_GETRES, id},

const struct clock_choice bench_clocks[NR_CLOCK_CHOICES] = {
	SUITE_CLOCKS(GETTIME_CHOICE) SUITE_CLOCKS(GETRES_CHOICE)
	{"gettimeofday", BENCH_OP_GETTIMEOFDAY, CLOCK_REALTIME},
	{"time", BENCH_OP_TIME, CLOCK_REALTIME},
};

const struct clock_choice bench_clock_none = {"none", BENCH_OP_GETTIME, -1};

const struct clock_choice *bench_clock_find(const char *name)
{
	for (unsigned int i = 0; i < NR_CLOCK_CHOICES; i++)
		if (!strcmp(bench_clocks[i].name, name))
			return &bench_clocks[i];
	return NULL;
}

static struct subject subjects[BENCH_MAX_SUBJECTS];
static unsigned int nr_subjects;

static struct subject *add(const char *name, enum subject_kind kind)
{
	struct subject *s = &subjects[nr_subjects++];

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->kind = kind;
	return s;
}

static void add_sys(const char *name, const struct bench_loops *loops,
		    int (*cg)(clockid_t, struct timespec *),
		    int (*cr)(clockid_t, struct timespec *),
		    int (*gtod)(struct timeval *, struct timezone *),
		    time_t (*tm)(time_t *))
{
	struct subject *s = add(name, SUBJECT_SYS);

	s->loops = loops;
	s->clock_gettime = cg;
	s->clock_getres = cr;
	s->gettimeofday = gtod;
	s->time = tm;
}

/* the floor of v's counter already added? (one floor per counter) */
static bool have_floor(const char *counter)
{
	char name[64];

	snprintf(name, sizeof(name), "floor/%s", counter);
	for (unsigned int i = 0; i < nr_subjects; i++)
		if (subjects[i].floor && !strcmp(subjects[i].name, name))
			return true;
	return false;
}

int subjects_init(const char *vdso_reason, const char *gettime64_reason)
{
	struct subject *s;

	nr_subjects = 0;
	for (unsigned int i = 0; i < vdso_variants_nr; i++) {
		const struct vdso_variant *v = vdso_variants[i];

		/* the fake counter never advances: it is for the tests */
		if (!v->real_counter)
			continue;
		s = add(v->name, SUBJECT_VARIANT);
		s->variant = v;
		s->loops = bench_variant_loops[i];
		s->clock_gettime = v->clock_gettime;
		s->clock_getres = v->clock_getres;
		s->gettimeofday = v->gettimeofday;
		s->time = v->time;
	}
	add_sys("sys/syscall", &bench_sys_syscall_loops,
		bench_syscall_clock_gettime, bench_syscall_clock_getres,
		bench_syscall_gettimeofday, bench_syscall_time);
	/* glibc declares tz as void *: the same ABI */
	add_sys("sys/libc", &bench_sys_libc_loops, clock_gettime, clock_getres,
		(int (*)(struct timeval *, struct timezone *))gettimeofday,
		time);
	add_sys("sys/vdso", &bench_sys_vdso_loops, bench_vdso_clock_gettime,
		bench_vdso_clock_getres, bench_vdso_gettimeofday,
		bench_vdso_time);
	subjects[nr_subjects - 1].unavailable = vdso_reason;
	subjects[nr_subjects - 1].raw_errno = true;
	if (BENCH_HAS_GETTIME64) {
		s = add("sys/vdso_gettime64", SUBJECT_SYS);
		s->loops = &bench_sys_vdso_gettime64_loops;
		s->clock_gettime64 = bench_vdso_clock_gettime64;
		s->unavailable = gettime64_reason;
		s->raw_errno = true;
	}

	/*
	 * A floor per real counter the table builds here, in the table's
	 * order: the first variant with that counter lends its loops (the
	 * floor body reads the counter alone, whatever the layout).
	 */
	for (unsigned int i = 0; i < vdso_variants_nr; i++) {
		const struct vdso_variant *v = vdso_variants[i];
		char name[64];

		if (!v->real_counter || have_floor(v->counter))
			continue;
		snprintf(name, sizeof(name), "floor/%s", v->counter);
		s = add(name, SUBJECT_FLOOR);
		s->loops = bench_variant_loops[i];
		s->floor = true;
	}
	s = add("floor/empty", SUBJECT_FLOOR);
	s->loops = &bench_empty_loops;
	s->floor = true;
	return 0;
}

unsigned int subjects_nr(void)
{
	return nr_subjects;
}

const struct subject *subject_at(unsigned int i)
{
	return i < nr_subjects ? &subjects[i] : NULL;
}

bool subject_applies(const struct subject *s, const struct clock_choice *c,
		     enum bench_mode mode)
{
	if (s->floor)
		return c == &bench_clock_none &&
		       (mode == MODE_HOT || mode == MODE_PRESSURE ||
			mode == MODE_COMPUTE || bench_mode_is_cold(mode));
	if (c == &bench_clock_none || !s->loops->op[c->op][BENCH_BODY_NONE])
		return false;
	switch (mode) {
	case MODE_WRITER:
		return s->kind == SUBJECT_VARIANT;
	case MODE_TIMENS:
		return s->kind == SUBJECT_VARIANT && s->variant->has_timens;
	case MODE_POINTER:
		return s->clock_gettime != NULL;
	default:
		return true;
	}
}

/* each comma-separated item of list; a callback per item, -1 stops */
static int for_each_item(const char *list, int (*fn)(const char *, void *),
			 void *arg)
{
	char buf[1024], *save = NULL;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf)) {
		errno = E2BIG;
		return -1;
	}
	for (char *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (*tok && fn(tok, arg))
			return -1;
	}
	return 0;
}

struct parse_ctx {
	struct selection *sel;
	char *err;
	size_t errlen;
};

/* "<what> '<name>' (valid: a, b, c)": -1 */
static int unknown(struct parse_ctx *ctx, const char *what, const char *name,
		   const char *const *names, unsigned int n)
{
	size_t used =
		snprintf(ctx->err, ctx->errlen, "%s '%s' (valid: ", what, name);

	for (unsigned int i = 0; i < n && used < ctx->errlen; i++)
		used += snprintf(ctx->err + used, ctx->errlen - used, "%s%s",
				 i ? ", " : "", names[i]);
	if (used < ctx->errlen)
		snprintf(ctx->err + used, ctx->errlen - used, ")");
	return -1;
}

static int pick_subject(const char *pattern, void *arg)
{
	struct parse_ctx *ctx = arg;
	bool hit = false;

	for (unsigned int i = 0; i < nr_subjects; i++)
		if (!strcmp(subjects[i].name, pattern) ||
		    !fnmatch(pattern, subjects[i].name, 0))
			hit = ctx->sel->subject[i] = true;
	if (!hit && !BENCH_HAS_GETTIME64 &&
	    !fnmatch(pattern, "sys/vdso_gettime64", 0)) {
		snprintf(ctx->err, ctx->errlen,
			 "--variants: '%s': sys/vdso_gettime64 times a 32-bit "
			 "vDSO's __vdso_clock_gettime64, which a 64-bit vDSO "
			 "does not have (--arch i386)",
			 pattern);
	} else if (!hit) {
		/* the references and floors this build has, from the table */
		char refs[512] = "";
		size_t len = 0;

		for (unsigned int i = 0; i < nr_subjects; i++)
			if (subjects[i].kind != SUBJECT_VARIANT &&
			    len < sizeof(refs))
				len += snprintf(refs + len, sizeof(refs) - len,
						"%s%s", len ? ", " : "",
						subjects[i].name);
		snprintf(ctx->err, ctx->errlen,
			 "--variants: '%s' matches nothing (variants are "
			 "LAYOUT+COUNTER+INLINE with a real counter, e.g. "
			 "%s; references: %s; `vdsobench run --list` shows "
			 "all)",
			 pattern, nr_subjects ? subjects[0].name : "none", refs);
	}
	return hit ? 0 : -1;
}

static int pick_clock(const char *name, void *arg)
{
	struct parse_ctx *ctx = arg;
	const char *names[NR_CLOCK_CHOICES];
	bool hit = false;

	for (unsigned int i = 0; i < NR_CLOCK_CHOICES; i++) {
		names[i] = bench_clocks[i].name;
		if (!strcmp(name, names[i]) || !fnmatch(name, names[i], 0))
			hit = ctx->sel->clock[i] = true;
	}
	return hit ? 0
		   : unknown(ctx, "--clocks: unknown clock", name, names,
			     NR_CLOCK_CHOICES);
}

static int pick_mode(const char *name, void *arg)
{
	struct parse_ctx *ctx = arg;
	const char *names[NR_MODES];

	for (unsigned int i = 0; i < NR_MODES; i++) {
		names[i] = bench_modes[i].name;
		if (!strcmp(name, names[i])) {
			ctx->sel->mode[i] = true;
			return 0;
		}
	}
	return unknown(ctx, "--modes: unknown mode", name, names, NR_MODES);
}

static bool any(const bool *v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (v[i])
			return true;
	return false;
}

const char *bench_default_counter(void)
{
#if defined(__aarch64__)
	return vdso_counter_unavailable("cntvctss") ? "isb_cntvct_dep"
						     : "cntvctss";
#else
	return vdso_counter_unavailable("rdtscp") ? "lfence_rdtsc" : "rdtscp";
#endif
}

const char *bench_default_subjects(void)
{
	static char subjects[96];

	if (!subjects[0])
		snprintf(subjects, sizeof(subjects), "*+%s+always,sys/*,floor/*",
			 bench_default_counter());
	return subjects;
}

int selection_parse(struct selection *sel, const char *subj, const char *clocks,
		    const char *modes, char *err, size_t errlen)
{
	struct parse_ctx ctx = {sel, err, errlen};
	static const struct {
		const char *flag;
		int (*pick)(const char *, void *);
	} lists[] = {
		{"--variants", pick_subject},
		{"--clocks", pick_clock},
		{"--modes", pick_mode},
	};
	const char *values[] = {
		subj ? subj : bench_default_subjects(),
		clocks ? clocks : BENCH_DEFAULT_CLOCKS,
		modes ? modes : BENCH_DEFAULT_MODES,
	};

	memset(sel, 0, sizeof(*sel));
	err[0] = 0;
	for (unsigned int i = 0; i < ARRAY_SIZE(lists); i++) {
		if (for_each_item(values[i], lists[i].pick, &ctx)) {
			if (!err[0])
				snprintf(err, errlen, "%s: list too long",
					 lists[i].flag);
			errno = EINVAL;
			return -1;
		}
	}
	if (!any(sel->subject, nr_subjects) ||
	    !any(sel->clock, NR_CLOCK_CHOICES) || !any(sel->mode, NR_MODES)) {
		snprintf(err, errlen, "%s: empty list",
			 !any(sel->subject, nr_subjects)      ? "--variants"
			 : !any(sel->clock, NR_CLOCK_CHOICES) ? "--clocks"
							      : "--modes");
		errno = EINVAL;
		return -1;
	}
	return 0;
}

const char *subject_error(const struct subject *s, int ret)
{
	return strerror(s->raw_errno ? -ret : errno);
}
