// SPDX-License-Identifier: GPL-2.0
//
// The harness's state for one run: where benchmarks run, the counters, the
// CPU locks, and what the results' context says of them. The harness's
// jobs, a file each: the plan (plan.h), one plan made ready and timed
// (prepared_run.h), the writer mode's thread (writer_thread.h), Google
// Benchmark's registration and bodies (gbench.h), the interleaved rounds
// and the samples (rounds.h, samples.h), and the records they write
// (records.h).
#ifndef VDSOBENCH_BENCH_HARNESS_H
#define VDSOBENCH_BENCH_HARNESS_H

#include <stddef.h>

#include <string>
#include <utility>
#include <vector>

struct pin_topology;
struct pc_group;
struct cpu_lock;

struct harness_context {
	struct pin_topology *topo = nullptr;
	std::vector<int> cpus;
	std::vector<std::string> cpu_desc;
	std::vector<size_t> l1d;
	std::vector<unsigned int> l1d_ways;
	std::vector<size_t> l2;
	std::vector<unsigned int> l2_ways;
	bool pinned = true;
	int writer_cpu = -1;
	unsigned int hz = 1000; // writer updates per second; 0: max
	unsigned long long tsc_hz = 0;

	struct pc_group *group = nullptr;
	std::vector<std::string> counters_requested;
	std::vector<std::pair<std::string, std::string>> counters_dropped;
	std::string counters_mode, counters_mode_reason, counters_reason;

	// the per-CPU locks (bench/cpu_lock.h) held for the whole run
	std::string cpu_lock_policy = "off", cpu_lock_dir, cpu_lock_error;
	std::vector<struct cpu_lock *> cpu_locks;

	std::string vdso_reason; // empty: sys/vdso is available
	// empty: sys/vdso_gettime64 is (BENCH_HAS_GETTIME64 builds only)
	std::string vdso_gettime64_reason;
	std::vector<std::pair<std::string, bool>> vdso_symbols;
	// what sys/vdso's time calls: its time entry, or (arm64, none) the
	// coarse clock_gettime as glibc's time() does; empty: not found
	std::string vdso_time;
	// each entry found, against its syscall (bench/vdso_agree.h): how
	std::vector<std::pair<std::string, std::string>> vdso_checked;
	// a 32-bit vDSO's gate, how its __kernel_vsyscall enters the kernel
	// (sysenter, syscall, int $0x80: impls/image/gate32.c), which an
	// imported vdso32 image's fallbacks take too; empty: no gate (64-bit)
	std::string vdso_gate;
	std::vector<std::string> skipped; // "sys/vdso: reason"
};

harness_context &harness();
// bind the calling thread to cpu, unless the run is unpinned (--no-pin)
int harness_bind(int cpu);
void harness_teardown();

#endif // VDSOBENCH_BENCH_HARNESS_H
