/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one reading of a vDSO image (a kernel's vdso64.so, or the vdso32.so
 * an x86-64 kernel maps for its i386 tasks: hostile input, either class):
 * the rules it must meet and what they find, as one pure function of its
 * bytes (nothing mapped, nothing executed, nothing written but *info).
 * impls/image/loader.c calls it first and maps only what it accepted;
 * vdsobench_image_check (check_main.c) runs it for `import --vdso-image`.
 * So an image that imports is an image that loads.
 *
 * The rules are the x86-64 kernel's for its vDSOs of v6.1..v6.12
 * (arch/x86/tools/vdso2c.h, which fails the kernel's build on an image it
 * cannot map: one PT_LOAD at offset and address 0 with p_memsz ==
 * p_filesz, no dynamic relocations; vdso-layout.lds.S; alternative.h's
 * struct alt_instr), and the ELF gABI's (one symbol table of each kind,
 * string tables that end in a NUL). Every offset the file gives is checked
 * before it is read, and each table is walked once: the time is linear in
 * the file's size. hwloc-style: 0, or -1 with a reason in why.
 */
#ifndef VDSOBENCH_IMAGE_CHECK_H
#define VDSOBENCH_IMAGE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define VDSO_IMAGE_PAGE 4096
/* v6.1..v6.12's vvar area, for an image without a symbol table (stripped) */
#define VDSO_IMAGE_VVAR_PAGES 4
#define VDSO_IMAGE_VVAR_START (-VDSO_IMAGE_VVAR_PAGES * VDSO_IMAGE_PAGE)

/* the counter read put in the image's rdtsc_ordered() slot */
enum vdso_image_counter {
	VDSO_IMAGE_RDTSC,	 /* the original: rdtsc, nop-padded */
	VDSO_IMAGE_LFENCE_RDTSC, /* X86_FEATURE_LFENCE_RDTSC's replacement */
	VDSO_IMAGE_RDTSCP,	 /* X86_FEATURE_RDTSCP's replacement */
	VDSO_IMAGE_FAKE,	 /* a call to fake_read: tests only */
	VDSO_IMAGE_KEEP,	 /* the bytes as they are (a running kernel's copy) */
	VDSO_IMAGE_NR_COUNTERS,
};

extern const char *const vdso_image_counter_names[VDSO_IMAGE_NR_COUNTERS];

/* the entry points; the first three are required (kernel_import/glue/image.h) */
enum vdso_image_sym {
	VDSO_IMAGE_CLOCK_GETTIME,
	VDSO_IMAGE_GETTIMEOFDAY,
	VDSO_IMAGE_TIME,
	VDSO_IMAGE_CLOCK_GETRES,
	VDSO_IMAGE_KERNEL_VSYSCALL, /* vdso32's system call gate, its fallbacks' */
	VDSO_IMAGE_NR_SYMS,
};

extern const char *const vdso_image_sym_names[VDSO_IMAGE_NR_SYMS];

/* an alternative's kind, told by its bytes (the feature numbers moved) */
enum vdso_image_alt_kind {
	VDSO_IMAGE_ALT_OTHER,	     /* not a counter slot: kept as it is */
	VDSO_IMAGE_ALT_LFENCE_RDTSC, /* rdtsc -> lfence; rdtsc */
	VDSO_IMAGE_ALT_RDTSCP,	     /* rdtsc -> rdtscp */
	/* v7.x's vdso32: ds;ds;ds;int $0x80 -> call __kernel_vsyscall (sysfast32.c) */
	VDSO_IMAGE_ALT_SYSCALL,
	/* vdso32's __kernel_vsyscall (gate32.c), last: */
	VDSO_IMAGE_ALT_GATE_SKIP,     /* v7.x: int $0x80; ret -> nothing */
	VDSO_IMAGE_ALT_GATE_SYSENTER, /* -> movl %esp, %ebp; sysenter */
	VDSO_IMAGE_ALT_GATE_SYSCALL,  /* -> movl %ecx, %ebp; syscall */
};

/* how vdso32's __kernel_vsyscall enters the kernel (gate32.c) */
enum vdso_image_gate {
	VDSO_IMAGE_GATE_HERE,	  /* as this process's kernel's own gate does (loader.c) */
	VDSO_IMAGE_GATE_INT80,	  /* int $0x80: the gate's alternatives not applied */
	VDSO_IMAGE_GATE_SYSENTER, /* X86_FEATURE_SYSENTER32's (Intel, Centaur, Zhaoxin) */
	VDSO_IMAGE_GATE_SYSCALL,  /* X86_FEATURE_SYSCALL32's (AMD, Hygon) */
	VDSO_IMAGE_NR_GATES,
};

extern const char *const vdso_image_gate_names[VDSO_IMAGE_NR_GATES];

struct vdso_image_alt {
	uint64_t instr, repl; /* offsets in the image */
	uint32_t feature;     /* ft_flags' cpuid, or v6.1's */
	uint32_t flags;	      /* ft_flags' patching flags (ALT_FLAG_NOT ...): 0 in v6.1 */
	uint8_t instrlen, replacementlen;
	enum vdso_image_alt_kind kind;
};

