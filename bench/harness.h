// SPDX-License-Identifier: GPL-2.0
//
// The harness's state for one run: where benchmarks run, the counters,
// the plan (every benchmark the selection expands to), and what goes
// into the results' context.
#ifndef VDSOBENCH_BENCH_HARNESS_H
#define VDSOBENCH_BENCH_HARNESS_H

#include <stdio.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "bench/subjects.h"
}

struct pin_topology;
struct pc_group;
struct cpu_lock;

// one benchmark of the plan: subject x clock x mode x CPU
struct plan {
	const struct subject *subject;
	const struct clock_choice *clock;
	enum bench_mode mode;
	int cpu;
	int writer_cpu; // writer mode only
	size_t pressure_len;
	size_t cold_pages; // the cold modes: pages each eviction reads
	std::string name;
};

// One cold batch's calls, each timed alone, in ns (bracket included)
struct cold_figures {
	double mean = 0; // over the calls within COLD_OUTLIER_FACTOR x median
	double min = 0, p10 = 0, median = 0, p90 = 0;
	unsigned long long calls = 0, kept = 0;
};

class writer_thread;

// A plan made ready to time: bound to its CPU, its variant attached and
// freshly ticked, in its time namespace, its writer running. The same
// setup serves Google Benchmark and the interleaved rounds.
class prepared_run
{
      public:
	explicit prepared_run(const plan &p);
	~prepared_run();
	// nullptr, or why it cannot run
	const char *enter();
	// n calls (in the cold modes, each timed alone into the histogram)
	void loop(u64 n);
	void leave();
	// after loop() in a cold mode: nullptr, or why there is no figure
	const char *cold(cold_figures *out) const;
	double writer_rate() const
	{
		return writer_rate_;
	}

      private:
	const plan &p_;
	bench_loop_fn loop_;
	struct bench_env env_;
	std::unique_ptr<writer_thread> writer_;
	bool in_timens_ = false;
	double writer_rate_ = 0;
};

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
	std::vector<std::pair<std::string, bool>> vdso_symbols;
	std::vector<std::string> skipped; // "sys/vdso: reason"
};

harness_context &harness();

// expand the selection; -1 with err when it is empty
int harness_plan(const struct selection &sel, char *err, size_t errlen);
size_t harness_plan_size();
void harness_print_plan(FILE *f);
// bind to every planned CPU once, so a refusal is one clear error up front
int harness_check_binding(char *err, size_t errlen);
// min_time: seconds per benchmark, which a cold benchmark's fixed
// iteration count is calibrated to (its reported time is the calls' alone)
void harness_register(double min_time);
// floor/empty in p's mode on p's CPU: the cold modes' bracket, timed in
// the same round (or Google Benchmark batch) and subtracted
const plan &harness_bracket_plan(const plan &p);
// is p floor/empty, whose cold figure is the bracket itself
bool harness_is_bracket(const plan &p);
std::string harness_context_json();
std::string harness_json_string(const std::string &s);
void harness_teardown();
const std::vector<plan> &harness_plans();

#endif // VDSOBENCH_BENCH_HARNESS_H
