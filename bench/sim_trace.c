// SPDX-License-Identifier: GPL-2.0
/*
 * vdsobench_sim_driver VARIANT --trace CLOCK/MODE[,...] N[,N...]: for
 * `vdsobench layout` under valgrind's lackey, every path of one variant in
 * one run. For each path (its clock, hot or timens) and each N, in order,
 * one segment: a store to its start mark, N calls through the harness's
 * timed loop, a store to its end mark. Lackey prints every access with its
 * address, so the trace between segment k's marks (sim_marks + 2k and
 * + 2k + 1, each a one-byte store) is those N calls alone; the difference
 * of two segments of one path is what one more call loads. A time
 * namespace is entered before a timens segment's start mark and left
 * after its end mark, outside it. Everything else (the fake kernel's
 * start, update_vsyscall()'s reads and writes, the output) lies outside
 * every segment. One valgrind start per variant instead of one per path
 * and N: 0.4 s of start-up each, 40 of them in a patch-review.
 *
 * Prints one JSON line: the subject, its fake-counter twin, its vvar area,
 * the marks' address, and each segment's clock, mode, calls and the
 * fallback syscalls they made.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sim_driver.h"
#include "bench/subjects.h"
#include "common/json_writer.h"
#include "impls/kernel/sim_kernel.h"

#define SIM_MAX_SEGMENTS 128
#define SIM_MAX_COUNTS 8

/*
 * Stores, not loads: valgrind drops a load whose value is dead before
 * lackey sees it (a volatile one too: the machine code has no volatile),
 * and keeps every store.
 */
static volatile u8 sim_marks[2 * SIM_MAX_SEGMENTS] __aligned(64);

struct sim_segment {
	const struct clock_choice *clock;
	bool timens;
	u64 n;
	u64 syscalls;
};

static struct sim_segment segments[SIM_MAX_SEGMENTS];

static int trace_bad(const char *what, const char *value, const char *valid)
{
	fprintf(stderr, PROG ": --trace: %s '%s' (%s)\n", what, value, valid);
	return 2;
}

/* "2,3" -> counts[], each a positive whole number below 2^20; how many, or -1 */
static int parse_counts(const char *text, u64 *counts)
{
	int nr = 0;
	char *end;

	for (const char *p = text; nr < SIM_MAX_COUNTS; p = end + 1) {
		errno = 0;
		if (*p < '0' || *p > '9')
			return -1;
		counts[nr] = strtoull(p, &end, 10);
		if (errno || !counts[nr] || counts[nr] >= (1U << 20) ||
		    (*end && *end != ','))
			return -1;
		nr++;
		if (!*end)
			return nr;
	}
	return -1;
}

/* segments[] from the paths and counts; how many, or -1 after saying why */
static int plan(const struct vdso_variant *v, char *paths, const u64 *counts,
		int nr_counts)
{
	int nr = 0;

	for (char *save, *p = strtok_r(paths, ",", &save); p;
	     p = strtok_r(NULL, ",", &save)) {
		char *mode = strrchr(p, '/');
		const struct clock_choice *clock;
		bool timens;

		if (!mode)
			return trace_bad("path", p, "valid: CLOCK/hot, CLOCK/timens"), -1;
		*mode++ = '\0';
		clock = bench_clock_find(p);
		if (!clock)
			return trace_bad("clock", p, "--list-json lists the valid ones"), -1;
		if (strcmp(mode, "hot") && strcmp(mode, "timens"))
			return trace_bad("mode", mode, "valid: hot, timens"), -1;
		timens = !strcmp(mode, "timens");
		if (timens && !v->has_timens)
			return trace_bad("mode", mode, "this layout has no time namespaces"), -1;
		for (int i = 0; i < nr_counts; i++) {
			if (nr == SIM_MAX_SEGMENTS)
				return trace_bad("paths", "...", "at most 128 segments"), -1;
			segments[nr++] = (struct sim_segment){ clock, timens, counts[i], 0 };
		}
	}
	return nr ? nr : (trace_bad("paths", "", "at least one CLOCK/MODE"), -1);
}

static int print_trace(const struct vdso_variant *asked,
		       const struct vdso_variant *v, int nr)
{
	struct json_writer w;
	char addr[32];

	json_init_file(&w, stdout);
	json_begin_object(&w);
	json_kv_string(&w, "subject", asked->name);
	json_kv_string(&w, "measured_as", v->name);
	snprintf(addr, sizeof(addr), "0x%lx", (unsigned long)(uintptr_t)v->vvar);
	json_kv_string(&w, "vvar", addr);
	json_kv_uint(&w, "vvar_size", v->vvar_size);
	snprintf(addr, sizeof(addr), "0x%lx", (unsigned long)(uintptr_t)sim_marks);
	json_kv_string(&w, "marks", addr);
	json_key(&w, "segments");
	json_begin_array(&w);
	for (int k = 0; k < nr; k++) {
		json_begin_object(&w);
		json_kv_string(&w, "clock", segments[k].clock->name);
		json_kv_string(&w, "mode", segments[k].timens ? "timens" : "hot");
		json_kv_uint(&w, "iterations", segments[k].n);
		json_kv_uint(&w, "syscalls", segments[k].syscalls);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	return json_end_line(&w) ? 1 : 0;
}

int sim_trace(const char *variant, const char *paths, const char *counts_text)
{
	const struct vdso_variant *asked, *v;
	u64 counts[SIM_MAX_COUNTS];
	unsigned int index = 0;
	char buf[4096];
	int nr_counts, nr;

	asked = vdso_variant_find(variant);
	if (!asked)
		return trace_bad("variant", variant, "--list-json lists the valid ones");
	v = sim_fake_twin(asked, &index);
	if (!v) {
		fprintf(stderr, PROG ": %s has no fake-counter twin\n", asked->name);
		return 2;
	}
	nr_counts = parse_counts(counts_text, counts);
	if (nr_counts < 0)
		return trace_bad("counts", counts_text,
				 "valid: up to 8 positive numbers below 2^20, a comma between");
	if (snprintf(buf, sizeof(buf), "%s", paths) >= (int)sizeof(buf))
		return trace_bad("paths", "...", "at most 4095 characters");
	nr = plan(v, buf, counts, nr_counts);
	if (nr < 0)
		return 2;
	if (sim_start(v))
		return 1;
	for (int k = 0; k < nr; k++) {
		const struct sim_segment *s = &segments[k];
		u64 before;

		if (s->timens && sim_timens_enter(v, &sim_timens_offs)) {
			fprintf(stderr, PROG ": entering a time namespace for %s: %s\n",
				v->name, strerror(errno));
			return 1;
		}
		sim_env()->clk = s->clock->clk;
		before = sim_syscall_count();
		sim_marks[2 * k] = 1;
		sim_run(bench_variant_loops[index]->op[s->clock->op][BENCH_BODY_NONE], s->n);
		sim_marks[2 * k + 1] = 1;
		segments[k].syscalls = sim_syscall_count() - before;
		if (s->timens && sim_timens_leave(v)) {
			fprintf(stderr, PROG ": leaving the time namespace of %s: %s\n",
				v->name, strerror(errno));
			return 1;
		}
	}
	sim_kernel_detach_all();
	return print_trace(asked, v, nr);
}
