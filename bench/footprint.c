// SPDX-License-Identifier: GPL-2.0
/*
 * The footprint mode's mechanics (footprint.h): the sets, the chain and
 * the controls, the probe of the lines a call touches, a batch's figures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "bench/footprint.h"

int footprint_sets_of(size_t bytes, size_t ways, size_t line,
		      const uintptr_t *addr, unsigned int nr,
		      struct footprint_sets *out)
{
	memset(out, 0, sizeof(*out));
	if (!bytes || !ways || !line || bytes % (ways * line)) {
		errno = EINVAL;
		return -1;
	}
	if (ways > FOOTPRINT_MAX_WAYS) {
		errno = E2BIG;
		return -1;
	}
	out->line = line;
	out->ways = ways;
	out->sets = bytes / (ways * line);
	for (unsigned int i = 0; i < nr; i++) {
		unsigned int set = (unsigned int)((addr[i] / line) % out->sets);
		unsigned int j = 0;

		while (j < out->nr && out->set[j] < set)
			j++;
		if (j < out->nr && out->set[j] == set)
			continue;
		if (out->nr == FOOTPRINT_MAX_SETS) {
			errno = E2BIG;
			return -1;
		}
		memmove(&out->set[j + 1], &out->set[j],
			(out->nr - j) * sizeof(out->set[0]));
		out->set[j] = set;
		out->nr++;
	}
	return 0;
}

/*
 * The ways in a fixed pseudo-random order (a Fisher-Yates shuffle from
 * COLD_DITHER_SEED): consecutive lines of a set are never a constant
 * stride apart, which a stride prefetcher would extend past the chain.
 */
static void way_order(unsigned int *order, size_t ways)
{
	u32 state = COLD_DITHER_SEED;

	for (size_t i = 0; i < ways; i++)
		order[i] = (unsigned int)i;
	for (size_t i = ways; i > 1; i--) {
		size_t j = cold_random(&state) % i;
		unsigned int t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
}

struct footprint_node *footprint_chain_build(void *buf,
					     const struct footprint_sets *s,
					     size_t *len)
{
	unsigned int order[FOOTPRINT_MAX_WAYS];
	struct footprint_node *head = NULL, *last = NULL;
	size_t way = footprint_way_bytes(s);

	*len = 0;
	way_order(order, s->ways);
	for (size_t w = 0; w < s->ways; w++) {
		for (unsigned int i = 0; i < s->nr; i++) {
			struct footprint_node *n =
				(struct footprint_node *)((u8 *)buf +
							  order[w] * way +
							  s->set[i] * s->line);

			if (!head)
				head = n;
			else
				last->next = n;
			n->prev = last;
			last = n;
			++*len;
		}
	}
	if (head) {
		last->next = head;
		head->prev = last;
	}
	return head;
}

void footprint_controls(const void *buf, const struct footprint_sets *s,
			const volatile u8 *out[FOOTPRINT_MAX_CONTROL_LINES])
{
	for (unsigned int i = 0; i < FOOTPRINT_MAX_CONTROL_LINES; i++)
		out[i] = s->nr ? (const volatile u8 *)buf +
					 i * footprint_way_bytes(s) +
					 s->set[i % s->nr] * s->line
			       : NULL;
}

/* ---- the probe ---- */

#if defined(__x86_64__)
#define FOOTPRINT_TF 0x100UL /* EFLAGS.TF: trap after the next instruction */

static struct {
	u8 *page;
	size_t bytes, line;
	int prot;
	uintptr_t *offsets;
	unsigned int max, nr;
	bool overflow;
} probe;

static void probe_segv(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	u8 *a = si->si_addr;
	uintptr_t off, j = 0;

	if (a < probe.page || a >= probe.page + probe.bytes) {
		/* not ours: fault again with the default action */
		signal(sig, SIG_DFL);
		return;
	}
	off = (uintptr_t)(a - probe.page) / probe.line * probe.line;
	while (j < probe.nr && probe.offsets[j] < off)
		j++;
	if (j == probe.nr || probe.offsets[j] != off) {
		if (probe.nr == probe.max) {
			probe.overflow = true;
		} else {
			memmove(&probe.offsets[j + 1], &probe.offsets[j],
				(probe.nr - j) * sizeof(*probe.offsets));
			probe.offsets[j] = off;
			probe.nr++;
		}
	}
	mprotect(probe.page, probe.bytes, probe.prot);
	uc->uc_mcontext.gregs[REG_EFL] |= FOOTPRINT_TF;
}

static void probe_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	uc->uc_mcontext.gregs[REG_EFL] &= ~FOOTPRINT_TF;
	mprotect(probe.page, probe.bytes, PROT_NONE);
}

