// SPDX-License-Identifier: GPL-2.0
//
// The plan: every benchmark the selection expands to, subject x clock x
// mode x CPU, each with what its mode needs (the pressure buffer's length,
// the cold modes' eviction pages, the writer's CPU); and floor/empty in the
// same mode on the same CPU, the cold modes' bracket.
#ifndef VDSOBENCH_BENCH_PLAN_H
#define VDSOBENCH_BENCH_PLAN_H

#include <stdio.h>

#include <string>
#include <vector>

extern "C" {
#include "bench/subjects.h"
}

struct plan {
	const struct subject *subject;
	const struct clock_choice *clock;
	enum bench_mode mode;
	int cpu;
	int writer_cpu; // writer mode only
	size_t pressure_len;
	size_t cold_pages; // the cold modes: pages each eviction reads
	std::string name;
	// the footprint mode: the CPU's L1D, size and ways (footprint.h)
	size_t l1d;
	unsigned int l1d_ways;
};

// expand the selection; -1 with err when it is empty
int harness_plan(const struct selection &sel, char *err, size_t errlen);
const std::vector<plan> &harness_plans();
size_t harness_plan_size();
void harness_print_plan(FILE *f);
// bind to every planned CPU once, so a refusal is one clear error up front
int harness_check_binding(char *err, size_t errlen);
// floor/empty in p's mode on p's CPU: the cold modes' bracket, timed in
// the same round (or Google Benchmark batch) and subtracted
const plan &harness_bracket_plan(const plan &p);
// is p floor/empty, whose cold figure is the bracket itself
bool harness_is_bracket(const plan &p);

// the pressure mode's buffer for a CPU with this L1D (0: unknown)
size_t plan_pressure_bytes(size_t l1d);
// the pages a cold-mode eviction reads on the k-th planned CPU (cold.h)
size_t plan_cold_pages(size_t k, enum bench_mode m);

#endif // VDSOBENCH_BENCH_PLAN_H
