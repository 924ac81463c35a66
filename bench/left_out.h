// SPDX-License-Identifier: GPL-2.0
//
// What this build of the harness leaves out, and why: the i386 build
// (bench/BUILD defines VDSOBENCH_NO_GBENCH there) has no Google Benchmark,
// libpfm4 or hwloc, which Debian has no i386 build of but through
// multiarch. The results' context says so (records.cc); the x86-64 build
// leaves out nothing and its context is unchanged.
#ifndef VDSOBENCH_BENCH_LEFT_OUT_H
#define VDSOBENCH_BENCH_LEFT_OUT_H

#ifdef VDSOBENCH_NO_GBENCH
constexpr bool harness_has_gbench = false;
constexpr const char harness_abi[] = "i386";
#else
constexpr bool harness_has_gbench = true;
constexpr const char harness_abi[] = "";
#endif

constexpr const char harness_gbench_left_out[] =
	"Google Benchmark is not in the i386 build (Debian has no i386 "
	"libbenchmark without multiarch)";
constexpr const char harness_libpfm_left_out[] =
	"libpfm4 is not in the i386 build: no counters, time alone";
constexpr const char harness_hwloc_left_out[] =
	"hwloc is not in the i386 build: pinned by sched_setaffinity(), the "
	"topology and caches from sysfs (unknown where sysfs does not say)";

#endif // VDSOBENCH_BENCH_LEFT_OUT_H
