// SPDX-License-Identifier: GPL-2.0
#include "bench/prepared_run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <map>
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

// the footprint mode: the data lines of a plan's call, probed once
struct probed {
	std::vector<uintptr_t> lines;
	std::string how;
};
std::map<const plan *, probed> probes;

struct probe_call {
	bench_loop_fn fn;
	const bench_env *env;
};

void probe_trampoline(void *arg)
{
	auto *c = (probe_call *)arg;

	c->fn(c->env, 1);
}

// One call with the variant's data pages protected (footprint.h): the
// lines it loads; where it cannot, every line of BENCH_PRESSURE_SPAN.
const probed &data_lines(const plan &p, const bench_env &env)
{
	const struct vdso_variant *v = p.subject->variant;
	uintptr_t off[FOOTPRINT_MAX_LINES];
	unsigned int nr = 0;
	probed r;

	auto it = probes.find(&p);
	if (it != probes.end())
		return it->second;
	if (!v || p.subject->floor) {
		r.how = "span: no data page of a variant to protect";
	} else {
		probe_call c = {p.subject->loops->op[p.clock->op]
					       [BENCH_BODY_NONE],
				&env};

		if (footprint_probe((void *)v->vvar, v->vvar_size, COLD_LINE,
				    probe_trampoline, &c, off,
				    FOOTPRINT_MAX_LINES, &nr))
			r.how = std::string("span: the probe failed: ") +
				strerror(errno);
		else if (!nr)
			r.how = "span: the call loaded no line of its data";
		else
			r.how = "fault";
	}
	if (r.how == "fault")
		r.lines.assign(off, off + nr);
	else
		for (uintptr_t o = 0; o < BENCH_PRESSURE_SPAN; o += COLD_LINE)
			r.lines.push_back(o);
	return probes[&p] = r;
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
	free(chain_buf_);
	free(control_buf_);
}

const char *prepared_run::footprint_enter()
{
	struct footprint_env &fe = env_.footprint;
	size_t way;

	if (!harness().tsc_hz)
		return "footprint: the counter's rate is unknown";
	const probed &pr = data_lines(p_, env_);

	probe_ = pr.how;
	lines_ = pr.lines;
	if (footprint_sets_of(p_.l1d, p_.l1d_ways, COLD_LINE, lines_.data(),
			      (unsigned int)lines_.size(), &sets_))
		return errno == E2BIG ? "footprint: more L1D ways or data sets "
					"than the chain holds"
				      : "footprint: the L1D's size is not ways "
					"x 64-byte lines x sets";
	way = footprint_way_bytes(&sets_);
	if (!chain_buf_)
		chain_buf_ = aligned_alloc(way, sets_.ways * way);
	if (!control_buf_)
		control_buf_ =
			aligned_alloc(way, FOOTPRINT_MAX_CONTROL_LINES * way);
	if (!chain_buf_ || !control_buf_)
		return "footprint: out of memory for the chain";
	memset(chain_buf_, 0, sets_.ways * way);
	memset(control_buf_, 1, FOOTPRINT_MAX_CONTROL_LINES * way);
	fe.head = footprint_chain_build(chain_buf_, &sets_, &fe.chain_len);
	footprint_controls(control_buf_, &sets_, fe.control);
	fe.fence = (u64)(FOOTPRINT_FENCE_NS * 1e-9 * (double)harness().tsc_hz);
	fe.dither = FOOTPRINT_DITHER;
	fe.acc = &acc_;
	return nullptr;
}

static_assert(FOOTPRINT_ROUND == 320, "the message below says 320");

const char *prepared_run::footprint(footprint_result *out) const
{
	if (footprint_figures_of(&acc_, 1e9 / (double)harness().tsc_hz,
				 &out->f))
		return errno == ENODATA
			       ? "footprint: a kind of iteration had none kept "
				 "(fewer than 320 in the batch, or all past "
				 "the fence)"
			       : "footprint: the controls' lines cost the "
				 "walk nothing measurable (noise, or the "
				 "chain is not in their sets here)";
	out->lines = lines_;
	out->sets.assign(sets_.set, sets_.set + sets_.nr);
	out->probe = probe_;
	out->chain_lines = env_.footprint.chain_len;
	out->l1d_sets = sets_.sets;
	out->l1d_ways = sets_.ways;
	return nullptr;
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
	if (p_.mode == MODE_FOOTPRINT)
		return footprint_enter();
	return nullptr;
}

void prepared_run::loop(u64 n)
{
	if (!bench_mode_is_cold(p_.mode) && p_.mode != MODE_FOOTPRINT) {
		loop_(&env_, n);
		return;
	}
	std::pair<bench_loop_fn, std::pair<const bench_env *, u64>> call = {
		loop_, {&env_, n}};

	// the footprint loop's frame, too, above the data's offsets
	if (p_.mode == MODE_FOOTPRINT)
		acc_ = {};
	else
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
