// SPDX-License-Identifier: GPL-2.0
/*
 * impls/image/check.h: the ELF structure of a vDSO image, its headers,
 * segments, dynamic table and sections, each read once from the file's
 * bytes (memcpy'd: the file may sit at any alignment). The symbols are
 * symbols.c's, the alternatives alternatives.c's.
 */
#include "impls/image/view.h"

#include <stdarg.h>
#include <stdio.h>

#ifndef DT_RELRSZ
#define DT_RELRSZ 35
#define DT_RELR 36
#define DT_RELRENT 37
#endif

/* the most a PT_LOAD may span: a vdso64.so is 8 KiB, its .dbg 50 KiB */
#define SPAN_MAX (64u << 20)

const char *const vdso_image_sym_names[VDSO_IMAGE_NR_SYMS] = {
	[VDSO_IMAGE_CLOCK_GETTIME] = "__vdso_clock_gettime",
	[VDSO_IMAGE_GETTIMEOFDAY] = "__vdso_gettimeofday",
	[VDSO_IMAGE_TIME] = "__vdso_time",
	[VDSO_IMAGE_CLOCK_GETRES] = "__vdso_clock_getres",
	[VDSO_IMAGE_KERNEL_VSYSCALL] = "__kernel_vsyscall",
};

const char *const vdso_image_counter_names[VDSO_IMAGE_NR_COUNTERS] = {
	"rdtsc", "lfence_rdtsc", "rdtscp", "fake", "keep",
};

int vdso_image_fail(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (why && n)
		vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -1;
}

int vdso_view_strtab(const struct vdso_view *v, const Elf64_Shdr *s, const char *what, char *why,
		     size_t n)
{
	if (s->sh_type != SHT_STRTAB || !s->sh_size || !vdso_inside(s->sh_offset, s->sh_size, v->len))
		return fail(why, n, "its %s is not a string table inside the file", what);
	if (v->p[s->sh_offset + s->sh_size - 1])
		return fail(why, n, "its %s does not end in a NUL", what);
	return 0;
}

/* the ELF header, widened; the class's sizes */
static int ident(struct vdso_view *v, char *why, size_t n)
{
	Elf64_Ehdr *eh = &v->eh;
	Elf32_Ehdr e;

	if (v->len < EI_NIDENT || memcmp(v->p, ELFMAG, SELFMAG))
		return fail(why, n, "not an ELF file");
	v->elf32 = v->p[EI_CLASS] == ELFCLASS32;
	v->phent = v->elf32 ? sizeof(Elf32_Phdr) : sizeof(Elf64_Phdr);
	v->shent = v->elf32 ? sizeof(Elf32_Shdr) : sizeof(Elf64_Shdr);
	v->syment = v->elf32 ? sizeof(Elf32_Sym) : sizeof(Elf64_Sym);
	v->dynent = v->elf32 ? sizeof(Elf32_Dyn) : sizeof(Elf64_Dyn);
	v->word = v->elf32 ? 4 : 8;
	if (v->len < (v->elf32 ? sizeof(e) : sizeof(*eh)))
		return fail(why, n, "not an ELF file");
	if (!v->elf32) {
		memcpy(eh, v->p, sizeof(*eh));
		return 0;
	}
	memcpy(&e, v->p, sizeof(e));
	*eh = (Elf64_Ehdr){ .e_type = e.e_type, .e_machine = e.e_machine, .e_phoff = e.e_phoff,
			    .e_shoff = e.e_shoff, .e_phentsize = e.e_phentsize,
			    .e_phnum = e.e_phnum, .e_shentsize = e.e_shentsize,
			    .e_shnum = e.e_shnum, .e_shstrndx = e.e_shstrndx };
	memcpy(eh->e_ident, e.e_ident, EI_NIDENT);
	return 0;
}

