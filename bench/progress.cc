// SPDX-License-Identifier: GPL-2.0
#include "bench/progress.h"

#include <stdio.h>
#include <unistd.h>

#include <chrono>

namespace
{

struct progress_state {
	size_t total = 0, done = 0, printed = 0;
	double min_time = 0;
	bool quiet = true, tty = false;
	std::chrono::steady_clock::time_point start, last_print;
} progress;

std::string duration(double s)
{
	char buf[32];

	if (s < 60)
		snprintf(buf, sizeof(buf), "%.0f s", s);
	else
		snprintf(buf, sizeof(buf), "%d min %02d s", (int)s / 60,
			 (int)s % 60);
	return buf;
}

const char *clear_line()
{
	return progress.tty ? "\r\033[K" : "";
}

} // namespace

void progress_start(size_t total_repetitions, double min_time, bool quiet)
{
	progress.total = total_repetitions;
	progress.min_time = min_time;
	progress.quiet = quiet;
	progress.tty = isatty(2);
	progress.start = progress.last_print = std::chrono::steady_clock::now();
}

void progress_batch(const std::string &name, double seconds)
{
	auto now = std::chrono::steady_clock::now();
	double elapsed, left;

	// Google Benchmark keeps a batch once it ran for min_time
	if (seconds >= progress.min_time && progress.done < progress.total)
		progress.done++;
	if (progress.quiet)
		return;
	if (progress.tty) {
		if (now - progress.last_print < std::chrono::milliseconds(200))
			return;
	} else if (progress.done == progress.printed ||
		   (progress.done % (progress.total / 20 + 1) &&
		    progress.done != progress.total)) {
		return;
	}
	progress.printed = progress.done;
	progress.last_print = now;
	elapsed = std::chrono::duration<double>(now - progress.start).count();
	left = progress.done ? elapsed / progress.done *
				       (progress.total - progress.done)
			     : 0;
	fprintf(stderr, "%s[%zu/%zu repetitions] %s elapsed, ~%s left: %s%s",
		clear_line(), progress.done, progress.total,
		duration(elapsed).c_str(), duration(left).c_str(), name.c_str(),
		progress.tty ? "" : "\n");
	fflush(stderr);
}

bool progress_reporter::ReportContext(const Context &)
{
	return true;
}

void progress_reporter::ReportRuns(const std::vector<Run> &runs)
{
	for (const Run &r : runs) {
		if (r.run_type != Run::RT_Iteration || !r.error_occurred)
			continue;
		errors_++;
		fprintf(stderr, "%s%s: failed: %s\n", clear_line(),
			r.benchmark_name().c_str(), r.error_message.c_str());
	}
}

void progress_reporter::Finalize()
{
	if (!progress.quiet)
		fputs(progress.tty ? "\r\033[K" : "", stderr);
}
