/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The footprint mode: what the lines a call loads cost its caller.
 *
 * The caller owns a working set laid over exactly the L1D sets the call's
 * data lines map to, `ways` lines per set, linked as a dependent chain
 * (each load's address is the previous load's value, so misses serialize)
 * and walked in full after every call, alternately forwards and backwards.
 * With nothing between two walks the chain stays in L1D; every line the
 * call brings into those sets displaces one of the chain's, which the next
 * walk pays for at L2 latency. Walking in alternate directions keeps that
 * to one miss per displaced line under LRU and tree-PLRU: a forward walk
 * after a forward walk would evict, on its first miss, the very line it
 * reads next, and every line of the set would miss in turn.
 *
 * Each batch interleaves, in blocks of FOOTPRINT_BLOCK iterations, the
 * call and FOOTPRINT_CONTROLS controls that load 0..3 known lines of their
 * own (in the same sets) instead of calling: the controls' slope is the
 * cost of one displaced line on this CPU, their 0 is the walk alone, both
 * measured in the same batch as the call. Each iteration is three ordered
 * counter reads (cold.h's bracket): the action (call or control), then
 * the walk. A spin of 0..FOOTPRINT_DITHER-1 iterations before each breaks
 * any phase between the loop and the counter's step.
 *
 * The data lines are found at run time (footprint_probe()): the call is
 * run once with its data pages protected, each fault records the line and
 * single-steps the access with the page open (x86-64); elsewhere, or when
 * the pages cannot be protected, every line of the data's first
 * BENCH_PRESSURE_SPAN bytes is taken, and the record says so. A fault
 * gives the access's first byte, not its size: of a load that straddles
 * two lines (a 16-byte basetime at 120..135) only the first is recorded.
 *
 * Follows no kernel code: the lines it measures are those of the layouts
 * (impls/layouts/, v4.20 to v6.17), as `vdsobench layout` shows them.
 */
#ifndef VDSOBENCH_BENCH_FOOTPRINT_H
#define VDSOBENCH_BENCH_FOOTPRINT_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/cold.h"
#include "impls/common/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the data lines a probe can record (a layout's read path loads 1..4) */
#define FOOTPRINT_MAX_LINES 16
/* the L1D sets a chain may cover, and the ways of each */
#define FOOTPRINT_MAX_SETS FOOTPRINT_MAX_LINES
#define FOOTPRINT_MAX_WAYS 32
/* the controls load 0, 1, 2, 3 lines of their own */
#define FOOTPRINT_CONTROLS 4
#define FOOTPRINT_MAX_CONTROL_LINES (FOOTPRINT_CONTROLS - 1)
/* the kinds of iteration: the call, then the controls */
#define FOOTPRINT_KINDS (1 + FOOTPRINT_CONTROLS)
#define FOOTPRINT_KIND_CALL 0
/* iterations of one kind in a row */
#define FOOTPRINT_BLOCK 64
#define FOOTPRINT_ROUND (FOOTPRINT_BLOCK * FOOTPRINT_KINDS)
/* the spin's bound before each iteration, in spin iterations */
#define FOOTPRINT_DITHER 256
/* an iteration longer than this (an interrupt) is left out, in ns */
#define FOOTPRINT_FENCE_NS 2000

/* one line of the chain: the next one forwards, the next one backwards */
struct footprint_node {
	struct footprint_node *next, *prev;
};

/* the L1D's geometry and the sets the data lines map to */
struct footprint_sets {
	size_t line, sets, ways; /* sets = size / (ways * line) */
	unsigned int nr;
	unsigned int set[FOOTPRINT_MAX_SETS]; /* ascending, distinct */
};

/* what a batch's loop adds up, per kind */
struct footprint_acc {
	u64 n[FOOTPRINT_KINDS];		/* iterations kept */
	u64 dropped[FOOTPRINT_KINDS];	/* beyond the fence */
	u64 action[FOOTPRINT_KINDS];	/* ticks of the call or control */
	u64 walk[FOOTPRINT_KINDS];	/* ticks of the walk after it */
};

/* the loop's environment */
struct footprint_env {
	struct footprint_node *head; /* NULL: the mode is not set up */
	size_t chain_len;
	const volatile u8 *control[FOOTPRINT_MAX_CONTROL_LINES];
	u64 fence; /* ticks */
	u32 dither;
	struct footprint_acc *acc; /* filled at the end of a batch */
};

/*
 * The sets of the L1D of `bytes`, `ways` ways and `line`-byte lines that
 * the `nr` data addresses (byte offsets within a way, or addresses) map
 * to: 0, or -1 with errno EINVAL (geometry unknown or inconsistent) or
 * E2BIG (more sets than FOOTPRINT_MAX_SETS, or ways than
 * FOOTPRINT_MAX_WAYS).
 */
int footprint_sets_of(size_t bytes, size_t ways, size_t line,
		      const uintptr_t *addr, unsigned int nr,
		      struct footprint_sets *out);

/* the bytes of one way: line x sets (the chain buffer's stride) */
static inline size_t footprint_way_bytes(const struct footprint_sets *s)
{
	return s->line * s->sets;
}

/*
 * Lay the chain over buf (ways x way bytes, aligned to the way): for each
 * way in a fixed pseudo-random order, each set in ascending order, the
 * line at way x way_bytes + set x line. Returns its head; *len its lines.
 */
struct footprint_node *footprint_chain_build(void *buf,
					     const struct footprint_sets *s,
					     size_t *len);

/*
 * The control lines: line i at i x way_bytes + set[i % nr] x line of buf
 * (FOOTPRINT_MAX_CONTROL_LINES ways of the same geometry).
 */
void footprint_controls(const void *buf, const struct footprint_sets *s,
			const volatile u8 *out[FOOTPRINT_MAX_CONTROL_LINES]);

/*
 * Run fn(arg) once with [page, page + bytes) protected and record, in
 * ascending order without repeats, the byte offsets (multiples of line)
 * of every line fn loads or stores there: *nr of them, at most max. 0, or
 * -1 with errno ENOTSUP (no single step here), or mprotect's or
 * sigaction's errno; the pages are open again either way.
 */
int footprint_probe(void *page, size_t bytes, size_t line,
		    void (*fn)(void *), void *arg, uintptr_t *offsets,
		    unsigned int max, unsigned int *nr);

/* a batch's figures, in ns (ns_per_tick converts the accumulator's ticks) */
struct footprint_figures {
	double action_ns[FOOTPRINT_KINDS], walk_ns[FOOTPRINT_KINDS];
	double line_ns;	   /* the controls' slope: walk ns per line loaded */
	double walk_alone; /* the 0-line control's walk */
	double net_ns;	   /* action + walk of the call, net of control 0 */
	double walk_net;   /* the call's walk, net of the walk alone */
	double displaced;  /* walk_net / line_ns */
	u64 kept, dropped;
};

/*
 * From a batch's accumulator: 0, or -1 with errno ENODATA (a kind with no
 * kept iteration) or EDOM (the controls' slope is not positive: no line
 * cost to divide by).
 */
int footprint_figures_of(const struct footprint_acc *acc, double ns_per_tick,
			 struct footprint_figures *f);

/* the least-squares slope of y over x = 0..n-1 */
double footprint_slope(const double *y, unsigned int n);

/* one walk of the whole chain, forwards or backwards; the node it ends on */
static __always_inline struct footprint_node *
footprint_walk(struct footprint_node *p, size_t len, bool backwards)
{
	if (backwards)
		for (size_t i = 0; i < len; i++)
			p = p->prev;
	else
		for (size_t i = 0; i < len; i++)
			p = p->next;
	__asm__ __volatile__("" : "+r"(p));
	return p;
}

/* the k-th control: load its first k lines */
static __always_inline void footprint_control(const struct footprint_env *e,
					      unsigned int k)
{
	for (unsigned int i = 0; i < k; i++)
		(void)e->control[i][0];
}

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_BENCH_FOOTPRINT_H */