struct vdso_image_info {
	const uint8_t *elf;
	int elf_class; /* 64: a vdso64.so (x86-64), 32: a vdso32.so (i386) */
	size_t span; /* the PT_LOAD's p_filesz (== p_memsz): the bytes mapped */
	long vvar_start; /* the vvar area relative to the image: whole pages before it */
	int vvar_pages;
	/* the area's time data page and time namespace page, the data's offset in each */
	int data_page, timens_page, data_offset;
	/*
	 * the area's pages x86's vread_pvclock() and vread_hvclock() load
	 * (pvclock_page, hvclock_page); -1: not known
	 */
	int pvclock_page, hvclock_page;
	int64_t sym[VDSO_IMAGE_NR_SYMS]; /* offset in the image; -1: not exported */
	/* .altinstructions and .altinstr_replacement (alt_size 0: none) */
	uint64_t alt_addr, alt_size, repl_addr, repl_size;
	unsigned int alt_entry; /* struct alt_instr: 14 bytes from v6.3, 12 before */
	int alts;		/* its entries */
	int lfence_slots, rdtscp_slots; /* the counter alternatives of each kind */
	int syscall_sites; /* the system call alternatives (VDSO_IMAGE_ALT_SYSCALL) */
	int gate_sites;	   /* __kernel_vsyscall's alternatives (VDSO_IMAGE_ALT_GATE_*) */
};

/*
 * The image as the loader would take it for this counter; vvar_start and
 * vvar_pages are the vvar area when the file has no symbol table that says.
 * An image of the generic data store (v6.15 on) is placed by its .symtab's
 * vdso_u_data and vdso_u_time_data; without them (stripped) and given
 * VDSO_IMAGE_VVAR_START (v6.1..v6.14's), one whose "Linux" note says v6.15
 * or later is refused: its data pages are laid out otherwise.
 */
int vdso_image_check(struct vdso_image_info *info, const void *elf, size_t len,
		     enum vdso_image_counter counter, long vvar_start, int vvar_pages, char *why,
		     size_t why_len);

/* the counters an import's +image variants load it with (kernel_import/imports.bzl) */
#define VDSO_IMAGE_IMPORT_COUNTERS                                           \
	((1u << VDSO_IMAGE_RDTSC) | (1u << VDSO_IMAGE_LFENCE_RDTSC) |        \
	 (1u << VDSO_IMAGE_RDTSCP) | (1u << VDSO_IMAGE_FAKE))

/*
 * vdso_image_check() for each counter of the mask (1 << counter), with
 * v6.1..v6.12's vvar area: the first refusal, or 0 and the last one's info
 */
int vdso_image_check_each(struct vdso_image_info *info, const void *elf, size_t len,
			  unsigned int counters, char *why, size_t why_len);

/* alternatives.c: entry k (< info->alts) of a checked image */
void vdso_image_alt(const struct vdso_image_info *info, int k, struct vdso_image_alt *a);
/* the slots the counter's patch rewrites */
int vdso_image_slots(const struct vdso_image_info *info, enum vdso_image_counter counter);
/* the system call alternatives the patch applies: all but for VDSO_IMAGE_KEEP */
int vdso_image_syscalls(const struct vdso_image_info *info, enum vdso_image_counter counter);
/*
 * apply_alternatives() for the counter on img, a copy of the image's span
 * bytes: reads only the file, writes only the slots and the system call
 * alternatives. The fake counter's slots call the thunk at image offset
 * thunk_off.
 */
void vdso_image_patch(const struct vdso_image_info *info, uint8_t *img,
		      enum vdso_image_counter counter, uint64_t thunk_off);

/*
 * gate32.c: the fast entry a gate's first n bytes of code make right after
 * push %ecx; push %edx; push %ebp (a running kernel's patched
 * __kernel_vsyscall), or VDSO_IMAGE_GATE_INT80: none there, or an int
 * $0x80 before them (v7.x's, SYSFAST32 clear)
 */
enum vdso_image_gate vdso_image_gate_of(const uint8_t *code, size_t n);
/*
 * the same of a mapped gate (a process's AT_SYSINFO): its first 32 bytes,
 * never past the end of its page, which is mapped wherever the gate lies
 */
enum vdso_image_gate vdso_image_gate_at(const uint8_t *gate);
/* the gate's alternatives that gate applies */
int vdso_image_gates(const struct vdso_image_info *info, enum vdso_image_gate gate);
/*
 * apply_alternatives() for __kernel_vsyscall's entries on img (a copy of
 * the image, patched or not): writes only their slots
 */
void vdso_image_patch_gate(const struct vdso_image_info *info, uint8_t *img,
			   enum vdso_image_gate gate);

/* sysfast32.c: the ds;ds;ds;int $0x80 in len bytes (left in place once patched) */
int vdso_image_count_int80(const uint8_t *img, size_t len);

/* why's one line, printf-style; -1 */
int vdso_image_fail(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* VDSOBENCH_IMAGE_CHECK_H */
