// SPDX-License-Identifier: GPL-2.0
#include "bench/harness.h"
#include "bench/progress.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <thread>

#include <benchmark/benchmark.h>

extern "C" {
#include "bench/cold.h"
#include "bench/cpu_lock.h"
#include "bench/pin.h"
#include "counters/perf_counters.h"
#include "impls/counters/available.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_system.h"
}

namespace
{

std::vector<plan> plans;
u8 *pressure_buf;
// the cold modes' eviction pages (the largest plan's), and the histogram
// the cold loop counts each call's ticks in
u8 *cold_buf;
struct cold_hist cold_counts;
// floor/empty per (mode, CPU): the cold modes' bracket
std::map<std::pair<int, int>, plan> bracket_plans;

// used when hwloc reports no L1D: the common size on x86 since Core 2
constexpr size_t fallback_l1d = 32 * 1024;

// a task in a namespace ten days ahead, as a container migrated in
const struct timens_offsets timens_offs = {
	.monotonic = {10 * 86400, 0},
	.boottime = {10 * 86400, 0},
};

// see bench_between(): twice the L1D, in whole pages
size_t pressure_bytes(size_t l1d)
{
	return 2 * (((l1d ? l1d : fallback_l1d) + 4095) & ~4095UL);
}

// see cold.h: 2 x the ways of the L1D (cold) or, with colours and a
// margin, of the L2 (cold-l2) of the k-th CPU, 0 if its L2 is unknown;
// none for warm (each call timed alone, nothing evicted)
size_t cold_pages_of(size_t k, enum bench_mode m)
{
	harness_context &ctx = harness();

	if (m == MODE_WARM)
		return 0;
	if (m == MODE_COLD)
		return cold_pages(ctx.l1d[k] ? ctx.l1d[k] : fallback_l1d,
				  ctx.l1d_ways[k], 1);
	return cold_pages(ctx.l2[k], ctx.l2_ways[k], COLD_L2_MARGIN);
}

} // namespace

std::string harness_json_string(const std::string &s)
{
	std::string out = "\"";

	for (char c : s) {
		if (c == '"' || c == '\\') {
			out += '\\';
			out += c;
		} else if ((unsigned char)c < 0x20) {
			char buf[8];

			snprintf(buf, sizeof(buf), "\\u%04x", c);
			out += buf;
		} else {
			out += c;
		}
	}
	return out + "\"";
}

namespace
{

std::string json_or_null(const std::string &s)
{
	return s.empty() ? "null" : harness_json_string(s);
}

int bind_to(int cpu)
{
	harness_context &ctx = harness();

	return ctx.pinned ? pin_bind_thread(ctx.topo, cpu) : 0;
}

} // namespace

// The writer mode's kernel: update_vsyscall() at ctx.hz on another CPU.
class writer_thread
{
      public:
	explicit writer_thread(int cpu) : cpu_(cpu)
	{
	}
	bool start()
	{
		thread_ = std::thread([this] { run(); });
		while (!ready_.load())
			sched_yield();
		return bind_ok_;
	}
	void stop()
	{
		stop_.store(true);
		thread_.join();
	}
	double rate() const
	{
		return seconds_ > 0 ? updates_ / seconds_ : 0;
	}

