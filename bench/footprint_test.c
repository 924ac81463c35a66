// SPDX-License-Identifier: GPL-2.0
/*
 * The footprint mode's mechanics, nothing timed: the sets of made-up data
 * addresses, the chain's sets, lines and order (both directions), the
 * controls' lines, that walking in alternate directions costs one miss per
 * displaced line in a simulated LRU set (and that walking one way does
 * not), the probe of a page read at known lines, a batch's figures and the
 * slope from made-up sums.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/footprint.h"
#include "testing/tap.h"

/* ---- sets ---- */

static void test_sets(void)
{
	/* x86_gtod_ts_multshift's MONOTONIC: 48..71 straddles lines 0 and 1 */
	uintptr_t mono[] = {0x1000 + 48, 0x1000 + 64};
	uintptr_t dup[] = {128, 64 + 4096, 130, 64};
	struct footprint_sets s;

	tap_ok(!footprint_sets_of(49152, 12, 64, mono, 2, &s) && s.sets == 64 &&
		       s.nr == 2 && s.set[0] == 0 && s.set[1] == 1,
	       "48 KiB 12-way: 64 sets; lines 0 and 1 of a page: sets 0, 1");
	tap_ok(!footprint_sets_of(32768, 8, 64, dup, 4, &s) && s.nr == 2 &&
		       s.set[0] == 1 && s.set[1] == 2,
	       "repeats and other pages at the same offset: one set each, "
	       "ascending (%u: %u %u)",
	       s.nr, s.set[0], s.set[1]);
	errno = 0;
	tap_ok(footprint_sets_of(0, 12, 64, mono, 2, &s) && errno == EINVAL,
	       "an unknown L1D size: EINVAL");
	errno = 0;
	tap_ok(footprint_sets_of(49152, 7, 64, mono, 2, &s) && errno == EINVAL,
	       "a size that is not ways x line x sets: EINVAL");
	errno = 0;
	tap_ok(footprint_sets_of(1 << 20, 64, 64, mono, 2, &s) &&
		       errno == E2BIG,
	       "more ways than FOOTPRINT_MAX_WAYS: E2BIG");
}

/* ---- the chain ---- */

static void test_chain(void)
{
	uintptr_t data[] = {0, 64, 640};
	struct footprint_sets s;
	struct footprint_node *head, *p;
	unsigned int per_set[64] = {0}, per_way[12] = {0};
	bool in_sets = true, prev_ok = true, distinct = true;
	size_t len, way = 4096, n = 0;
	u8 *buf = aligned_alloc(way, 12 * way);
	static u8 seen[12 * 4096 / 64];

	footprint_sets_of(49152, 12, 64, data, 3, &s);
	head = footprint_chain_build(buf, &s, &len);
	tap_ok(len == 36, "3 sets x 12 ways: 36 lines (%zu)", len);
	p = head;
	do {
		uintptr_t off = (uintptr_t)((u8 *)p - buf);
		unsigned int set = (unsigned int)(off / 64 % 64);

		in_sets &= set == 0 || set == 1 || set == 10;
		in_sets &= off % 64 == 0;
		per_set[set]++;
		per_way[off / way]++;
		distinct &= !seen[off / 64];
		seen[off / 64] = 1;
		prev_ok &= p->next->prev == p;
		p = p->next;
		n++;
	} while (p != head && n <= len);
	tap_ok(n == len && in_sets && distinct,
	       "forwards: every line once, each in one of the data's sets, "
	       "back to the head");
	tap_ok(per_set[0] == 12 && per_set[1] == 12 && per_set[10] == 12,
	       "ways lines in each set (%u %u %u)", per_set[0], per_set[1],
	       per_set[10]);
	n = 0;
	for (unsigned int w = 0; w < 12; w++)
		n += per_way[w] == 3;
	tap_ok(n == 12, "each way's page holds one line of each set");
	tap_ok(prev_ok, "backwards is forwards reversed");
	tap_ok(footprint_walk(head, len, false) == head &&
		       footprint_walk(head, len, true) == head,
	       "a whole walk either way ends where it began");
	/* the ways are not in address order: no constant stride */
	p = head;
	n = 0;
	for (unsigned int i = 0; i + 1 < 12; i++) {
		struct footprint_node *q = p;

		for (unsigned int k = 0; k < 3; k++)
			q = q->next;
		n += (u8 *)q - (u8 *)p == (ptrdiff_t)way;
		p = q;
	}
	tap_ok(n < 11, "the ways in shuffled order (%zu of 11 steps +1 page)",
	       n);

	const volatile u8 *ctl[FOOTPRINT_MAX_CONTROL_LINES];

	footprint_controls(buf, &s, ctl);
	tap_ok(ctl[0] == buf + 0 && ctl[1] == buf + way + 64 &&
		       ctl[2] == buf + 2 * way + 640,
	       "control lines: one per way page, in the data's sets in turn");
	free(buf);
}

/* ---- a simulated LRU set ---- */

struct lru {
	unsigned int ways, n;
	long line[FOOTPRINT_MAX_WAYS]; /* [0] most recent */
};

