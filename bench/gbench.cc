// SPDX-License-Identifier: GPL-2.0
#include "bench/gbench.h"

#include <sched.h>
#include <time.h>

#include <algorithm>

#include <benchmark/benchmark.h>

#include "bench/harness.h"
#include "bench/prepared_run.h"
#include "bench/progress.h"

extern "C" {
#include "counters/perf_counters.h"
}

namespace
{

// what Google Benchmark compares with --min-time
double thread_seconds()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
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

// A footprint benchmark (manual time): per batch, the call and its walk
// net of the walk alone in the same batch (footprint.h); the counters say
// what went into it, the lines displaced among them.
void run_footprint(benchmark::State &state, const plan &p)
{
	prepared_run run(p);
	footprint_result r;
	double net = 0, lines = 0, line_ns = 0, t0, t1;
	u64 calls = 0;
	const char *err = run.enter();

	if (err) {
		state.SkipWithError(err);
		return;
	}
	t0 = thread_seconds();
	while (state.KeepRunningBatch(state.max_iterations)) {
		u64 n = (u64)state.max_iterations;

		run.loop(n);
		err = run.footprint(&r);
		if (err) {
			state.SkipWithError(err);
			break;
		}
		state.SetIterationTime(std::max(r.f.net_ns, 0.0) * n / 1e9);
		net += r.f.net_ns * n;
		lines += r.f.displaced * n;
		line_ns += r.f.line_ns * n;
		calls += n;
	}
	t1 = thread_seconds();
	progress_batch(p.name, t1 - t0);
	run.leave();
	if (err || !calls)
		return;
	state.counters["footprint_net_ns"] = net / calls;
	state.counters["footprint_lines"] = lines / calls;
	state.counters["footprint_line_ns"] = line_ns / calls;
	state.counters["footprint_walk_alone_ns"] = r.f.walk_alone;
	state.counters["footprint_chain_lines"] = (double)r.chain_lines;
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
	n = std::max<u64>(16, (u64)(min_time / 2 / (took / n)));
	// footprint: whole rounds of the call and its controls
	if (p.mode == MODE_FOOTPRINT)
		n = (n + FOOTPRINT_ROUND - 1) / FOOTPRINT_ROUND *
		    FOOTPRINT_ROUND;
	return n;
}

} // namespace

void harness_register(double min_time)
{
	// the plan is complete: its elements stay where they are
	for (const plan &entry : harness_plans()) {
		const plan *p = &entry;

		if (p->mode == MODE_FOOTPRINT) {
			benchmark::RegisterBenchmark(
				p->name.c_str(),
				[p](benchmark::State &st) {
					run_footprint(st, *p);
				})
				->Unit(benchmark::kNanosecond)
				->UseManualTime()
				->Iterations((benchmark::IterationCount)
						     cold_iterations(*p,
								     min_time));
			continue;
		}
		if (!bench_mode_is_cold(p->mode)) {
			benchmark::RegisterBenchmark(
				p->name.c_str(),
				[p](benchmark::State &st) { run_one(st, *p); })
				->Unit(benchmark::kNanosecond);
			continue;
		}
		benchmark::RegisterBenchmark(
			p->name.c_str(),
			[p](benchmark::State &st) { run_cold(st, *p); })
			->Unit(benchmark::kNanosecond)
			->UseManualTime()
			->Iterations((benchmark::IterationCount)cold_iterations(
				*p, min_time));
	}
}
