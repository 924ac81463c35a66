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
 * - cold: the harness's cold loop (bench/cold.h): before each call the
 *   data page's offsets are read in 2 x ways pages of the simulated L1D,
 *   so the counts show what that eviction leaves the call to miss; the
 *   bracket's counter reads run, but no histogram is kept (its lines
 *   would depend on the real counter's values under valgrind).
 * - --clock-mode pvclock (hvclock): the clocksource is kvm-clock (Hyper-V's
 *   TSC page), as verify's (impls/kernel/sim_vclock.h): the counter is the
 *   TSC value the simulated host's page turns into the same 1 ms, and the
 *   call reads that page (x86 layouts and imports whose build has the read).
 */
#include <alloca.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cold.h"
#include "bench/loops.h"
#include "bench/sim_driver.h"
#include "bench/subjects.h"
#include "bench/sys_snapshot.h"
#include "common/json_writer.h"
#include "impls/kernel/fake_counter.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_vclock.h"
#include "impls/registry.h"
#include "verify/check.h"

#define PAGE 4096UL
#define FLOOR_EMPTY "floor/empty"
/* the running kernel's vDSO, from a snapshot (bench/sys_snapshot.h) */
#define SYS_VDSO "sys/vdso"
/* the fake kernel's counter at reset; the calls read 1 ms later */
#define SIM_START_CYCLES 1000000ULL
/* the exit status for a variant whose counter read cannot be counted */
#define SIM_READS_ITSELF 3
#define SIM_DELTA_NS 1000000ULL
/* where the loop's stack and environment lie within their pages */
#define SIM_STACK_OFFSET 4032UL
#define SIM_ENV_OFFSET 2048UL
#define SIM_DEFAULT_L1D 32768UL
#define SIM_DEFAULT_WAYS 8U

static const struct {
	const char *name;
	enum bench_body body;
	bool timens; /* the reader is a task in a time namespace */
} sim_modes[] = {
	{"hot", BENCH_BODY_NONE, false},
	{"pressure", BENCH_BODY_PRESSURE, false},
	{"timens", BENCH_BODY_NONE, true},
	{"cold", BENCH_BODY_COLD, false},
};

/* a task in a namespace ten days ahead, as the harness's timens mode */
const struct timens_offsets sim_timens_offs = {
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
		"usage: " PROG " VARIANT CLOCK MODE ITERATIONS [--l1d BYTES] "
		"[--ways N] [--clock-mode tsc|pvclock|hvclock]\n"
		"       " PROG " " FLOOR_EMPTY
		" none MODE ITERATIONS [--l1d N] [--ways N]\n"
		"       " PROG " " SYS_VDSO
		" CLOCK hot|pressure ITERATIONS --snapshot FILE [--l1d N] "
		"[--ways N]\n"
		"       " PROG " VARIANT --trace CLOCK/MODE[,...] N[,N...]\n"
		"       " PROG " --take-snapshot FILE\n"
		"       " PROG " --list-json\n"
		"Makes ITERATIONS calls through the harness's timed loop for\n"
		"VARIANT on CLOCK in MODE (hot; pressure: between calls\n"
		"read 2 x L1D in whole pages at the data page's offsets, as\n"
		"`run` does; timens: back to back from a task in a time\n"
		"namespace, generic_timens* only; cold: the cold loop, the\n"
		"data page's offsets read in 2 x ways pages before each\n"
		"call), for cachegrind to count; prints one JSON line, with\n"
		"the variant's vvar area.\n"
		"The simulated kernel runs on the fake clocksource and the\n"
		"counter stays 1 ms past cycle_last, so every call is the\n"
		"same: a variant <layout>+<counter>+<inline> is measured as\n"
		"<layout>+fake+<inline> (same layout code and inlining; the\n"
		"counter read is a TLS load). A twin that reads the counter\n"
		"itself (a tree's own rdtsc()) is refused, exit 3.\n"
		"  --l1d BYTES   the simulated L1D size the pressure buffer\n"
		"                is sized from (default %lu)\n"
		"  --ways N      the simulated L1D's ways, which the cold\n"
		"                eviction is sized from (default %u)\n"
		"  --take-snapshot FILE  copy this process's [vdso] and its\n"
		"                [vvar] time data page to FILE (run natively:\n"
		"                valgrind hides the vDSO)\n"
		"  --snapshot FILE  " SYS_VDSO ": call the copied image, its\n"
		"                data page set to the counter now, so every\n"
		"                call takes the same path (with the counter\n"
		"                read the kernel patched in for this CPU)\n"
		"  --trace       for a memory trace (lackey): each CLOCK/MODE\n"
		"                (hot, timens) N calls for each N, in one run,\n"
		"                each between two stores to its marks\n"
		"                (bench/sim_trace.c)\n"
		"  --list-json   the variants, clocks and modes, as JSON\n",
		SIM_DEFAULT_L1D, SIM_DEFAULT_WAYS);
}

