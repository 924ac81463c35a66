// SPDX-License-Identifier: GPL-2.0
/*
 * impls/image/check.h: the image's alternatives (.altinstructions), their
 * rules and the counter's patch, as v6.12's arch/x86/kernel/alternative.c
 * apply_alternatives() and optimize_nops() leave the rdtsc_ordered() slots
 * (arch/x86/include/asm/msr.h: ALTERNATIVE_2 of rdtsc, "lfence; rdtsc"
 * for X86_FEATURE_LFENCE_RDTSC, rdtscp for X86_FEATURE_RDTSCP), v7.x's
 * vdso32 system calls (sysfast32.c) and vdso32's gate (gate32.c). The
 * slots are told by their bytes, so the feature numbers, which moved (114
 * in v6.1, 642 in v6.12), need not be known. Other sites (vgetcpu's RDPID)
 * keep their original, as on a CPU without the feature.
 *
 * Everything is read from the file and only the slots and the system call
 * sites are written, so what the check counts is what the patch does,
 * whatever the order of the entries.
 */
#include "impls/image/view.h"

static bool overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return a < b + bn && b < a + an;
}

static const uint8_t op_rdtsc[] = { 0x0f, 0x31 };
static const uint8_t op_lfence_rdtsc[] = { 0x0f, 0xae, 0xe8, 0x0f, 0x31 };
static const uint8_t op_rdtscp[] = { 0x0f, 0x01, 0xf9 };

/*
 * arch/x86/include/asm/nops.h: x86_nops[], the 64-bit ones, for a vdso32.so
 * too: an x86-64 kernel patches its vdso32 image with its own
 * apply_alternatives() (vma.c init_vdso_image()), so with these.
 */
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

/* alternative.c add_nop(): the longest nops first */
void vdso_image_add_nops(uint8_t *p, unsigned int n)
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
 * arch/x86/include/asm/alternative.h struct alt_instr, packed: 14 bytes
 * from v6.3 (u32 ft_flags), 12 before (u16 cpuid, as in v6.1).
 */
static void entry(const struct vdso_image_info *info, unsigned int size, uint64_t at,
		  struct vdso_image_alt *a)
{
	const uint8_t *p = info->elf + at;
	int32_t instr, repl;
	uint32_t ft_flags = 0;

	memcpy(&instr, p, 4);
	memcpy(&repl, p + 4, 4);
	memcpy(&ft_flags, p + 8, size - 10);
	a->instr = (uint64_t)((int64_t)at + instr);
	a->repl = (uint64_t)((int64_t)at + 4 + repl);
	a->feature = ft_flags & 0xffff;
	a->flags = ft_flags >> 16; /* 0 in a 12-byte entry: two bytes read */
	a->instrlen = p[size - 2];
	a->replacementlen = p[size - 1];
	a->kind = VDSO_IMAGE_ALT_OTHER;
}

/* instr inside the image, repl inside .altinstr_replacement and no longer */
static bool points_inside(const struct vdso_image_info *info, const struct vdso_image_alt *a)
{
	return vdso_inside(a->instr, a->instrlen, info->span) && a->repl >= info->repl_addr &&
	       vdso_inside(a->repl - info->repl_addr, a->replacementlen, info->repl_size) &&
	       a->replacementlen <= a->instrlen;
}

/*
 * The entry size whose every entry points inside (both sizes divide some
 * sections: 84 bytes in Debian's 6.1), or 0.
 */
static unsigned int entry_size(const struct vdso_image_info *info)
{
	static const unsigned int sizes[] = { 14, 12 };

	for (unsigned int i = 0; i < 2; i++) {
		bool ok = info->alt_size % sizes[i] == 0;

		for (uint64_t k = 0; ok && k < info->alt_size; k += sizes[i]) {
			struct vdso_image_alt a;

			entry(info, sizes[i], info->alt_addr + k, &a);
			ok = points_inside(info, &a);
		}
		if (ok)
			return sizes[i];
	}
	return 0;
}

void vdso_image_alt(const struct vdso_image_info *info, int k, struct vdso_image_alt *a)
{
	const uint8_t *orig, *r;

	entry(info, info->alt_entry, info->alt_addr + (uint64_t)k * info->alt_entry, a);
	orig = info->elf + a->instr;
	r = info->elf + a->repl;
	if (vdso_image_is_syscall(orig, a->instrlen)) {
		a->kind = VDSO_IMAGE_ALT_SYSCALL;
		return;
	}
	a->kind = vdso_image_gate_kind(info, a);
	if (a->kind != VDSO_IMAGE_ALT_OTHER)
		return;
	if (!starts(orig, a->instrlen, op_rdtsc, sizeof(op_rdtsc)))
		return;
	/* a slot is at least its replacement long: an lfence one has room for a call */
	if (starts(r, a->replacementlen, op_lfence_rdtsc, sizeof(op_lfence_rdtsc)))
		a->kind = VDSO_IMAGE_ALT_LFENCE_RDTSC;
	else if (starts(r, a->replacementlen, op_rdtscp, sizeof(op_rdtscp)))
		a->kind = VDSO_IMAGE_ALT_RDTSCP;
}

