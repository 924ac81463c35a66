// SPDX-License-Identifier: GPL-2.0
//
// vdsobench_bench: every selected subject x clock x mode x CPU as one
// Google Benchmark, on pinned CPUs, on a simulated kernel that runs on
// the real counter in step with the system's clocks.
//
// The thin C++ layer: registration, the per-benchmark setup a mode needs
// (pinning, attaching the variant, a kernel tick, the writer thread, the
// time namespace), the perf counter group read around the timed loop,
// the progress line and the results context. The loops themselves are C
// (loops.h) and are timed whole, so the harness adds nothing per call.

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#ifndef VDSOBENCH_NO_GBENCH
#include <benchmark/benchmark.h>

#include "bench/gbench.h"
#include "bench/progress.h"
#endif
#include "bench/harness.h"
#include "bench/left_out.h"
#include "bench/plan.h"
#include "bench/records.h"
#include "bench/rounds.h"
#include "bench/samples.h"

extern "C" {
#include "bench/cpu_lock.h"
#include "bench/pin.h"
#include "bench/subjects.h"
#include "bench/vdso_agree.h"
#include "bench/vdso_entries.h"
#include "bench/vdso_gate.h"
#include "bench/vdso_sym.h"
#include "counters/perf_counters.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_system.h"
#include "impls/registry.h"
}

namespace
{

struct options {
	const char *variants = nullptr, *clocks = nullptr, *modes = nullptr;
	const char *cpus = nullptr,
		   *events = "cycles,instructions,L1-dcache-load-misses";
	int writer_cpu = -1;
	unsigned int hz = 1000; // 0: max
	bool pin = true, list = false, quiet = false, sequential = false;
	unsigned int rounds = 0, copies = 1, samples = 0;
	double batch_ms = 10;
	enum cpu_lock_policy cpu_lock = CPU_LOCK_WAIT;
	std::string min_time = "0.1", repetitions = "1", out;
};

const char usage_text[] =
	"usage: vdsobench_bench [--variants LIST] [--clocks LIST] [--modes "
	"LIST]\n"
	"         [--cpus LIST|all] [--writer-cpu N] [--hz N|max] [--no-pin]\n"
	"         [--cpu-lock wait|fail|off]\n"
	"         [--events LIST|none] [--min-time S] [--repetitions N]\n"
	"         [--out FILE.json] [--list] [--quiet] [--sequential]\n"
	"         [--rounds N [--batch-ms MS] [--copies N]] [--samples N]\n"
	"\n"
	"Times each <subject>/<clock>/<mode>/cpu<N> with Google Benchmark and\n"
	"writes its JSON (with a \"vdsobench_harness\" context) to --out.\n"
	"\n"
	"  --variants LIST   names or globs (default '" BENCH_DEFAULT_SUBJECTS_HELP
	");\n"
	"                    subjects: every real-counter variant, "
	"sys/syscall,\n"
	"                    sys/libc, sys/vdso, floor/<counter>, floor/empty\n"
	"  --clocks LIST     ";

#define CLOCK_NAME(name, id, kind, base, label, short, abbrev) name,

// --clocks' choices from the table, wrapped as the lines around them
void usage_clocks(FILE *f)
{
	static const char *const names[] = {
		SUITE_CLOCKS(CLOCK_NAME) "getres:<clock>", "gettimeofday",
		"time (default: the seven clocks)"};
	const size_t indent = 20, width = 72;
	size_t col = indent;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		const char *comma = i + 1 < ARRAY_SIZE(names) ? "," : "";
		size_t len = strlen(names[i]) + strlen(comma);

		if (col > indent && col + 1 + len > width) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%s%s", names[i], comma);
		col += len;
	}
	fputs("\n  --modes LIST      (default hot)\n", f);
}

