// SPDX-License-Identifier: GPL-2.0
/*
 * vdsobench_sim_driver: one subject x clock x mode, ITERATIONS calls
 * through the harness's own timed loop, for `vdsobench sim` to run under
 * cachegrind. Everything it does is deterministic, so the simulated
 * instruction and L1D miss counts are the same on every run of a build.
 *
 * - The kernel runs on the fake clocksource, reset as the checks reset it
 *   (check_reset_fake_kernel()), and the fake counter is set once, 1 ms
 *   past cycle_last: every call takes the same path, computes the same
 *   time and runs __iter_div_u64_rem() the same number of times. A real
 *   counter read under valgrind returns the real TSC, whose delta (and so
 *   the path) would differ from run to run. So a variant
 *   <layout>+<counter>+<inline> is measured as its fake-counter twin
 *   <layout>+fake+<inline>: the same layout code and inlining, with a TLS
 *   load for the counter read, the same for every layout.
 * - The data the loop reads besides the variant's own lie at page offsets
 *   the pressure mode does not evict (BENCH_PRESSURE_SPAN and up): the
 *   loop's environment, and the stack, which is moved there whatever the
 *   environment and arguments made of its start. Only the call's own
 *   lines (its data page, and the counter's TLS line if that shares the
 *   evicted sets; --list-json tells) compete with the pressure buffer.
 * - The output gives the variant's vvar area (address and size), so that
 *   a memory trace (`vdsobench layout`, lackey) can tell the call's loads
 *   of its data from everything else.
 * - timens: the calls are made by a task in a time namespace (offsets
 *   ten days ahead, as the harness's timens mode), so the read path is
 *   the one through the namespace page (generic_timens* only).
 */
#include <alloca.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/loops.h"
#include "bench/subjects.h"
#include "impls/kernel/fake_counter.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/registry.h"
#include "verify/check.h"

#define PROG "vdsobench_sim_driver"
#define PAGE 4096UL
#define FLOOR_EMPTY "floor/empty"
/* the fake kernel's counter at reset; the calls read 1 ms later */
#define SIM_START_CYCLES 1000000ULL
#define SIM_DELTA_NS 1000000ULL
/* where the loop's stack and environment lie within their pages */
#define SIM_STACK_OFFSET 4032UL
#define SIM_ENV_OFFSET 2048UL
#define SIM_DEFAULT_L1D 32768UL

static const struct {
	const char *name;
	enum bench_body body;
	bool timens; /* the reader is a task in a time namespace */
} sim_modes[] = {
	{"hot", BENCH_BODY_NONE, false},
	{"pressure", BENCH_BODY_PRESSURE, false},
	{"timens", BENCH_BODY_NONE, true},
};

/* a task in a namespace ten days ahead, as the harness's timens mode */
static const struct timens_offsets sim_timens_offs = {
	.monotonic = {10 * 86400, 0},
	.boottime = {10 * 86400, 0},
};

/* the loop's environment, alone at SIM_ENV_OFFSET of its page */
static struct {
	u8 before[SIM_ENV_OFFSET];
	struct bench_env env;
} sim_env_page __aligned(4096);

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " VARIANT CLOCK MODE ITERATIONS [--l1d BYTES]\n"
		"       " PROG " " FLOOR_EMPTY
		" none MODE ITERATIONS [--l1d N]\n"
		"       " PROG " --list-json\n"
		"Makes ITERATIONS calls through the harness's timed loop for\n"
		"VARIANT on CLOCK in MODE (hot; pressure: between calls\n"
		"read 2 x L1D in whole pages at the data page's offsets, as\n"
		"`run` does; or timens: back to back from a task in a time\n"
		"namespace, generic_timens* only), for cachegrind to count;\n"
		"prints one JSON line, with the variant's vvar area.\n"
		"The simulated kernel runs on the fake clocksource and the\n"
		"counter stays 1 ms past cycle_last, so every call is the\n"
		"same: a variant <layout>+<counter>+<inline> is measured as\n"
		"<layout>+fake+<inline> (same layout code and inlining; the\n"
		"counter read is a TLS load).\n"
		"  --l1d BYTES   the simulated L1D size the pressure buffer\n"
		"                is sized from (default %lu)\n"
		"  --list-json   the variants, clocks and modes, as JSON\n",
		SIM_DEFAULT_L1D);
}

