// SPDX-License-Identifier: GPL-2.0
#include "bench/records.h"

#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "bench/left_out.h"
#include "bench/plan.h"
#include "bench/prepared_run.h"

extern "C" {
#include "bench/cold.h"
#include "bench/cpu_lock.h"
#include "bench/pin.h"
#include "counters/perf_counters.h"
}

json json_fixed(double v, int places)
{
	// DBL_MAX has 309 digits before the point
	char text[400];

	snprintf(text, sizeof(text), "%.*f", places, v);
	return strtod(text, nullptr);
}

json json_general(double v, int digits)
{
	char text[64];

	snprintf(text, sizeof(text), "%.*g", digits, v);
	if (!text[strspn(text, "-0123456789")])
		return strtoll(text, nullptr, 10);
	return strtod(text, nullptr);
}

json json_or_null(const std::string &s)
{
	return s.empty() ? json(nullptr) : json(s);
}

std::string record_text(const json &record)
{
	return record.dump(-1, ' ', false, json::error_handler_t::replace);
}

void record_line(FILE *f, const json &record)
{
	fprintf(f, "%s\n", record_text(record).c_str());
}

namespace
{

// a size, or null where hwloc knows none (0)
json known(unsigned long long v)
{
	return v ? json(v) : json(nullptr);
}

// the cold modes' eviction per CPU: hwloc's caches, and the pages read
json cold_record(const harness_context &ctx)
{
	json cold = {
		{"loads_per_way", COLD_LOADS_PER_WAY},
		{"l2_margin", COLD_L2_MARGIN},
		{"span", BENCH_PRESSURE_SPAN},
		{"stack_offset", COLD_STACK_OFFSET},
		{"outlier_factor", COLD_OUTLIER_FACTOR},
		{"dither", COLD_DITHER},
#if defined(__x86_64__) || defined(__i386__)
		{"bracket", "lfence; rdtsc; lfence"},
#else
		{"bracket", "dsb ish; isb; mrs cntvct_el0; isb"},
#endif
		{"cpus", json::object()},
	};

	for (size_t i = 0; i < ctx.cpus.size(); i++)
		cold["cpus"][std::to_string(ctx.cpus[i])] = {
			{"l1d_ways", known(ctx.l1d_ways[i])},
			{"l2_bytes", known(ctx.l2[i])},
			{"l2_ways", known(ctx.l2_ways[i])},
			{"cold_pages", plan_cold_pages(i, MODE_COLD)},
			{"cold_l2_pages",
			 known(plan_cold_pages(i, MODE_COLD_L2))},
		};
	return cold;
}

// where the benchmarks ran, each CPU's caches and buffers (keyed by CPU)
json pinning_record(const harness_context &ctx)
{
	json where = json::object(), l1d = json::object(),
	     kinds = json::object(), pressure = json::object();

	for (size_t i = 0; i < ctx.cpus.size(); i++) {
		std::string cpu = std::to_string(ctx.cpus[i]);
		char kind[64] = "";

		if (ctx.topo)
			pin_cpu_kind(ctx.topo, ctx.cpus[i], kind, sizeof(kind));
		where[cpu] = ctx.cpu_desc[i];
		l1d[cpu] = known(ctx.l1d[i]);
		// null where the machine has one kind of core (or hwloc knows
		// none)
		kinds[cpu] = json_or_null(kind);
		pressure[cpu] = plan_pressure_bytes(ctx.l1d[i]);
	}
	return {
		{"pinned", ctx.pinned},
		{"cpus", ctx.cpus},
		{"where", where},
		{"l1d_bytes", l1d},
		{"cpu_kinds", kinds},
		{"pressure_bytes", pressure},
		{"pressure_span", BENCH_PRESSURE_SPAN},
		{"cold", cold_record(ctx)},
		{"writer_cpu", ctx.writer_cpu},
	};
}

json counters_record(const harness_context &ctx)
{
	json events = json::array(), dropped = json::array();

	for (unsigned int i = 0; ctx.group && i < pc_group_nr_events(ctx.group);
	     i++)
		events.push_back(pc_group_event_name(ctx.group, i));
	for (auto &d : ctx.counters_dropped)
		dropped.push_back({{"name", d.first}, {"reason", d.second}});
	return {
		{"available", ctx.group != nullptr},
		{"reason", json_or_null(ctx.group ? "" : ctx.counters_reason)},
		{"mode", json_or_null(ctx.counters_mode)},
		{"mode_reason", json_or_null(ctx.counters_mode_reason)},
		{"requested", ctx.counters_requested},
		{"events", events},
		{"dropped", dropped},
	};
}

json vdso_record(const harness_context &ctx)
{
	json symbols = json::object(), checked = json::object();

	for (auto &s : ctx.vdso_symbols)
		symbols[s.first] = s.second;
	for (auto &c : ctx.vdso_checked)
		checked[c.first] = c.second;
	json record = {
		{"available", ctx.vdso_reason.empty()},
		{"reason", json_or_null(ctx.vdso_reason)},
		{"symbols", symbols},
		{"time", json_or_null(ctx.vdso_time)},
		{"checked", checked},
	};
	if (!ctx.vdso_gate.empty())
		record["gate"] = ctx.vdso_gate;
	return record;
}

// each CPU locked, and whom this run waited for: run and compare make
// warnings of the waits
json cpu_lock_record(const harness_context &ctx)
{
	json cpus = json::array(), waited = json::array();

	for (auto *l : ctx.cpu_locks) {
		cpus.push_back(cpu_lock_cpu(l));
		if (cpu_lock_contended(l))
			waited.push_back({
				{"cpu", cpu_lock_cpu(l)},
				{"seconds",
				 json_fixed(cpu_lock_waited_s(l), 3)},
				{"holder", cpu_lock_holder(l)},
			});
	}
	return {
		{"policy", ctx.cpu_lock_policy},
		{"dir", json_or_null(ctx.cpu_lock_dir)},
		{"error", json_or_null(ctx.cpu_lock_error)},
		{"cpus", cpus},
		{"waited", waited},
	};
}

// the i386 build's ABI and what it leaves out; none in the x86-64 build's
json abi_record()
{
	return {
		{"name", harness_abi},
		{"bits", 8 * sizeof(void *)},
		{"left_out", json::array({
				     {{"what", "Google Benchmark"},
				      {"why", harness_gbench_left_out}},
				     {{"what", "libpfm4"},
				      {"why", harness_libpfm_left_out}},
				     {{"what", "hwloc"},
				      {"why", harness_hwloc_left_out}},
			     })},
	};
}

} // namespace