static int header(struct vdso_view *v, char *why, size_t n)
{
	Elf64_Ehdr *eh = &v->eh;
	Elf64_Shdr ss;

	if (ident(v, why, n))
		return -1;
	/* the 64-bit vDSO, or the 32-bit one an x86-64 kernel maps for i386 tasks */
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_type != ET_DYN ||
	    (v->elf32 ? eh->e_machine != EM_386 || eh->e_ident[EI_CLASS] != ELFCLASS32
		      : eh->e_machine != EM_X86_64 || eh->e_ident[EI_CLASS] != ELFCLASS64))
		return fail(why, n, "not an x86-64 shared object (a vdso64.so is one) nor an i386 "
			    "one (a vdso32.so)");
	if (eh->e_phentsize != v->phent ||
	    !vdso_inside(eh->e_phoff, (uint64_t)eh->e_phnum * v->phent, v->len))
		return fail(why, n, "its program headers are outside the file");
	if (eh->e_phoff % v->word)
		return fail(why, n, "its program headers are not %u-byte aligned (e_phoff %llu)",
			    v->word, (unsigned long long)eh->e_phoff);
	if (!eh->e_shnum)
		return fail(why, n, "it has no section headers (its .dynsym is found by them)");
	if (eh->e_shentsize != v->shent ||
	    !vdso_inside(eh->e_shoff, (uint64_t)eh->e_shnum * v->shent, v->len))
		return fail(why, n, "its section headers are outside the file");
	if (eh->e_shoff % v->word)
		return fail(why, n, "its section headers are not %u-byte aligned (e_shoff %llu)",
			    v->word, (unsigned long long)eh->e_shoff);
	if (eh->e_shstrndx >= eh->e_shnum)
		return fail(why, n, "its e_shstrndx %u is none of its %u sections", eh->e_shstrndx,
			    eh->e_shnum);
	vdso_view_shdr(v, eh->e_shstrndx, &ss);
	if (vdso_view_strtab(v, &ss, ".shstrtab", why, n))
		return -1;
	v->shstr = (const char *)v->p + ss.sh_offset;
	v->shstr_len = ss.sh_size;
	return 0;
}

/* one of a kind: ELF has one symbol table of each type, the vDSO one of each section */
static int take(Elf64_Shdr *slot, bool *have, const Elf64_Shdr *sh, const char *what, char *why,
		size_t n)
{
	if (*have)
		return fail(why, n, "it has two %s sections", what);
	*slot = *sh;
	*have = true;
	return 0;
}

static int sections(struct vdso_view *v, char *why, size_t n)
{
	for (unsigned int i = 0; i < v->eh.e_shnum; i++) {
		Elf64_Shdr sh;
		const char *name;
		int rc = 0;

		vdso_view_shdr(v, i, &sh);
		if (sh.sh_name >= v->shstr_len)
			return fail(why, n, "section %u's name is outside .shstrtab", i);
		name = v->shstr + sh.sh_name; /* ends inside: strtab() */
		if (sh.sh_type == SHT_DYNSYM)
			rc = take(&v->dynsym, &v->has_dynsym, &sh, "SHT_DYNSYM", why, n);
		else if (sh.sh_type == SHT_SYMTAB)
			rc = take(&v->symtab, &v->has_symtab, &sh, "SHT_SYMTAB", why, n);
		else if (!strcmp(name, ".altinstructions"))
			rc = take(&v->alt, &v->has_alt, &sh, ".altinstructions", why, n);
		else if (!strcmp(name, ".altinstr_replacement"))
			rc = take(&v->repl, &v->has_repl, &sh, ".altinstr_replacement", why, n);
		if (rc)
			return rc;
	}
	return 0;
}

/* vdso2c.h refuses these, and so the relocation tables of other kinds */
static const int64_t relocation_tags[] = {
	DT_REL,	    DT_RELSZ,	 DT_RELENT, DT_RELA, DT_RELASZ, DT_RELAENT,
	DT_TEXTREL, DT_JMPREL, DT_PLTRELSZ, DT_RELR, DT_RELRSZ, DT_RELRENT,
};