/* twice the L1D in whole pages, as the harness's pressure_bytes() */
static size_t sim_pressure_bytes(size_t l1d)
{
	return 2 * ((l1d + PAGE - 1) & ~(PAGE - 1));
}

static void list_variants(struct json_writer *w)
{
	json_key(w, "variants");
	json_begin_array(w);
	for (unsigned int i = 0; i < vdso_variants_nr; i++) {
		const struct vdso_variant *v = vdso_variants[i];

		json_begin_object(w);
		json_kv_string(w, "name", v->name);
		json_kv_string(w, "layout", v->layout);
		json_kv_string(w, "counter", v->counter);
		json_kv_string(w, "inline", v->inline_mode);
		json_kv_bool(w, "real_counter", v->real_counter);
		json_kv_bool(w, "known_bad", v->known_bad != NULL);
		json_end_object(w);
	}
	json_end_array(w);
}

/*
 * The variants and what this driver simulates (clocks: every clock
 * choice; modes: the driver's), then the harness's vocabulary, from its
 * tables: the seven clocks of its default selection, every mode of
 * `run --modes`, and the counter its default selection reads on this CPU.
 */
static int list_json(void)
{
	struct json_writer w;

	json_init_file(&w, stdout);
	json_begin_object(&w);
	list_variants(&w);
	json_key(&w, "floors");
	json_begin_array(&w);
	json_string(&w, FLOOR_EMPTY);
	json_end_array(&w);
	json_key(&w, "clocks");
	json_begin_array(&w);
	for (unsigned int i = 0; i < NR_CLOCK_CHOICES; i++)
		json_string(&w, bench_clocks[i].name);
	json_end_array(&w);
	json_key(&w, "modes");
	json_begin_array(&w);
	for (unsigned int i = 0; i < ARRAY_SIZE(sim_modes); i++)
		json_string(&w, sim_modes[i].name);
	json_end_array(&w);
	json_kv_uint(&w, "fake_counter_page_offset",
		     (uintptr_t)&vdso_fake_cycles & (PAGE - 1));
	json_key(&w, "default_clocks");
	json_begin_array(&w);
	for (unsigned int i = 0; i < NR_SUITE_CLOCKS; i++)
		json_string(&w, bench_clocks[i].name);
	json_end_array(&w);
	json_key(&w, "bench_modes");
	json_begin_array(&w);
	for (unsigned int i = 0; i < NR_MODES; i++)
		json_string(&w, bench_modes[i].name);
	json_end_array(&w);
	json_kv_string(&w, "default_counter", bench_default_counter());
	json_end_object(&w);
	return json_end_line(&w) ? 1 : 0;
}

/* the variant's fake-counter twin, and its index in the registry */
const struct vdso_variant *sim_fake_twin(const struct vdso_variant *v,
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

/* a paravirtual --clock-mode for what does not read its page: exit 2 */
static int vclock_refused(int clock_mode, const char *subject, const char *why)
{
	fprintf(stderr, PROG ": --clock-mode %s: %s%s%s\n",
		sim_vclock_name((enum sim_vclock)clock_mode), subject,
		why ? ": " : " ",
		why ? why : "does not read the simulated host's page (x86 "
			    "layouts and imports only)");
	return 2;
}

/* where run_loop()'s frame was: the evidence that the move below worked */
static uintptr_t loop_frame;

struct loop_call {
	bench_loop_fn fn;
	u64 n;
};

static noinline void run_loop(void *arg)
{
	const struct loop_call *c = arg;

	loop_frame = (uintptr_t)__builtin_frame_address(0);
	c->fn(&sim_env_page.env, c->n);
}

struct bench_env *sim_env(void)
{
	return &sim_env_page.env;
}

void sim_run(bench_loop_fn fn, u64 n)
{
	struct loop_call call = { .fn = fn, .n = n };

	/*
	 * The loop's stack at SIM_STACK_OFFSET of a page: the environment
	 * and arguments above it vary in length, so where it starts varies,
	 * and in pressure and cold mode its lines could share the evicted
	 * sets (the output's stack_page_offset shows where it went).
	 */
	cold_with_stack_at(SIM_STACK_OFFSET, run_loop, &call);
}

int sim_start(const struct vdso_variant *v)
{
	struct tk_clocksource cs;
	struct timekeeper tk;

	check_reset_fake_kernel(&cs, SIM_START_CYCLES);
	if (v && sim_kernel_attach(v)) {
		fprintf(stderr, PROG ": attaching %s: %s\n", v->name,
			strerror(errno));
		return -1;
	}
	sim_tk_snapshot(&tk);
	/* the TSC value for it under pvclock: always one, so far below 2^63 */
	check_set_cycles(tk.tkr_mono.cycle_last +
			 ((SIM_DELTA_NS << tk.tkr_mono.shift) / tk.tkr_mono.mult));
	return 0;
}

/* a whole number of bytes, or exit 2 naming the option and its range */
static unsigned long parse_option(const char *flag, const char *value,
				  unsigned long min, unsigned long max,
				  const char *what)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(value, &end, 10);
	if (errno || *end || value[0] < '0' || value[0] > '9' || v < min ||
	    v > max) {
		fprintf(stderr, PROG ": %s: '%s' is not %s\n", flag, value,
			what);
		exit(2);
	}
	return v;
}