void usage(FILE *f)
{
	fputs(usage_text, f);
	usage_clocks(f);
	for (unsigned int i = 0; i < NR_MODES; i++)
		fprintf(f, "      %-9s %s\n", bench_modes[i].name,
			bench_modes[i].help);
	fputs("  --cpus LIST       CPUs to run on, one at a time: 0,2 or 1-3 "
	      "or all\n"
	      "                    (default: the last CPU this process may "
	      "use)\n"
	      "  --writer-cpu N    the writer mode's CPU (default: another "
	      "core, else\n"
	      "                    another PU)\n"
	      "  --hz N|max        writer updates per second (default 1000)\n"
	      "  --no-pin          do not bind (binding failure is otherwise "
	      "an error)\n"
	      "  --cpu-lock POLICY another vdsobench pinned to one of these "
	      "CPUs (the\n"
	      "                    writer's too): wait for it (default, said "
	      "once and\n"
	      "                    recorded), fail (exit 1), or off; a lock "
	      "file per CPU,\n"
	      "                    held for the whole run\n"
	      "  --events LIST     perf events, as libpfm4 names them "
	      "(default\n"
	      "                    cycles,instructions,L1-dcache-load-misses); "
	      "events\n"
	      "                    that do not open here are dropped with the "
	      "reason\n"
	      "  --min-time S      seconds per benchmark (default 0.1)\n"
	      "  --repetitions N   runs of each benchmark (default 1)\n"
	      "  --list            print the benchmark names the selection "
	      "expands to\n"
	      "  --quiet           no progress line\n"
	      "Exit: 0 done, 1 a benchmark failed, 2 bad usage.\n",
	      f);
	if (!harness_has_gbench)
		fprintf(f, "\nThis build (%s): %s, so --rounds or --samples; %s; %s.\n",
			harness_abi, harness_gbench_left_out,
			harness_libpfm_left_out, harness_hwloc_left_out);
}

[[noreturn]] void bad_usage(const std::string &line)
{
	fprintf(stderr, "vdsobench_bench: %s\n", line.c_str());
	exit(2);
}

unsigned long parse_number(const char *flag, const char *s, unsigned long min,
			   unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *s == '-' || end == s || *end || v < min || v > max)
		bad_usage(std::string(flag) + ": '" + s +
			  "' is not a number in " + std::to_string(min) + ".." +
			  std::to_string(max));
	return v;
}

bool positive_seconds(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	return end != s && !*end && v > 0 && v <= 3600;
}

options parse_args(int argc, char **argv)
{
	enum {
		O_VARIANTS = 256,
		O_CLOCKS,
		O_MODES,
		O_CPUS,
		O_WRITER,
		O_HZ,
		O_NOPIN,
		O_EVENTS,
		O_MINTIME,
		O_REPS,
		O_OUT,
		O_LIST,
		O_QUIET,
		O_SEQUENTIAL,
		O_ROUNDS,
		O_BATCH,
		O_COPIES,
		O_SAMPLES,
		O_CPU_LOCK
	};
	static const struct option longopts[] = {
		{"variants", required_argument, nullptr, O_VARIANTS},
		{"clocks", required_argument, nullptr, O_CLOCKS},
		{"modes", required_argument, nullptr, O_MODES},
		{"cpus", required_argument, nullptr, O_CPUS},
		{"writer-cpu", required_argument, nullptr, O_WRITER},
		{"hz", required_argument, nullptr, O_HZ},
		{"no-pin", no_argument, nullptr, O_NOPIN},
		{"events", required_argument, nullptr, O_EVENTS},
		{"min-time", required_argument, nullptr, O_MINTIME},
		{"repetitions", required_argument, nullptr, O_REPS},
		{"out", required_argument, nullptr, O_OUT},
		{"list", no_argument, nullptr, O_LIST},
		{"quiet", no_argument, nullptr, O_QUIET},
		{"sequential", no_argument, nullptr, O_SEQUENTIAL},
		{"rounds", required_argument, nullptr, O_ROUNDS},
		{"batch-ms", required_argument, nullptr, O_BATCH},
		{"copies", required_argument, nullptr, O_COPIES},
		{"samples", required_argument, nullptr, O_SAMPLES},
		{"cpu-lock", required_argument, nullptr, O_CPU_LOCK},
		{"help", no_argument, nullptr, 'h'},
		{},
	};
	options o;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, nullptr)) != -1) {
		switch (c) {
		case O_VARIANTS:
			o.variants = optarg;
			break;
		case O_CLOCKS:
			o.clocks = optarg;
			break;
		case O_MODES:
			o.modes = optarg;
			break;
		case O_CPUS:
			o.cpus = optarg;
			break;
		case O_WRITER:
			o.writer_cpu = (int)parse_number("--writer-cpu", optarg,
							 0, 4095);
			break;
		case O_HZ:
			// 0 stands for max: as fast as the writer can
			o.hz = strcmp(optarg, "max")
				       ? (unsigned int)parse_number(
						 "--hz (or max)", optarg, 1,
						 1000000)
				       : 0;
			break;
		case O_NOPIN:
			o.pin = false;
			break;
		case O_EVENTS:
			o.events = optarg;
			break;
		case O_MINTIME:
			if (!positive_seconds(optarg))
				bad_usage(std::string("--min-time: '") +
					  optarg +
					  "' is not a number of seconds in (0, "
					  "3600]");
			o.min_time = optarg;
			break;
		case O_REPS:
			o.repetitions = std::to_string(
				parse_number("--repetitions", optarg, 1, 1000));
			break;
		case O_OUT:
			o.out = optarg;
			break;
		case O_LIST:
			o.list = true;
			break;
		case O_ROUNDS:
			o.rounds = (unsigned int)parse_number(
				"--rounds", optarg, 1, 100000);
			break;
		case O_BATCH:
			if (!positive_seconds(optarg))
				bad_usage(std::string("--batch-ms: '") +
					  optarg +
					  "' is not a positive number");
			o.batch_ms = strtod(optarg, nullptr);
			break;
		case O_COPIES:
			o.copies = (unsigned int)parse_number("--copies",
							      optarg, 1, 8);
			break;
		case O_SAMPLES:
			o.samples = (unsigned int)parse_number(
				"--samples", optarg, 2, 100000000);
			break;
		case O_SEQUENTIAL:
			o.sequential = true;
			break;
		case O_CPU_LOCK:
			if (cpu_lock_parse_policy(optarg, &o.cpu_lock))
				bad_usage(cpu_lock_error());
			break;
		case O_QUIET:
			o.quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			bad_usage(std::string("unknown option '") +
				  argv[optind - 1] + "' (see --help)");
		}
	}
	if (optind < argc)
		bad_usage(std::string("unexpected argument '") + argv[optind] +
			  "' (variants go in --variants)");
	if (!harness_has_gbench && !o.rounds && !o.samples && !o.list)
		bad_usage(std::string(harness_gbench_left_out) +
			  ": time with --rounds N or --samples N");
	return o;
}

