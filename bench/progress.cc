// SPDX-License-Identifier: GPL-2.0
#include "bench/progress.h"

#include <stdio.h>

#include <algorithm>
#include <unistd.h>

progress_reporter::progress_reporter(size_t total_benchmarks, bool quiet)
    : total_(total_benchmarks), quiet_(quiet), tty_(isatty(2))
{
}

bool progress_reporter::ReportContext(const Context &)
{
	start_ = std::chrono::steady_clock::now();
	return true;
}

static std::string duration(double s)
{
	char buf[32];

	if (s < 60)
		snprintf(buf, sizeof(buf), "%.0f s", s);
	else
		snprintf(buf, sizeof(buf), "%d min %02d s", (int)s / 60,
			 (int)s % 60);
	return buf;
}

void progress_reporter::ReportRuns(const std::vector<Run> &runs)
{
	std::vector<double> ns;
	const Run *last = nullptr;

	// called once with a benchmark's runs, once more with its aggregates
	for (const Run &r : runs) {
		if (r.run_type != Run::RT_Iteration)
			continue;
		last = &r;
		if (r.error_occurred) {
			errors_++;
			fprintf(stderr, "%s%s: failed: %s\n",
				tty_ ? "\r\033[K" : "",
				r.benchmark_name().c_str(),
				r.error_message.c_str());
		} else {
			ns.push_back(r.GetAdjustedRealTime());
		}
	}
	if (!last)
		return;
	done_++;
	if (quiet_)
		return;
	// on a pipe, a line per 5% is enough to show it is alive
	if (!tty_ && done_ != total_ && done_ % (total_ / 20 + 1))
		return;
	double elapsed = std::chrono::duration<double>(
				 std::chrono::steady_clock::now() - start_)
				 .count();
	double left = elapsed / done_ * (total_ - done_);
	std::sort(ns.begin(), ns.end());
	fprintf(stderr, "%s[%zu/%zu] %s elapsed, ~%s left: %s %.1f ns%s",
		tty_ ? "\r\033[K" : "", done_, total_,
		duration(elapsed).c_str(), duration(left).c_str(),
		last->run_name.str().c_str(),
		ns.empty() ? 0.0 : ns[ns.size() / 2], tty_ ? "" : "\n");
	fflush(stderr);
}

void progress_reporter::Finalize()
{
	if (!quiet_ && tty_)
		fputs("\r\033[K", stderr);
}
