// SPDX-License-Identifier: GPL-2.0
//
// The harness's JSON, through nlohmann::json (Debian's nlohmann-json3-dev,
// header-only): the results' "vdsobench_harness" context, and the lines of
// the rounds and the samples, each built as one object, as Google
// Benchmark's JSONReporter writes a run, and written compact, keys in
// their order, every string escaped (bytes that are not UTF-8 as U+FFFD).
#ifndef VDSOBENCH_BENCH_RECORDS_H
#define VDSOBENCH_BENCH_RECORDS_H

#include <stdio.h>

#include <string>

// the kernel's noinline (impls/common/compiler.h) would expand inside the
// library's __has_attribute(noinline)
#pragma push_macro("noinline")
#undef noinline
#include <nlohmann/json.hpp>
#pragma pop_macro("noinline")

using json = nlohmann::ordered_json;

// v as printf's "%.<places>f" prints it: the number a reader reads there
json json_fixed(double v, int places);
// v as printf's "%.<digits>g" prints it: a whole number where that has
// neither point nor exponent
json json_general(double v, int digits);
// a string, or null where it is empty
json json_or_null(const std::string &s);

std::string record_text(const json &record);
// the record and a newline: one line of JSON lines
void record_line(FILE *f, const json &record);

struct footprint_result;
// a footprint batch's "footprint" object: the chain it walked (the data
// lines, their sets, how they were found) and its figures (footprint.h)
json footprint_record(const footprint_result &r);

// the run's setting: compiler, pinning and caches, the cold modes'
// constants, counters, the system's vDSO, the plan's size, the CPU locks
json harness_context_record();

#endif // VDSOBENCH_BENCH_RECORDS_H