std::vector<std::string> split(const char *list)
{
	std::vector<std::string> out;
	std::string cur;

	for (const char *p = list;; p++) {
		if (!*p || *p == ',') {
			if (!cur.empty())
				out.push_back(cur);
			cur.clear();
			if (!*p)
				break;
		} else if (*p != ' ') {
			cur += *p;
		}
	}
	return out;
}

#if BENCH_HAS_GETTIME64
// a 32-bit vDSO's clock_gettime64 (sys/vdso_gettime64), or why not
std::string find_gettime64(const struct vdso_image *img,
			   const struct vdso_entries *e)
{
	bench_vdso_clock_gettime64 =
		(int (*)(clockid_t, struct __kernel_timespec *))vdso_image_sym(
			img, e->clock_gettime64, e->version);
	if (!bench_vdso_clock_gettime64)
		return std::string("the vDSO has no ") + e->clock_gettime64 +
		       " (" + e->version + "): a kernel before 5.3";
	return "";
}
#endif

// entry against its syscall, recorded: why it is not timed, or ""
std::string check_entry(harness_context &ctx, const char *entry,
			const char *sys, agree_read_fn read_entry,
			agree_read_fn read_sys)
{
	char why[256];
	int ret = vdso_agree(read_entry, read_sys, why, sizeof(why));

	ctx.vdso_checked.push_back({entry, why});
	if (!ret)
		return "";
	return std::string(entry) + " disagrees with the " + sys +
	       " syscall: " + why;
}

// this vDSO's entry e names (e->time NULL: none), recorded as looked up
void *find_entry(harness_context &ctx, const struct vdso_image *img,
		 const struct vdso_entries *e, const char *name)
{
	void *p;

	if (!name)
		return nullptr;
	p = vdso_image_sym(img, name, e->version);
	ctx.vdso_symbols.push_back({name, p != nullptr});
	return p;
}

