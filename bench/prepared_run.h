// SPDX-License-Identifier: GPL-2.0
//
// One plan made ready to time: bound to its CPU, its variant attached and
// freshly ticked, in its time namespace, its writer running. The same
// setup serves Google Benchmark (gbench.h), the interleaved rounds and the
// samples.
#ifndef VDSOBENCH_BENCH_PREPARED_RUN_H
#define VDSOBENCH_BENCH_PREPARED_RUN_H

#include <stddef.h>

#include <memory>
#include <string>
#include <vector>

#include "bench/plan.h"

extern "C" {
#include "bench/footprint.h"
#include "impls/kernel/sim_system.h"
}

// One cold batch's calls, each timed alone, in ns (bracket included)
struct cold_figures {
	double mean = 0; // over the calls within COLD_OUTLIER_FACTOR x median
	double min = 0, p10 = 0, median = 0, p90 = 0;
	unsigned long long calls = 0, kept = 0;
};

// One footprint batch: its figures, and the chain it walked
struct footprint_result {
	struct footprint_figures f = {};
	std::vector<uintptr_t> lines; // the data lines, offsets in the vvar
	std::vector<unsigned int> sets; // the L1D sets they map to
	std::string probe; // "fault", or "span: why the probe did not run"
	size_t chain_lines = 0, l1d_sets = 0, l1d_ways = 0;
};

class writer_thread;

class prepared_run
{
      public:
	explicit prepared_run(const plan &p);
	~prepared_run();
	// nullptr, or why it cannot run
	const char *enter();
	// the footprint mode's chain and controls (nullptr, or why not)
	const char *footprint_enter();
	// n calls (in the cold modes, each timed alone into the histogram)
	void loop(u64 n);
	void leave();
	// after loop() in a cold mode: nullptr, or why there is no figure
	const char *cold(cold_figures *out) const;
	// after loop() in the footprint mode: nullptr, or why no figure
	const char *footprint(footprint_result *out) const;
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
	// the footprint mode: the chain's and the controls' buffers
	void *chain_buf_ = nullptr, *control_buf_ = nullptr;
	struct footprint_acc acc_ = {};
	struct footprint_sets sets_ = {};
	std::vector<uintptr_t> lines_;
	std::string probe_;
};

// the timens mode's namespace: ten days ahead, as a container migrated in
extern const struct timens_offsets harness_timens_offsets;

// The buffers the plan's loops read, for its largest pressure buffer and
// eviction: -1 with err if there is no memory for them
int run_buffers_alloc(size_t pressure_bytes, size_t cold_pages, char *err,
		      size_t errlen);
void run_buffers_free();

#endif // VDSOBENCH_BENCH_PREPARED_RUN_H
