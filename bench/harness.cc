// SPDX-License-Identifier: GPL-2.0
#include "bench/harness.h"
#include "bench/progress.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include <benchmark/benchmark.h>

extern "C" {
#include "bench/cpu_lock.h"
#include "bench/pin.h"
#include "counters/perf_counters.h"
#include "impls/counters/available.h"
#include "impls/kernel/sim_kernel.h"
#include "impls/kernel/sim_system.h"
}

namespace
{

std::vector<plan> plans;
u8 *pressure_buf;

// used when hwloc reports no L1D: the common size on x86 since Core 2
constexpr size_t fallback_l1d = 32 * 1024;

// a task in a namespace ten days ahead, as a container migrated in
const struct timens_offsets timens_offs = {
	.monotonic = {10 * 86400, 0},
	.boottime = {10 * 86400, 0},
};

// see bench_between(): twice the L1D, in whole pages
size_t pressure_bytes(size_t l1d)
{
	return 2 * (((l1d ? l1d : fallback_l1d) + 4095) & ~4095UL);
}

} // namespace

std::string harness_json_string(const std::string &s)
{
	std::string out = "\"";

	for (char c : s) {
		if (c == '"' || c == '\\') {
			out += '\\';
			out += c;
		} else if ((unsigned char)c < 0x20) {
			char buf[8];

			snprintf(buf, sizeof(buf), "\\u%04x", c);
			out += buf;
		} else {
			out += c;
		}
	}
	return out + "\"";
}

namespace
{

std::string json_or_null(const std::string &s)
{
	return s.empty() ? "null" : harness_json_string(s);
}

int bind_to(int cpu)
{
	harness_context &ctx = harness();

	return ctx.pinned ? pin_bind_thread(ctx.topo, cpu) : 0;
}

} // namespace

// The writer mode's kernel: update_vsyscall() at ctx.hz on another CPU.
class writer_thread
{
      public:
	explicit writer_thread(int cpu) : cpu_(cpu)
	{
	}
	bool start()
	{
		thread_ = std::thread([this] { run(); });
		while (!ready_.load())
			sched_yield();
		return bind_ok_;
	}
	void stop()
	{
		stop_.store(true);
		thread_.join();
	}
	double rate() const
	{
		return seconds_ > 0 ? updates_ / seconds_ : 0;
	}