// sys/vdso: the kernel's own entry points (vdso_entries.h), or why not
std::string find_system_vdso(harness_context &ctx)
{
	const struct vdso_entries *e = vdso_entries_own();
	struct vdso_image *img;

	if (!e) {
		ctx.vdso_gettime64_reason =
			"vdso_entries.h names no entries for this architecture";
		return ctx.vdso_gettime64_reason;
	}
	if (vdso_image_open(&img)) {
		ctx.vdso_gettime64_reason = vdso_image_error();
		return vdso_image_error();
	}
	bench_vdso_clock_gettime =
		(int (*)(clockid_t, struct timespec *))find_entry(
			ctx, img, e, e->clock_gettime);
	bench_vdso_clock_getres =
		(int (*)(clockid_t, struct timespec *))find_entry(
			ctx, img, e, e->clock_getres);
	bench_vdso_gettimeofday =
		(int (*)(struct timeval *, struct timezone *))find_entry(
			ctx, img, e, e->gettimeofday);
	bench_vdso_time = (time_t(*)(time_t *))find_entry(ctx, img, e, e->time);
	// no time entry (arm64): glibc's time() is its coarse clock_gettime
	if (!e->time && bench_vdso_clock_gettime) {
		bench_vdso_time = bench_vdso_time_coarse;
		ctx.vdso_time = std::string(e->clock_gettime) +
				"(CLOCK_REALTIME_COARSE): the vDSO has no time "
				"entry, and glibc's time() is that";
	} else if (bench_vdso_time) {
		ctx.vdso_time = e->time;
	}
#if BENCH_HAS_GETTIME64
	ctx.vdso_gettime64_reason = find_gettime64(img, e);
	ctx.vdso_symbols.push_back(
		{e->clock_gettime64, bench_vdso_clock_gettime64 != nullptr});
	if (bench_vdso_clock_gettime64)
		ctx.vdso_gettime64_reason = check_entry(
			ctx, e->clock_gettime64, "clock_gettime64",
			agree_vdso_gettime64, agree_syscall_gettime64);
#endif
	if (vdso_gate_of_process())
		ctx.vdso_gate = vdso_gate_of_process();
	vdso_image_close(img);
	// the image stays mapped: the pointers stay valid after close
	if (!bench_vdso_clock_gettime || !bench_vdso_clock_getres ||
	    !bench_vdso_gettimeofday || !bench_vdso_time)
		return std::string("the vDSO lacks one of ") +
		       e->clock_gettime + ", " + e->clock_getres + ", " +
		       e->gettimeofday + (e->time ? ", " : "") +
		       (e->time ? e->time : "") + " (" + e->version + ")";
	return check_entry(ctx, e->clock_gettime, "clock_gettime",
			   agree_vdso_gettime, agree_syscall_gettime);
}

void open_counters(const options &o, harness_context &ctx)
{
	std::vector<std::string> names;
	std::vector<const char *> ptrs;
	char err[512];

	if (!strcmp(o.events, "none")) {
		ctx.counters_reason = "not requested (--events none)";
		return;
	}
	names = split(o.events);
	if (names.empty())
		bad_usage("--events: empty list (event names, or none)");
	if (names.size() > PC_MAX_EVENTS)
		bad_usage("--events: at most " + std::to_string(PC_MAX_EVENTS) +
			  " events in one group");
	ctx.counters_requested = names;
	if (pc_init()) {
		ctx.counters_reason =
			std::string("libpfm4: ") + pc_init_error();
		return;
	}
	for (auto &n : names)
		ptrs.push_back(n.c_str());
	if (pc_group_open(&ctx.group, ptrs.data(), (unsigned int)ptrs.size(),
			  err, sizeof(err)))
		bad_usage(
			std::string("--events: ") + err +
			" (`vdsobench counters --all` lists the valid names)");
	for (unsigned int i = 0; i < pc_group_nr_dropped(ctx.group); i++)
		ctx.counters_dropped.push_back(
			{pc_group_dropped_name(ctx.group, i),
			 pc_group_dropped_reason(ctx.group, i)});
	ctx.counters_mode = pc_group_mode(ctx.group);
	ctx.counters_mode_reason = pc_group_mode_reason(ctx.group);
	if (!pc_group_nr_events(ctx.group)) {
		ctx.counters_reason = ctx.counters_dropped.empty()
					      ? "no events"
					      : ctx.counters_dropped[0].second;
		pc_group_destroy(ctx.group);
		ctx.group = nullptr;
	}
}

