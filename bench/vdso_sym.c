// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded version of the kernel's reference vDSO parser
 * (tools/testing/selftests/vDSO/parse_vdso.c): the load offset comes from
 * the first PT_LOAD, the symbol, string, version and hash tables from
 * PT_DYNAMIC, and a symbol matches by name, STT_FUNC, global or weak
 * binding, and its LINUX_2.6-style version definition.
 *
 * parse_vdso.c trusts the image because the kernel made it; this one also
 * opens copies the tests corrupt on purpose, so every table is checked
 * against the image length (and its alignment, which UBSan enforces) once
 * at open, and every per-symbol offset again at lookup.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "bench/elf_class.h"
#include "bench/vdso_sym.h"

struct vdso_image {
	const unsigned char *base;
	size_t len;
	unsigned int machine; /* e_machine */
	/* the first PT_LOAD: vaddr -> image offset, as parse_vdso's load_offset
	 */
	uint64_t load_vaddr;
	uint64_t load_memsz;
	uint64_t load_offset;
	const ELF_T(Sym) *symtab;
	uint64_t nsyms;
	uint64_t strtab;
	uint64_t strsz;
	/* NULL unless both DT_VERSYM and DT_VERDEF are there */
	const ELF_T(Versym) *versym;
	uint64_t verdef;
};

static __thread char vdso_err[256];

