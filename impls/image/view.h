/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What check.c reads of an image's headers, for symbols.c and
 * alternatives.c (private to //impls/image:check): its ELF header, the
 * section string table and the sections the rules look at, each taken once.
 */
#ifndef VDSOBENCH_IMAGE_VIEW_H
#define VDSOBENCH_IMAGE_VIEW_H

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "impls/image/check.h"

#define fail vdso_image_fail

/* [off, off + n) inside [0, len), without overflow */
static inline bool vdso_inside(uint64_t off, uint64_t n, uint64_t len)
{
	return off <= len && n <= len - off;
}

struct vdso_view {
	const uint8_t *p;
	size_t len;
	Elf64_Ehdr eh;
	const char *shstr;
	uint64_t shstr_len;
	Elf64_Shdr dynsym, symtab, alt, repl;
	bool has_dynsym, has_symtab, has_alt, has_repl;
};

/* section header i (< e_shnum, checked inside the file) */
static inline void vdso_view_shdr(const struct vdso_view *v, unsigned int i, Elf64_Shdr *sh)
{
	memcpy(sh, v->p + v->eh.e_shoff + (uint64_t)i * sizeof(*sh), sizeof(*sh));
}

/* check.c: a string table every offset of which names a string that ends inside it */
int vdso_view_strtab(const struct vdso_view *v, const Elf64_Shdr *s, const char *what, char *why,
		     size_t n);
/* symbols.c: info->sym[] from .dynsym, the vvar area from .symtab */
int vdso_view_entry_points(const struct vdso_view *v, struct vdso_image_info *info, char *why,
			   size_t n);
int vdso_view_vvar(const struct vdso_view *v, struct vdso_image_info *info, char *why, size_t n);
/* alternatives.c: the alternatives' rules, once info's section fields are set */
int vdso_image_check_alternatives(struct vdso_image_info *info, enum vdso_image_counter counter,
				  char *why, size_t n);

#endif /* VDSOBENCH_IMAGE_VIEW_H */