json harness_context_record()
{
	const harness_context &ctx = harness();
	json record = {
		{"compiler", __VERSION__},
#ifdef __OPTIMIZE__
		{"optimized", true},
#else
		{"optimized", false},
#endif
		{"counter_hz", ctx.tsc_hz},
		{"pinning", pinning_record(ctx)},
		{"writer_hz", ctx.hz ? json(ctx.hz) : json("max")},
		{"compute_steps", BENCH_COMPUTE_STEPS},
		{"timens_offset_s", harness_timens_offsets.monotonic.tv_sec},
		{"counters", counters_record(ctx)},
		{"vdso", vdso_record(ctx)},
		{"skipped", ctx.skipped},
		{"planned", harness_plan_size()},
		{"cpu_lock", cpu_lock_record(ctx)},
	};

	if (*harness_abi)
		record["abi"] = abi_record();
	return record;
}

json footprint_record(const footprint_result &r)
{
	const struct footprint_figures &f = r.f;
	json controls = json::array();

	for (unsigned int k = 1; k < FOOTPRINT_KINDS; k++)
		controls.push_back(json_fixed(f.walk_ns[k], 6));
	return {
		{"probe", r.probe},
		{"data_lines", r.lines},
		{"sets", r.sets},
		{"l1d_sets", r.l1d_sets},
		{"l1d_ways", r.l1d_ways},
		{"chain_lines", r.chain_lines},
		{"net_ns", json_fixed(f.net_ns, 6)},
		{"action_ns", json_fixed(f.action_ns[FOOTPRINT_KIND_CALL], 6)},
		{"walk_ns", json_fixed(f.walk_ns[FOOTPRINT_KIND_CALL], 6)},
		{"walk_alone_ns", json_fixed(f.walk_alone, 6)},
		{"walk_net_ns", json_fixed(f.walk_net, 6)},
		{"line_ns", json_fixed(f.line_ns, 6)},
		{"lines_displaced", json_fixed(f.displaced, 4)},
		{"controls_walk_ns", controls},
		{"kept", f.kept},
		{"dropped", f.dropped},
	};
}
