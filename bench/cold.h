/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cold modes (cold, cold-l2, warm). Before each call, outside the timed
 * region, the data page's lines are evicted from L1D (cold) or L2 as well
 * (cold-l2) by reading the same offsets in other pages, and a pseudo-random
 * spin starts the call at a random phase of the counter's step; the call is
 * timed alone between two ordered counter reads, and a batch is the mean of
 * its calls below an outlier bound, net of floor/empty's bracket. Why each
 * number is what it is (loads per way, colours, the L2 margin, the dither,
 * the mean rather than the median): docs/benchmarks.md, "The cold modes".
 */
#ifndef VDSOBENCH_BENCH_COLD_H
#define VDSOBENCH_BENCH_COLD_H

#include <stddef.h>

#include "impls/common/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

#define COLD_LINE 64UL
#define COLD_PAGE 4096UL
/* loads into each of the data's sets per eviction, per way of the cache */
#define COLD_LOADS_PER_WAY 2
/* cold-l2: pages per colour, over an even spread (docs/benchmarks.md) */
#define COLD_L2_MARGIN 4
/* the per-call histogram: one bin per tick, the rest counted as beyond */
#define COLD_HIST_BINS 8192
/* a call longer than this many times the median is an outlier */
#define COLD_OUTLIER_FACTOR 4
/*
 * The dither's bound, in spin iterations (a cycle or two each): about
 * 2.2 us at 3.7 GHz, 220 steps of a 100 MHz-stepped counter, 50 of a
 * 24 MHz one, so that the start's phase within a step is even to within
 * half a percent. With 512 (14 steps) the pair x86_gtod_ts_multshift /
 * x86_gtod came out 1.022 in one run and 0.980 in the next on the Zen 4
 * guest; with 8192, 1.021..1.023 in every run, cold and warm alike.
 */
#define COLD_DITHER 8192
#define COLD_DITHER_SEED 0x9e3779b9U
/*
 * Where the cold loop's stack frame starts within its page: the loop's
 * own variables (its copy of the environment, the timespec the call
 * fills) and the call's frame lie below it, well above the evicted
 * offsets, so only the subject's data lines are cold.
 */
#define COLD_STACK_OFFSET 4032UL

struct cold_evict {
	const volatile u8 *buf; /* pages x COLD_PAGE, page-aligned */
	size_t pages;		/* 0: no eviction */
	size_t span;		/* bytes read at the start of each page */
	/* the data's pages, whose last lines are loaded after it (or NULL) */
	const volatile u8 *touch;
	size_t touch_pages;
	u32 dither; /* then spin 0..dither-1 iterations (0: none) */
};

/*
 * The pages an eviction reads for a cache of `bytes` and `ways` ways (as
 * hwloc gives them; 0 ways: unknown, taken as one page per way, the most
 * ways a cache indexed within a page can have):
 * COLD_LOADS_PER_WAY x ways x colours x margin, colours = way / page (at
 * least 1). 0 when bytes is 0 (unknown).
 */
size_t cold_pages(size_t bytes, unsigned int ways, unsigned int margin);

/*
 * Every load of an eviction, in order, as a byte offset from e->buf; the
 * eviction below and the tests' enumeration are this one loop.
 */
#define COLD_FOR_EACH_LOAD(e, off)                                             \
	for (size_t cold_p_ = 0; cold_p_ < (e)->pages * COLD_PAGE;             \
	     cold_p_ += COLD_PAGE)                                             \
		for (size_t cold_o_ = 0, off = cold_p_; cold_o_ < (e)->span;   \
		     cold_o_ += COLD_LINE, off = cold_p_ + cold_o_)

/* xorshift32: the dither's sequence, from COLD_DITHER_SEED each batch */
static __always_inline u32 cold_random(u32 *state)
{
	u32 x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

/* the eviction, then the dither (state: the batch's cold_random state) */
static __always_inline void cold_evict_now(const struct cold_evict *e,
					   u32 *state)
{
	COLD_FOR_EACH_LOAD(e, off)
	(void)e->buf[off];
	for (size_t p = 0; p < e->touch_pages; p++)
		(void)e->touch[p * COLD_PAGE + COLD_PAGE - COLD_LINE];
	if (e->dither)
		for (u32 k = cold_random(state) % e->dither; k; k--)
			__asm__ __volatile__("" : "+r"(k));
}

/* the offsets COLD_FOR_EACH_LOAD gives, into out[] (at most max); how many */
size_t cold_loads(const struct cold_evict *e, size_t *out, size_t max);

#if defined(__x86_64__) || defined(__i386__)
/*
 * lfence waits for every earlier instruction to complete (the eviction's
 * loads, or the call's) and keeps later ones from starting until it has;
 * rdtsc needs no CPU feature beyond x86-64's. The sequence is the
 * simulated kernel's sim_read_tsc_ordered(), inline here: a call would
 * put its own cost inside the timed region, and on arm64 the bracket
 * must also wait for earlier loads (dsb), which the kernel's read need not.
 */
static __always_inline u64 cold_bracket(void)
{
	u32 lo, hi;

	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence"
			     : "=a"(lo), "=d"(hi)
			     :
			     : "memory");
	return ((u64)hi << 32) | lo;
}
#elif defined(__aarch64__)
/* dsb: earlier loads complete; isb: nothing later starts before the read */
static __always_inline u64 cold_bracket(void)
{
	u64 t;

	__asm__ __volatile__("dsb ish\n\tisb\n\tmrs %0, cntvct_el0\n\tisb"
			     : "=r"(t)
			     :
			     : "memory");
	return t;
}
#else
#error "vdsobench supports x86-64, i386 and aarch64"
#endif

struct cold_hist {
	u32 bins[COLD_HIST_BINS]; /* calls of exactly i ticks */
	u64 beyond;		  /* calls of COLD_HIST_BINS ticks or more */
};

static __always_inline void cold_record(struct cold_hist *h, u64 ticks)
{
	if (likely(ticks < COLD_HIST_BINS))
		h->bins[ticks]++;
	else
		h->beyond++;
}

void cold_hist_reset(struct cold_hist *h);

/* a batch's calls, in counter ticks */
struct cold_summary {
	u64 calls;
	u64 kept;   /* calls of at most `fence` ticks */
	u64 fence;  /* COLD_OUTLIER_FACTOR x the median */
	double mean; /* over the kept calls: the batch's figure */
	u64 min, p10, median, p90; /* over all calls */
};

/*
 * Summarize a histogram: 0, or -1 with errno ENODATA (no calls) or ERANGE
 * (the median lies beyond the histogram: nothing to fence outliers with).
 */
int cold_summarize(const struct cold_hist *h, struct cold_summary *s);

/*
 * Call fn(arg) with the stack moved so that fn's frame starts near
 * page_offset of its page (a multiple of 16 below COLD_PAGE), whatever
 * the depth it is called from.
 */
void cold_with_stack_at(size_t page_offset, void (*fn)(void *arg), void *arg);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_BENCH_COLD_H */