/* the protection of the mapping holding page, from /proc/self/maps */
static int page_prot(const void *page, int *prot)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3)
			continue;
		if ((uintptr_t)page < lo || (uintptr_t)page >= hi)
			continue;
		*prot = (perms[0] == 'r' ? PROT_READ : 0) |
			(perms[1] == 'w' ? PROT_WRITE : 0) |
			(perms[2] == 'x' ? PROT_EXEC : 0);
		ret = 0;
		break;
	}
	fclose(f);
	if (ret)
		errno = ENOENT;
	return ret;
}

int footprint_probe(void *page, size_t bytes, size_t line,
		    void (*fn)(void *), void *arg, uintptr_t *offsets,
		    unsigned int max, unsigned int *nr)
{
	struct sigaction sa = {}, old_segv, old_trap;
	int err = 0;

	*nr = 0;
	if (!line || (uintptr_t)page % 4096 || !bytes || bytes % 4096) {
		errno = EINVAL;
		return -1;
	}
	probe.page = page;
	probe.bytes = bytes;
	probe.line = line;
	probe.offsets = offsets;
	probe.max = max;
	probe.nr = 0;
	probe.overflow = false;
	if (page_prot(page, &probe.prot))
		return -1;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = probe_segv;
	if (sigaction(SIGSEGV, &sa, &old_segv))
		return -1;
	sa.sa_sigaction = probe_trap;
	if (sigaction(SIGTRAP, &sa, &old_trap)) {
		err = errno;
		sigaction(SIGSEGV, &old_segv, NULL);
		errno = err;
		return -1;
	}
	if (mprotect(page, bytes, PROT_NONE)) {
		err = errno;
	} else {
		fn(arg);
		mprotect(page, bytes, probe.prot);
	}
	sigaction(SIGTRAP, &old_trap, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	*nr = probe.nr;
	if (!err && probe.overflow)
		err = E2BIG;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
#else
int footprint_probe(void *page, size_t bytes, size_t line,
		    void (*fn)(void *), void *arg, uintptr_t *offsets,
		    unsigned int max, unsigned int *nr)
{
	(void)fn, (void)arg, (void)offsets, (void)max;
	*nr = 0;
	if (!line || (uintptr_t)page % 4096 || !bytes || bytes % 4096)
		errno = EINVAL; /* bad arguments first, as on x86-64 */
	else
		errno = ENOTSUP; /* no single step from userspace */
	return -1;
}
#endif

/* ---- a batch's figures ---- */

double footprint_slope(const double *y, unsigned int n)
{
	double mx = (n - 1) / 2.0, my = 0, sxy = 0, sxx = 0;

	for (unsigned int i = 0; i < n; i++)
		my += y[i] / n;
	for (unsigned int i = 0; i < n; i++) {
		sxy += (i - mx) * (y[i] - my);
		sxx += (i - mx) * (i - mx);
	}
	return sxx ? sxy / sxx : 0;
}

int footprint_figures_of(const struct footprint_acc *acc, double ns_per_tick,
			 struct footprint_figures *f)
{
	const unsigned int c0 = FOOTPRINT_KIND_CALL + 1;

	memset(f, 0, sizeof(*f));
	for (unsigned int k = 0; k < FOOTPRINT_KINDS; k++) {
		f->kept += acc->n[k];
		f->dropped += acc->dropped[k];
		if (!acc->n[k]) {
			errno = ENODATA;
			return -1;
		}
		f->action_ns[k] = acc->action[k] * ns_per_tick / acc->n[k];
		f->walk_ns[k] = acc->walk[k] * ns_per_tick / acc->n[k];
	}
	f->line_ns = footprint_slope(&f->walk_ns[c0], FOOTPRINT_CONTROLS);
	f->walk_alone = f->walk_ns[c0];
	f->net_ns = f->action_ns[FOOTPRINT_KIND_CALL] +
		    f->walk_ns[FOOTPRINT_KIND_CALL] - f->action_ns[c0] -
		    f->walk_ns[c0];
	f->walk_net = f->walk_ns[FOOTPRINT_KIND_CALL] - f->walk_ns[c0];
	if (!(f->line_ns > 0)) {
		errno = EDOM;
		return -1;
	}
	f->displaced = f->walk_net / f->line_ns;
	return 0;
}
