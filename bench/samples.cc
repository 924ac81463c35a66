// SPDX-License-Identifier: GPL-2.0
#include "bench/samples.h"

#include <algorithm>
#include <vector>

#include "bench/plan.h"
#include "bench/prepared_run.h"
#include "bench/records.h"

namespace
{

long long ns_of(const struct timespec &t)
{
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

long long ns_of(const struct __kernel_timespec &t)
{
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

// n reads back to back into ts, through fn; the deltas after
template <typename T, typename F>
void read_back_to_back(F fn, clockid_t clk, std::vector<T> &ts,
		       std::vector<long long> &deltas)
{
	for (size_t i = 0; i < ts.size(); i++)
		fn(clk, &ts[i]);
	for (size_t i = 1; i < ts.size(); i++)
		deltas[i - 1] = ns_of(ts[i]) - ns_of(ts[i - 1]);
}

// a clock's n reads back to back: how many deltas were zero, negative, and
// their mean (the seed's figure), median and minimum
json sample_record(const plan &p, unsigned int n, unsigned long long zero,
		   unsigned long long backwards, double mean, long long median,
		   long long min)
{
	return {
		{"benchmark", p.name},
		{"subject", p.subject->name},
		{"clock", p.clock->name},
		{"samples", n},
		{"zero_deltas", zero},
		{"backwards", backwards},
		{"mean_delta_ns", json_fixed(mean, 3)},
		{"median_delta_ns", median},
		{"min_delta_ns", min},
	};
}

} // namespace

int samples_run(unsigned int n, FILE *out)
{
	std::vector<struct timespec> ts(n);
	std::vector<struct __kernel_timespec> ts64;
	std::vector<long long> deltas(n > 1 ? n - 1 : 0);
	unsigned int ran = 0;

	for (const plan &p : harness_plans()) {
		const struct subject *s = p.subject;
		unsigned long long zero = 0, backwards = 0;
		long long min_delta = 0;
		double sum = 0;
		prepared_run run(p);
		const char *err;

		if (p.mode != MODE_HOT || p.clock->op != BENCH_OP_GETTIME ||
		    !(s->clock_gettime || s->clock_gettime64) || n < 2)
			continue;
		err = run.enter();
		if (err) {
			record_line(out,
				    {{"benchmark", p.name}, {"error", err}});
			continue;
		}
		if (s->clock_gettime) {
			read_back_to_back(s->clock_gettime, p.clock->clk, ts,
					  deltas);
		} else {
			ts64.resize(n);
			read_back_to_back(s->clock_gettime64, p.clock->clk,
					  ts64, deltas);
		}
		run.leave();
		for (unsigned int i = 1; i < n; i++) {
			long long d = deltas[i - 1];

			zero += d == 0;
			backwards += d < 0;
			min_delta = i == 1 ? d : std::min(min_delta, d);
			sum += d;
		}
		// the mean is the seed's figure; one interrupt among the
		// samples moves it, so the median goes with it
		std::nth_element(deltas.begin(),
				 deltas.begin() + deltas.size() / 2,
				 deltas.end());
		record_line(out, sample_record(p, n, zero, backwards,
					       sum / (n - 1),
					       deltas[deltas.size() / 2],
					       min_delta));
		ran++;
	}
	return ran ? 0 : 1;
}
