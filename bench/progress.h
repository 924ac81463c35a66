// SPDX-License-Identifier: GPL-2.0
//
// The progress line on stderr (rewritten in place on a terminal, a line
// per 5% on a pipe): repetitions done of all planned, elapsed time, an
// estimate, and the benchmark running now. Repetitions run in random
// order across benchmarks, and Google Benchmark reports a benchmark only
// after its last one, so the count comes from the harness: a batch that
// ran for at least --min-time is one Google Benchmark keeps.
//
// The display reporter only counts failures; the table comes from the
// JSON, printed by `vdsobench run`.
#ifndef VDSOBENCH_BENCH_PROGRESS_H
#define VDSOBENCH_BENCH_PROGRESS_H

#include <string>

#include <benchmark/benchmark.h>

void progress_start(size_t total_repetitions, double min_time, bool quiet);
// after each batch: its benchmark, and how long its loop ran (CPU seconds)
void progress_batch(const std::string &name, double seconds);

class progress_reporter : public benchmark::BenchmarkReporter
{
      public:
	bool ReportContext(const Context &context) override;
	void ReportRuns(const std::vector<Run> &runs) override;
	void Finalize() override;
	size_t errors() const
	{
		return errors_;
	}

      private:
	size_t errors_ = 0;
};

#endif // VDSOBENCH_BENCH_PROGRESS_H
