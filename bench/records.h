// SPDX-License-Identifier: GPL-2.0
//
// The harness's JSON: the results' "vdsobench_harness" context, and the
// string escaping of the rounds' and the samples' lines.
#ifndef VDSOBENCH_BENCH_RECORDS_H
#define VDSOBENCH_BENCH_RECORDS_H

#include <string>

// the run's setting: compiler, pinning and caches, the cold modes'
// constants, counters, the system's vDSO, the plan's size, the CPU locks
std::string harness_context_json();
std::string harness_json_string(const std::string &s);

#endif // VDSOBENCH_BENCH_RECORDS_H
