// SPDX-License-Identifier: GPL-2.0
//
// The plan as Google Benchmark's benchmarks: each registered with its body,
// which times the plan's loop in whole batches (the cold modes: each call
// alone, net of the bracket timed in the same batch) and adds the counters.
#ifndef VDSOBENCH_BENCH_GBENCH_H
#define VDSOBENCH_BENCH_GBENCH_H

// min_time: seconds per benchmark, which a cold benchmark's fixed
// iteration count is calibrated to (its reported time is the calls' alone)
void harness_register(double min_time);

#endif // VDSOBENCH_BENCH_GBENCH_H
