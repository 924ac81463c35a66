// SPDX-License-Identifier: GPL-2.0
/*
 * impls/image/check.h: the image's symbols, each table walked once, each
 * name compared with the few looked for (the string table ends in a NUL,
 * so a name is never read past it): the entry points from .dynsym, where
 * a program's dynamic linker finds them, and from .symtab where the file
 * has one (a vdso64.so.dbg) the data pages: vvar_start, as vdso2c.h takes
 * it, or from v6.15 the generic data store's vdso_u_data and
 * vdso_u_time_data.
 */
#include <inttypes.h>

#include "impls/image/view.h"

/*
 * The defined symbols of a symbol table named names[i]: vals[i] and bit i
 * of *found, refused when defined twice (vdso2c does) or, when span is not
 * 0 (the entry points), outside it or not a global function.
 */
static int symbols(const struct vdso_view *v, const Elf64_Shdr *s, const char *what,
		   const char *strs, const char *const *names, int nr, uint64_t *vals,
		   unsigned int *found, uint64_t span, char *why, size_t n)
{
	Elf64_Shdr st;
	const char *str;

	if (s->sh_entsize != v->syment || s->sh_size % v->syment ||
	    !vdso_inside(s->sh_offset, s->sh_size, v->len))
		return fail(why, n, "its %s is not a table of %u-byte symbols inside the file",
			    what, v->syment);
	if (s->sh_link >= v->eh.e_shnum)
		return fail(why, n, "its %s links to no section", what);
	vdso_view_shdr(v, s->sh_link, &st);
	if (vdso_view_strtab(v, &st, strs, why, n))
		return -1;
	str = (const char *)v->p + st.sh_offset;
	*found = 0;
	for (uint64_t k = 0; k < s->sh_size / v->syment; k++) {
		Elf64_Sym sym;

		vdso_view_sym(v, s->sh_offset + k * v->syment, &sym);
		if (sym.st_shndx == SHN_UNDEF || sym.st_name >= st.sh_size)
			continue;
		for (int i = 0; i < nr; i++) {
			if (strcmp(str + sym.st_name, names[i])) /* ends inside: strtab() */
				continue;
			if (*found & (1u << i))
				return fail(why, n, "it defines %s twice", names[i]);
			if (span && sym.st_value >= span)
				return fail(why, n, "%s is outside the image", names[i]);
			/* an entry point (span set) is called as it is: no resolver, no data */
			if (span && (ELF64_ST_TYPE(sym.st_info) != STT_FUNC ||
				     ELF64_ST_BIND(sym.st_info) == STB_LOCAL))
				return fail(why, n, "%s is not a global function (type %d, binding %d)",
					    names[i], ELF64_ST_TYPE(sym.st_info),
					    ELF64_ST_BIND(sym.st_info));
			vals[i] = sym.st_value;
			*found |= 1u << i;
		}
	}
	return 0;
}

int vdso_view_entry_points(const struct vdso_view *v, struct vdso_image_info *info, char *why, size_t n)
{
	uint64_t at[VDSO_IMAGE_NR_SYMS];
	unsigned int found;

	if (!v->has_dynsym)
		return fail(why, n, "it has no .dynsym (its entry points are found there)");
	if (symbols(v, &v->dynsym, ".dynsym", ".dynsym's string table", vdso_image_sym_names,
		    VDSO_IMAGE_NR_SYMS, at, &found, info->span, why, n))
		return -1;
	for (int i = 0; i < VDSO_IMAGE_NR_SYMS; i++)
		info->sym[i] = found & (1u << i) ? (int64_t)at[i] : -1;
	for (int i = VDSO_IMAGE_CLOCK_GETTIME; i <= VDSO_IMAGE_TIME; i++)
		if (info->sym[i] < 0)
			return fail(why, n, "it exports no %s", vdso_image_sym_names[i]);
	return 0;
}

/* KERNEL_VERSION(6, 15, 0): x86 moved to the generic data store (vdso_u_*) */
#define DATA_STORE_VERSION ((6 << 16) + (15 << 8))
/* asm/vvar.h of v6.1..v6.14: DECLARE_VVAR(128, struct vdso_data, _vdso_data) */
#define VVAR_DATA_OFFSET 128

/* LINUX_VERSION_CODE from the image's "Linux" note (vdso-note.S), or -1 */
static long linux_version(const struct vdso_view *v)
{
	for (unsigned int i = 0; i < v->eh.e_shnum; i++) {
		Elf64_Shdr sh;

		vdso_view_shdr(v, i, &sh);
		if (sh.sh_type != SHT_NOTE || !vdso_inside(sh.sh_offset, sh.sh_size, v->len))
			continue;
		for (uint64_t at = 0; sh.sh_size - at >= sizeof(Elf64_Nhdr);) {
			const uint8_t *p = v->p + sh.sh_offset + at + sizeof(Elf64_Nhdr);
			uint64_t left = sh.sh_size - at - sizeof(Elf64_Nhdr);
			Elf64_Nhdr nh;
			uint64_t name, desc;
			uint32_t code;

			memcpy(&nh, v->p + sh.sh_offset + at, sizeof(nh));
			name = ((uint64_t)nh.n_namesz + 3) & ~3ull;
			desc = ((uint64_t)nh.n_descsz + 3) & ~3ull;
			if (name > left || desc > left - name)
				break;
			if (nh.n_type == 0 && nh.n_namesz == 6 && !memcmp(p, "Linux", 6) &&
			    nh.n_descsz == 4) {
				memcpy(&code, p + name, sizeof(code));
				return code;
			}
			at += sizeof(Elf64_Nhdr) + name + desc;
		}
	}
	return -1;
}

