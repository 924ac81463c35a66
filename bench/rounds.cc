// SPDX-License-Identifier: GPL-2.0
#include "bench/rounds.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <map>
#include <string>

#include "bench/harness.h"
#include "bench/prepared_run.h"
#include "bench/records.h"

extern "C" {
#include "bench/lost_cpu.h"
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

// one timed batch
struct batch {
	double ns = -1; // per call; negative: it could not run
	double wall_ns = 0; // per call, the whole loop (cold: eviction too)
	cold_figures cold;  // the cold modes: the calls alone
	footprint_result fp; // the footprint mode: the chain and its figures
	struct batch_loss loss = {1.0, 0, false};
	std::map<std::string, double> counts;
};

// One batch of n (ns < 0 if it cannot run, *err says why), with what the
// thread lost of its CPU meanwhile and, if want_counts, the counters.
batch time_batch(const plan &p, u64 n, bool want_counts, const char **err)
{
	harness_context &ctx = harness();
	prepared_run run(p);
	struct batch_usage ua = {}, ub = {};
	struct pc_sample a, b;
	batch out;
	double t0, t1;

	*err = run.enter();
	if (*err)
		return out;
	// a sample that cannot be read leaves both zero: nothing lost
	if (batch_usage_now(&ua))
		ua = {};
	if (ctx.group)
		pc_group_read(ctx.group, &a);
	t0 = now_ns();
	run.loop(n);
	t1 = now_ns();
	if (ctx.group)
		pc_group_read(ctx.group, &b);
	if (ua.wall_ns && batch_usage_now(&ub))
		ub = ua;
	run.leave();
	out.wall_ns = (t1 - t0) / n;
	out.ns = out.wall_ns;
	if (bench_mode_is_cold(p.mode)) {
		*err = run.cold(&out.cold);
		if (*err) {
			out.ns = -1;
			return out;
		}
		// each call alone, the bracket included (the round subtracts it)
		out.ns = out.cold.mean;
	}
	if (p.mode == MODE_FOOTPRINT) {
		*err = run.footprint(&out.fp);
		// the call and its walk, net of the walk alone (same batch)
		out.ns = *err ? -1 : out.fp.f.net_ns;
		if (*err)
			return out;
	}
	out.loss = batch_lost_cpu(&ua, ub.wall_ns ? &ub : &ua);
	if (want_counts && ctx.group) {
		double c[PC_MAX_EVENTS];
		double counted = pc_sample_delta(ctx.group, &a, &b, c);

		for (unsigned int i = 0; i < pc_group_nr_events(ctx.group); i++)
			out.counts[pc_group_event_name(ctx.group, i)] =
				c[i] / n;
		out.counts["counted_fraction"] = counted;
	}
	if (want_counts && p.mode == MODE_WRITER)
		out.counts["writer_hz"] = run.writer_rate();
	return out;
}

// A batch of a round: retried while it lost the CPU, at most
// LOST_CPU_RETRIES times, keeping the attempt that ran the most of its
// time (still marked lost if even that one did).
batch round_batch(const plan &p, u64 n, unsigned int *retries, const char **err)
{
	batch best;

	*retries = 0;
	*err = "no batch ran during calibration";
	for (unsigned int attempt = 0; n; attempt++) {
		batch b = time_batch(p, n, true, err);

		if (b.ns < 0)
			return b;
		if (!attempt || b.loss.share > best.loss.share)
			best = b;
		if (!b.loss.lost || attempt == LOST_CPU_RETRIES)
			break;
		++*retries;
	}
	return best;
}

// the iteration count that makes the slowest subject's batch batch_ms long
u64 calibrate(const std::vector<entry> &entries, double batch_ms)
{
	double slowest = 0;

	for (const entry &e : entries) {
		const char *err;
		double ns = 0;

		// grow until a batch takes a millisecond: warm, and measurable
		// (by the whole loop's time: a cold batch's calls are a part),
		// and never from the first batch alone, which may be the one
		// that warmed it (cold-l2's first calls take many times longer)
		// footprint: whole rounds of the call and its controls
		for (u64 n = e.p->mode == MODE_FOOTPRINT ? FOOTPRINT_ROUND : 16;
		     n < (1ULL << 40); n *= 4) {
			batch b = time_batch(*e.p, n, false, &err);

			ns = b.ns < 0 ? -1 : b.wall_ns;
			if (ns < 0 || (ns * n >= 1e6 && n > 16))
				break;
		}
		slowest = std::max(slowest, ns);
	}
	if (slowest <= 0)
		return 0;
	u64 n = std::max<u64>(16, (u64)(batch_ms * 1e6 / slowest));

	if (entries[0].p->mode == MODE_FOOTPRINT)
		n = (n + FOOTPRINT_ROUND - 1) / FOOTPRINT_ROUND *
		    FOOTPRINT_ROUND;
	return n;
}

std::string key_of(const plan &p)
{
	return std::string(p.clock->name) + "/" + bench_modes[p.mode].name +
	       "/cpu" + std::to_string(p.cpu);
}

// ", 3 batches retried, 1 still lost the CPU" for the progress line
std::string lost_text(unsigned int retried, unsigned int disturbed)
{
	std::string t;

	if (retried)
		t += ", " + std::to_string(retried) + " batch" +
		     (retried > 1 ? "es" : "") + " retried";
	if (disturbed)
		t += ", " + std::to_string(disturbed) + " still lost the CPU";
	return t;
}

// The cold modes' figures of a batch: the calls alone with the bracket
// (raw), the bracket (floor/empty in the same round), their distribution
json cold_record(const batch &b, const batch &bracket)
{
	return {
		{"raw_ns", json_fixed(b.cold.mean, 6)},
		{"bracket_ns", json_fixed(bracket.cold.mean, 6)},
		{"min_ns", json_fixed(b.cold.min, 3)},
		{"p10_ns", json_fixed(b.cold.p10, 3)},
		{"median_ns", json_fixed(b.cold.median, 3)},
		{"p90_ns", json_fixed(b.cold.p90, 3)},
		{"calls", b.cold.calls},
		{"kept", b.cold.kept},
	};
}

// A cold batch's events net of the bracket's (the same eviction)
void net_counts(batch &b, const batch &bracket)
{
	for (auto &c : b.counts)
		if (c.first != "counted_fraction" && bracket.counts.count(c.first))
			c.second -= bracket.counts.at(c.first);
}

// the run's first line: its context, the design, the lost-CPU rule
json header_record(unsigned int rounds, double batch_ms, unsigned int copies)
{
	json lost_cpu = {
		{"min_share", json_general(LOST_CPU_MIN_SHARE, 6)},
		{"retries", LOST_CPU_RETRIES},
	};

	return {
		{"context", harness_context_record()},
		{"rounds", rounds},
		{"batch_ms", json_general(batch_ms, 6)},
		{"copies", copies},
		{"lost_cpu", lost_cpu},
	};
}

json counts_record(const std::map<std::string, double> &counts)
{
	json record = json::object();

	for (auto &c : counts)
		record[c.first] = json_general(c.second, 6);
	return record;
}

// One batch's line: where in the design it ran, what it took, the thread's
// share of the batch's wall time, its involuntary switches, the retries it
// took, and whether it still lost the CPU (or why it could not run)
json batch_record(const std::string &key, unsigned int round, size_t pos,
		  const entry &e, u64 n, const batch &b, unsigned int retries,
		  const char *err, bool cold, const batch &bracket)
{
	json record = {
		{"group", key},
		{"round", round},
		{"position", pos},
		{"subject", e.p->subject->name},
		{"copy", e.copy},
		{"benchmark", e.p->name},
		{"iterations", n},
		{"cpu", sched_getcpu()},
	};

	if (b.ns < 0) {
		record["error"] = err ? json(err) : json(nullptr);
		return record;
	}
	record["ns_per_call"] = json_fixed(b.ns, 6);
	record["cpu_share"] = json_fixed(b.loss.share, 4);
	record["switches"] = b.loss.switches;
	record["retries"] = retries;
	record["disturbed"] = b.loss.lost;
	if (cold)
		record["cold"] = cold_record(b, bracket);
	if (e.p->mode == MODE_FOOTPRINT)
		record["footprint"] = footprint_record(b.fp);
	record["counters"] = counts_record(b.counts);
	return record;
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
	record_line(out, header_record(rounds, batch_ms, copies));
	for (const std::string &key : order) {
		const std::vector<entry> &entries = groups[key];
		auto design = williams_design((int)entries.size());
		u64 n = calibrate(entries, batch_ms);
		unsigned int retried = 0, disturbed = 0;

		const bool cold = bench_mode_is_cold(entries[0].p->mode);

		g++;
		record_line(out, {{"group", key}, {"iterations", n}});
		for (unsigned int r = 0; r < rounds; r++) {
			const std::vector<int> &row = design[r % design.size()];
			unsigned int bracket_retries = 0;
			const char *bracket_err = nullptr;
			batch bracket;

			// the cold modes: the bracket's own cost, this round
			if (cold)
				bracket = round_batch(
					harness_bracket_plan(*entries[0].p), n,
					&bracket_retries, &bracket_err);
			for (size_t pos = 0; pos < row.size(); pos++) {
				const entry &e = entries[row[pos]];
				unsigned int retries;
				const char *err;
				batch b = round_batch(*e.p, n, &retries, &err);

				if (cold && b.ns >= 0 && bracket.ns < 0) {
					b.ns = -1;
					err = bracket_err;
				}
				if (cold && b.ns >= 0) {
					retries += bracket_retries;
					b.loss.lost |= bracket.loss.lost;
					// floor/empty is the bracket itself
					if (!harness_is_bracket(*e.p)) {
						b.ns -= bracket.ns;
						net_counts(b, bracket);
					}
				}

				record_line(out,
					    batch_record(key, r, pos, e, n, b,
							 retries, err, cold,
							 bracket));
				if (b.ns < 0) {
					failed++;
					continue;
				}
				retried += retries != 0;
				disturbed += b.loss.lost;
			}
			// on a pipe, a line per group
			if (!quiet && (isatty(2) || r + 1 == rounds))
				fprintf(stderr,
					"%s[group %u/%zu %s, round %u/%u%s]%s",
					isatty(2) ? "\r\033[K" : "", g,
					order.size(), key.c_str(), r + 1,
					rounds,
					lost_text(retried, disturbed).c_str(),
					isatty(2) ? "" : "\n");
		}
		fflush(out);
	}
	if (!quiet && isatty(2))
		fputs("\r\033[K", stderr);
	return failed ? 1 : 0;
}
