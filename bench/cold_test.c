// SPDX-License-Identifier: GPL-2.0
/*
 * The cold modes' mechanics, with nothing timed and nothing read from this
 * machine's caches: the pages an eviction reads for given caches, the loads
 * it makes (the same loop the harness runs), that those loads evict the
 * data's lines from simulated cache sets under LRU, tree pseudo-LRU and
 * bit pseudo-LRU (and that half as many do not, under bit-PLRU), the
 * per-call histogram's summary on made-up counts, the dither's sequence,
 * the stack move, the mode
 * names and what they apply to, and hwloc's L2 from a described topology.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cold.h"
#include "bench/pin.h"
#include "bench/subjects.h"
#include "testing/tap.h"

/* ---- the number of pages ---- */

static void test_pages(void)
{
	tap_ok(cold_pages(32768, 8, 1) == 16,
	       "32 KiB 8-way L1D (Zen 3/4): 2 x 8 ways = 16 pages (%zu)",
	       cold_pages(32768, 8, 1));
	tap_ok(cold_pages(49152, 12, 1) == 24,
	       "48 KiB 12-way L1D (Zen 5, Golden Cove): 24 pages (%zu)",
	       cold_pages(49152, 12, 1));
	tap_ok(cold_pages(32768, 0, 1) == 16,
	       "ways unknown: one page per way, 8 for 32 KiB: 16 pages (%zu)",
	       cold_pages(32768, 0, 1));
	tap_ok(cold_pages(65536, 4, 1) == 32,
	       "64 KiB 4-way (16 KiB ways, 4 colours of a page): 2 x 4 x 4 "
	       "= 32 pages (%zu)",
	       cold_pages(65536, 4, 1));
	tap_ok(cold_pages(1 << 20, 8, COLD_L2_MARGIN) == 2048,
	       "1 MiB 8-way L2 (Zen 4): 2 x 8 ways x 32 colours x margin 4 "
	       "= 2048 pages (%zu)",
	       cold_pages(1 << 20, 8, COLD_L2_MARGIN));
	tap_ok(cold_pages(0, 8, 1) == 0, "a cache of unknown size: no pages");
}

/* ---- what an eviction loads ---- */

static void test_loads(void)
{
	const struct cold_evict e = {.pages = 16, .span = 1024};
	size_t offs[512], n = cold_loads(&e, offs, 512);
	unsigned int per_line[1024 / COLD_LINE] = {0};
	bool inside = true, aligned = true;

	tap_ok(n == 16 * 1024 / COLD_LINE,
	       "16 pages x 1 KiB span: 256 loads (%zu)", n);
	for (size_t i = 0; i < n && i < 512; i++) {
		size_t in_page = offs[i] % COLD_PAGE;

		inside &= offs[i] < 16 * COLD_PAGE && in_page < 1024;
		aligned &= offs[i] % COLD_LINE == 0;
		if (in_page < 1024)
			per_line[in_page / COLD_LINE]++;
	}
	tap_ok(inside && aligned,
	       "every load is a line of the span in one of the pages");
	{
		bool each = true;

		for (size_t l = 0; l < 1024 / COLD_LINE; l++)
			each &= per_line[l] == 16;
		tap_ok(each, "each line of the span is loaded in every page: "
			     "16 loads into each of its sets");
	}
	{
		const struct cold_evict none = {.span = 1024};

		tap_ok(cold_loads(&none, offs, 512) == 0,
		       "no pages: no loads");
	}
}

/* ---- simulated cache sets ---- */

enum policy { LRU, TREE_PLRU, BIT_PLRU };
static const char *const policy_names[] = {"LRU", "tree-PLRU", "bit-PLRU"};

#define MAX_SETS 64
#define MAX_WAYS 16