/* twice the L1D in whole pages, as the harness's pressure_bytes() */
static size_t sim_pressure_bytes(size_t l1d)
{
	return 2 * ((l1d + PAGE - 1) & ~(PAGE - 1));
}

static void list_json(void)
{
	printf("{\"variants\":[");
	for (unsigned int i = 0; i < vdso_variants_nr; i++) {
		const struct vdso_variant *v = vdso_variants[i];

		printf("%s{\"name\":\"%s\",\"layout\":\"%s\","
		       "\"counter\":\"%s\",\"inline\":\"%s\","
		       "\"real_counter\":%s,\"known_bad\":%s}",
		       i ? "," : "", v->name, v->layout, v->counter,
		       v->inline_mode, v->real_counter ? "true" : "false",
		       v->known_bad ? "true" : "false");
	}
	printf("],\"floors\":[\"" FLOOR_EMPTY "\"],\"clocks\":[");
	for (unsigned int i = 0; i < NR_CLOCK_CHOICES; i++)
		printf("%s\"%s\"", i ? "," : "", bench_clocks[i].name);
	printf("],\"modes\":[");
	for (unsigned int i = 0; i < ARRAY_SIZE(sim_modes); i++)
		printf("%s\"%s\"", i ? "," : "", sim_modes[i].name);
	printf("],\"fake_counter_page_offset\":%lu}\n",
	       (unsigned long)((uintptr_t)&vdso_fake_cycles & (PAGE - 1)));
}

/* the variant's fake-counter twin, and its index in the registry */
static const struct vdso_variant *fake_twin(const struct vdso_variant *v,
					    unsigned int *index)
{
	char name[128];

	snprintf(name, sizeof(name), "%s+fake+%s", v->layout, v->inline_mode);
	for (unsigned int i = 0; i < vdso_variants_nr; i++) {
		if (!strcmp(vdso_variants[i]->name, name)) {
			*index = i;
			return vdso_variants[i];
		}
	}
	return NULL;
}

static int bad(const char *what, const char *value, const char *valid)
{
	fprintf(stderr, PROG ": unknown %s '%s' (%s)\n", what, value, valid);
	return 2;
}

/* where run_loop()'s frame was: the evidence that the move below worked */
static uintptr_t loop_frame;

static noinline void run_loop(bench_loop_fn fn, u64 n)
{
	loop_frame = (uintptr_t)__builtin_frame_address(0);
	fn(&sim_env_page.env, n);
}

/*
 * Move the stack to SIM_STACK_OFFSET of a page before running the loop:
 * the environment and arguments above it vary in length, so where it
 * starts varies, and in pressure mode its lines could share the evicted
 * sets. pad + 16 is a multiple of 16, so alloca moves the stack by exactly
 * that much and where it ends does not depend on where it began (the
 * output's stack_page_offset shows it).
 */
static noinline void run_loop_aligned(bench_loop_fn fn, u64 n)
{
	uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
	size_t pad = (frame - SIM_STACK_OFFSET) & (PAGE - 1);
	volatile u8 *p = alloca(pad + 16);

	p[0] = 0;
	run_loop(fn, n);
}

