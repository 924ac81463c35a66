/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A vvar area backed by one memfd, for the variants that swap pages as the
 * kernel does for a task in a time namespace (impls/layouts/
 * generic_datapage.h with CONFIG_TIME_NS, and imported trees,
 * kernel_import/glue/variant.c): the kernel's view maps every page
 * read-write; the reader's slots, a page-aligned array its code addresses
 * RIP-relatively as the vDSO addresses its vvar, map the same pages
 * read-only, in order for a host task and the first two swapped for a task
 * in a time namespace, as timens_commit() swaps the VVAR and TIMENS
 * mappings.
 *
 * hwloc-style: 0, or -1 with errno.
 */
#ifndef VDSOBENCH_VVAR_MEMFD_H
#define VDSOBENCH_VVAR_MEMFD_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create() */
#endif

#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "impls/common/compiler.h"

struct vvar_memfd {
	int fd;
	void *k; /* the kernel's view of the pages, or NULL before init */
};

#define VVAR_MEMFD_INIT { .fd = -1, .k = NULL }

/* the reader's slots: page p of the memfd at slot p, slots 0 and 1 swapped */
static inline int vvar_memfd_map(const struct vvar_memfd *m, void *slots,
				 int pages, bool timens_task)
{
	for (int slot = 0; slot < pages; slot++) {
		int page = slot < 2 && timens_task ? slot ^ 1 : slot;
		void *p = mmap((u8 *)slots + (size_t)slot * PAGE_SIZE, PAGE_SIZE,
			       PROT_READ, MAP_SHARED | MAP_FIXED, m->fd,
			       (off_t)page * (off_t)PAGE_SIZE);

		if (p == MAP_FAILED)
			return -1;
	}
	return 0;
}

/* once: the memfd, the kernel's view, the reader's slots in order */
static inline int vvar_memfd_init(struct vvar_memfd *m, const char *name,
				  void *slots, int pages)
{
	void *k;

	if (m->fd >= 0)
		return 0;
	m->fd = memfd_create(name, MFD_CLOEXEC);
	if (m->fd < 0)
		return -1;
	if (ftruncate(m->fd, (off_t)pages * (off_t)PAGE_SIZE))
		goto fail;
	k = mmap(NULL, (size_t)pages * PAGE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED, m->fd, 0);
	if (k == MAP_FAILED)
		goto fail;
	if (vvar_memfd_map(m, slots, pages, false)) {
		munmap(k, (size_t)pages * PAGE_SIZE);
		goto fail;
	}
	m->k = k;
	return 0;
fail:
	close(m->fd);
	m->fd = -1;
	return -1;
}

#endif /* VDSOBENCH_VVAR_MEMFD_H */