      private:
	void run()
	{
		unsigned int hz = harness().hz;
		struct timespec next, t0, t1;

		bind_ok_ = bind_to(cpu_) == 0;
		ready_.store(true);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		next = t0;
		while (!stop_.load(std::memory_order_relaxed)) {
			sim_kernel_tick();
			updates_++;
			if (!hz)
				continue;
			next.tv_nsec += 1000000000L / hz;
			if (next.tv_nsec >= 1000000000L) {
				next.tv_sec++;
				next.tv_nsec -= 1000000000L;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
					nullptr);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		seconds_ = (t1.tv_sec - t0.tv_sec) +
			   (t1.tv_nsec - t0.tv_nsec) / 1e9;
	}

	int cpu_;
	std::thread thread_;
	std::atomic<bool> ready_{false}, stop_{false};
	bool bind_ok_ = false;
	double updates_ = 0, seconds_ = 0;
};

namespace
{

// what Google Benchmark compares with --min-time
double thread_seconds()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

bench_loop_fn loop_of(const plan &p)
{
	enum bench_body body = bench_modes[p.mode].body;

	if (p.subject->floor)
		return p.subject->loops->floor[body];
	if (p.mode == MODE_POINTER)
		return bench_pointer_loops.op[p.clock->op][body];
	return p.subject->loops->op[p.clock->op][body];
}

void add_counters(benchmark::State &state, const pc_sample &a,
		  const pc_sample &b)
{
	harness_context &ctx = harness();
	double counts[PC_MAX_EVENTS];
	double counted;

	counted = pc_sample_delta(ctx.group, &a, &b, counts);
	for (unsigned int i = 0; i < pc_group_nr_events(ctx.group); i++)
		state.counters[pc_group_event_name(ctx.group, i)] =
			benchmark::Counter(counts[i],
					   benchmark::Counter::kAvgIterations);
	// below 1: multiplexed, and the counts above were scaled up
	state.counters["counted_fraction"] = counted;
}

void run_one(benchmark::State &state, const plan &p)
{
	harness_context &ctx = harness();
	prepared_run run(p);
	struct pc_sample a, b;
	const char *err;
	double t0, t1;

	err = run.enter();
	if (err) {
		state.SkipWithError(err);
		return;
	}
	if (ctx.group)
		pc_group_read(ctx.group, &a);
	t0 = thread_seconds();
	while (state.KeepRunningBatch(state.max_iterations))
		run.loop((u64)state.max_iterations);
	t1 = thread_seconds();
	if (ctx.group)
		pc_group_read(ctx.group, &b);
	progress_batch(p.name, t1 - t0);
	run.leave();

	if (p.mode == MODE_WRITER) {
		state.counters["writer_hz"] = run.writer_rate();
		state.counters["writer_cpu"] = p.writer_cpu;
	}
	if (ctx.group)
		add_counters(state, a, b);
	// where it ran: the name says where it was meant to
	state.counters["cpu"] = sched_getcpu();
}

// A cold benchmark (manual time): per batch, floor/empty's calls (the
// bracket) and the subject's, each call timed alone; the time reported is
// the subject's mean net of the bracket's, and the counters say what went
// into it. floor/empty itself reports the bracket.
void run_cold(benchmark::State &state, const plan &p)
{
	harness_context &ctx = harness();
	const bool is_bracket = harness_is_bracket(p);
	prepared_run bracket(harness_bracket_plan(p)), run(p);
	struct pc_sample a, b, ba, bb;
	double counts[PC_MAX_EVENTS] = {}, bcounts[PC_MAX_EVENTS] = {};
	double raw = 0, br = 0, counted = 1, t0, t1;
	cold_figures f, fb;
	u64 calls = 0;
	const char *err;

	err = is_bracket ? nullptr : bracket.enter();
	if (!err)
		err = run.enter();
	if (err) {
		state.SkipWithError(err);
		return;
	}
	t0 = thread_seconds();
	while (state.KeepRunningBatch(state.max_iterations)) {
		u64 n = (u64)state.max_iterations;
		double net;

		if (!is_bracket) {
			if (ctx.group)
				pc_group_read(ctx.group, &ba);
			bracket.loop(n);
			if (ctx.group)
				pc_group_read(ctx.group, &bb);
			err = bracket.cold(&fb);
		}
		if (ctx.group)
			pc_group_read(ctx.group, &a);
		run.loop(n);
		if (ctx.group)
			pc_group_read(ctx.group, &b);
		if (!err)
			err = run.cold(&f);
		net = is_bracket ? f.mean : f.mean - fb.mean;
		if (!err && net <= 0)
			err = "cold: the calls took no measurable time beyond "
			      "the bracket (floor/empty cold)";
		if (err) {
			state.SkipWithError(err);
			break;
		}
		state.SetIterationTime(net * n / 1e9);
		raw += f.mean * n;
		br += (is_bracket ? f.mean : fb.mean) * n;
		calls += n;
		if (ctx.group) {
			double c[PC_MAX_EVENTS], bc[PC_MAX_EVENTS] = {};

			counted = pc_sample_delta(ctx.group, &a, &b, c);
			if (!is_bracket)
				pc_sample_delta(ctx.group, &ba, &bb, bc);
			for (unsigned int i = 0;
			     i < pc_group_nr_events(ctx.group); i++) {
				counts[i] += c[i];
				bcounts[i] += bc[i];
			}
		}
	}
	t1 = thread_seconds();
	progress_batch(p.name, t1 - t0);
	run.leave();
	bracket.leave();
	if (err || !calls)
		return;
	// the subject's events net of the bracket's (the same eviction)
	for (unsigned int i = 0; ctx.group && i < pc_group_nr_events(ctx.group);
	     i++)
		state.counters[pc_group_event_name(ctx.group, i)] =
			benchmark::Counter(counts[i] - bcounts[i],
					   benchmark::Counter::kAvgIterations);
	if (ctx.group)
		state.counters["counted_fraction"] = counted;
	state.counters["cold_raw_ns"] = raw / calls;
	state.counters["cold_bracket_ns"] = br / calls;
	// the last batch's distribution of single calls, bracket included
	state.counters["cold_median_ns"] = f.median;
	state.counters["cold_p90_ns"] = f.p90;
	state.counters["cold_kept"] = f.calls ? (double)f.kept / f.calls : 0;
	state.counters["cpu"] = sched_getcpu();
}

// Google Benchmark picks a manual-time benchmark's iterations from the
// reported time, which in the cold modes is a small part of the real one
// (the eviction is most of it): a fixed count instead, from a short
// calibration, that makes both batches take about min_time together.
u64 cold_iterations(const plan &p, double min_time)
{
	prepared_run run(p);
	double took = 0;
	u64 n = 16;

	if (run.enter())
		return 16; // the benchmark says why when it runs
	for (; n < (1ULL << 32); n *= 4) {
		double t0 = thread_seconds();

		run.loop(n);
		took = thread_seconds() - t0;
		if (took >= 2e-3)
			break;
	}
	run.leave();
	if (took <= 0)
		return 16;
	return std::max<u64>(16, (u64)(min_time / 2 / (took / n)));
}

void cold_trampoline(void *arg)
{
	auto *c = (std::pair<bench_loop_fn, std::pair<const bench_env *, u64>> *)
		arg;

	c->first(c->second.first, c->second.second);
}

} // namespace

prepared_run::prepared_run(const plan &p) : p_(p), loop_(loop_of(p)), env_()
{
}

prepared_run::~prepared_run()
{
	leave();
}

const char *prepared_run::enter()
{
	const struct subject *s = p_.subject;
	const struct vdso_variant *v = s->variant;

	if (bind_to(p_.cpu))
		return pin_bind_error();
	env_.clk = p_.clock->clk;
	env_.pressure_buf = pressure_buf;
	env_.pressure_len = p_.pressure_len;
	env_.clock_gettime = s->clock_gettime;
	env_.clock_getres = s->clock_getres;
	env_.gettimeofday = s->gettimeofday;
	env_.time = s->time;
	if (bench_mode_is_cold(p_.mode)) {
		env_.cold.buf = cold_buf;
		env_.cold.pages = p_.cold_pages;
		env_.cold.span = BENCH_PRESSURE_SPAN;
		env_.cold.dither = COLD_DITHER;
		env_.cold_hist = &cold_counts;
		// past L2, the data's pages leave the first-level TLB too:
		// their translations are brought back (cold.h)
		if (p_.mode == MODE_COLD_L2 && v) {
			env_.cold.touch = (const volatile u8 *)v->vvar;
			env_.cold.touch_pages = v->vvar_size / COLD_PAGE;
		}
	}
	if (v) {
		// only this variant's page is published to, so a writer's
		// rate is this variant's update rate
		sim_kernel_detach_all();
		if (sim_kernel_attach(v))
			return strerror(errno);
		// a fresh cycle_last and bases, as the last tick left them
		sim_kernel_tick();
	}
	if (p_.mode == MODE_TIMENS) {
		if (sim_timens_enter(v, &timens_offs))
			return strerror(errno);
		in_timens_ = true;
	}
	if (p_.mode == MODE_WRITER) {
		writer_.reset(new writer_thread(p_.writer_cpu));
		if (!writer_->start()) {
			leave();
			return pin_bind_error();
		}
	}
	return nullptr;
}

void prepared_run::loop(u64 n)
{
	if (!bench_mode_is_cold(p_.mode)) {
		loop_(&env_, n);
		return;
	}
	std::pair<bench_loop_fn, std::pair<const bench_env *, u64>> call = {
		loop_, {&env_, n}};

	cold_hist_reset(&cold_counts);
	cold_with_stack_at(COLD_STACK_OFFSET, cold_trampoline, &call);
}

const char *prepared_run::cold(cold_figures *out) const
{
	double ns_per_tick = 1e9 / (double)harness().tsc_hz;
	struct cold_summary s;

	if (!harness().tsc_hz)
		return "cold: the counter's rate is unknown";
	if (cold_summarize(&cold_counts, &s))
		return errno == ERANGE
			       ? "cold: most calls took longer than the "
				 "histogram holds (" __stringify(COLD_HIST_BINS)
				 " counter ticks)"
			       : "cold: no call was timed";
	out->mean = s.mean * ns_per_tick;
	out->min = s.min * ns_per_tick;
	out->p10 = s.p10 * ns_per_tick;
	out->median = s.median * ns_per_tick;
	out->p90 = s.p90 * ns_per_tick;
	out->calls = s.calls;
	out->kept = s.kept;
	return nullptr;
}

void prepared_run::leave()
{
	if (writer_) {
		writer_->stop();
		writer_rate_ = writer_->rate();
		writer_.reset();
	}
	if (in_timens_) {
		sim_timens_leave(p_.subject->variant);
		in_timens_ = false;
	}
}

harness_context &harness()
{
	static harness_context ctx;

	return ctx;
}

namespace
{

// Why the subject cannot run here: sys/vdso without a vDSO, or a counter
// read this CPU lacks (a variant's, or a floor's: floor/<counter>), which
// would die of SIGILL; nullptr if it can.
const char *unavailable(const struct subject *s)
{
	if (s->unavailable)
		return s->unavailable;
	if (s->variant)
		return vdso_counter_unavailable(s->variant->counter);
	if (s->floor && !strncmp(s->name, "floor/", 6))
		return vdso_counter_unavailable(s->name + 6);
	return nullptr;
}

} // namespace

int harness_plan(const struct selection &sel, char *err, size_t errlen)
{
	harness_context &ctx = harness();
	size_t most = 0, cold_most = 0;

	plans.clear();
	for (unsigned int i = 0; i < subjects_nr(); i++) {
		const struct subject *s = subject_at(i);

		if (!sel.subject[i])
			continue;
		if (unavailable(s)) {
			ctx.skipped.push_back(
				std::string(s->name) +
				": not available: " + unavailable(s));
			continue;
		}
		for (int m = 0; m < NR_MODES; m++) {
			if (!sel.mode[m])
				continue;
			for (int c = -1; c < NR_CLOCK_CHOICES; c++) {
				const struct clock_choice *clk =
					c < 0 ? &bench_clock_none
					      : &bench_clocks[c];

				if (c >= 0 && !sel.clock[c])
					continue;
				if (!subject_applies(s, clk,
						     (enum bench_mode)m))
					continue;
				for (size_t k = 0; k < ctx.cpus.size(); k++) {
					plan p = {s,
						  clk,
						  (enum bench_mode)m,
						  ctx.cpus[k],
						  -1,
						  0,
						  0,
						  ""};

					if (m == MODE_PRESSURE)
						p.pressure_len = pressure_bytes(
							ctx.l1d[k]);
					most = std::max(most, p.pressure_len);
					if (bench_mode_is_cold(
						    (enum bench_mode)m)) {
						p.cold_pages = cold_pages_of(
							k, (enum bench_mode)m);
						if (!p.cold_pages &&
						    m == MODE_COLD_L2) {
							snprintf(err, errlen,
								 "--modes "
								 "cold-l2: "
								 "hwloc knows "
								 "no L2 for "
								 "CPU %d (cold "
								 "evicts from "
								 "L1D only)",
								 p.cpu);
							return -1;
						}
						cold_most = std::max(
							cold_most,
							p.cold_pages);
					}
					if (m == MODE_WRITER) {
						p.writer_cpu = ctx.writer_cpu;
						if (p.writer_cpu == p.cpu &&
						    ctx.topo)
							p.writer_cpu =
								pin_default_writer_cpu(
									ctx.topo,
									p.cpu);
						if (p.writer_cpu < 0 ||
						    p.writer_cpu == p.cpu) {
							snprintf(err, errlen,
								 "--modes "
								 "writer: no "
								 "CPU other "
								 "than %d for "
								 "the writer "
								 "(--writer-"
								 "cpu)",
								 p.cpu);
							return -1;
						}
					}
					p.name = std::string(s->name) + "/" +
						 clk->name + "/" +
						 bench_modes[m].name + "/cpu" +
						 std::to_string(p.cpu);
					plans.push_back(p);
				}
			}
		}
	}
	if (plans.empty()) {
		snprintf(
			err, errlen,
			"the selection is empty: no selected mode applies to "
			"the "
			"selected variants and clocks (writer and timens are "
			"for "
			"variants, timens only for generic_timens*; floors run "
			"in hot, pressure, compute, cold, cold-l2 and warm)%s%s",
			ctx.skipped.empty() ? "" : "; skipped ",
			ctx.skipped.empty() ? "" : ctx.skipped[0].c_str());
		return -1;
	}
	if (most) {
		pressure_buf =
			(u8 *)aligned_alloc(4096, (most + 4095) & ~4095UL);
		if (!pressure_buf) {
			snprintf(err, errlen,
				 "out of memory for the pressure buffer");
			return -1;
		}
		memset(pressure_buf, 1, most);
	}
	if (cold_most) {
		cold_buf = (u8 *)aligned_alloc(COLD_PAGE,
					       cold_most * COLD_PAGE);
		if (!cold_buf) {
			snprintf(err, errlen,
				 "out of memory for the cold modes' %zu "
				 "eviction pages",
				 cold_most);
			return -1;
		}
		memset(cold_buf, 1, cold_most * COLD_PAGE);
	}
	return 0;
}

bool harness_is_bracket(const plan &p)
{
	return p.subject->floor && p.subject->loops == &bench_empty_loops;
}

const plan &harness_bracket_plan(const plan &p)
{
	std::pair<int, int> key = {p.mode, p.cpu};
	auto it = bracket_plans.find(key);

	if (it == bracket_plans.end()) {
		const struct subject *empty = nullptr;

		for (unsigned int i = 0; i < subjects_nr() && !empty; i++)
			if (subject_at(i)->floor &&
			    subject_at(i)->loops == &bench_empty_loops)
				empty = subject_at(i);
		plan b = p;
		b.subject = empty;
		b.clock = &bench_clock_none;
		b.name = std::string(empty->name) + "/none/" +
			 bench_modes[p.mode].name + "/cpu" +
			 std::to_string(p.cpu);
		it = bracket_plans.emplace(key, b).first;
	}
	return it->second;
}

const std::vector<plan> &harness_plans()
{
	return plans;
}

size_t harness_plan_size()
{
	return plans.size();
}

void harness_print_plan(FILE *f)
{
	for (auto &s : harness().skipped)
		fprintf(stderr, "skipped %s\n", s.c_str());
	for (auto &p : plans)
		fprintf(f, "%s\n", p.name.c_str());
}

int harness_check_binding(char *err, size_t errlen)
{
	harness_context &ctx = harness();
	std::vector<int> cpus = ctx.cpus;

	for (auto &p : plans)
		if (p.writer_cpu >= 0)
			cpus.push_back(p.writer_cpu);
	for (int c : cpus) {
		if (pin_bind_thread(ctx.topo, c)) {
			snprintf(err, errlen,
				 "binding to CPU %d refused: %s (--no-pin runs "
				 "unpinned, with a warning)",
				 c, pin_bind_error());
			return -1;
		}
	}
	return 0;
}

void harness_register(double min_time)
{
	for (size_t i = 0; i < plans.size(); i++) {
		if (bench_mode_is_cold(plans[i].mode)) {
			benchmark::RegisterBenchmark(plans[i].name.c_str(),
						     [i](benchmark::State &st) {
							     run_cold(
								     st,
								     plans[i]);
						     })
				->Unit(benchmark::kNanosecond)
				->UseManualTime()
				->Iterations((benchmark::IterationCount)
						     cold_iterations(plans[i],
								     min_time));
			continue;
		}
		benchmark::RegisterBenchmark(
			plans[i].name.c_str(),
			[i](benchmark::State &st) { run_one(st, plans[i]); })
			->Unit(benchmark::kNanosecond);
	}
}

std::string harness_context_json()
{
	harness_context &ctx = harness();
	std::string j = "{";
	std::string sep;

	j += "\"compiler\":" + harness_json_string(__VERSION__);
#ifdef __OPTIMIZE__
	j += ",\"optimized\":true";
#else
	j += ",\"optimized\":false";
#endif
	j += ",\"counter_hz\":" + std::to_string(ctx.tsc_hz);
	j += ",\"pinning\":{\"pinned\":" +
	     std::string(ctx.pinned ? "true" : "false");
	j += ",\"cpus\":[";
	for (size_t i = 0; i < ctx.cpus.size(); i++)
		j += (i ? "," : "") + std::to_string(ctx.cpus[i]);
	j += "],\"where\":{";
	for (size_t i = 0; i < ctx.cpus.size(); i++)
		j += (i ? "," : "") +
		     harness_json_string(std::to_string(ctx.cpus[i])) + ":" +
		     harness_json_string(ctx.cpu_desc[i]);
	j += "},\"l1d_bytes\":{";
	for (size_t i = 0; i < ctx.cpus.size(); i++)
		j += (i ? "," : "") +
		     harness_json_string(std::to_string(ctx.cpus[i])) + ":" +
		     (ctx.l1d[i] ? std::to_string(ctx.l1d[i]) : "null");
	// null where the machine has one kind of core (or hwloc knows none)
	j += "},\"cpu_kinds\":{";
	for (size_t i = 0; i < ctx.cpus.size(); i++) {
		char kind[64] = "";

		if (ctx.topo)
			pin_cpu_kind(ctx.topo, ctx.cpus[i], kind, sizeof(kind));
		j += (i ? "," : "") +
		     harness_json_string(std::to_string(ctx.cpus[i])) + ":" +
		     json_or_null(kind);
	}
	j += "},\"pressure_bytes\":{";
	for (size_t i = 0; i < ctx.cpus.size(); i++)
		j += (i ? "," : "") +
		     harness_json_string(std::to_string(ctx.cpus[i])) + ":" +
		     std::to_string(pressure_bytes(ctx.l1d[i]));
	j += "},\"pressure_span\":" + std::to_string(BENCH_PRESSURE_SPAN);
	// the cold modes' eviction per CPU: hwloc's caches, and the pages read
	j += ",\"cold\":{\"loads_per_way\":" +
	     std::to_string(COLD_LOADS_PER_WAY) +
	     ",\"l2_margin\":" + std::to_string(COLD_L2_MARGIN) +
	     ",\"span\":" + std::to_string(BENCH_PRESSURE_SPAN) +
	     ",\"stack_offset\":" + std::to_string(COLD_STACK_OFFSET) +
	     ",\"outlier_factor\":" + std::to_string(COLD_OUTLIER_FACTOR) +
	     ",\"dither\":" + std::to_string(COLD_DITHER) +
	     ",\"bracket\":" +
#if defined(__x86_64__)
	     harness_json_string("lfence; rdtsc; lfence") +
#else
	     harness_json_string("dsb ish; isb; mrs cntvct_el0; isb") +
#endif
	     ",\"cpus\":{";
	for (size_t i = 0; i < ctx.cpus.size(); i++) {
		size_t l2 = cold_pages_of(i, MODE_COLD_L2);

		j += (i ? "," : "") +
		     harness_json_string(std::to_string(ctx.cpus[i])) +
		     ":{\"l1d_ways\":" +
		     (ctx.l1d_ways[i] ? std::to_string(ctx.l1d_ways[i])
				      : "null") +
		     ",\"l2_bytes\":" +
		     (ctx.l2[i] ? std::to_string(ctx.l2[i]) : "null") +
		     ",\"l2_ways\":" +
		     (ctx.l2_ways[i] ? std::to_string(ctx.l2_ways[i]) : "null") +
		     ",\"cold_pages\":" +
		     std::to_string(cold_pages_of(i, MODE_COLD)) +
		     ",\"cold_l2_pages\":" +
		     (l2 ? std::to_string(l2) : "null") + "}";
	}
	j += "}}";
	j += ",\"writer_cpu\":" + std::to_string(ctx.writer_cpu) + "}";
	j += ",\"writer_hz\":" + (ctx.hz ? std::to_string(ctx.hz) : "\"max\"");
	j += ",\"compute_steps\":" + std::to_string(BENCH_COMPUTE_STEPS);
	j += ",\"timens_offset_s\":" +
	     std::to_string(timens_offs.monotonic.tv_sec);

	j += ",\"counters\":{\"available\":" +
	     std::string(ctx.group ? "true" : "false");
	j += ",\"reason\":" +
	     json_or_null(ctx.group ? "" : ctx.counters_reason);
	j += ",\"mode\":" + json_or_null(ctx.counters_mode);
	j += ",\"mode_reason\":" + json_or_null(ctx.counters_mode_reason);
	j += ",\"requested\":[";
	sep = "";
	for (auto &e : ctx.counters_requested) {
		j += sep + harness_json_string(e);
		sep = ",";
	}
	j += "],\"events\":[";
	for (unsigned int i = 0; ctx.group && i < pc_group_nr_events(ctx.group);
	     i++)
		j += (i ? "," : "") +
		     harness_json_string(pc_group_event_name(ctx.group, i));
	j += "],\"dropped\":[";
	sep = "";
	for (auto &d : ctx.counters_dropped) {
		j += sep + "{\"name\":" + harness_json_string(d.first) +
		     ",\"reason\":" + harness_json_string(d.second) + "}";
		sep = ",";
	}
	j += "]}";

	j += ",\"vdso\":{\"available\":" +
	     std::string(ctx.vdso_reason.empty() ? "true" : "false");
	j += ",\"reason\":" + json_or_null(ctx.vdso_reason) + ",\"symbols\":{";
	sep = "";
	for (auto &s : ctx.vdso_symbols) {
		j += sep + harness_json_string(s.first) + ":" +
		     (s.second ? "true" : "false");
		sep = ",";
	}
	j += "}},\"skipped\":[";
	sep = "";
	for (auto &s : ctx.skipped) {
		j += sep + harness_json_string(s);
		sep = ",";
	}
	j += "],\"planned\":" + std::to_string(plans.size());

	// each CPU locked, and whom this run waited for: run and compare make
	// warnings of the waits
	j += ",\"cpu_lock\":{\"policy\":" +
	     harness_json_string(ctx.cpu_lock_policy);
	j += ",\"dir\":" + json_or_null(ctx.cpu_lock_dir);
	j += ",\"error\":" + json_or_null(ctx.cpu_lock_error) + ",\"cpus\":[";
	sep = "";
	for (auto *l : ctx.cpu_locks) {
		j += sep + std::to_string(cpu_lock_cpu(l));
		sep = ",";
	}
	j += "],\"waited\":[";
	sep = "";
	for (auto *l : ctx.cpu_locks) {
		char seconds[32];

		if (!cpu_lock_contended(l))
			continue;
		snprintf(seconds, sizeof(seconds), "%.3f",
			 cpu_lock_waited_s(l));
		j += sep + "{\"cpu\":" + std::to_string(cpu_lock_cpu(l)) +
		     ",\"seconds\":" + seconds +
		     ",\"holder\":" + harness_json_string(cpu_lock_holder(l)) +
		     "}";
		sep = ",";
	}
	j += "]}}";
	return j;
}

void harness_teardown()
{
	harness_context &ctx = harness();

	sim_kernel_detach_all();
	for (auto *l : ctx.cpu_locks)
		cpu_lock_release(l);
	ctx.cpu_locks.clear();
	if (ctx.group)
		pc_group_destroy(ctx.group);
	if (ctx.topo)
		pin_topology_destroy(ctx.topo);
	free(pressure_buf);
	free(cold_buf);
}