struct sim_cache {
	enum policy policy;
	unsigned int sets, ways;
	uintptr_t tag[MAX_SETS][MAX_WAYS];
	bool valid[MAX_SETS][MAX_WAYS];
	unsigned long age[MAX_SETS][MAX_WAYS]; /* LRU: last use */
	bool bit[MAX_SETS][MAX_WAYS];	       /* bit-PLRU: MRU bits */
	bool tree[MAX_SETS][MAX_WAYS];	       /* tree-PLRU: ways - 1 nodes */
	unsigned long clock;
};

/* tree-PLRU: point every node on the way's path away from it */
static void tree_touch(struct sim_cache *c, unsigned int set, unsigned int w)
{
	unsigned int node = 0, lo = 0, hi = c->ways;

	while (hi - lo > 1) {
		unsigned int mid = (lo + hi) / 2;
		bool right = w >= mid;

		c->tree[set][node] = !right; /* next victim: the other side */
		node = 2 * node + 1 + right;
		if (right)
			lo = mid;
		else
			hi = mid;
	}
}

static unsigned int tree_victim(const struct sim_cache *c, unsigned int set)
{
	unsigned int node = 0, lo = 0, hi = c->ways;

	while (hi - lo > 1) {
		unsigned int mid = (lo + hi) / 2;
		bool right = c->tree[set][node];

		node = 2 * node + 1 + right;
		if (right)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static void touch(struct sim_cache *c, unsigned int set, unsigned int w)
{
	c->age[set][w] = ++c->clock;
	if (c->policy == TREE_PLRU)
		tree_touch(c, set, w);
	if (c->policy == BIT_PLRU) {
		bool all = true;

		c->bit[set][w] = true;
		for (unsigned int i = 0; i < c->ways; i++)
			all &= c->bit[set][i];
		if (all)
			for (unsigned int i = 0; i < c->ways; i++)
				c->bit[set][i] = i == w;
	}
}

static unsigned int victim(const struct sim_cache *c, unsigned int set)
{
	unsigned int v = 0;

	for (unsigned int w = 0; w < c->ways; w++)
		if (!c->valid[set][w])
			return w;
	if (c->policy == TREE_PLRU)
		return tree_victim(c, set);
	for (unsigned int w = 0; w < c->ways; w++) {
		if (c->policy == BIT_PLRU && !c->bit[set][w])
			return w;
		if (c->age[set][w] < c->age[set][v])
			v = w;
	}
	return v;
}

static unsigned int set_of(const struct sim_cache *c, uintptr_t addr)
{
	return (unsigned int)((addr / COLD_LINE) % c->sets);
}

/* a load; the way it hit or filled */
static unsigned int load(struct sim_cache *c, uintptr_t addr)
{
	unsigned int set = set_of(c, addr), w;
	uintptr_t line = addr / COLD_LINE;

	for (w = 0; w < c->ways; w++)
		if (c->valid[set][w] && c->tag[set][w] == line)
			break;
	if (w == c->ways) {
		w = victim(c, set);
		c->tag[set][w] = line;
		c->valid[set][w] = true;
	}
	touch(c, set, w);
	return w;
}

static bool cached(const struct sim_cache *c, uintptr_t addr)
{
	unsigned int set = set_of(c, addr);

	for (unsigned int w = 0; w < c->ways; w++)
		if (c->valid[set][w] && c->tag[set][w] == addr / COLD_LINE)
			return true;
	return false;
}

/*
 * A VIPT L1D of `ways` 4 KiB ways. Each set is filled with other lines so
 * that the data's line lands in way `pos` (and, for bit-PLRU, is the
 * last one touched: its bit set, which makes it the hardest to evict);
 * then the eviction's loads. Does every line of the data (its first 496
 * bytes, the largest layout's) leave the cache?
 */
static bool evicts(enum policy policy, unsigned int ways, size_t pages,
		   unsigned int pos)
{
	static struct sim_cache c;
	const uintptr_t data = 0x40000000, junk = 0x50000000;
	const uintptr_t buf = 0x60000000;
	const struct cold_evict e = {.pages = pages, .span = 1024};
	size_t offs[MAX_WAYS * 4 * 16];
	size_t n = cold_loads(&e, offs, ARRAY_SIZE(offs));
	bool gone = true;

	memset(&c, 0, sizeof(c));
	c.policy = policy;
	c.ways = ways;
	c.sets = COLD_PAGE / COLD_LINE;
	for (uintptr_t off = 0; off < 496; off += COLD_LINE) {
		/* junk into the ways before pos, the data, junk after */
		for (unsigned int j = 0; j < pos; j++)
			load(&c, junk + j * COLD_PAGE + off);
		load(&c, data + off);
		for (unsigned int j = pos; j + 1 < ways; j++)
			load(&c, junk + j * COLD_PAGE + off);
		load(&c, data + off); /* the call just read it */
	}
	for (size_t i = 0; i < n && i < ARRAY_SIZE(offs); i++)
		load(&c, buf + offs[i]);
	for (uintptr_t off = 0; off < 496; off += COLD_LINE)
		gone &= !cached(&c, data + off);
	return gone;
}

static void test_eviction(void)
{
	static const unsigned int wayss[] = {4, 8, 12, 16};

	for (unsigned int p = LRU; p <= BIT_PLRU; p++) {
		for (unsigned int k = 0; k < ARRAY_SIZE(wayss); k++) {
			unsigned int ways = wayss[k];
			size_t pages = cold_pages(ways * COLD_PAGE, ways, 1);
			bool all = true;

			/* tree-PLRU needs a power of two of ways */
			if (p == TREE_PLRU && (ways & (ways - 1)))
				continue;
			for (unsigned int pos = 0; pos < ways; pos++)
				all &= evicts(p, ways, pages, pos);
			tap_ok(all,
			       "%s, %u ways: %zu loads per set evict the data's "
			       "lines wherever they sat",
			       policy_names[p], ways, pages);
		}
	}
	{
		bool all = true;

		for (unsigned int pos = 0; pos < 8; pos++)
			all &= evicts(LRU, 8, 8, pos) &&
			       evicts(TREE_PLRU, 8, 8, pos);
		tap_ok(all, "LRU and tree-PLRU alone would let go after 8 "
			    "loads in 8 ways");
	}
	{
		bool kept = false;

		for (unsigned int pos = 0; pos < 8; pos++)
			kept |= !evicts(BIT_PLRU, 8, 8, pos);
		tap_ok(kept, "bit-PLRU can keep a recently used line through 8 "
			     "loads in 8 ways: one load per way is not enough");
	}
	tap_ok(!evicts(LRU, 8, 7, 0),
	       "fewer loads than ways leave the data in an LRU set (the "
	       "simulation can fail)");
}

/* ---- the per-call histogram ---- */

static struct cold_hist h;

static void test_summary(void)
{
	struct cold_summary s;
	int rc;

	cold_hist_reset(&h);
	errno = 0;
	tap_ok(cold_summarize(&h, &s) == -1 && errno == ENODATA,
	       "no calls: no summary (ENODATA)");

	/* a counter in steps of 26 ticks: a quarter of the calls read 52 */
	h.bins[52] = 250;
	h.bins[78] = 750;
	rc = cold_summarize(&h, &s);
	tap_ok(!rc && s.calls == 1000 && s.kept == 1000 &&
		       s.mean == 71.5 && s.median == 78 && s.min == 52 &&
		       s.p10 == 52 && s.p90 == 78 && s.fence == 4 * 78,
	       "steps of 26: the mean resolves less than a step (71.5), "
	       "the median cannot (78)");

	/* interrupts: far beyond the fence, and beyond the histogram */
	h.bins[5000] = 3;
	h.beyond = 2;
	rc = cold_summarize(&h, &s);
	tap_ok(!rc && s.calls == 1005 && s.kept == 1000 &&
		       s.mean == 71.5,
	       "calls beyond 4 x the median (an interrupt) are left out of "
	       "the mean, counted in the calls (%llu of %llu kept)",
	       (unsigned long long)s.kept, (unsigned long long)s.calls);

	h.bins[300] = 10; /* within the fence: a slow call, kept */
	rc = cold_summarize(&h, &s);
	tap_ok(!rc && s.kept == 1010 &&
		       s.mean > 71.5 && s.mean < 75,
	       "a slow call within 4 x the median is kept (mean %.2f)",
	       s.mean);

	cold_hist_reset(&h);
	h.bins[100] = 1;
	h.beyond = 5;
	errno = 0;
	tap_ok(cold_summarize(&h, &s) == -1 && errno == ERANGE,
	       "most calls beyond the histogram: no median to fence with "
	       "(ERANGE)");

	cold_hist_reset(&h);
	cold_record(&h, 40);
	cold_record(&h, 40);
	cold_record(&h, COLD_HIST_BINS + 7);
	tap_ok(h.bins[40] == 2 && h.beyond == 1,
	       "cold_record counts a call in its tick's bin, or beyond");
}

/* ---- the dither ---- */

static void test_dither(void)
{
	unsigned int bins[8] = {0}, low = 1000000, high = 0;
	u32 a = COLD_DITHER_SEED, b = COLD_DITHER_SEED;
	bool same = true;

	for (int i = 0; i < 80000; i++) {
		u32 x = cold_random(&a);

		same &= x == cold_random(&b);
		bins[(x % COLD_DITHER) * 8 / COLD_DITHER]++;
	}
	for (int i = 0; i < 8; i++) {
		low = bins[i] < low ? bins[i] : low;
		high = bins[i] > high ? bins[i] : high;
	}
	tap_ok(same, "the dither's sequence is the same in every batch");
	tap_ok(low > 9000 && high < 11000,
	       "its spins spread evenly over 0..%d (eighths: %u to %u of "
	       "80000)",
	       COLD_DITHER - 1, low, high);
}

/* ---- the stack ---- */

static uintptr_t seen_frame;

static void record_frame(void *arg)
{
	seen_frame = (uintptr_t)__builtin_frame_address(0);
	*(int *)arg += 1;
}

static noinline void deeper(int depth, int *calls)
{
	volatile char pad[200];

	pad[0] = (char)depth;
	if (depth)
		deeper(depth - 1, calls);
	else
		cold_with_stack_at(COLD_STACK_OFFSET, record_frame, calls);
	(void)pad[0];
}

static void test_stack(void)
{
	uintptr_t where[3];
	int calls = 0;

	for (int d = 0; d < 3; d++) {
		deeper(d * 3, &calls);
		where[d] = seen_frame % COLD_PAGE;
	}
	tap_ok(calls == 3 && where[0] == where[1] && where[1] == where[2],
	       "the moved frame lies at the same page offset from any depth "
	       "(%lu, %lu, %lu)",
	       (unsigned long)where[0], (unsigned long)where[1],
	       (unsigned long)where[2]);
	tap_ok(where[0] <= COLD_STACK_OFFSET &&
		       where[0] + 512 > COLD_STACK_OFFSET &&
		       where[0] > 2 * 1024,
	       "just below COLD_STACK_OFFSET, far above the evicted span "
	       "(%lu)",
	       (unsigned long)where[0]);
}

/* ---- the modes ---- */

static const struct subject *find(const char *name)
{
	for (unsigned int i = 0; i < subjects_nr(); i++)
		if (!strcmp(subject_at(i)->name, name))
			return subject_at(i);
	return NULL;
}

static void test_modes(void)
{
	struct selection sel;
	char err[512];
	const struct subject *empty, *sys;
	const struct clock_choice *mono = bench_clock_find("monotonic");

	subjects_init("no vDSO in this test", "no vDSO in this test");
	empty = find("floor/empty");
	sys = find("sys/syscall");
	tap_ok(!strcmp(bench_modes[MODE_COLD].name, "cold") &&
		       !strcmp(bench_modes[MODE_COLD_L2].name, "cold-l2") &&
		       !strcmp(bench_modes[MODE_WARM].name, "warm") &&
		       bench_modes[MODE_COLD].body == BENCH_BODY_COLD &&
		       bench_modes[MODE_COLD_L2].body == BENCH_BODY_COLD &&
		       bench_modes[MODE_WARM].body == BENCH_BODY_COLD,
	       "the modes are named cold, cold-l2 and warm, and run the cold "
	       "loop");
	tap_ok(bench_mode_is_cold(MODE_COLD) &&
		       bench_mode_is_cold(MODE_COLD_L2) &&
		       bench_mode_is_cold(MODE_WARM) &&
		       !bench_mode_is_cold(MODE_PRESSURE) &&
		       !bench_mode_is_cold(MODE_HOT),
	       "cold, cold-l2 and warm time each call alone; pressure and "
	       "hot do not");
	tap_ok(!selection_parse(&sel, "floor/empty", "monotonic",
				"cold,cold-l2,warm", err, sizeof(err)) &&
		       sel.mode[MODE_COLD] && sel.mode[MODE_COLD_L2] &&
		       sel.mode[MODE_WARM],
	       "--modes cold,cold-l2,warm parses");
	tap_ok(selection_parse(&sel, NULL, NULL, "cold-l3", err,
			       sizeof(err)) == -1 &&
		       strstr(err, "cold-l3") && strstr(err, "cold-l2"),
	       "an unknown mode names itself and the valid ones: %s", err);
	tap_ok(empty && sys && mono &&
		       subject_applies(empty, &bench_clock_none, MODE_COLD) &&
		       subject_applies(empty, &bench_clock_none,
				       MODE_COLD_L2) &&
		       subject_applies(empty, &bench_clock_none, MODE_WARM) &&
		       subject_applies(sys, mono, MODE_COLD) &&
		       !subject_applies(empty, mono, MODE_COLD),
	       "floor/empty (the bracket) and the system references run cold");
	tap_ok(empty && empty->loops->floor[BENCH_BODY_COLD] != NULL &&
		       sys->loops->op[BENCH_OP_GETTIME][BENCH_BODY_COLD] !=
			       NULL,
	       "every subject has a cold loop");
	tap_ok(empty && sys && mono &&
		       !subject_applies(empty, &bench_clock_none,
					MODE_FOOTPRINT) &&
		       subject_applies(sys, mono, MODE_FOOTPRINT) &&
		       sys->loops->op[BENCH_OP_GETTIME][BENCH_BODY_FOOTPRINT] !=
			       NULL &&
		       !strcmp(bench_modes[MODE_FOOTPRINT].name, "footprint"),
	       "footprint: every call has its loop; floors (no call) do not "
	       "run it");
}

/* ---- hwloc's L2 ---- */

static void test_l2(void)
{
	struct pin_topology *t;

#ifdef VDSOBENCH_HWLOC_SYSFS
	tap_ok(true, "hwloc's L2 of a described topology # SKIP the i386 "
		     "build's pin is over sysfs, which loads no description");
	return;
#endif
	if (pin_topology_init_from(
		    &t, "pack:1 l2:1(size=1MiB) l1d:2(size=32KiB) core:1 pu:1")) {
		tap_ok(false, "a described topology loads: %s",
		       strerror(errno));
		return;
	}
	tap_ok(pin_l2_size(t, 0) == 1 << 20 && pin_l1d_size(t, 0) == 32768,
	       "hwloc's L2 (%zu) and L1D (%zu) of a described topology",
	       pin_l2_size(t, 0), pin_l1d_size(t, 0));
	pin_topology_destroy(t);
	if (pin_topology_init_from(&t, "pack:1 l1d:1(size=32KiB) core:1 pu:1"))
		return;
	tap_ok(pin_l2_size(t, 0) == 0 && pin_l2_ways(t, 0) == 0,
	       "no L2 described: 0 (cold-l2 is then refused)");
	pin_topology_destroy(t);
}

int main(void)
{
	test_pages();
	test_loads();
	test_eviction();
	test_summary();
	test_dither();
	test_stack();
	test_modes();
	test_l2();
	return tap_done();
}