      private:
	void run()
	{
		unsigned int hz = harness().hz;
		struct timespec next, t0, t1;

		bind_ok_ = bind_to(cpu_) == 0;
		ready_.store(true);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		next = t0;
		while (!stop_.load(std::memory_order_relaxed)) {
			sim_kernel_tick();
			updates_++;
			if (!hz)
				continue;
			next.tv_nsec += 1000000000L / hz;
			if (next.tv_nsec >= 1000000000L) {
				next.tv_sec++;
				next.tv_nsec -= 1000000000L;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
					nullptr);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		seconds_ = (t1.tv_sec - t0.tv_sec) +
			   (t1.tv_nsec - t0.tv_nsec) / 1e9;
	}

	int cpu_;
	std::thread thread_;
	std::atomic<bool> ready_{false}, stop_{false};
	bool bind_ok_ = false;
	double updates_ = 0, seconds_ = 0;
};

namespace
{

// what Google Benchmark compares with --min-time
double thread_seconds()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

bench_loop_fn loop_of(const plan &p)
{
	enum bench_body body = bench_modes[p.mode].body;

	if (p.subject->floor)
		return p.subject->loops->floor[body];
	if (p.mode == MODE_POINTER)
		return bench_pointer_loops.op[p.clock->op][body];
	return p.subject->loops->op[p.clock->op][body];
}

void add_counters(benchmark::State &state, const pc_sample &a,
		  const pc_sample &b)
{
	harness_context &ctx = harness();
	double counts[PC_MAX_EVENTS];
	double counted;

	counted = pc_sample_delta(ctx.group, &a, &b, counts);
	for (unsigned int i = 0; i < pc_group_nr_events(ctx.group); i++)
		state.counters[pc_group_event_name(ctx.group, i)] =
			benchmark::Counter(counts[i],
					   benchmark::Counter::kAvgIterations);
	// below 1: multiplexed, and the counts above were scaled up
	state.counters["counted_fraction"] = counted;
}

void run_one(benchmark::State &state, const plan &p)
{
	harness_context &ctx = harness();
	prepared_run run(p);
	struct pc_sample a, b;
	const char *err;
	double t0, t1;

	err = run.enter();
	if (err) {
		state.SkipWithError(err);
		return;
	}
	if (ctx.group)
		pc_group_read(ctx.group, &a);
	t0 = thread_seconds();
	while (state.KeepRunningBatch(state.max_iterations))
		run.loop((u64)state.max_iterations);
	t1 = thread_seconds();
	if (ctx.group)
		pc_group_read(ctx.group, &b);
	progress_batch(p.name, t1 - t0);
	run.leave();

	if (p.mode == MODE_WRITER) {
		state.counters["writer_hz"] = run.writer_rate();
		state.counters["writer_cpu"] = p.writer_cpu;
	}
	if (ctx.group)
		add_counters(state, a, b);
	// where it ran: the name says where it was meant to
	state.counters["cpu"] = sched_getcpu();
}

} // namespace

prepared_run::prepared_run(const plan &p) : p_(p), loop_(loop_of(p)), env_()
{
}

prepared_run::~prepared_run()
{
	leave();
}

const char *prepared_run::enter()
{
	const struct subject *s = p_.subject;
	const struct vdso_variant *v = s->variant;

	if (bind_to(p_.cpu))
		return pin_bind_error();
	env_.clk = p_.clock->clk;
	env_.pressure_buf = pressure_buf;
	env_.pressure_len = p_.pressure_len;
	env_.clock_gettime = s->clock_gettime;
	env_.clock_getres = s->clock_getres;
	env_.gettimeofday = s->gettimeofday;
	env_.time = s->time;
	if (v) {
		// only this variant's page is published to, so a writer's
		// rate is this variant's update rate
		sim_kernel_detach_all();
		if (sim_kernel_attach(v))
			return strerror(errno);
		// a fresh cycle_last and bases, as the last tick left them
		sim_kernel_tick();
	}
	if (p_.mode == MODE_TIMENS) {
		if (sim_timens_enter(v, &timens_offs))
			return strerror(errno);
		in_timens_ = true;
	}
	if (p_.mode == MODE_WRITER) {
		writer_.reset(new writer_thread(p_.writer_cpu));
		if (!writer_->start()) {
			leave();
			return pin_bind_error();
		}
	}
	return nullptr;
}

void prepared_run::leave()
{
	if (writer_) {
		writer_->stop();
		writer_rate_ = writer_->rate();
		writer_.reset();
	}
	if (in_timens_) {
		sim_timens_leave(p_.subject->variant);
		in_timens_ = false;
	}
}

harness_context &harness()
{
	static harness_context ctx;

	return ctx;
}

namespace
{

// Why the subject cannot run here: sys/vdso without a vDSO, or a counter
// read this CPU lacks (a variant's, or a floor's: floor/<counter>), which
// would die of SIGILL; nullptr if it can.
const char *unavailable(const struct subject *s)
{
	if (s->unavailable)
		return s->unavailable;
	if (s->variant)
		return vdso_counter_unavailable(s->variant->counter);
	if (s->floor && !strncmp(s->name, "floor/", 6))
		return vdso_counter_unavailable(s->name + 6);
	return nullptr;
}

} // namespace

int harness_plan(const struct selection &sel, char *err, size_t errlen)
{
	harness_context &ctx = harness();
	size_t most = 0;

	plans.clear();
	for (unsigned int i = 0; i < subjects_nr(); i++) {
		const struct subject *s = subject_at(i);

		if (!sel.subject[i])
			continue;
		if (unavailable(s)) {
			ctx.skipped.push_back(
				std::string(s->name) +
				": not available: " + unavailable(s));
			continue;
		}
		for (int m = 0; m < NR_MODES; m++) {
			if (!sel.mode[m])
				continue;
			for (int c = -1; c < NR_CLOCK_CHOICES; c++) {
				const struct clock_choice *clk =
					c < 0 ? &bench_clock_none
					      : &bench_clocks[c];

				if (c >= 0 && !sel.clock[c])
					continue;
				if (!subject_applies(s, clk,
						     (enum bench_mode)m))
					continue;
				for (size_t k = 0; k < ctx.cpus.size(); k++) {
					plan p = {s,
						  clk,
						  (enum bench_mode)m,
						  ctx.cpus[k],
						  -1,
						  0,
						  ""};

					if (m == MODE_PRESSURE)
						p.pressure_len = pressure_bytes(
							ctx.l1d[k]);
					most = std::max(most, p.pressure_len);
					if (m == MODE_WRITER) {
						p.writer_cpu = ctx.writer_cpu;
						if (p.writer_cpu == p.cpu &&
						    ctx.topo)
							p.writer_cpu =
								pin_default_writer_cpu(
									ctx.topo,
									p.cpu);
						if (p.writer_cpu < 0 ||
						    p.writer_cpu == p.cpu) {
							snprintf(err, errlen,
								 "--modes "
								 "writer: no "
								 "CPU other "
								 "than %d for "
								 "the writer "
								 "(--writer-"
								 "cpu)",
								 p.cpu);
							return -1;
						}
					}
					p.name = std::string(s->name) + "/" +
						 clk->name + "/" +
						 bench_modes[m].name + "/cpu" +
						 std::to_string(p.cpu);
					plans.push_back(p);
				}
			}
		}
	}
	if (plans.empty()) {
		snprintf(
			err, errlen,
			"the selection is empty: no selected mode applies to "
			"the "
			"selected variants and clocks (writer and timens are "
			"for "
			"variants, timens only for generic_timens*; floors run "
			"in hot, pressure and compute)%s%s",
			ctx.skipped.empty() ? "" : "; skipped ",
			ctx.skipped.empty() ? "" : ctx.skipped[0].c_str());
		return -1;
	}
	if (most) {
		pressure_buf =
			(u8 *)aligned_alloc(4096, (most + 4095) & ~4095UL);
		if (!pressure_buf) {
			snprintf(err, errlen,
				 "out of memory for the pressure buffer");
			return -1;
		}
		memset(pressure_buf, 1, most);
	}
	return 0;
}

const std::vector<plan> &harness_plans()
{
	return plans;
}

size_t harness_plan_size()
{
	return plans.size();
}

void harness_print_plan(FILE *f)
{
	for (auto &s : harness().skipped)
		fprintf(stderr, "skipped %s\n", s.c_str());
	for (auto &p : plans)
		fprintf(f, "%s\n", p.name.c_str());
}

int harness_check_binding(char *err, size_t errlen)
{
	harness_context &ctx = harness();
	std::vector<int> cpus = ctx.cpus;

	for (auto &p : plans)
		if (p.writer_cpu >= 0)
			cpus.push_back(p.writer_cpu);
	for (int c : cpus) {
		if (pin_bind_thread(ctx.topo, c)) {
			snprintf(err, errlen,
				 "binding to CPU %d refused: %s (--no-pin runs "
				 "unpinned, with a warning)",
				 c, pin_bind_error());
			return -1;
		}
	}
	return 0;
}

void harness_register()
{
	for (size_t i = 0; i < plans.size(); i++)
		benchmark::RegisterBenchmark(
			plans[i].name.c_str(),
			[i](benchmark::State &st) { run_one(st, plans[i]); })
			->Unit(benchmark::kNanosecond);
}

std::string harness_context_json()
{
	harness_context &ctx = harness();
	std::string j = "{";
	std::string sep;

	j += "\"compiler\":" + harness_json_string(__VERSION__);
#ifdef __OPTIMIZE__
	j += ",\"optimized\":true";
#else
	j += ",\"optimized\":false";
#endif
	j += ",\"counter_hz\":" + std::to_string(ctx.tsc_hz);
	j += ",\"pinning\":{\"pinned\":" +
	     std::string(ctx.pinned ? "true" : "false");
	j += ",\"cpus\":[";
	for (size_t i = 0; i < ctx.cpus.size(); i++)
		j += (i ? "," : "") + std::to_string(ctx.cpus[i]);
	j += "],\"where\":{";
	for (size_t i = 0; i < ctx.cpus.size(); i++)
		j += (i ? "," : "") +
		     harness_json_string(std::to_string(ctx.cpus[i])) + ":" +
		     harness_json_string(ctx.cpu_desc[i]);
	j += "},\"l1d_bytes\":{";
	for (size_t i = 0; i < ctx.cpus.size(); i++)
		j += (i ? "," : "") +
		     harness_json_string(std::to_string(ctx.cpus[i])) + ":" +
		     (ctx.l1d[i] ? std::to_string(ctx.l1d[i]) : "null");
	// null where the machine has one kind of core (or hwloc knows none)
	j += "},\"cpu_kinds\":{";
	for (size_t i = 0; i < ctx.cpus.size(); i++) {
		char kind[64] = "";

		if (ctx.topo)
			pin_cpu_kind(ctx.topo, ctx.cpus[i], kind, sizeof(kind));
		j += (i ? "," : "") +
		     harness_json_string(std::to_string(ctx.cpus[i])) + ":" +
		     json_or_null(kind);
	}
	j += "},\"pressure_bytes\":{";
	for (size_t i = 0; i < ctx.cpus.size(); i++)
		j += (i ? "," : "") +
		     harness_json_string(std::to_string(ctx.cpus[i])) + ":" +
		     std::to_string(pressure_bytes(ctx.l1d[i]));
	j += "},\"pressure_span\":" + std::to_string(BENCH_PRESSURE_SPAN);
	j += ",\"writer_cpu\":" + std::to_string(ctx.writer_cpu) + "}";
	j += ",\"writer_hz\":" + (ctx.hz ? std::to_string(ctx.hz) : "\"max\"");
	j += ",\"compute_steps\":" + std::to_string(BENCH_COMPUTE_STEPS);
	j += ",\"timens_offset_s\":" +
	     std::to_string(timens_offs.monotonic.tv_sec);

	j += ",\"counters\":{\"available\":" +
	     std::string(ctx.group ? "true" : "false");
	j += ",\"reason\":" +
	     json_or_null(ctx.group ? "" : ctx.counters_reason);
	j += ",\"mode\":" + json_or_null(ctx.counters_mode);
	j += ",\"mode_reason\":" + json_or_null(ctx.counters_mode_reason);
	j += ",\"requested\":[";
	sep = "";
	for (auto &e : ctx.counters_requested) {
		j += sep + harness_json_string(e);
		sep = ",";
	}
	j += "],\"events\":[";
	for (unsigned int i = 0; ctx.group && i < pc_group_nr_events(ctx.group);
	     i++)
		j += (i ? "," : "") +
		     harness_json_string(pc_group_event_name(ctx.group, i));
	j += "],\"dropped\":[";
	sep = "";
	for (auto &d : ctx.counters_dropped) {
		j += sep + "{\"name\":" + harness_json_string(d.first) +
		     ",\"reason\":" + harness_json_string(d.second) + "}";
		sep = ",";
	}
	j += "]}";

	j += ",\"vdso\":{\"available\":" +
	     std::string(ctx.vdso_reason.empty() ? "true" : "false");
	j += ",\"reason\":" + json_or_null(ctx.vdso_reason) + ",\"symbols\":{";
	sep = "";
	for (auto &s : ctx.vdso_symbols) {
		j += sep + harness_json_string(s.first) + ":" +
		     (s.second ? "true" : "false");
		sep = ",";
	}
	j += "}},\"skipped\":[";
	sep = "";
	for (auto &s : ctx.skipped) {
		j += sep + harness_json_string(s);
		sep = ",";
	}
	j += "],\"planned\":" + std::to_string(plans.size());

	// each CPU locked, and whom this run waited for: run and compare make
	// warnings of the waits
	j += ",\"cpu_lock\":{\"policy\":" +
	     harness_json_string(ctx.cpu_lock_policy);
	j += ",\"dir\":" + json_or_null(ctx.cpu_lock_dir);
	j += ",\"error\":" + json_or_null(ctx.cpu_lock_error) + ",\"cpus\":[";
	sep = "";
	for (auto *l : ctx.cpu_locks) {
		j += sep + std::to_string(cpu_lock_cpu(l));
		sep = ",";
	}
	j += "],\"waited\":[";
	sep = "";
	for (auto *l : ctx.cpu_locks) {
		char seconds[32];

		if (!cpu_lock_contended(l))
			continue;
		snprintf(seconds, sizeof(seconds), "%.3f",
			 cpu_lock_waited_s(l));
		j += sep + "{\"cpu\":" + std::to_string(cpu_lock_cpu(l)) +
		     ",\"seconds\":" + seconds +
		     ",\"holder\":" + harness_json_string(cpu_lock_holder(l)) +
		     "}";
		sep = ",";
	}
	j += "]}}";
	return j;
}

void harness_teardown()
{
	harness_context &ctx = harness();

	sim_kernel_detach_all();
	for (auto *l : ctx.cpu_locks)
		cpu_lock_release(l);
	ctx.cpu_locks.clear();
	if (ctx.group)
		pc_group_destroy(ctx.group);
	if (ctx.topo)
		pin_topology_destroy(ctx.topo);
	free(pressure_buf);
}