/* vdso2c.h: no dynamic relocations (and no imports, which would need them) */
static int dynamic(const struct vdso_view *v, const struct vdso_image_info *info,
		   const Elf64_Phdr *d, char *why, size_t n)
{
	if (d->p_offset != d->p_vaddr || !vdso_inside(d->p_vaddr, d->p_memsz, info->span))
		return fail(why, n, "its PT_DYNAMIC is outside its PT_LOAD");
	for (uint64_t k = 0; k + v->dynent <= d->p_memsz; k += v->dynent) {
		Elf64_Dyn e;

		vdso_view_dyn(v, d->p_vaddr + k, &e);
		if (e.d_tag == DT_NULL)
			return 0;
		if (e.d_tag == DT_NEEDED)
			return fail(why, n, "it needs another object (DT_NEEDED): a vDSO has no "
				    "imports");
		for (size_t i = 0; i < sizeof(relocation_tags) / sizeof(relocation_tags[0]); i++)
			if (e.d_tag == relocation_tags[i])
				return fail(why, n, "it has dynamic relocations (tag %lld), which "
					    "the kernel's vdso2c refuses", (long long)e.d_tag);
	}
	return 0;
}

static int segments(const struct vdso_view *v, struct vdso_image_info *info, char *why, size_t n)
{
	Elf64_Phdr d = { 0 };
	bool load = false, dyn = false;

	for (unsigned int i = 0; i < v->eh.e_phnum; i++) {
		Elf64_Phdr ph;

		vdso_view_phdr(v, i, &ph);
		if (ph.p_type == PT_LOAD) {
			if (load)
				return fail(why, n, "it has two PT_LOAD segments (a vDSO has one)");
			if (ph.p_offset || ph.p_vaddr)
				return fail(why, n, "its PT_LOAD is not at offset and address 0");
			if (ph.p_memsz != ph.p_filesz)
				return fail(why, n, "its PT_LOAD's p_memsz differs from its p_filesz "
					    "(the kernel's vdso2c refuses that)");
			if (!ph.p_filesz || !vdso_inside(0, ph.p_filesz, v->len) ||
			    ph.p_filesz > SPAN_MAX)
				return fail(why, n, "its PT_LOAD is empty, past the end of the file "
					    "or over 64 MiB");
			info->span = ph.p_filesz;
			load = true;
		} else if (ph.p_type == PT_DYNAMIC) {
			if (dyn)
				return fail(why, n, "it has two PT_DYNAMIC segments");
			d = ph;
			dyn = true;
		}
	}
	if (!load)
		return fail(why, n, "it has no PT_LOAD segment");
	return dyn ? dynamic(v, info, &d, why, n) : 0;
}

int vdso_image_check(struct vdso_image_info *info, const void *elf, size_t len,
		     enum vdso_image_counter counter, long vvar_start, int vvar_pages, char *why,
		     size_t n)
{
	struct vdso_view v = { .p = elf, .len = len };

	memset(info, 0, sizeof(*info));
	info->elf = elf;
	info->vvar_start = vvar_start;
	info->vvar_pages = vvar_pages;
	for (int i = 0; i < VDSO_IMAGE_NR_SYMS; i++)
		info->sym[i] = -1;
	if (header(&v, why, n))
		return -1;
	info->elf_class = v.elf32 ? 32 : 64;
	if (sections(&v, why, n) || segments(&v, info, why, n) ||
	    vdso_view_entry_points(&v, info, why, n) || vdso_view_vvar(&v, info, why, n))
		return -1;
	if (v.has_alt) {
		if (!v.has_repl)
			return fail(why, n, "it has .altinstructions but no .altinstr_replacement");
		if (v.alt.sh_addr != v.alt.sh_offset || v.repl.sh_addr != v.repl.sh_offset)
			return fail(why, n, "its .altinstructions or .altinstr_replacement is not "
				    "where its PT_LOAD maps it");
		info->alt_addr = v.alt.sh_addr;
		info->alt_size = v.alt.sh_size;
		info->repl_addr = v.repl.sh_addr;
		info->repl_size = v.repl.sh_size;
	}
	return vdso_image_check_alternatives(info, counter, why, n);
}

int vdso_image_check_each(struct vdso_image_info *info, const void *elf, size_t len,
			  unsigned int counters, char *why, size_t n)
{
	for (int c = 0; c < VDSO_IMAGE_NR_COUNTERS; c++)
		if ((counters & (1u << c)) &&
		    vdso_image_check(info, elf, len, (enum vdso_image_counter)c,
				     VDSO_IMAGE_VVAR_START, VDSO_IMAGE_VVAR_PAGES, why, n))
			return -1;
	return 0;
}