void setup_cpus(const options &o, harness_context &ctx)
{
	int cpus[4096];
	unsigned int n = 0;
	char err[512];

	if (pin_topology_init(&ctx.topo)) {
		if (o.pin)
			bad_usage(std::string(
					  "hwloc: cannot load the topology: ") +
				  strerror(errno) +
				  " (--no-pin runs without it)");
		ctx.topo = nullptr;
	}
	if (o.cpus) {
		if (!ctx.topo)
			bad_usage("--cpus needs hwloc's topology, which did "
				  "not load");
		if (pin_parse_cpus(ctx.topo, o.cpus, cpus, 4096, &n, err,
				   sizeof(err)))
			bad_usage(err);
	} else {
		n = 1;
		cpus[0] = ctx.topo ? pin_default_cpu(ctx.topo) : -1;
		if (cpus[0] < 0)
			cpus[0] = sched_getcpu();
	}
	ctx.cpus.assign(cpus, cpus + n);
	ctx.pinned = o.pin;
	ctx.writer_cpu = o.writer_cpu;
	if (ctx.writer_cpu >= 0 && ctx.topo &&
	    !pin_pu_allowed(ctx.topo, ctx.writer_cpu)) {
		char allowed[256];

		pin_allowed_list(ctx.topo, allowed, sizeof(allowed));
		bad_usage("--writer-cpu: " + std::to_string(ctx.writer_cpu) +
			  " is not a CPU this process may use (allowed: " +
			  allowed + ")");
	}
	if (ctx.writer_cpu < 0 && ctx.topo)
		ctx.writer_cpu = pin_default_writer_cpu(ctx.topo, ctx.cpus[0]);
	for (int c : ctx.cpus) {
		size_t l1d = ctx.topo ? pin_l1d_size(ctx.topo, c) : 0;
		char desc[128] = "";

		// the cold modes' evictions (bench/cold.h); 0: unknown
		ctx.l1d_ways.push_back(ctx.topo ? pin_l1d_ways(ctx.topo, c) : 0);
		ctx.l2.push_back(ctx.topo ? pin_l2_size(ctx.topo, c) : 0);
		ctx.l2_ways.push_back(ctx.topo ? pin_l2_ways(ctx.topo, c) : 0);

		if (ctx.topo)
			pin_describe(ctx.topo, c, desc, sizeof(desc));
		ctx.cpu_desc.push_back(desc);
		ctx.l1d.push_back(l1d);
	}
}

// Lock every CPU the plan pins to (readers and writers) for the whole run,
// in ascending order so that two runs never hold one each and wait for the
// other. The whole run rather than each benchmark: Google Benchmark
// interleaves the repetitions of every benchmark and CPU, and the rounds pair
// the batches of a round, so a run that got in between two of them would
// disturb them all the same; and a waiting run waits once, not at every
// benchmark. 0, or 1 (the line said) when a CPU is held and the policy is
// fail. A lock that cannot be taken at all is a warning, not a refusal.
int lock_cpus(const options &o, harness_context &ctx)
{
	std::vector<int> cpus = ctx.cpus;
	const char *who = o.rounds    ? "vdsobench_bench --rounds"
			  : o.samples ? "vdsobench_bench --samples"
				      : "vdsobench run";
	char dir[4096];

	if (!o.pin)
		return 0; // nothing is pinned: nothing to lock
	ctx.cpu_lock_policy = cpu_lock_policy_name(o.cpu_lock);
	if (o.cpu_lock == CPU_LOCK_OFF)
		return 0;
	for (auto &p : harness_plans())
		if (p.writer_cpu >= 0)
			cpus.push_back(p.writer_cpu);
	std::sort(cpus.begin(), cpus.end());
	cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
	if (cpu_lock_dir(dir, sizeof(dir))) {
		ctx.cpu_lock_error = cpu_lock_error();
	} else {
		ctx.cpu_lock_dir = dir;
		for (int c : cpus) {
			struct cpu_lock *l;

			if (!cpu_lock_take(&l, dir, c, o.cpu_lock, who,
					   stderr)) {
				ctx.cpu_locks.push_back(l);
				continue;
			}
			if (errno == EBUSY) {
				fprintf(stderr, "vdsobench_bench: %s\n",
					cpu_lock_error());
				return 1;
			}
			ctx.cpu_lock_error = cpu_lock_error();
			break;
		}
	}
	if (!ctx.cpu_lock_error.empty())
		fprintf(stderr,
			"vdsobench_bench: %s; measuring without the CPU lock, "
			"so another vdsobench run may share the CPU unseen\n",
			ctx.cpu_lock_error.c_str());
	return 0;
}