__attribute__((format(printf, 2, 3))) static int fail(int err, const char *fmt,
						      ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(vdso_err, sizeof(vdso_err), fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

const char *vdso_image_error(void)
{
	return vdso_err;
}

/* [off, off + size) inside the image, and aligned for the type read there */
static bool in_image(const struct vdso_image *img, uint64_t off, uint64_t size,
		     size_t align)
{
	if (off > img->len || size > img->len - off)
		return false;
	return (uintptr_t)(img->base + off) % align == 0;
}

/* a vaddr inside the first PT_LOAD, as an image offset */
static bool vaddr_to_off(const struct vdso_image *img, uint64_t vaddr,
			 uint64_t *off)
{
	uint64_t rel = vaddr - img->load_vaddr;

	if (vaddr < img->load_vaddr || rel >= img->load_memsz ||
	    rel > UINT64_MAX - img->load_offset)
		return false;
	*off = img->load_offset + rel;
	return *off < img->len;
}

/* the NUL-terminated string at strtab + name, or NULL if it runs off */
static const char *str_at(const struct vdso_image *img, uint64_t name)
{
	const char *s;

	if (name >= img->strsz)
		return NULL;
	s = (const char *)img->base + img->strtab + name;
	return memchr(s, '\0', img->strsz - name) ? s : NULL;
}

/*
 * Walk the version definitions for the non-base one with index ndx and
 * return its name: 1 found, 0 not there, -1 a corrupt chain. Open walks it
 * once with an index no definition has, so that every entry is checked.
 */
static int verdef_name(const struct vdso_image *img, unsigned int ndx,
		       const char **name)
{
	uint64_t off = img->verdef;

	for (;;) {
		const ELF_T(Verdef) *def;
		const ELF_T(Verdaux) *aux;

		if (!in_image(img, off, sizeof(*def), _Alignof(ELF_T(Verdef))))
			return -1;
		def = (const ELF_T(Verdef) *)(img->base + off);
		if (def->vd_cnt == 0 ||
		    !in_image(img, off + def->vd_aux, sizeof(*aux),
			      _Alignof(ELF_T(Verdaux))))
			return -1;
		aux = (const ELF_T(Verdaux) *)(img->base + off + def->vd_aux);
		if (!str_at(img, aux->vda_name))
			return -1;
		if (!(def->vd_flags & VER_FLG_BASE) &&
		    (def->vd_ndx & 0x7fff) == ndx) {
			*name = str_at(img, aux->vda_name);
			return 1;
		}
		/* vd_next only moves forward, so this ends within len */
		if (def->vd_next == 0)
			return 0;
		off += def->vd_next;
	}
}

/*
 * DT_HASH's nchain is the number of symbols. DT_GNU_HASH does not say; the
 * highest bucket's chain ends at the last symbol (the bit 0 terminator).
 */
static int count_syms_sysv(struct vdso_image *img, uint64_t off)
{
	const ELF_T(Word) *hash;

	if (!in_image(img, off, 2 * sizeof(ELF_T(Word)), _Alignof(ELF_T(Word))))
		return fail(EINVAL, "DT_HASH at 0x%llx is outside the image",
			    (unsigned long long)off);
	hash = (const ELF_T(Word) *)(img->base + off);
	if (!in_image(img, off, (2ull + hash[0] + hash[1]) * sizeof(ELF_T(Word)),
		      1))
		return fail(
			EINVAL,
			"DT_HASH: %u buckets and %u chains run past the end",
			hash[0], hash[1]);
	img->nsyms = hash[1];
	return 0;
}

static int count_syms_gnu(struct vdso_image *img, uint64_t off)
{
	const ELF_T(Word) *hdr;
	uint64_t buckets, chain;
	ELF_T(Word) nbuckets, symoffset, last = 0, i;

	if (!in_image(img, off, 4 * sizeof(ELF_T(Word)), _Alignof(ELF_BLOOM)))
		return fail(EINVAL,
			    "DT_GNU_HASH at 0x%llx is outside the image",
			    (unsigned long long)off);
	hdr = (const ELF_T(Word) *)(img->base + off);
	nbuckets = hdr[0];
	symoffset = hdr[1];
	buckets = off + 4 * sizeof(ELF_T(Word)) +
		  (uint64_t)hdr[2] * sizeof(ELF_BLOOM);
	chain = buckets + (uint64_t)nbuckets * sizeof(ELF_T(Word));
	if (!in_image(img, buckets, chain - buckets, _Alignof(ELF_T(Word))))
		return fail(EINVAL, "DT_GNU_HASH: %u buckets run past the end",
			    nbuckets);
	for (i = 0; i < nbuckets; i++) {
		ELF_T(Word) b = ((const ELF_T(Word) *)(img->base + buckets))[i];

		if (b > last)
			last = b;
	}
	if (last < symoffset) {
		img->nsyms = symoffset;
		return 0;
	}
	for (;;) {
		uint64_t at = chain + (uint64_t)(last - symoffset) * 4;

		if (!in_image(img, at, sizeof(ELF_T(Word)), 1))
			return fail(EINVAL,
				    "DT_GNU_HASH: chain of symbol %u runs past "
				    "the end",
				    last);
		if (*(const ELF_T(Word) *)(img->base + at) & 1)
			break;
		if (last == UINT32_MAX)
			return fail(EINVAL, "DT_GNU_HASH: endless chain");
		last++;
	}
	img->nsyms = (uint64_t)last + 1;
	return 0;
}

struct dyn_tables {
	uint64_t strtab, symtab, strsz, syment, hash, gnu_hash, versym, verdef;
};

static int read_dynamic(const struct vdso_image *img, uint64_t off,
			uint64_t size, struct dyn_tables *t)
{
	const ELF_T(Dyn) *dyn;
	uint64_t i;

	if (!in_image(img, off, size, _Alignof(ELF_T(Dyn))))
		return fail(EINVAL,
			    "PT_DYNAMIC [0x%llx, +0x%llx) is outside the "
			    "%zu-byte image",
			    (unsigned long long)off, (unsigned long long)size,
			    img->len);
	dyn = (const ELF_T(Dyn) *)(img->base + off);
	memset(t, 0, sizeof(*t));
	for (i = 0; i < size / sizeof(*dyn) && dyn[i].d_tag != DT_NULL; i++) {
		uint64_t v = dyn[i].d_un.d_val;

		switch (dyn[i].d_tag) {
		case DT_STRTAB:
			t->strtab = v;
			break;
		case DT_SYMTAB:
			t->symtab = v;
			break;
		case DT_STRSZ:
			t->strsz = v;
			break;
		case DT_SYMENT:
			t->syment = v;
			break;
		case DT_HASH:
			t->hash = v;
			break;
		case DT_GNU_HASH:
			t->gnu_hash = v;
			break;
		case DT_VERSYM:
			t->versym = v;
			break;
		case DT_VERDEF:
			t->verdef = v;
			break;
		}
	}
	/* a vaddr of 0 is the ELF header itself, never a table */
	if (!t->strtab || !t->symtab)
		return fail(EINVAL, "PT_DYNAMIC has no %s",
			    t->strtab ? "DT_SYMTAB" : "DT_STRTAB");
	if (!t->hash && !t->gnu_hash)
		return fail(EINVAL,
			    "PT_DYNAMIC has neither DT_HASH nor DT_GNU_HASH");
	if (t->syment && t->syment != sizeof(ELF_T(Sym)))
		return fail(EINVAL, "DT_SYMENT is %llu, not %zu",
			    (unsigned long long)t->syment, sizeof(ELF_T(Sym)));
	return 0;
}

static int table_off(const struct vdso_image *img, uint64_t vaddr,
		     uint64_t *off, const char *tag)
{
	if (vaddr_to_off(img, vaddr, off))
		return 0;
	return fail(EINVAL, "%s 0x%llx is outside the loaded segment", tag,
		    (unsigned long long)vaddr);
}

static int parse_tables(struct vdso_image *img, const struct dyn_tables *t)
{
	uint64_t off;
	const char *unused;

	if (table_off(img, t->strtab, &img->strtab, "DT_STRTAB"))
		return -1;
	/* without DT_STRSZ the strings end where the image does */
	img->strsz = t->strsz ? t->strsz : img->len - img->strtab;
	if (!in_image(img, img->strtab, img->strsz, 1))
		return fail(EINVAL, "DT_STRSZ %llu runs past the end",
			    (unsigned long long)img->strsz);

	/* DT_HASH first: nchain is the count itself, nothing to walk */
	if (t->hash) {
		if (table_off(img, t->hash, &off, "DT_HASH") ||
		    count_syms_sysv(img, off))
			return -1;
	} else if (table_off(img, t->gnu_hash, &off, "DT_GNU_HASH") ||
		   count_syms_gnu(img, off)) {
		return -1;
	}

	if (table_off(img, t->symtab, &off, "DT_SYMTAB"))
		return -1;
	if (!in_image(img, off, img->nsyms * sizeof(ELF_T(Sym)),
		      _Alignof(ELF_T(Sym))))
		return fail(EINVAL, "DT_SYMTAB: %llu symbols run past the end",
			    (unsigned long long)img->nsyms);
	img->symtab = (const ELF_T(Sym) *)(img->base + off);

	/* as parse_vdso.c: version symbols mean nothing without definitions */
	if (!t->versym || !t->verdef)
		return 0;
	if (table_off(img, t->versym, &off, "DT_VERSYM"))
		return -1;
	if (!in_image(img, off, img->nsyms * sizeof(ELF_T(Versym)),
		      _Alignof(ELF_T(Versym))))
		return fail(EINVAL, "DT_VERSYM runs past the end");
	img->versym = (const ELF_T(Versym) *)(img->base + off);
	if (table_off(img, t->verdef, &img->verdef, "DT_VERDEF"))
		return -1;
	if (verdef_name(img, UINT32_MAX, &unused) < 0)
		return fail(EINVAL,
			    "DT_VERDEF: a definition runs past the end");
	return 0;
}

static int parse(struct vdso_image *img)
{
	const ELF_T(Ehdr) *eh = (const ELF_T(Ehdr) *)img->base;
	const ELF_T(Phdr) *ph;
	uint64_t dyn_off = 0, dyn_size = 0;
	bool have_load = false, have_dyn = false;
	struct dyn_tables t;
	unsigned int i;

	if (!img->base)
		return fail(EINVAL, "image address is NULL");
	if (img->len < sizeof(*eh))
		return fail(EINVAL,
			    "image of %zu bytes is shorter than an ELF header",
			    img->len);
	if (!in_image(img, 0, sizeof(*eh), _Alignof(ELF_T(Ehdr))))
		return fail(EINVAL, "image at %p is not 8-byte aligned",
			    (const void *)img->base);
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return fail(EINVAL, "bad ELF magic");
	if (eh->e_ident[EI_CLASS] != ELF_CLASS)
		return fail(EINVAL,
			    "ELF class %u, only " ELF_CLASS_NAME " is supported",
			    eh->e_ident[EI_CLASS]);
	if (eh->e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
					     ? ELFDATA2LSB
					     : ELFDATA2MSB))
		return fail(EINVAL, "ELF byte order is not the host's");
	img->machine = eh->e_machine;
	if (eh->e_phentsize != sizeof(*ph))
		return fail(EINVAL, "e_phentsize is %u, not %zu",
			    eh->e_phentsize, sizeof(*ph));
	if (!in_image(img, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(*ph),
		      _Alignof(ELF_T(Phdr))))
		return fail(EINVAL,
			    "%u program headers at 0x%llx run past the end",
			    eh->e_phnum, (unsigned long long)eh->e_phoff);

	ph = (const ELF_T(Phdr) *)(img->base + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			have_load = true;
			img->load_vaddr = ph[i].p_vaddr;
			img->load_memsz = ph[i].p_memsz;
			img->load_offset = ph[i].p_offset;
		} else if (ph[i].p_type == PT_DYNAMIC) {
			have_dyn = true;
			dyn_off = ph[i].p_offset;
			dyn_size = ph[i].p_filesz;
		}
	}
	if (!have_load || !have_dyn)
		return fail(EINVAL, "no %s program header",
			    have_load ? "PT_DYNAMIC" : "PT_LOAD");
	if (read_dynamic(img, dyn_off, dyn_size, &t))
		return -1;
	return parse_tables(img, &t);
}