static int kinds(struct vdso_image_info *info, char *why, size_t n)
{
	for (int k = 0; k < info->alts; k++) {
		struct vdso_image_alt a;

		vdso_image_alt(info, k, &a);
		/* a patch may not rewrite what the others read */
		if (overlap(a.instr, a.instrlen, info->alt_addr, info->alt_size) ||
		    overlap(a.instr, a.instrlen, info->repl_addr, info->repl_size))
			return fail(why, n, "an alternative's instruction at 0x%llx is inside "
				    ".altinstructions or .altinstr_replacement",
				    (unsigned long long)a.instr);
		if (a.kind == VDSO_IMAGE_ALT_SYSCALL && vdso_image_check_syscall(info, &a, why, n))
			return -1;
		if (a.kind >= VDSO_IMAGE_ALT_GATE_SKIP && vdso_image_check_gate(info, &a, why, n))
			return -1;
		info->gate_sites += a.kind >= VDSO_IMAGE_ALT_GATE_SKIP;
		info->syscall_sites += a.kind == VDSO_IMAGE_ALT_SYSCALL;
		info->lfence_slots += a.kind == VDSO_IMAGE_ALT_LFENCE_RDTSC;
		info->rdtscp_slots += a.kind == VDSO_IMAGE_ALT_RDTSCP;
	}
	return 0;
}

int vdso_image_check_alternatives(struct vdso_image_info *info, enum vdso_image_counter counter,
				  char *why, size_t n)
{
	if (info->alt_size) {
		if (!vdso_inside(info->alt_addr, info->alt_size, info->span) ||
		    !vdso_inside(info->repl_addr, info->repl_size, info->span))
			return fail(why, n, "its .altinstructions or .altinstr_replacement is "
				    "outside the image");
		if (overlap(info->alt_addr, info->alt_size, info->repl_addr, info->repl_size))
			return fail(why, n, "its .altinstructions and .altinstr_replacement "
				    "overlap");
		info->alt_entry = entry_size(info);
		if (!info->alt_entry)
			return fail(why, n, "its .altinstructions is neither of 14- nor of 12-byte "
				    "entries pointing inside the image");
		info->alts = (int)(info->alt_size / info->alt_entry);
		if (kinds(info, why, n))
			return -1;
	}
	if (counter == VDSO_IMAGE_KEEP || vdso_image_slots(info, counter))
		return 0;
	if (counter == VDSO_IMAGE_RDTSCP)
		return fail(why, n, "it has no rdtsc_ordered() slot with an rdtscp replacement "
			    "among its %d alternatives", info->alts);
	return fail(why, n, "it has no rdtsc_ordered() slot with an lfence_rdtsc replacement "
		    "among its %d alternatives", info->alts);
}

int vdso_image_slots(const struct vdso_image_info *info, enum vdso_image_counter counter)
{
	if (counter == VDSO_IMAGE_KEEP)
		return 0;
	return counter == VDSO_IMAGE_RDTSCP ? info->rdtscp_slots : info->lfence_slots;
}

int vdso_image_syscalls(const struct vdso_image_info *info, enum vdso_image_counter counter)
{
	return counter == VDSO_IMAGE_KEEP ? 0 : info->syscall_sites;
}

/*
 * Each slot once: by its lfence_rdtsc alternative (every rdtsc_ordered()
 * has one), by its rdtscp one for rdtscp; each system call alternative, in
 * the table's order (apply_alternatives()'s).
 */
void vdso_image_patch(const struct vdso_image_info *info, uint8_t *img,
		      enum vdso_image_counter counter, uint64_t thunk_off)
{
	enum vdso_image_alt_kind want = counter == VDSO_IMAGE_RDTSCP
						? VDSO_IMAGE_ALT_RDTSCP
						: VDSO_IMAGE_ALT_LFENCE_RDTSC;

	if (counter == VDSO_IMAGE_KEEP)
		return;
	for (int k = 0; k < info->alts; k++) {
		struct vdso_image_alt a;
		uint8_t *p = img;
		unsigned int done;

		vdso_image_alt(info, k, &a);
		if (a.kind == VDSO_IMAGE_ALT_SYSCALL)
			vdso_image_patch_syscall(info, img, &a);
		if (a.kind != want)
			continue;
		p += a.instr;
		if (counter == VDSO_IMAGE_RDTSC) {
			done = sizeof(op_rdtsc);
			memcpy(p, op_rdtsc, done);
		} else if (counter == VDSO_IMAGE_FAKE) {
			/* a call rel32 to the thunk: the span is at most 64 MiB */
			int32_t rel = (int32_t)((int64_t)thunk_off - (int64_t)(a.instr + 5));

			p[0] = 0xe8;
			memcpy(p + 1, &rel, 4);
			done = 5;
		} else {
			done = a.replacementlen;
			memcpy(p, info->elf + a.repl, done);
		}
		vdso_image_add_nops(p + done, a.instrlen - done);
	}
}
