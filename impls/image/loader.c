// SPDX-License-Identifier: GPL-2.0
/*
 * impls/image/loader.h: map a vdso64.so as the x86-64 kernel does
 * (follows v6.12: arch/x86/entry/vdso/vma.c, vdso2c.h, vdso-layout.lds.S,
 * arch/x86/kernel/alternative.c; v6.1 is the same for what is used here).
 */
#define _GNU_SOURCE
#include "impls/image/loader.h"

#include <elf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

const char *const vdso_image_sym_names[VDSO_IMAGE_NR_SYMS] = {
	[VDSO_IMAGE_CLOCK_GETTIME] = "__vdso_clock_gettime",
	[VDSO_IMAGE_GETTIMEOFDAY] = "__vdso_gettimeofday",
	[VDSO_IMAGE_TIME] = "__vdso_time",
	[VDSO_IMAGE_CLOCK_GETRES] = "__vdso_clock_getres",
};

/* [off, off + n) inside [0, len), without overflow */
static bool inside(uint64_t off, uint64_t n, uint64_t len)
{
	return off <= len && n <= len - off;
}

/*
 * arch/x86/include/asm/alternative.h struct alt_instr, packed: 14 bytes
 * from v6.3 (u32 ft_flags), 12 before (u16 cpuid, as in v6.1). Both
 * divide some section sizes, so the size is the one whose every entry
 * points inside the image and its replacements inside .altinstr_replacement.
 */
struct alt_instr {
	int32_t instr_offset;
	int32_t repl_offset;
	uint32_t ft_flags;
	uint8_t instrlen;
	uint8_t replacementlen;
};

static void alt_at(const uint8_t *p, unsigned int size, struct alt_instr *a)
{
	memcpy(&a->instr_offset, p, 4);
	memcpy(&a->repl_offset, p + 4, 4);
	a->ft_flags = 0;
	memcpy(&a->ft_flags, p + 8, size - 10);
	a->instrlen = p[size - 2];
	a->replacementlen = p[size - 1];
}

/* instr and repl of entry k at address at, when both are in bounds */
static bool alt_ok(const struct alt_instr *a, uint64_t at, uint64_t len, const Elf64_Shdr *rs,
		   int64_t *instr, int64_t *repl)
{
	*instr = (int64_t)at + a->instr_offset;
	*repl = (int64_t)at + 4 + a->repl_offset;
	if (*instr < 0 || *repl < 0 || !inside((uint64_t)*instr, a->instrlen, len) ||
	    !inside((uint64_t)*repl, a->replacementlen, len) ||
	    a->replacementlen > a->instrlen)
		return false;
	return !rs || (rs->sh_addr <= (uint64_t)*repl &&
		       inside((uint64_t)*repl - rs->sh_addr, a->replacementlen, rs->sh_size));
}

static unsigned int alt_size(const uint8_t *base, uint64_t addr, uint64_t size, uint64_t len,
			     const Elf64_Shdr *rs)
{
	static const unsigned int sizes[] = { 14, 12 };

	for (unsigned int i = 0; i < 2; i++) {
		bool ok = size % sizes[i] == 0;

		for (uint64_t k = 0; ok && k < size; k += sizes[i]) {
			struct alt_instr a;
			int64_t instr, repl;

			alt_at(base + addr + k, sizes[i], &a);
			ok = alt_ok(&a, addr + k, len, rs, &instr, &repl);
		}
		if (ok)
			return sizes[i];
	}
	return 0;
}