static const char *floor_or_sys(void)
{
	return sys_snapshot_vvar() ? SYS_VDSO : FLOOR_EMPTY;
}

/* the one line `vdsobench sim` and `layout` read */
static int print_result(const struct vdso_variant *asked,
			const struct vdso_variant *v,
			const struct clock_choice *clock, unsigned int mode,
			u64 n, const struct bench_env *env)
{
	struct json_writer w;
	char vvar[32];

	snprintf(vvar, sizeof(vvar), "0x%lx",
		 (unsigned long)(uintptr_t)(v ? v->vvar : sys_snapshot_vvar()));
	json_init_file(&w, stdout);
	json_begin_object(&w);
	json_kv_string(&w, "subject", asked ? asked->name : floor_or_sys());
	json_kv_string(&w, "measured_as", v ? v->name : floor_or_sys());
	json_kv_string(&w, "clock", clock->name);
	json_kv_string(&w, "mode", sim_modes[mode].name);
	json_kv_string(&w, "clock_mode", sim_vclock_name(sim_vclock_mode()));
	json_kv_uint(&w, "iterations", n);
	json_kv_uint(&w, "pressure_bytes", env->pressure_len);
	json_kv_uint(&w, "cold_pages", env->cold.pages);
	json_kv_uint(&w, "counter", vdso_fake_cycles);
	json_kv_uint(&w, "syscalls", sim_syscall_count());
	json_kv_uint(&w, "stack_page_offset", loop_frame & (PAGE - 1));
	json_kv_uint(&w, "fake_counter_page_offset",
		     (uintptr_t)&vdso_fake_cycles & (PAGE - 1));
	json_kv_int(&w, "evicted_span", BENCH_PRESSURE_SPAN);
	json_kv_string(&w, "vvar", vvar);
	json_kv_uint(&w, "vvar_size", v ? v->vvar_size :
					  sys_snapshot_vvar() ? PAGE : 0);
	json_end_object(&w);
	return json_end_line(&w);
}