int main(int argc, char **argv)
{
	const struct vdso_variant *asked = NULL, *v = NULL;
	const struct clock_choice *clock;
	struct bench_env *env = &sim_env_page.env;
	struct tk_clocksource cs;
	struct timekeeper tk;
	unsigned int index = 0, mode;
	size_t l1d = SIM_DEFAULT_L1D;
	bench_loop_fn fn;
	char *end;
	u64 n;

	if (argc == 2 && !strcmp(argv[1], "--list-json")) {
		list_json();
		return 0;
	}
	if (argc == 2 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc == 7 && !strcmp(argv[5], "--l1d")) {
		errno = 0;
		l1d = strtoul(argv[6], &end, 10);
		if (errno || *end || l1d < PAGE || l1d > (64UL << 20)) {
			fprintf(stderr,
				PROG ": --l1d: '%s' is not a size in bytes "
				     "from 4096 to 64 MiB\n",
				argv[6]);
			return 2;
		}
		argc = 5;
	}
	if (argc != 5) {
		usage(stderr);
		return 2;
	}

	for (mode = 0; mode < ARRAY_SIZE(sim_modes); mode++)
		if (!strcmp(argv[3], sim_modes[mode].name))
			break;
	if (mode == ARRAY_SIZE(sim_modes))
		return bad("mode", argv[3], "valid: hot, pressure, timens");
	errno = 0;
	n = strtoull(argv[4], &end, 10);
	if (errno || *end || argv[4][0] < '0' || argv[4][0] > '9' || !n) {
		fprintf(stderr,
			PROG ": ITERATIONS: '%s' is not a positive "
			     "whole number\n",
			argv[4]);
		return 2;
	}

	if (!strcmp(argv[1], FLOOR_EMPTY)) {
		if (strcmp(argv[2], bench_clock_none.name))
			return bad("clock", argv[2],
				   FLOOR_EMPTY " has the one clock none");
		clock = &bench_clock_none;
		fn = bench_empty_loops.floor[sim_modes[mode].body];
	} else {
		asked = vdso_variant_find(argv[1]);
		if (!asked)
			return bad("variant", argv[1],
				   "--list-json lists the valid ones");
		v = fake_twin(asked, &index);
		if (!v) {
			fprintf(stderr, PROG ": %s has no fake-counter twin\n",
				asked->name);
			return 2;
		}
		if (sim_modes[mode].timens && !v->has_timens) {
			fprintf(stderr,
				PROG ": mode timens: %s has no time "
				     "namespaces (generic_timens* only)\n",
				asked->name);
			return 2;
		}
		clock = bench_clock_find(argv[2]);
		if (!clock)
			return bad("clock", argv[2],
				   "--list-json lists the valid ones");
		fn = bench_variant_loops[index]
			     ->op[clock->op][sim_modes[mode].body];
	}

	env->clk = clock->clk;
	if (sim_modes[mode].body == BENCH_BODY_PRESSURE) {
		u8 *buf;

		env->pressure_len = sim_pressure_bytes(l1d);
		buf = aligned_alloc(PAGE, env->pressure_len);
		if (!buf) {
			fprintf(stderr, PROG ": no memory for %zu bytes\n",
				env->pressure_len);
			return 1;
		}
		memset(buf, 0, env->pressure_len);
		env->pressure_buf = buf;
	}

	check_reset_fake_kernel(&cs, SIM_START_CYCLES);
	if (v && sim_kernel_attach(v)) {
		fprintf(stderr, PROG ": attaching %s: %s\n", v->name,
			strerror(errno));
		return 1;
	}
	sim_tk_snapshot(&tk);
	vdso_fake_cycles =
		tk.tkr_mono.cycle_last +
		((SIM_DELTA_NS << tk.tkr_mono.shift) / tk.tkr_mono.mult);

	if (v && sim_modes[mode].timens &&
	    sim_timens_enter(v, &sim_timens_offs)) {
		fprintf(stderr, PROG ": entering a time namespace for %s: %s\n",
			v->name, strerror(errno));
		return 1;
	}

	run_loop_aligned(fn, n);

	if (v && sim_modes[mode].timens && sim_timens_leave(v)) {
		fprintf(stderr, PROG ": leaving the time namespace of %s: %s\n",
			v->name, strerror(errno));
		return 1;
	}

	printf("{\"subject\":\"%s\",\"measured_as\":\"%s\",\"clock\":\"%s\","
	       "\"mode\":\"%s\",\"iterations\":%llu,\"pressure_bytes\":%zu,"
	       "\"counter\":%llu,\"syscalls\":%llu,\"stack_page_offset\":%lu,"
	       "\"fake_counter_page_offset\":%lu,\"evicted_span\":%d,"
	       "\"vvar\":\"0x%lx\",\"vvar_size\":%zu}\n",
	       asked ? asked->name : FLOOR_EMPTY, v ? v->name : FLOOR_EMPTY,
	       clock->name, sim_modes[mode].name, (unsigned long long)n,
	       env->pressure_len, (unsigned long long)vdso_fake_cycles,
	       (unsigned long long)sim_syscall_count(),
	       (unsigned long)(loop_frame & (PAGE - 1)),
	       (unsigned long)((uintptr_t)&vdso_fake_cycles & (PAGE - 1)),
	       BENCH_PRESSURE_SPAN, (unsigned long)(uintptr_t)(v ? v->vvar : 0),
	       v ? v->vvar_size : 0);
	sim_kernel_detach_all();
	return 0;
}