int vdso_image_open_mem(struct vdso_image **img, const void *base, size_t len)
{
	struct vdso_image *v;

	if (!img)
		return fail(EINVAL, "no handle to open into");
	*img = NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return fail(ENOMEM, "out of memory");
	v->base = base;
	v->len = len;
	if (parse(v)) {
		free(v);
		return -1;
	}
	vdso_err[0] = '\0';
	*img = v;
	return 0;
}

/* the "[vdso]" mapping's end, if /proc/self/maps has one around base */
static size_t maps_len(uintptr_t base)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t cap = 0, len = 0;

	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned long start, end;

		if (!strstr(line, "[vdso]") ||
		    sscanf(line, "%lx-%lx", &start, &end) != 2)
			continue;
		if (start <= base && base < end)
			len = end - base;
		break;
	}
	free(line);
	fclose(f);
	return len;
}

/*
 * Without /proc, trust the ELF headers as parse_vdso.c does: the image
 * reaches at least to the end of every PT_LOAD's file image. Only the first
 * page is sure to be there (it holds the ELF header), so program headers
 * that do not fit in it, or a bad magic or class, get that page alone and
 * parse() names the problem.
 */
static size_t elf_len(uintptr_t base)
{
	const ELF_T(Ehdr) *eh = (const ELF_T(Ehdr) *)base;
	const ELF_T(Phdr) *ph = (const ELF_T(Phdr) *)(base + eh->e_phoff);
	uint64_t page = getauxval(AT_PAGESZ) ?: 4096, len = page;
	unsigned int i;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELF_CLASS ||
	    eh->e_phentsize != sizeof(*ph) || eh->e_phoff > page ||
	    (uint64_t)eh->e_phnum * sizeof(*ph) > page - eh->e_phoff)
		return page;
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_filesz <= SIZE_MAX &&
		    ph[i].p_offset <= SIZE_MAX - ph[i].p_filesz &&
		    ph[i].p_offset + ph[i].p_filesz > len)
			len = ph[i].p_offset + ph[i].p_filesz;
	return len;
}

