// SPDX-License-Identifier: GPL-2.0
#include "bench/rounds.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <map>
#include <string>

#include "bench/harness.h"

extern "C" {
#include "counters/perf_counters.h"
}

std::vector<std::vector<int>> williams_design(int k)
{
	std::vector<std::vector<int>> rows;
	std::vector<int> first = {0};
	int lo = 1, hi = k - 1;

	// 0, 1, k-1, 2, k-2, ...: every difference once, so each subject
	// follows each other one exactly once over the k rows
	while ((int)first.size() < k)
		first.push_back(first.size() % 2 ? lo++ : hi--);
	for (int i = 0; i < k; i++) {
		std::vector<int> row;

		for (int j = 0; j < k; j++)
			row.push_back((first[j] + i) % k);
		rows.push_back(row);
	}
	// odd k: the mirror image balances what the square alone cannot
	for (int i = 0; k % 2 && i < k; i++)
		rows.push_back(
			std::vector<int>(rows[i].rbegin(), rows[i].rend()));
	return rows;
}

namespace
{

double now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct entry {
	const plan *p;
	unsigned int copy;
};

// ns per call of one batch of n, or a negative value if it cannot run
double time_batch(const plan &p, u64 n, std::map<std::string, double> *counts,
		  const char **err)
{
	harness_context &ctx = harness();
	prepared_run run(p);
	struct pc_sample a, b;
	double t0, t1;

	*err = run.enter();
	if (*err)
		return -1;
	if (ctx.group)
		pc_group_read(ctx.group, &a);
	t0 = now_ns();
	run.loop(n);
	t1 = now_ns();
	if (ctx.group)
		pc_group_read(ctx.group, &b);
	run.leave();
	if (counts && ctx.group) {
		double c[PC_MAX_EVENTS];
		double counted = pc_sample_delta(ctx.group, &a, &b, c);

		for (unsigned int i = 0; i < pc_group_nr_events(ctx.group); i++)
			(*counts)[pc_group_event_name(ctx.group, i)] = c[i] / n;
		(*counts)["counted_fraction"] = counted;
	}
	if (counts && p.mode == MODE_WRITER)
		(*counts)["writer_hz"] = run.writer_rate();
	return (t1 - t0) / n;
}

// the iteration count that makes the slowest subject's batch batch_ms long
u64 calibrate(const std::vector<entry> &entries, double batch_ms)
{
	double slowest = 0;

	for (const entry &e : entries) {
		const char *err;
		double ns = 0;

		// grow until a batch takes a millisecond: warm, and measurable
		for (u64 n = 16; n < (1ULL << 40); n *= 4) {
			ns = time_batch(*e.p, n, nullptr, &err);
			if (ns < 0 || ns * n >= 1e6)
				break;
		}
		slowest = std::max(slowest, ns);
	}
	if (slowest <= 0)
		return 0;
	return std::max<u64>(16, (u64)(batch_ms * 1e6 / slowest));
}

std::string key_of(const plan &p)
{
	return std::string(p.clock->name) + "/" + bench_modes[p.mode].name +
	       "/cpu" + std::to_string(p.cpu);
}

void print_counts(FILE *out, const std::map<std::string, double> &counts)
{
	const char *sep = "";

	fputs(",\"counters\":{", out);
	for (auto &c : counts) {
		fprintf(out, "%s\"%s\":%.6g", sep, c.first.c_str(), c.second);
		sep = ",";
	}
	fputs("}", out);
}

} // namespace

int rounds_run(unsigned int rounds, double batch_ms, unsigned int copies,
	       bool quiet, FILE *out)
{
	std::vector<std::string> order;
	std::map<std::string, std::vector<entry>> groups;
	unsigned int failed = 0, g = 0;

	for (const plan &p : harness_plans()) {
		std::string key = key_of(p);

		if (!groups.count(key))
			order.push_back(key);
		for (unsigned int c = 0; c < copies; c++)
			groups[key].push_back({&p, c});
	}
	fprintf(out,
		"{\"context\":%s,\"rounds\":%u,\"batch_ms\":%g,\"copies\":%u}"
		"\n",
		harness_context_json().c_str(), rounds, batch_ms, copies);
	for (const std::string &key : order) {
		const std::vector<entry> &entries = groups[key];
		auto design = williams_design((int)entries.size());
		u64 n = calibrate(entries, batch_ms);

		g++;
		fprintf(out, "{\"group\":\"%s\",\"iterations\":%llu}\n",
			key.c_str(), (unsigned long long)n);
		for (unsigned int r = 0; r < rounds; r++) {
			const std::vector<int> &row = design[r % design.size()];

			for (size_t pos = 0; pos < row.size(); pos++) {
				const entry &e = entries[row[pos]];
				std::map<std::string, double> counts;
				const char *err =
					"no batch ran during calibration";
				double ns =
					n ? time_batch(*e.p, n, &counts, &err)
					  : -1;

				fprintf(out,
					"{\"group\":\"%s\",\"round\":%u,"
					"\"position\":%zu,"
					"\"subject\":\"%s\",\"copy\":%u,"
					"\"benchmark\":\"%s\","
					"\"iterations\":%llu,\"cpu\":%d",
					key.c_str(), r, pos, e.p->subject->name,
					e.copy, e.p->name.c_str(),
					(unsigned long long)n, sched_getcpu());
				if (ns < 0) {
					failed++;
					fprintf(out, ",\"error\":%s}\n",
						harness_json_string(err)
							.c_str());
					continue;
				}
				fprintf(out, ",\"ns_per_call\":%.6f", ns);
				print_counts(out, counts);
				fputs("}\n", out);
			}
			// on a pipe, a line per group
			if (!quiet && (isatty(2) || r + 1 == rounds))
				fprintf(stderr,
					"%s[group %u/%zu %s, round %u/%u]%s",
					isatty(2) ? "\r\033[K" : "", g,
					order.size(), key.c_str(), r + 1,
					rounds, isatty(2) ? "" : "\n");
		}
		fflush(out);
	}
	if (!quiet && isatty(2))
		fputs("\r\033[K", stderr);
	return failed ? 1 : 0;
}
