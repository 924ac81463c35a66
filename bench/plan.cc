// SPDX-License-Identifier: GPL-2.0
#include "bench/plan.h"

#include <errno.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <utility>

#include "bench/harness.h"
#include "bench/prepared_run.h"

extern "C" {
#include "bench/cold.h"
#include "bench/pin.h"
#include "impls/counters/available.h"
}

namespace
{

std::vector<plan> plans;
// floor/empty per (mode, CPU): the cold modes' bracket
std::map<std::pair<int, int>, plan> bracket_plans;

// used when hwloc reports no L1D: the common size on x86 since Core 2
constexpr size_t fallback_l1d = 32 * 1024;

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

std::string name_of(const struct subject *s, const struct clock_choice *clk,
		    enum bench_mode m, int cpu)
{
	return std::string(s->name) + "/" + clk->name + "/" +
	       bench_modes[m].name + "/cpu" + std::to_string(cpu);
}

// the cold modes' pages of p, the k-th CPU's: 0 and err if it has none
int plan_cold(plan &p, size_t k, char *err, size_t errlen)
{
	p.cold_pages = plan_cold_pages(k, p.mode);
	if (!p.cold_pages && p.mode == MODE_COLD_L2) {
		snprintf(err, errlen,
			 "--modes cold-l2: hwloc knows no L2 for CPU %d (cold "
			 "evicts from L1D only)",
			 p.cpu);
		return -1;
	}
	return 0;
}

// the footprint mode's L1D geometry, the k-th CPU's: -1 and err if unknown
int plan_footprint(plan &p, size_t k, char *err, size_t errlen)
{
	harness_context &ctx = harness();

	p.l1d = ctx.l1d[k];
	p.l1d_ways = ctx.l1d_ways[k];
	if (!p.l1d || !p.l1d_ways) {
		snprintf(err, errlen,
			 "--modes footprint: hwloc knows no L1D size and ways "
			 "for CPU %d (the chain needs the sets)",
			 p.cpu);
		return -1;
	}
	return 0;
}

// the writer mode's CPU for p: another than p's, or -1 and err
int plan_writer(plan &p, char *err, size_t errlen)
{
	harness_context &ctx = harness();

	p.writer_cpu = ctx.writer_cpu;
	if (p.writer_cpu == p.cpu && ctx.topo)
		p.writer_cpu = pin_default_writer_cpu(ctx.topo, p.cpu);
	if (p.writer_cpu < 0 || p.writer_cpu == p.cpu) {
		snprintf(err, errlen,
			 "--modes writer: no CPU other than %d for the writer "
			 "(--writer-cpu)",
			 p.cpu);
		return -1;
	}
	return 0;
}

// s x clk x m on every CPU
int plan_cpus(const struct subject *s, const struct clock_choice *clk,
	      enum bench_mode m, char *err, size_t errlen)
{
	harness_context &ctx = harness();

	for (size_t k = 0; k < ctx.cpus.size(); k++) {
		plan p = {s, clk, m, ctx.cpus[k], -1, 0, 0, "", 0, 0};

		if (m == MODE_PRESSURE)
			p.pressure_len = plan_pressure_bytes(ctx.l1d[k]);
		if (bench_mode_is_cold(m) && plan_cold(p, k, err, errlen))
			return -1;
		if (m == MODE_WRITER && plan_writer(p, err, errlen))
			return -1;
		if (m == MODE_FOOTPRINT && plan_footprint(p, k, err, errlen))
			return -1;
		p.name = name_of(s, clk, m, p.cpu);
		plans.push_back(p);
	}
	return 0;
}

// every selected mode and clock of s that applies to it
// why the system refuses a system subject's clock (an alarm clock without an
// RTC, an aux clock not enabled), or NULL: timing that call's error path would
// measure nothing that was asked for, so the pair is skipped and said
const char *refused(const struct subject *s, const struct clock_choice *clk)
{
	struct __kernel_timespec ts64;
	struct timespec ts;
	int ret;

	if (s->kind != SUBJECT_SYS)
		return NULL;
	if (clk->op == BENCH_OP_GETTIME && s->clock_gettime)
		ret = s->clock_gettime(clk->clk, &ts);
	else if (clk->op == BENCH_OP_GETTIME && s->clock_gettime64)
		ret = s->clock_gettime64(clk->clk, &ts64);
	else if (clk->op == BENCH_OP_GETRES && s->clock_getres)
		ret = s->clock_getres(clk->clk, &ts);
	else
		return NULL;
	return ret ? subject_error(s, ret) : NULL;
}

int plan_subject(const struct selection &sel, const struct subject *s,
		 char *err, size_t errlen)
{
	const char *why;

	for (int m = 0; m < NR_MODES; m++) {
		if (!sel.mode[m])
			continue;
		for (int c = -1; c < NR_CLOCK_CHOICES; c++) {
			const struct clock_choice *clk =
				c < 0 ? &bench_clock_none : &bench_clocks[c];

			if (c >= 0 && !sel.clock[c])
				continue;
			if (!subject_applies(s, clk, (enum bench_mode)m))
				continue;
			why = refused(s, clk);
			if (why) {
				harness().skipped.push_back(
					std::string(s->name) + "/" + clk->name +
					": the system refuses the clock: " + why);
				continue;
			}
			if (plan_cpus(s, clk, (enum bench_mode)m, err, errlen))
				return -1;
		}
	}
	return 0;
}

} // namespace

// see bench_between(): twice the L1D, in whole pages
size_t plan_pressure_bytes(size_t l1d)
{
	return 2 * (((l1d ? l1d : fallback_l1d) + 4095) & ~4095UL);
}

// see cold.h: 2 x the ways of the L1D (cold) or, with colours and a
// margin, of the L2 (cold-l2) of the k-th CPU, 0 if its L2 is unknown;
// none for warm (each call timed alone, nothing evicted)
size_t plan_cold_pages(size_t k, enum bench_mode m)
{
	harness_context &ctx = harness();

	if (m == MODE_WARM)
		return 0;
	if (m == MODE_COLD)
		return cold_pages(ctx.l1d[k] ? ctx.l1d[k] : fallback_l1d,
				  ctx.l1d_ways[k], 1);
	return cold_pages(ctx.l2[k], ctx.l2_ways[k], COLD_L2_MARGIN);
}

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
		if (plan_subject(sel, s, err, errlen))
			return -1;
	}
	if (plans.empty()) {
		snprintf(err, errlen,
			 "the selection is empty: no selected mode applies to "
			 "the selected variants and clocks (writer and timens "
			 "are for variants, timens only for generic_timens*; "
			 "floors run in hot, pressure, compute, cold, cold-l2 "
			 "and warm; sys/vdso_gettime64 times clock_gettime's "
			 "clocks alone, in no pointer mode)%s%s",
			 ctx.skipped.empty() ? "" : "; skipped ",
			 ctx.skipped.empty() ? "" : ctx.skipped[0].c_str());
		return -1;
	}
	for (const plan &p : plans) {
		most = std::max(most, p.pressure_len);
		cold_most = std::max(cold_most, p.cold_pages);
	}
	return run_buffers_alloc(most, cold_most, err, errlen);
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
		b.name = name_of(empty, &bench_clock_none, p.mode, p.cpu);
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