int vdso_image_open(struct vdso_image **img)
{
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	char why[sizeof(vdso_err)];
	size_t len;
	int err;

	if (!img)
		return fail(EINVAL, "no handle to open into");
	*img = NULL;
	if (!base)
		return fail(ENOENT,
			    "AT_SYSINFO_EHDR is 0: this kernel maps no vDSO");
	len = maps_len(base);
	if (!len)
		len = elf_len(base);
	if (vdso_image_open_mem(img, (const void *)base, len) == 0) {
		if (vdso_image_own_machine(*img))
			return 0;
		snprintf(why, sizeof(why), "its e_machine is %u, not this process's %u",
			 (*img)->machine, ELF_HOST_MACHINE);
		vdso_image_close(*img);
		*img = NULL;
		err = EINVAL;
	} else {
		/* say which image the parser's reason is about */
		err = errno;
		snprintf(why, sizeof(why), "%s", vdso_err);
	}
	return fail(err, "[vdso] at 0x%lx (%zu bytes): %s", (unsigned long)base,
		    len, why);
}

int vdso_image_machine(const struct vdso_image *img)
{
	return img ? (int)img->machine : -1;
}

bool vdso_image_own_machine(const struct vdso_image *img)
{
	return img && (!ELF_HOST_MACHINE || img->machine == ELF_HOST_MACHINE);
}

void vdso_image_close(struct vdso_image *img)
{
	free(img);
}

const void *vdso_image_base(const struct vdso_image *img)
{
	return img ? img->base : NULL;
}

size_t vdso_image_len(const struct vdso_image *img)
{
	return img ? img->len : 0;
}

static bool version_matches(const struct vdso_image *img, uint64_t i,
			    const char *version)
{
	const char *name;

	/* an unversioned image is what every version asks for (parse_vdso.c) */
	if (!version || !img->versym)
		return true;
	return verdef_name(img, img->versym[i] & 0x7fff, &name) == 1 &&
	       !strcmp(name, version);
}

/*
 * A linear walk rather than a hash lookup: it finds a symbol whatever the
 * image's hash table (SysV, GNU or a wrong one), and the harness looks up
 * four names once.
 */
void *vdso_image_sym(const struct vdso_image *img, const char *name,
		     const char *version)
{
	uint64_t i, off;

	if (!img || !name) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < img->nsyms; i++) {
		const ELF_T(Sym) *sym = &img->symtab[i];
		unsigned int bind = ELF_ST_BIND_OF(sym->st_info);
		const char *s;

		if (ELF_ST_TYPE_OF(sym->st_info) != STT_FUNC ||
		    (bind != STB_GLOBAL && bind != STB_WEAK) ||
		    sym->st_shndx == SHN_UNDEF)
			continue;
		s = str_at(img, sym->st_name);
		if (!s || strcmp(s, name) || !version_matches(img, i, version))
			continue;
		if (!vaddr_to_off(img, sym->st_value, &off))
			continue;
		return (void *)(uintptr_t)(img->base + off);
	}
	errno = ENOENT;
	return NULL;
}