// run(out) with out the file at path (stdout if empty); its exit status,
// 1 if the file could not be written out, 2 if it could not be opened
int lines_to(const std::string &path, const std::function<int(FILE *)> &run)
{
	FILE *out = path.empty() ? stdout : fopen(path.c_str(), "w");
	int ret;

	if (!out) {
		fprintf(stderr, "vdsobench_bench: %s: %s\n", path.c_str(),
			strerror(errno));
		return 2;
	}
	ret = run(out);
	if (out != stdout && fclose(out)) {
		fprintf(stderr, "vdsobench_bench: %s: %s\n", path.c_str(),
			strerror(errno));
		ret = 1;
	}
	harness_teardown();
	return ret;
}

} // namespace

int main(int argc, char **argv)
{
	options o = parse_args(argc, argv);
	harness_context &ctx = harness();
	struct selection sel;
	char err[1024];

	ctx.vdso_reason = find_system_vdso(ctx);
	subjects_init(ctx.vdso_reason.empty() ? nullptr
					      : ctx.vdso_reason.c_str(),
		      ctx.vdso_gettime64_reason.empty()
			      ? nullptr
			      : ctx.vdso_gettime64_reason.c_str());
	if (selection_parse(&sel, o.variants, o.clocks, o.modes, err,
			    sizeof(err)))
		bad_usage(err);
	setup_cpus(o, ctx);
	ctx.hz = o.hz;

	if (harness_plan(sel, err, sizeof(err)))
		bad_usage(err);
	// before --list too, so that a bad event name is a usage error there
	open_counters(o, ctx);
	if (ctx.group && !ctx.counters_dropped.empty()) {
		char line[1024];

		pc_group_summary(ctx.group, line, sizeof(line));
		fprintf(stderr, "counters: %s\n", line);
	}
	if (!ctx.group && !ctx.counters_requested.empty())
		fprintf(stderr,
			"counters: none of %s opened here: %s; timing only\n",
			o.events, ctx.counters_reason.c_str());
	if (o.list) {
		harness_print_plan(stdout);
		return 0;
	}
	if (o.pin && harness_check_binding(err, sizeof(err))) {
		fprintf(stderr, "vdsobench_bench: %s\n", err);
		return 1;
	}
	// before the calibration, which a run sharing the CPU would disturb
	if (lock_cpus(o, ctx)) {
		harness_teardown();
		return 1;
	}
	// the simulated kernel on the real counter, from the system's clocks
	static struct tk_clocksource cs;
	ctx.tsc_hz = sim_calibrate_counter_hz(50);
	sim_kernel_reset_from_system(&cs, ctx.tsc_hz);

	// the two modes that write JSON lines instead of running Google
	// Benchmark
	if (o.samples)
		return lines_to(o.out, [&](FILE *out) {
			return samples_run(o.samples, out);
		});
	if (o.rounds)
		return lines_to(o.out, [&](FILE *out) {
			return rounds_run(o.rounds, o.batch_ms, o.copies,
					  o.quiet, out);
		});
#ifdef VDSOBENCH_NO_GBENCH
	return 2; // (parse_args refused it already)
#else

	std::vector<std::string> gb_args = {
		argv[0],
		"--benchmark_min_time=" + o.min_time,
		"--benchmark_repetitions=" + o.repetitions,
		// repetitions in random order across benchmarks, so that a
		// drift during the run spreads over all of them instead of
		// biasing whichever ran last
		std::string("--benchmark_enable_random_interleaving=") +
			(o.sequential ? "false" : "true"),
	};
	if (!o.out.empty()) {
		gb_args.push_back("--benchmark_out=" + o.out);
		gb_args.push_back("--benchmark_out_format=json");
	}
	std::vector<char *> gb_argv;
	for (auto &a : gb_args)
		gb_argv.push_back(&a[0]);
	int gb_argc = (int)gb_argv.size();
	benchmark::Initialize(&gb_argc, gb_argv.data());

	harness_register(std::stod(o.min_time));
	benchmark::AddCustomContext("vdsobench_harness",
				    record_text(harness_context_record()));
	progress_start(harness_plan_size() * std::stoul(o.repetitions),
		       std::stod(o.min_time), o.quiet);
	progress_reporter progress;
	benchmark::RunSpecifiedBenchmarks(&progress);
	benchmark::Shutdown();
	harness_teardown();
	return progress.errors() ? 1 : 0;
#endif
}
