// SPDX-License-Identifier: GPL-2.0
//
// The display reporter: one progress line per finished benchmark on
// stderr (rewritten in place on a terminal), with elapsed time and an
// estimate. The table comes from the JSON, printed by `vdsobench run`.
#ifndef VDSOBENCH_BENCH_PROGRESS_H
#define VDSOBENCH_BENCH_PROGRESS_H

#include <chrono>
#include <string>

#include <benchmark/benchmark.h>

class progress_reporter : public benchmark::BenchmarkReporter
{
      public:
	progress_reporter(size_t total_benchmarks, bool quiet);
	bool ReportContext(const Context &context) override;
	void ReportRuns(const std::vector<Run> &runs) override;
	void Finalize() override;
	size_t errors() const
	{
		return errors_;
	}

      private:
	size_t total_, done_ = 0, errors_ = 0;
	bool quiet_, tty_;
	std::chrono::steady_clock::time_point start_;
};

#endif // VDSOBENCH_BENCH_PROGRESS_H