/* a symbol's value as whole pages before the image (-16..-1), or 0 */
static long pages_before(int64_t at)
{
	return at < 0 && at >= -16 * VDSO_IMAGE_PAGE && !(at % VDSO_IMAGE_PAGE)
		       ? (long)(at / VDSO_IMAGE_PAGE)
		       : 0;
}

/*
 * v6.15 on (include/vdso/datapage.h VDSO_VVAR_SYMS): vdso_u_data is the
 * area's start, vdso_u_time_data its time page (the data at offset 0),
 * and the time namespace's page the next one (VDSO_TIMENS_PAGE_OFFSET;
 * lib/vdso reads it at vd + PAGE_SIZE).
 */
static int data_store(struct vdso_image_info *info, const uint64_t *at, unsigned int found,
		      char *why, size_t n)
{
	long start = found & 2 ? pages_before((int64_t)at[1]) : 0;
	long time = found & 4 ? pages_before((int64_t)at[2]) : start;

	if (!start)
		return fail(why, n, "its data pages are the generic data store's, but %s",
			    found & 2 ? "vdso_u_data is not whole pages before the image"
				      : "it has vdso_u_time_data and no vdso_u_data");
	/* time: vdso_u_data's page where the file has no vdso_u_time_data */
	if (time < start || time + 1 >= 0)
		return fail(why, n, "its time data at %ld: not a page of the data store "
			    "(from %ld) with the time namespace's page after it",
			    time * VDSO_IMAGE_PAGE, start * VDSO_IMAGE_PAGE);
	info->vvar_start = start * VDSO_IMAGE_PAGE;
	info->vvar_pages = (int)-start;
	info->data_page = (int)(time - start);
	info->timens_page = info->data_page + 1;
	info->data_offset = 0;
	return 0;
}

/*
 * vdso-layout.lds.S's pvclock_page (sym 3) or hvclock_page (sym 4), a page
 * of the area other than the data and time namespace pages: else -1 (a
 * stripped v6.1..v6.14 image has them at vvar_start + 1 and 2 pages, that
 * script's fixed order)
 */
static int vclock_page(const struct vdso_image_info *info, const uint64_t *at,
		       unsigned int found, int sym)
{
	long page = found & (1u << sym) ? pages_before((int64_t)at[sym]) * VDSO_IMAGE_PAGE : 0;

	if (!page && !(found & (1u << sym)) && !(found & 6) && info->vvar_pages == 4)
		return sym - 2;
	page = page ? (page - info->vvar_start) / VDSO_IMAGE_PAGE : -1;
	if (page < 0 || page >= info->vvar_pages || page == info->data_page ||
	    page == info->timens_page)
		return -1;
	return (int)page;
}

int vdso_view_vvar(const struct vdso_view *v, struct vdso_image_info *info, char *why, size_t n)
{
	static const char *const name[] = { "vvar_start", "vdso_u_data", "vdso_u_time_data",
					    "pvclock_page", "hvclock_page" };
	unsigned int found = 0;
	uint64_t at[5];
	long version;

	if (v->has_symtab && symbols(v, &v->symtab, ".symtab", ".symtab's string table", name, 5,
				     at, &found, 0, why, n))
		return -1;
	if (!(found & 1) && (found & 6)) {
		if (data_store(info, at, found, why, n))
			return -1;
		info->pvclock_page = vclock_page(info, at, found, 3);
		info->hvclock_page = vclock_page(info, at, found, 4);
		return 0;
	}
	/* a caller that gave another area (the running kernel's mapping) knows */
	if (!(found & 1) && info->vvar_start == VDSO_IMAGE_VVAR_START &&
	    (version = linux_version(v)) >= DATA_STORE_VERSION)
		return fail(why, n,
			    "it is Linux %ld.%ld.%ld's (its note), whose data pages are the "
			    "generic data store's, and it has no .symtab to place them "
			    "(give its %s.so.dbg)",
			    version >> 16, (version >> 8) & 0xff, version & 0xff,
			    v->elf32 ? "vdso32" : "vdso64");
	if (found & 1) {
		/* vdso-layout.lds.S: vvar_start = . - 4 * PAGE_SIZE, a negative address */
		int64_t start = (int64_t)at[0];

		info->vvar_start = (long)start;
		info->vvar_pages = (int)-pages_before(start);
	}
	if (info->vvar_start >= 0 || info->vvar_start < -16 * VDSO_IMAGE_PAGE ||
	    info->vvar_start % VDSO_IMAGE_PAGE ||
	    info->vvar_pages * (long)VDSO_IMAGE_PAGE != -info->vvar_start)
		return fail(why, n, "vvar_start %ld: not whole pages before the image",
			    info->vvar_start);
	/* vdso-layout.lds.S: vvar, pvclock, hvclock, then timens_page */
	info->data_page = 0;
	info->timens_page = info->vvar_pages - 1;
	info->data_offset = VVAR_DATA_OFFSET;
	info->pvclock_page = vclock_page(info, at, found, 3);
	info->hvclock_page = vclock_page(info, at, found, 4);
	return 0;
}