int main(int argc, char **argv)
{
	const struct vdso_variant *asked = NULL, *v = NULL;
	const struct clock_choice *clock;
	struct bench_env *env = &sim_env_page.env;
	unsigned int index = 0, mode;
	size_t l1d = SIM_DEFAULT_L1D;
	unsigned int ways = SIM_DEFAULT_WAYS;
	const char *snapshot = NULL;
	int clock_mode = SIM_VCLOCK_TSC;
	const char *unavailable;
	bench_loop_fn fn;
	char *end;
	u64 n;

	if (argc == 2 && !strcmp(argv[1], "--list-json"))
		return list_json();
	if (argc == 5 && !strcmp(argv[2], "--trace"))
		return sim_trace(argv[1], argv[3], argv[4]);
	if (argc == 3 && !strcmp(argv[1], "--take-snapshot")) {
		if (sys_snapshot_take(argv[2])) {
			fprintf(stderr, PROG ": --take-snapshot: %s\n",
				sys_snapshot_error());
			return errno == EINVAL || errno == ENOENT ? 2 : 1;
		}
		if (*sys_snapshot_note())
			printf("%s\n", sys_snapshot_note());
		return 0;
	}
	if (argc == 2 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	/* the options after the four arguments, each with its value */
	while (argc >= 7 && (!strcmp(argv[argc - 2], "--l1d") ||
			     !strcmp(argv[argc - 2], "--ways") ||
			     !strcmp(argv[argc - 2], "--snapshot") ||
			     !strcmp(argv[argc - 2], "--clock-mode"))) {
		if (!strcmp(argv[argc - 2], "--snapshot"))
			snapshot = argv[argc - 1];
		else if (!strcmp(argv[argc - 2], "--clock-mode")) {
			clock_mode = sim_vclock_parse(argv[argc - 1]);
			if (clock_mode < 0)
				return bad("clock mode", argv[argc - 1],
					   "valid: tsc, pvclock, hvclock");
		}
		else if (!strcmp(argv[argc - 2], "--l1d"))
			l1d = parse_option("--l1d", argv[argc - 1], PAGE,
					   64UL << 20,
					   "a size in bytes from 4096 to 64 MiB");
		else
			ways = (unsigned int)parse_option(
				"--ways", argv[argc - 1], 1, 1024,
				"a number of ways from 1 to 1024");
		argc -= 2;
	}
	if (argc != 5) {
		usage(stderr);
		return 2;
	}

	for (mode = 0; mode < ARRAY_SIZE(sim_modes); mode++)
		if (!strcmp(argv[3], sim_modes[mode].name))
			break;
	if (mode == ARRAY_SIZE(sim_modes))
		return bad("mode", argv[3], "valid: hot, pressure, timens, cold");
	errno = 0;
	n = strtoull(argv[4], &end, 10);
	if (errno || *end || argv[4][0] < '0' || argv[4][0] > '9' || !n) {
		fprintf(stderr,
			PROG ": ITERATIONS: '%s' is not a positive "
			     "whole number\n",
			argv[4]);
		return 2;
	}

	sim_vclock_select((enum sim_vclock)clock_mode);
	if (clock_mode != SIM_VCLOCK_TSC &&
	    (!IS_ENABLED(__x86_64__) || !strcmp(argv[1], SYS_VDSO)))
		return vclock_refused(clock_mode, argv[1], NULL);
	if (!strcmp(argv[1], SYS_VDSO)) {
		if (!snapshot) {
			fprintf(stderr, PROG ": " SYS_VDSO " needs --snapshot "
					     "FILE (from --take-snapshot)\n");
			return 2;
		}
		if (sim_modes[mode].body != BENCH_BODY_NONE &&
		    sim_modes[mode].body != BENCH_BODY_PRESSURE)
			return bad("mode", argv[3],
				   SYS_VDSO " valid: hot, pressure");
		clock = bench_clock_find(argv[2]);
		if (!clock)
			return bad("clock", argv[2],
				   "--list-json lists the valid ones");
		if (sys_snapshot_load(snapshot)) {
			fprintf(stderr, PROG ": " SYS_VDSO ": %s\n",
				sys_snapshot_error());
			return 2;
		}
		fn = bench_sys_vdso_loops.op[clock->op][sim_modes[mode].body];
	} else if (snapshot) {
		fprintf(stderr, PROG ": --snapshot is for " SYS_VDSO " only\n");
		return 2;
	} else if (!strcmp(argv[1], FLOOR_EMPTY)) {
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
		v = sim_fake_twin(asked, &index);
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
		/*
		 * a tree or patch whose counter read bypasses the fake one
		 * (its own rdtsc(), RDTSCP): valgrind answers it with the real
		 * counter, whose delta from the fake kernel's cycle_last, and
		 * so the path and its counts, would differ from run to run
		 */
		if (check_reads_counter_itself(v)) {
			fprintf(stderr,
				PROG ": %s reads the counter itself, not "
				     "the fake one: under valgrind that is "
				     "the real counter, whose delta (and so "
				     "the path counted) differs from run to "
				     "run\n",
				asked->name);
			return SIM_READS_ITSELF;
		}
	}
	unavailable = v ? check_clock_mode_unavailable(v) : NULL;
	if (unavailable)
		return vclock_refused(clock_mode, argv[1], unavailable);

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
	if (sim_modes[mode].body == BENCH_BODY_COLD) {
		u8 *buf;

		env->cold.pages = cold_pages(l1d, ways, 1);
		env->cold.span = BENCH_PRESSURE_SPAN;
		env->cold.dither = COLD_DITHER;
		buf = aligned_alloc(PAGE, env->cold.pages * PAGE);
		if (!buf) {
			fprintf(stderr, PROG ": no memory for %zu pages\n",
				env->cold.pages);
			return 1;
		}
		memset(buf, 0, env->cold.pages * PAGE);
		env->cold.buf = buf;
	}

	if (sim_start(v))
		return 1;

	if (v && sim_modes[mode].timens &&
	    sim_timens_enter(v, &sim_timens_offs)) {
		fprintf(stderr, PROG ": entering a time namespace for %s: %s\n",
			v->name, strerror(errno));
		return 1;
	}

	sim_run(fn, n);

	if (v && sim_modes[mode].timens && sim_timens_leave(v)) {
		fprintf(stderr, PROG ": leaving the time namespace of %s: %s\n",
			v->name, strerror(errno));
		return 1;
	}

	if (print_result(asked, v, clock, mode, n, env))
		return 1;
	sim_kernel_detach_all();
	return 0;
}
