// SPDX-License-Identifier: GPL-2.0
#include "bench/samples.h"

#include <algorithm>
#include <vector>

#include "bench/plan.h"
#include "bench/prepared_run.h"
#include "bench/records.h"

namespace
{

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
		    !s->clock_gettime || n < 2)
			continue;
		err = run.enter();
		if (err) {
			record_line(out,
				    {{"benchmark", p.name}, {"error", err}});
			continue;
		}
		for (unsigned int i = 0; i < n; i++)
			s->clock_gettime(p.clock->clk, &ts[i]);
		run.leave();
		for (unsigned int i = 1; i < n; i++) {
			long long d = (ts[i].tv_sec - ts[i - 1].tv_sec) *
					      1000000000LL +
				      (ts[i].tv_nsec - ts[i - 1].tv_nsec);

			deltas[i - 1] = d;
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
