// SPDX-License-Identifier: GPL-2.0
#include "bench/prepared_run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <utility>

#include "bench/harness.h"
#include "bench/writer_thread.h"

extern "C" {
#include "bench/cold.h"
#include "bench/pin.h"
#include "impls/kernel/sim_kernel.h"
}

const struct timens_offsets harness_timens_offsets = {
	.monotonic = {10 * 86400, 0},
	.boottime = {10 * 86400, 0},
};

namespace
{

u8 *pressure_buf;
// the cold modes' eviction pages (the largest plan's), and the histogram
// the cold loop counts each call's ticks in
u8 *cold_buf;
struct cold_hist cold_counts;

bench_loop_fn loop_of(const plan &p)
{
	enum bench_body body = bench_modes[p.mode].body;

	if (p.subject->floor)
		return p.subject->loops->floor[body];
	if (p.mode == MODE_POINTER)
		return bench_pointer_loops.op[p.clock->op][body];
	return p.subject->loops->op[p.clock->op][body];
}

void cold_trampoline(void *arg)
{
	auto *c =
		(std::pair<bench_loop_fn, std::pair<const bench_env *, u64>> *)
			arg;

	c->first(c->second.first, c->second.second);
}

} // namespace

int run_buffers_alloc(size_t pressure_bytes, size_t cold_pages, char *err,
		      size_t errlen)
{
	if (pressure_bytes) {
		pressure_buf = (u8 *)aligned_alloc(
			4096, (pressure_bytes + 4095) & ~4095UL);
		if (!pressure_buf) {
			snprintf(err, errlen,
				 "out of memory for the pressure buffer");
			return -1;
		}
		memset(pressure_buf, 1, pressure_bytes);
	}
	if (cold_pages) {
		cold_buf =
			(u8 *)aligned_alloc(COLD_PAGE, cold_pages * COLD_PAGE);
		if (!cold_buf) {
			snprintf(err, errlen,
				 "out of memory for the cold modes' %zu "
				 "eviction pages",
				 cold_pages);
			return -1;
		}
		memset(cold_buf, 1, cold_pages * COLD_PAGE);
	}
	return 0;
}

void run_buffers_free()
{
	free(pressure_buf);
	free(cold_buf);
}

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

	if (harness_bind(p_.cpu))
		return pin_bind_error();
	env_.clk = p_.clock->clk;
	env_.pressure_buf = pressure_buf;
	env_.pressure_len = p_.pressure_len;
	env_.clock_gettime = s->clock_gettime;
	env_.clock_getres = s->clock_getres;
	env_.gettimeofday = s->gettimeofday;
	env_.time = s->time;
	if (bench_mode_is_cold(p_.mode)) {
		env_.cold.buf = cold_buf;
		env_.cold.pages = p_.cold_pages;
		env_.cold.span = BENCH_PRESSURE_SPAN;
		env_.cold.dither = COLD_DITHER;
		env_.cold_hist = &cold_counts;
		// past L2, the data's pages leave the first-level TLB too:
		// their translations are brought back (cold.h)
		if (p_.mode == MODE_COLD_L2 && v) {
			env_.cold.touch = (const volatile u8 *)v->vvar;
			env_.cold.touch_pages = v->vvar_size / COLD_PAGE;
		}
	}
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
		if (sim_timens_enter(v, &harness_timens_offsets))
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

void prepared_run::loop(u64 n)
{
	if (!bench_mode_is_cold(p_.mode)) {
		loop_(&env_, n);
		return;
	}
	std::pair<bench_loop_fn, std::pair<const bench_env *, u64>> call = {
		loop_, {&env_, n}};

	cold_hist_reset(&cold_counts);
	cold_with_stack_at(COLD_STACK_OFFSET, cold_trampoline, &call);
}

const char *prepared_run::cold(cold_figures *out) const
{
	double ns_per_tick = 1e9 / (double)harness().tsc_hz;
	struct cold_summary s;

	if (!harness().tsc_hz)
		return "cold: the counter's rate is unknown";
	if (cold_summarize(&cold_counts, &s))
		return errno == ERANGE
			       ? "cold: most calls took longer than the "
				 "histogram holds (" __stringify(
					 COLD_HIST_BINS) " counter ticks)"
			       : "cold: no call was timed";
	out->mean = s.mean * ns_per_tick;
	out->min = s.min * ns_per_tick;
	out->p10 = s.p10 * ns_per_tick;
	out->median = s.median * ns_per_tick;
	out->p90 = s.p90 * ns_per_tick;
	out->calls = s.calls;
	out->kept = s.kept;
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