static bool lru_access(struct lru *c, long line)
{
	unsigned int i;
	bool hit = false;

	for (i = 0; i < c->n; i++)
		if (c->line[i] == line) {
			hit = true;
			break;
		}
	if (!hit)
		i = c->n < c->ways ? c->n++ : c->ways - 1;
	memmove(&c->line[1], &c->line[0], i * sizeof(long));
	c->line[0] = line;
	return hit;
}

/* misses of the walk after `intruders` new lines, in steady state */
static unsigned int lru_walk_misses(unsigned int ways, unsigned int intruders,
				    bool alternate)
{
	struct lru c = {.ways = ways};
	unsigned int misses = 0;
	long fresh = 1000;

	for (int round = 0; round < 20; round++) {
		bool back = alternate && round % 2;

		misses = 0;
		for (unsigned int k = 0; k < intruders; k++)
			lru_access(&c, fresh++);
		for (unsigned int i = 0; i < ways; i++)
			misses += !lru_access(&c, back ? ways - 1 - i : i);
	}
	return misses;
}

static void test_lru(void)
{
	bool ok = true;

	for (unsigned int k = 0; k <= 3; k++)
		ok &= lru_walk_misses(12, k, true) == k;
	tap_ok(ok, "LRU, 12 ways, alternate directions: k new lines, k misses "
		   "(0..3)");
	tap_ok(lru_walk_misses(12, 1, false) == 12,
	       "one direction only: one new line costs the whole set (%u)",
	       lru_walk_misses(12, 1, false));
}

/* ---- the probe ---- */

static u8 probed[2 * 4096] __attribute__((aligned(4096)));

static void reader(void *arg)
{
	volatile u8 *p = arg;

	(void)p[72];   /* line 1 */
	(void)p[64];   /* line 1 again */
	(void)p[1000]; /* line 15 */
	p[4096 + 8] = 1; /* the second page's line 0: a store */
	(void)p[3];    /* line 0 */
}

static void test_probe(void)
{
	uintptr_t off[FOOTPRINT_MAX_LINES];
	unsigned int nr = 0;
	int ret = footprint_probe(probed, sizeof(probed), 64, reader, probed,
				  off, FOOTPRINT_MAX_LINES, &nr);

#if defined(__x86_64__)
	tap_ok(!ret && nr == 4 && off[0] == 0 && off[1] == 64 &&
		       off[2] == 960 && off[3] == 4096,
	       "the probe: lines 0, 64, 960 and 4096, ascending, once each "
	       "(%d, %u)",
	       ret, nr);
	tap_ok(probed[4096 + 8] == 1, "the store went through");
	probed[5] = 7;
	tap_ok(probed[5] == 7, "the pages are open again afterwards");
	nr = 0;
	ret = footprint_probe(probed, sizeof(probed), 64, reader, probed, off,
			      2, &nr);
	tap_ok(ret && errno == E2BIG && nr == 2,
	       "more lines than it may record: E2BIG");
#else
	tap_ok(ret && errno == ENOTSUP, "no single step here: ENOTSUP");
#endif
	errno = 0;
	tap_ok(footprint_probe(probed + 64, 4096, 64, reader, probed, off, 4,
			       &nr) &&
		       errno == EINVAL,
	       "a start that is not a page: EINVAL");
}

/* ---- the figures ---- */

static void test_figures(void)
{
	/* made-up sums, 1 ns a tick: walk 40 + 5 ns a line, call 2 lines */
	struct footprint_acc acc = {
		.n = {10, 10, 10, 10, 10},
		.action = {300, 100, 120, 140, 160},
		.walk = {500, 400, 450, 500, 550},
	};
	double y[] = {1, 3, 5, 7};
	struct footprint_figures f;

	memset(&f, 0, sizeof(f));
	tap_ok(fabs(footprint_slope(y, 4) - 2) < 1e-12, "slope of 1,3,5,7: 2");
	int ret = footprint_figures_of(&acc, 1.0, &f);

	tap_ok(!ret && fabs(f.line_ns - 5) < 1e-9 &&
		       fabs(f.walk_alone - 40) < 1e-9 &&
		       fabs(f.walk_net - 10) < 1e-9 &&
		       fabs(f.displaced - 2) < 1e-9 &&
		       fabs(f.net_ns - (30 + 50 - 10 - 40)) < 1e-9,
	       "line 5 ns, walk alone 40, call's walk +10: 2 lines; net 30 ns "
	       "(%g %g %g %g)",
	       f.line_ns, f.walk_net, f.displaced, f.net_ns);
	tap_ok(!footprint_figures_of(&acc, 0.5, &f) &&
		       fabs(f.line_ns - 2.5) < 1e-9 &&
		       fabs(f.displaced - 2) < 1e-9,
	       "ticks to ns scales the costs, not the lines");
	acc.n[3] = 0;
	errno = 0;
	tap_ok(footprint_figures_of(&acc, 1.0, &f) && errno == ENODATA,
	       "a kind with nothing kept: ENODATA");
	acc.n[3] = 10;
	acc.walk[2] = acc.walk[3] = acc.walk[4] = 400;
	errno = 0;
	tap_ok(footprint_figures_of(&acc, 1.0, &f) && errno == EDOM,
	       "controls that cost nothing per line: EDOM");
}

int main(void)
{
	test_sets();
	test_chain();
	test_lru();
	test_probe();
	test_figures();
	return tap_done();
}
