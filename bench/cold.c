// SPDX-License-Identifier: GPL-2.0
/*
 * The cold modes' arithmetic: how many pages an eviction reads, what it
 * loads, the per-call histogram's summary, and the stack move (cold.h).
 */
#include <alloca.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "bench/cold.h"

size_t cold_pages(size_t bytes, unsigned int ways, unsigned int margin)
{
	size_t colours;

	if (!bytes)
		return 0;
	if (!ways)
		ways = bytes >= COLD_PAGE ? (unsigned int)(bytes / COLD_PAGE) : 1;
	colours = bytes / ways / COLD_PAGE;
	if (!colours)
		colours = 1;
	return (size_t)COLD_LOADS_PER_WAY * ways * colours * (margin ? margin : 1);
}

size_t cold_loads(const struct cold_evict *e, size_t *out, size_t max)
{
	size_t n = 0;

	COLD_FOR_EACH_LOAD(e, off)
	{
		if (n < max)
			out[n] = off;
		n++;
	}
	return n;
}

void cold_hist_reset(struct cold_hist *h)
{
	memset(h, 0, sizeof(*h));
}

/* the smallest tick count with more than `below` calls at or under it */
static u64 rank(const struct cold_hist *h, u64 below)
{
	u64 seen = 0;

	for (u64 i = 0; i < COLD_HIST_BINS; i++) {
		seen += h->bins[i];
		if (seen > below)
			return i;
	}
	return COLD_HIST_BINS;
}

int cold_summarize(const struct cold_hist *h, struct cold_summary *s)
{
	double sum = 0;

	memset(s, 0, sizeof(*s));
	s->calls = h->beyond;
	for (u64 i = 0; i < COLD_HIST_BINS; i++)
		s->calls += h->bins[i];
	if (!s->calls) {
		errno = ENODATA;
		return -1;
	}
	/* nearest rank, the lower one where it falls between two calls */
	s->min = rank(h, 0);
	s->p10 = rank(h, (s->calls - 1) / 10);
	s->median = rank(h, (s->calls - 1) / 2);
	s->p90 = rank(h, (s->calls * 9 - 1) / 10);
	if (s->median >= COLD_HIST_BINS) {
		errno = ERANGE;
		return -1;
	}
	s->fence = COLD_OUTLIER_FACTOR * (s->median ? s->median : 1);
	for (u64 i = 0; i < COLD_HIST_BINS && i <= s->fence; i++) {
		s->kept += h->bins[i];
		sum += (double)i * h->bins[i];
	}
	s->mean = sum / s->kept;
	return 0;
}

/* a frame of its own below the moved stack */
static noinline void call_moved(void (*fn)(void *), void *arg)
{
	fn(arg);
}

/*
 * Not instrumented by ASan: it gives an alloca red zones and rounds it to
 * 32 bytes, which moved the frame by 16 from some depths (3840, 3824,
 * 3840) and so would move the cold loop's lines under --asan.
 */
__attribute__((no_sanitize_address))
void cold_with_stack_at(size_t page_offset, void (*fn)(void *arg), void *arg)
{
	uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
	/*
	 * frame and page_offset are multiples of 16, so pad + 16 is, and
	 * alloca moves the stack by exactly that much: where call_moved's
	 * frame starts does not depend on where this one began.
	 */
	size_t pad = (frame - page_offset) & (COLD_PAGE - 1);
	volatile u8 *p = alloca(pad + 16);

	p[0] = 0;
	call_moved(fn, arg);
}