/* arch/x86/include/asm/nops.h: x86_nops[], the 64-bit ones */
static const uint8_t nops[9][8] = {
	{ 0 },
	{ 0x90 },
	{ 0x66, 0x90 },
	{ 0x0f, 0x1f, 0x00 },
	{ 0x0f, 0x1f, 0x40, 0x00 },
	{ 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	{ 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
	{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
	{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
};

static const uint8_t op_rdtsc[] = { 0x0f, 0x31 };
static const uint8_t op_lfence_rdtsc[] = { 0x0f, 0xae, 0xe8, 0x0f, 0x31 };
static const uint8_t op_rdtscp[] = { 0x0f, 0x01, 0xf9 };

static int fail(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (why && n)
		vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* alternative.c add_nop(): the longest nops first */
static void add_nops(uint8_t *p, unsigned int n)
{
	while (n) {
		unsigned int k = n > 8 ? 8 : n;

		memcpy(p, nops[k], k);
		p += k;
		n -= k;
	}
}

static bool starts(const uint8_t *p, unsigned int n, const uint8_t *op, unsigned int opn)
{
	return n >= opn && !memcmp(p, op, opn);
}

/*
 * The thunk the fake counter's slot calls, rdtsc's contract (only eax and
 * edx change; the vDSO is built with -mno-red-zone): the counter is a
 * thread-local variable of the executable (static TLS: one offset from
 * the thread pointer in every thread), loaded fs-relative, as the
 * project's fake counter read (impls/counters/fake.h) loads it. Five
 * instructions and the call, where the layouts' fake read is one load.
 */
static size_t write_thunk(uint8_t *t, int32_t tls_offset)
{
	static const uint8_t load[] = { 0x64, 0x48, 0x8b, 0x04, 0x25 }; /* mov rax, fs:[d32] */
	static const uint8_t rest[] = {
		0x48, 0x89, 0xc2,	/* mov rdx, rax */
		0x48, 0xc1, 0xea, 0x20, /* shr rdx, 32 */
		0x89, 0xc0,		/* mov eax, eax */
		0xc3,			/* ret */
	};
	size_t n = 0;

	memcpy(t, load, sizeof(load));
	n += sizeof(load);
	memcpy(t + n, &tls_offset, 4);
	n += 4;
	memcpy(t + n, rest, sizeof(rest));
	return n + sizeof(rest);
}

struct elf_view {
	const uint8_t *p;
	size_t len;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh; /* NULL: no section headers */
	const char *shstr;
	size_t shstr_len;
};

static const Elf64_Shdr *section(const struct elf_view *e, const char *name)
{
	if (!e->sh)
		return NULL;
	for (unsigned int i = 0; i < e->eh->e_shnum; i++) {
		uint32_t n = e->sh[i].sh_name;

		if (n < e->shstr_len && !strncmp(e->shstr + n, name, e->shstr_len - n) &&
		    strlen(name) < e->shstr_len - n)
			return &e->sh[i];
	}
	return NULL;
}

/* a symbol's value from a symbol table section and its string table; -1: none */
static int find_sym(const struct elf_view *e, uint32_t type, const char *name, uint64_t *val)
{
	if (!e->sh)
		return -1;
	for (unsigned int i = 0; i < e->eh->e_shnum; i++) {
		const Elf64_Shdr *s = &e->sh[i], *str;

		if (s->sh_type != type || s->sh_link >= e->eh->e_shnum ||
		    s->sh_entsize != sizeof(Elf64_Sym) || !inside(s->sh_offset, s->sh_size, e->len))
			continue;
		str = &e->sh[s->sh_link];
		if (!inside(str->sh_offset, str->sh_size, e->len))
			continue;
		for (uint64_t k = 0; k < s->sh_size / sizeof(Elf64_Sym); k++) {
			Elf64_Sym sym;
			const char *sn;

			memcpy(&sym, e->p + s->sh_offset + k * sizeof(sym), sizeof(sym));
			if (sym.st_name >= str->sh_size)
				continue;
			sn = (const char *)e->p + str->sh_offset + sym.st_name;
			if (strnlen(sn, str->sh_size - sym.st_name) == strlen(name) &&
			    !strcmp(sn, name) && sym.st_shndx != SHN_UNDEF) {
				*val = sym.st_value;
				return 0;
			}
		}
	}
	return -1;
}

static int check_header(struct elf_view *e, char *why, size_t n)
{
	const Elf64_Ehdr *eh = (const void *)e->p;

	if (e->len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return fail(why, n, "not an ELF file");
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_machine != EM_X86_64 || eh->e_type != ET_DYN)
		return fail(why, n, "not an x86-64 shared object (a vdso64.so is one)");
	if (eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !inside(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), e->len) ||
	    eh->e_phoff % 8)
		return fail(why, n, "its program headers are outside the file");
	e->eh = eh;
	e->sh = NULL;
	if (eh->e_shnum && eh->e_shentsize == sizeof(Elf64_Shdr) && !(eh->e_shoff % 8) &&
	    inside(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), e->len) &&
	    eh->e_shstrndx < eh->e_shnum) {
		const Elf64_Shdr *sh = (const void *)(e->p + eh->e_shoff);
		const Elf64_Shdr *ss = &sh[eh->e_shstrndx];

		if (inside(ss->sh_offset, ss->sh_size, e->len)) {
			e->sh = sh;
			e->shstr = (const char *)e->p + ss->sh_offset;
			e->shstr_len = ss->sh_size;
		}
	}
	return 0;
}

/* DT_RELA: only R_X86_64_RELATIVE, as the vDSO's link (-shared, no imports) has */
static int relocate(struct vdso_loaded *img, const struct elf_view *e, const Elf64_Phdr *dyn,
		    char *why, size_t n)
{
	uint64_t rela = 0, relasz = 0, relaent = sizeof(Elf64_Rela);

	if (!dyn)
		return 0;
	if (!inside(dyn->p_vaddr, dyn->p_memsz, img->len))
		return fail(why, n, "its PT_DYNAMIC is outside its PT_LOAD");
	for (uint64_t k = 0; k + sizeof(Elf64_Dyn) <= dyn->p_memsz; k += sizeof(Elf64_Dyn)) {
		Elf64_Dyn d;

		memcpy(&d, img->base + dyn->p_vaddr + k, sizeof(d));
		if (d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_RELA)
			rela = d.d_un.d_ptr;
		else if (d.d_tag == DT_RELASZ)
			relasz = d.d_un.d_val;
		else if (d.d_tag == DT_RELAENT)
			relaent = d.d_un.d_val;
		else if (d.d_tag == DT_REL || d.d_tag == DT_JMPREL || d.d_tag == DT_NEEDED)
			return fail(why, n, "it has dynamic tag %lld (a vDSO has no imports)",
				    (long long)d.d_tag);
	}
	(void)e;
	if (!relasz)
		return 0;
	if (relaent != sizeof(Elf64_Rela) || !inside(rela, relasz, img->len))
		return fail(why, n, "its DT_RELA table is outside the image");
	for (uint64_t k = 0; k + sizeof(Elf64_Rela) <= relasz; k += sizeof(Elf64_Rela)) {
		Elf64_Rela r;
		uint64_t v;

		memcpy(&r, img->base + rela + k, sizeof(r));
		if (ELF64_R_TYPE(r.r_info) == R_X86_64_NONE)
			continue;
		if (ELF64_R_TYPE(r.r_info) != R_X86_64_RELATIVE)
			return fail(why, n, "relocation type %u (only R_X86_64_RELATIVE is valid)",
				    (unsigned int)ELF64_R_TYPE(r.r_info));
		if (!inside(r.r_offset, 8, img->len) || (uint64_t)r.r_addend >= img->len)
			return fail(why, n, "a relocation outside the image");
		v = (uint64_t)(uintptr_t)img->base + (uint64_t)r.r_addend;
		memcpy(img->base + r.r_offset, &v, 8);
		img->relocs++;
	}
	return 0;
}

/*
 * apply_alternatives() for the counter slots: the sites whose original is
 * rdtsc and whose replacement is lfence; rdtsc or rdtscp (rdtsc_ordered()'s
 * alternative_2). Told apart by the replacement's bytes, so the feature
 * numbers (which moved between versions: X86_FEATURE_LFENCE_RDTSC is
 * 3*32+18 in v6.1 and 20*32+2 in v6.12) need not be known. Other sites
 * (vgetcpu's RDPID) keep their original, as on a CPU without the feature.
 */
static int alternatives(struct vdso_loaded *img, const struct elf_view *e,
			const struct vdso_image_opts *o, uint8_t *thunk, char *why, size_t n)
{
	const Elf64_Shdr *s = section(e, ".altinstructions");
	const Elf64_Shdr *rs = section(e, ".altinstr_replacement");
	unsigned int size;

	if (!s)
		return o->counter == VDSO_IMAGE_RDTSC || o->counter == VDSO_IMAGE_KEEP
			       ? 0
			       : fail(why, n, "it has no .altinstructions to patch the counter in");
	if (!inside(s->sh_addr, s->sh_size, img->len))
		return fail(why, n, "its .altinstructions is outside the image");
	size = alt_size(img->base, s->sh_addr, s->sh_size, img->len, rs);
	if (!size)
		return fail(why, n, "its .altinstructions is neither of 14- nor of 12-byte "
			    "entries pointing inside the image");
	for (uint64_t k = 0; k < s->sh_size; k += size) {
		struct alt_instr a;
		uint64_t at = s->sh_addr + k;
		int64_t instr, repl;
		const uint8_t *r;
		uint8_t *p;
		unsigned int len;

		alt_at(img->base + at, size, &a);
		alt_ok(&a, at, img->len, rs, &instr, &repl); /* alt_size() checked each */
		img->alts++;
		p = img->base + instr;
		r = img->base + repl;
		len = a.instrlen;
		if (!starts(p, len, op_rdtsc, sizeof(op_rdtsc)) ||
		    !(starts(r, a.replacementlen, op_lfence_rdtsc, sizeof(op_lfence_rdtsc)) ||
		      starts(r, a.replacementlen, op_rdtscp, sizeof(op_rdtscp))))
			continue;
		if (o->counter == VDSO_IMAGE_KEEP)
			continue;
		if (o->counter == VDSO_IMAGE_RDTSC) {
			if (!starts(r, a.replacementlen, op_lfence_rdtsc, sizeof(op_lfence_rdtsc)))
				continue; /* one of the site's two: count it once */
			add_nops(p + sizeof(op_rdtsc), len - sizeof(op_rdtsc));
		} else if (o->counter == VDSO_IMAGE_LFENCE_RDTSC &&
			   starts(r, a.replacementlen, op_lfence_rdtsc, sizeof(op_lfence_rdtsc))) {
			memcpy(p, r, a.replacementlen);
			add_nops(p + a.replacementlen, len - a.replacementlen);
		} else if (o->counter == VDSO_IMAGE_RDTSCP &&
			   starts(r, a.replacementlen, op_rdtscp, sizeof(op_rdtscp))) {
			memcpy(p, r, a.replacementlen);
			add_nops(p + a.replacementlen, len - a.replacementlen);
		} else if (o->counter == VDSO_IMAGE_FAKE) {
			int64_t rel = (int64_t)(thunk - (p + 5));

			if (len < 5)
				return fail(why, n, "its counter slot has %u bytes, a call needs 5",
					    len);
			p[0] = 0xe8;
			memcpy(p + 1, &(int32_t){ (int32_t)rel }, 4);
			add_nops(p + 5, len - 5);
		} else {
			continue; /* the other replacement of the same slot */
		}
		img->slots++;
	}
	/* each slot has two replacements: count the sites */
	if (o->counter != VDSO_IMAGE_KEEP && !img->slots)
		return fail(why, n, "it has no rdtsc_ordered() slot among its %d alternatives",
			    img->alts);
	return 0;
}

static int entry_points(struct vdso_loaded *img, const struct elf_view *e, char *why, size_t n)
{
	for (int i = 0; i < VDSO_IMAGE_NR_SYMS; i++) {
		uint64_t v;

		img->sym[i] = NULL;
		if (find_sym(e, SHT_DYNSYM, vdso_image_sym_names[i], &v))
			continue;
		if (v >= img->len)
			return fail(why, n, "%s is outside the image", vdso_image_sym_names[i]);
		img->sym[i] = img->base + v;
	}
	if (!img->sym[VDSO_IMAGE_CLOCK_GETTIME])
		return fail(why, n, "it exports no __vdso_clock_gettime");
	return 0;
}

int vdso_image_map(struct vdso_loaded *img, const void *elf, size_t len,
		   const struct vdso_image_opts *o, char *why, size_t n)
{
	struct elf_view e = { .p = elf, .len = len };
	const Elf64_Phdr *ph, *load = NULL, *dyn = NULL;
	uint64_t vs;
	size_t vvar_len;

	memset(img, 0, sizeof(*img));
	if (check_header(&e, why, n))
		return -1;
	ph = (const void *)(e.p + e.eh->e_phoff);
	for (unsigned int i = 0; i < e.eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD) {
			if (load)
				return fail(why, n, "it has two PT_LOAD segments (a vDSO has one)");
			load = &ph[i];
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = &ph[i];
		}
	}
	if (!load || load->p_vaddr != 0 || load->p_offset != 0 ||
	    load->p_filesz > load->p_memsz || !inside(0, load->p_filesz, len) ||
	    load->p_memsz > (64u << 20))
		return fail(why, n, "its PT_LOAD is not one segment at address 0 of the file");
	img->len = (load->p_memsz + VDSO_IMAGE_PAGE - 1) & ~(size_t)(VDSO_IMAGE_PAGE - 1);
	img->vvar_start = o->vvar_start;
	img->vvar_pages = o->vvar_pages;
	if (!find_sym(&e, SHT_SYMTAB, "vvar_start", &vs)) {
		img->vvar_start = (long)(int64_t)vs; /* vdso-layout.lds.S: . - 4 * PAGE_SIZE */
		img->vvar_pages = (int)(-img->vvar_start / VDSO_IMAGE_PAGE);
	}
	if (img->vvar_start >= 0 || img->vvar_start % VDSO_IMAGE_PAGE ||
	    img->vvar_pages * (long)VDSO_IMAGE_PAGE != -img->vvar_start || img->vvar_pages > 16)
		return fail(why, n, "vvar_start %ld: not whole pages before the image",
			    img->vvar_start);
	vvar_len = (size_t)img->vvar_pages * VDSO_IMAGE_PAGE;
	img->map_len = vvar_len + img->len + VDSO_IMAGE_PAGE;
	if (o->at && (o->at_len != img->map_len || (uintptr_t)o->at % VDSO_IMAGE_PAGE))
		return fail(why, n, "the image needs %zu bytes of mapping, the caller has %zu",
			    img->map_len, o->at_len);
	img->map = mmap(o->at, img->map_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | (o->at ? MAP_FIXED : 0), -1, 0);
	if (img->map == MAP_FAILED) {
		img->map = NULL;
		return fail(why, n, "mmap: %m");
	}
	img->fixed = !!o->at;
	img->vvar = img->map;
	img->base = img->map + vvar_len;
	memcpy(img->base, e.p, load->p_filesz);
	if (relocate(img, &e, dyn, why, n) ||
	    alternatives(img, &e, o, img->base + img->len, why, n) ||
	    entry_points(img, &e, why, n))
		goto out;
	if (o->counter == VDSO_IMAGE_FAKE) {
		intptr_t off = (intptr_t)o->fake_counter - (intptr_t)__builtin_thread_pointer();

		if (!o->fake_counter || off != (int32_t)off) {
			fail(why, n, "the fake counter is not a static thread-local variable");
			goto out;
		}
		write_thunk(img->base + img->len, (int32_t)off);
	}
	if (mprotect(img->vvar, vvar_len, PROT_READ) ||
	    mprotect(img->base, img->len + VDSO_IMAGE_PAGE, PROT_READ | PROT_EXEC)) {
		fail(why, n, "mprotect: %m");
		goto out;
	}
	return 0;
out:
	vdso_image_unmap(img);
	return -1;
}

void vdso_image_unmap(struct vdso_loaded *img)
{
	if (img->map && img->fixed)
		mmap(img->map, img->map_len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	else if (img->map)
		munmap(img->map, img->map_len);
	img->map = NULL;
}
