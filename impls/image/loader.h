/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A vDSO image (a kernel's vdso64.so; in an i386 build its vdso32.so, the
 * one an x86-64 kernel maps for an i386 task) mapped in userspace, as the
 * x86-64 kernel of v6.1..v6.12 maps it (arch/x86/entry/vdso/vma.c map_vdso(),
 * vdso-layout.lds.S): its PT_LOAD segment at the image's address 0, the
 * vvar area right before it (vvar, pvclock, hvclock and timens pages;
 * from v6.15 the generic data store's: time, timens, rng, arch pages),
 * the image's alternatives applied for the chosen counter read as
 * arch/x86/kernel/alternative.c apply_alternatives() does at boot (a
 * vdso32's gate, __kernel_vsyscall, as the running kernel patched its own:
 * gate32.c), and its exported __vdso_* functions resolved from .dynsym.
 *
 * The image is other people's input (a tree's build, a saved snapshot of
 * [vdso]): vdso_image_map() takes only what vdso_image_check() (check.h,
 * the rules import --vdso-image applies too) accepts.
 * hwloc-style: 0, or -1 with a reason in why.
 */
#ifndef VDSOBENCH_IMAGE_LOADER_H
#define VDSOBENCH_IMAGE_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "impls/image/check.h"

struct vdso_image_opts {
	enum vdso_image_counter counter;
	/*
	 * the counter for VDSO_IMAGE_FAKE: this thread's copy of a __thread
	 * variable of the executable, which each thread's read then loads
	 */
	const volatile uint64_t *fake_counter;
	/*
	 * the vvar area's start and size relative to the image, used when the
	 * image has no symbol table (a stripped vdso64.so): -4 pages and 4
	 * for v6.1..v6.12
	 */
	long vvar_start;
	int vvar_pages;
	/*
	 * NULL, or where to map it (MAP_FIXED over a page-aligned area of
	 * at_len bytes the caller owns, e.g. a static array, so that the entry
	 * points have addresses the linker knows)
	 */
	void *at;
	size_t at_len;
	/* a vdso32's gate: VDSO_IMAGE_GATE_HERE (0), as this process's kernel's */
	enum vdso_image_gate gate;
};

/* the bytes a mapping of an image of PT_LOAD span len with vvar_pages needs */
#define VDSO_IMAGE_MAP_LEN(len, vvar_pages)                                  \
	((size_t)(vvar_pages) * VDSO_IMAGE_PAGE +                           \
	 (((size_t)(len) + VDSO_IMAGE_PAGE - 1) & ~(size_t)(VDSO_IMAGE_PAGE - 1)) + \
	 VDSO_IMAGE_PAGE)

struct vdso_loaded {
	uint8_t *map; /* the whole mapping: vvar area, image, thunk page */
	size_t map_len;
	uint8_t *base; /* the image's address 0 */
	size_t len;    /* the PT_LOAD span, page-rounded */
	uint8_t *vvar; /* base + vvar_start: the vvar area, read-only zeros until mapped */
	long vvar_start;
	int vvar_pages;
	/* the pages of the area the data and its time namespace copy go in, and where in them */
	int data_page, timens_page, data_offset;
	/* vread_pvclock()'s and vread_hvclock()'s pages of the area; -1: not known */
	int pvclock_page, hvclock_page;
	/* the counter slots patched (rdtsc_ordered() sites), and how many alternatives */
	int slots, alts;
	int syscalls; /* v7.x vdso32's system call alternatives applied (sysfast32.c) */
	enum vdso_image_counter counter; /* the one it was mapped with */
	/* a vdso32's gate as mapped, its alternatives applied, and why int $0x80 */
	enum vdso_image_gate gate;
	int gates;
	const char *gate_why;
	int fixed; /* mapped over the caller's area: given back as zeros */
	/* NULL where the image has none (clock_getres; __kernel_vsyscall but in a vdso32.so) */
	void *sym[VDSO_IMAGE_NR_SYMS];
};

int vdso_image_map(struct vdso_loaded *img, const void *elf, size_t len,
		   const struct vdso_image_opts *opts, char *why, size_t why_len);
void vdso_image_unmap(struct vdso_loaded *img);

/*
 * A mapped vdso32's gate changed to gate (the checkers trap the fallbacks'
 * int $0x80 made from the image's pages: a fast entry would return through
 * the running kernel's landing pad, outside them); elf and len are the
 * file it was mapped from. 0, or -1 with a reason (one mapped with
 * VDSO_IMAGE_KEEP is a running kernel's copy, whose gate is its own).
 */
int vdso_image_set_gate(struct vdso_loaded *img, const void *elf, size_t len,
			enum vdso_image_gate gate, char *why, size_t why_len);

#endif /* VDSOBENCH_IMAGE_LOADER_H */
