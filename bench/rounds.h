// SPDX-License-Identifier: GPL-2.0
//
// Interleaved rounds, for paired comparisons: the plan's benchmarks of
// one clock x mode x CPU run in the same round, one batch each, in a
// balanced order (a Williams design: ABBA for two, each ordered pair
// adjacent equally often for more), all with the same iteration count,
// so that drift during the run hits every subject alike and each round
// gives one paired observation.
#ifndef VDSOBENCH_BENCH_ROUNDS_H
#define VDSOBENCH_BENCH_ROUNDS_H

#include <stdio.h>

#include <vector>

// the orders of a Williams design for k treatments (2k rows when k is odd)
std::vector<std::vector<int>> williams_design(int k);

// copies: each benchmark runs that many times per round (2 gives an A/A
// comparison of a subject with itself). JSON lines on out: a context
// line (with "lost_cpu": the minimum CPU share and the retries), a line
// per group with its iteration count, a line per batch. A batch whose
// thread ran less than LOST_CPU_MIN_SHARE of its wall time (another task
// took the CPU, bench/lost_cpu.h) is retried up to LOST_CPU_RETRIES times;
// its line says "cpu_share", "switches", "retries" and "disturbed" (it
// lost the CPU even so: the attempt kept is the one that ran the most).
int rounds_run(unsigned int rounds, double batch_ms, unsigned int copies,
	       bool quiet, FILE *out);

#endif // VDSOBENCH_BENCH_ROUNDS_H
