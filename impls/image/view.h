/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What check.c reads of an image's headers, for symbols.c and
 * alternatives.c (private to //impls/image:check): its ELF header, the
 * section string table and the sections the rules look at, each taken once.
 *
 * One parser for both classes: a vdso64.so (ELFCLASS64) or a vdso32.so
 * (ELFCLASS32, i386). Every header, symbol and dynamic entry is read
 * through the vdso_view_*() readers below, which widen an ELF32 record
 * into its ELF64 form, so each rule is written once, on the wide form.
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
	bool elf32;
	/* the class's record sizes and its word (the headers' alignment) */
	unsigned int phent, shent, syment, dynent, word;
	Elf64_Ehdr eh; /* widened */
	const char *shstr;
	uint64_t shstr_len;
	Elf64_Shdr dynsym, symtab, alt, repl;
	bool has_dynsym, has_symtab, has_alt, has_repl;
};

/* section header i (< e_shnum, checked inside the file) */
static inline void vdso_view_shdr(const struct vdso_view *v, unsigned int i, Elf64_Shdr *sh)
{
	const uint8_t *at = v->p + v->eh.e_shoff + (uint64_t)i * v->shent;
	Elf32_Shdr s;

	if (!v->elf32) {
		memcpy(sh, at, sizeof(*sh));
		return;
	}
	memcpy(&s, at, sizeof(s));
	*sh = (Elf64_Shdr){ s.sh_name, s.sh_type, s.sh_flags, s.sh_addr, s.sh_offset,
			    s.sh_size, s.sh_link, s.sh_info, s.sh_addralign, s.sh_entsize };
}

/* program header i (< e_phnum, checked inside the file) */
static inline void vdso_view_phdr(const struct vdso_view *v, unsigned int i, Elf64_Phdr *ph)
{
	const uint8_t *at = v->p + v->eh.e_phoff + (uint64_t)i * v->phent;
	Elf32_Phdr p;

	if (!v->elf32) {
		memcpy(ph, at, sizeof(*ph));
		return;
	}
	memcpy(&p, at, sizeof(p));
	*ph = (Elf64_Phdr){ p.p_type, p.p_flags, p.p_offset, p.p_vaddr, p.p_paddr,
			    p.p_filesz, p.p_memsz, p.p_align };
}

/*
 * the symbol at file offset off (checked inside the file). An ELF32
 * value is sign-extended: a 32-bit image's addresses wrap, and its vvar
 * area's symbols (vvar_start = . - 4 * PAGE_SIZE) are 0xffffc000 for -16384.
 */
static inline void vdso_view_sym(const struct vdso_view *v, uint64_t off, Elf64_Sym *sym)
{
	Elf32_Sym s;

	if (!v->elf32) {
		memcpy(sym, v->p + off, sizeof(*sym));
		return;
	}
	memcpy(&s, v->p + off, sizeof(s));
	*sym = (Elf64_Sym){ .st_name = s.st_name, .st_info = s.st_info, .st_other = s.st_other,
			    .st_shndx = s.st_shndx,
			    .st_value = (uint64_t)(int64_t)(int32_t)s.st_value,
			    .st_size = s.st_size };
}

/* the dynamic entry at file offset off (checked inside the file); d_tag is signed */
static inline void vdso_view_dyn(const struct vdso_view *v, uint64_t off, Elf64_Dyn *d)
{
	Elf32_Dyn e;

	if (!v->elf32) {
		memcpy(d, v->p + off, sizeof(*d));
		return;
	}
	memcpy(&e, v->p + off, sizeof(e));
	d->d_tag = e.d_tag;
	d->d_un.d_val = e.d_un.d_val;
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

/* sysfast32.c: v7.x's vdso32 system call alternative, its rule and its patch */
bool vdso_image_is_syscall(const uint8_t *orig, unsigned int len);
int vdso_image_check_syscall(const struct vdso_image_info *info, const struct vdso_image_alt *a,
			     char *why, size_t n);
void vdso_image_patch_syscall(const struct vdso_image_info *info, uint8_t *img,
			      const struct vdso_image_alt *a);

/* gate32.c: vdso32's __kernel_vsyscall alternatives, their kind and rule */
enum vdso_image_alt_kind vdso_image_gate_kind(const struct vdso_image_info *info,
					      const struct vdso_image_alt *a);
int vdso_image_check_gate(const struct vdso_image_info *info, const struct vdso_image_alt *a,
			  char *why, size_t n);

/* alternatives.c: alternative.c's add_nop(), the longest nops first */
void vdso_image_add_nops(uint8_t *p, unsigned int n);

#endif /* VDSOBENCH_IMAGE_VIEW_H */
