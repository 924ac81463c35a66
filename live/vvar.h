/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The running kernel's vDSO data, read from this process: the [vvar]
 * mapping every process gets (arch/x86/entry/vdso/vma.c, lib/vdso), page by
 * page. Some of its pages are never populated (the time namespace page of
 * a task outside one, a paravirt clock page the host does not provide) and
 * raise SIGBUS when touched: vvar_probe() touches each page under a handler
 * and says which could be read and why not, never crashes.
 *
 * Handles never fail to be created, as in counters/perf_counters.h: every
 * function returns 0 or -1 with errno, and vvar_error() says why in words.
 */
#ifndef VDSOBENCH_VVAR_H
#define VDSOBENCH_VVAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VVAR_MAX_PAGES 16

struct vvar_page {
	bool readable;
	int signal; /* SIGBUS or SIGSEGV when not readable, else 0 */
};

struct vvar_area {
	uintptr_t start, end; /* the mapping, from /proc/self/maps */
	unsigned int nr_pages;
	struct vvar_page pages[VVAR_MAX_PAGES];
};

/*
 * The mapping named name ("[vvar]", "[vvar_vclock]") in /proc/self/maps:
 * 0, or -1 with errno ENOENT (no such mapping: a kernel without a vDSO, or
 * an architecture that names it otherwise) or E2BIG (more pages than
 * VVAR_MAX_PAGES).
 */
int vvar_find(const char *name, struct vvar_area *a);

/* touch every page of a under a SIGBUS/SIGSEGV handler; 0 */
int vvar_probe(struct vvar_area *a);

/* the same for any page-aligned range (the tests probe their own) */
int vvar_probe_range(uintptr_t start, size_t len, struct vvar_page *pages,
		     unsigned int max);

/*
 * Copy len bytes at addr into out (a readable page, from vvar_probe) as
 * one snapshot: copied twice until both copies agree, so that an update
 * by the kernel in between is not taken for a value it never held. 0, or
 * -1 with errno EAGAIN after tries attempts that never agreed, or EFAULT
 * if touching the memory raised a signal.
 */
int vvar_snapshot(uintptr_t addr, size_t len, void *out, unsigned int tries);

/* why the last call failed, in words */
const char *vvar_error(void);

#endif /* VDSOBENCH_VVAR_H */
