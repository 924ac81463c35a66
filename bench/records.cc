// SPDX-License-Identifier: GPL-2.0
#include "bench/records.h"

#include <stdio.h>

#include "bench/harness.h"
#include "bench/plan.h"
#include "bench/prepared_run.h"

extern "C" {
#include "bench/cold.h"
#include "bench/cpu_lock.h"
#include "bench/pin.h"
#include "counters/perf_counters.h"
}

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

} // namespace

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
		     std::to_string(plan_pressure_bytes(ctx.l1d[i]));
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
		size_t l2 = plan_cold_pages(i, MODE_COLD_L2);

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
		     std::to_string(plan_cold_pages(i, MODE_COLD)) +
		     ",\"cold_l2_pages\":" +
		     (l2 ? std::to_string(l2) : "null") + "}";
	}
	j += "}}";
	j += ",\"writer_cpu\":" + std::to_string(ctx.writer_cpu) + "}";
	j += ",\"writer_hz\":" + (ctx.hz ? std::to_string(ctx.hz) : "\"max\"");
	j += ",\"compute_steps\":" + std::to_string(BENCH_COMPUTE_STEPS);
	j += ",\"timens_offset_s\":" +
	     std::to_string(harness_timens_offsets.monotonic.tv_sec);

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
	j += "],\"planned\":" + std::to_string(harness_plan_size());

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
