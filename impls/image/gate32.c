// SPDX-License-Identifier: GPL-2.0
/*
 * impls/image/check.h: vdso32's system call gate, __kernel_vsyscall
 * (arch/x86/entry/vdso/vdso32/system_call.S), its alternatives, their
 * rules and their patch. It pushes ecx, edx and ebp, then enters the
 * kernel by the CPU's fast instruction, which the kernel patches in at
 * boot:
 *
 *	v6.x: ALTERNATIVE_2 "", SYSENTER_SEQUENCE, X86_FEATURE_SYSENTER32,
 *	                        SYSCALL_SEQUENCE,  X86_FEATURE_SYSCALL32
 *	v7.x: ALTERNATIVE "int $0x80; ret", "", X86_FEATURE_SYSFAST32
 *	      (before the pushes), and
 *	      ALTERNATIVE SYSENTER_SEQUENCE, SYSCALL_SEQUENCE, X86_FEATURE_SYSCALL32
 *
 * with SYSENTER_SEQUENCE "movl %esp, %ebp; sysenter" (89 e5 0f 34) and
 * SYSCALL_SEQUENCE "movl %ecx, %ebp; syscall" (89 cd 0f 05). An x86-64
 * kernel sets SYSENTER32 on Intel, Centaur and Zhaoxin, SYSCALL32 on AMD
 * and Hygon, and (v7.x) SYSFAST32 on every CPU. Left unpatched, the gate
 * is int $0x80 (7.2 us a call against sysenter's 134 ns on one Intel
 * guest), which no x86-64 kernel maps.
 *
 * Hazard: the kernel returns from a fast entry to the landing pad of the
 * vDSO it mapped (do_fast_syscall_32(): mm->context.vdso +
 * sym_int80_landing_pad), never to the caller's copy: an image mapped by
 * the loader returns through the running kernel's gate, whose pops must
 * be what this gate pushed. So a fast-entry slot is taken only right
 * after push %ecx; push %edx; push %ebp (51 52 55), and the loader
 * chooses the fast entry only where the running gate has the same shape
 * (loader.c). Anything else shaped like a gate entry is refused in one
 * line. The feature numbers are not read (told by the bytes).
 */
#include "impls/image/view.h"

static const uint8_t op_int80_ret[] = { 0xcd, 0x80, 0xc3 };	 /* int $0x80; ret */
static const uint8_t op_sysenter[] = { 0x89, 0xe5, 0x0f, 0x34 }; /* SYSENTER_SEQUENCE */
static const uint8_t op_syscall[] = { 0x89, 0xcd, 0x0f, 0x05 };	 /* SYSCALL_SEQUENCE */
static const uint8_t op_pushes[] = { 0x51, 0x52, 0x55 };	 /* push ecx, edx, ebp */

const char *const vdso_image_gate_names[VDSO_IMAGE_NR_GATES] = {
	[VDSO_IMAGE_GATE_HERE] = "here",
	[VDSO_IMAGE_GATE_INT80] = "int $0x80",
	[VDSO_IMAGE_GATE_SYSENTER] = "sysenter",
	[VDSO_IMAGE_GATE_SYSCALL] = "syscall",
};

enum vdso_image_gate vdso_image_gate_of(const uint8_t *code, size_t n)
{
	for (size_t i = 0; i + sizeof(op_pushes) + sizeof(op_sysenter) <= n; i++) {
		const uint8_t *seq = code + i + sizeof(op_pushes);

		/* v7.x's int $0x80; ret before the pushes, where SYSFAST32 is clear */
		if (!memcmp(code + i, op_int80_ret, 2))
			return VDSO_IMAGE_GATE_INT80;
		if (memcmp(code + i, op_pushes, sizeof(op_pushes)))
			continue;
		if (!memcmp(seq, op_sysenter, sizeof(op_sysenter)))
			return VDSO_IMAGE_GATE_SYSENTER;
		if (!memcmp(seq, op_syscall, sizeof(op_syscall)))
			return VDSO_IMAGE_GATE_SYSCALL;
	}
	return VDSO_IMAGE_GATE_INT80;
}

enum vdso_image_gate vdso_image_gate_at(const uint8_t *gate)
{
	size_t to_end = VDSO_IMAGE_PAGE - ((uintptr_t)gate & (VDSO_IMAGE_PAGE - 1));

	/* the fast entry is within the gate's first 10 bytes; its page is mapped */
	return vdso_image_gate_of(gate, to_end < 32 ? to_end : 32);
}

static bool is(const uint8_t *p, unsigned int n, const uint8_t *op, unsigned int opn)
{
	return n == opn && !memcmp(p, op, opn);
}

enum vdso_image_alt_kind vdso_image_gate_kind(const struct vdso_image_info *info,
					      const struct vdso_image_alt *a)
{
	const uint8_t *orig = info->elf + a->instr, *r = info->elf + a->repl;

	if (info->elf_class != 32)
		return VDSO_IMAGE_ALT_OTHER;
	if (is(orig, a->instrlen, op_int80_ret, sizeof(op_int80_ret)) && !a->replacementlen)
		return VDSO_IMAGE_ALT_GATE_SKIP;
	if (is(r, a->replacementlen, op_sysenter, sizeof(op_sysenter)))
		return VDSO_IMAGE_ALT_GATE_SYSENTER;
	if (is(r, a->replacementlen, op_syscall, sizeof(op_syscall)))
		return VDSO_IMAGE_ALT_GATE_SYSCALL;
	return VDSO_IMAGE_ALT_OTHER;
}

int vdso_image_check_gate(const struct vdso_image_info *info, const struct vdso_image_alt *a,
			  char *why, size_t n)
{
	unsigned long long at = a->instr;

	if (a->flags)
		return fail(why, n, "its gate alternative at 0x%llx has patching flags 0x%x: "
			    "not applied as on every x86-64 CPU", at, a->flags);
	if (a->kind == VDSO_IMAGE_ALT_GATE_SKIP)
		return 0;
	if (a->instrlen != sizeof(op_sysenter))
		return fail(why, n, "its gate alternative at 0x%llx replaces %u bytes with a "
			    "4-byte fast entry", at, a->instrlen);
	if (a->instr < sizeof(op_pushes) ||
	    memcmp(info->elf + a->instr - sizeof(op_pushes), op_pushes, sizeof(op_pushes)))
		return fail(why, n, "its gate alternative at 0x%llx does not follow push %%ecx; "
			    "push %%edx; push %%ebp: the kernel's landing pad would not return "
			    "from it", at);
	return 0;
}

/* the gate's feature enables a's replacement */
static bool enabled(const struct vdso_image_alt *a, enum vdso_image_gate gate)
{
	switch (a->kind) {
	case VDSO_IMAGE_ALT_GATE_SKIP:
		return gate != VDSO_IMAGE_GATE_INT80;
	case VDSO_IMAGE_ALT_GATE_SYSENTER:
		return gate == VDSO_IMAGE_GATE_SYSENTER;
	case VDSO_IMAGE_ALT_GATE_SYSCALL:
		return gate == VDSO_IMAGE_GATE_SYSCALL;
	default:
		return false;
	}
}

int vdso_image_gates(const struct vdso_image_info *info, enum vdso_image_gate gate)
{
	int applied = 0;

	for (int k = 0; k < info->alts; k++) {
		struct vdso_image_alt a;

		vdso_image_alt(info, k, &a);
		applied += enabled(&a, gate);
	}
	return applied;
}

/*
 * Every gate entry's original first, so that a patched copy's gate can be
 * changed too; then, in the table's order (apply_alternatives()'s), each
 * entry the gate's feature enables. gate is never VDSO_IMAGE_GATE_HERE
 * (the loader resolves it).
 */
void vdso_image_patch_gate(const struct vdso_image_info *info, uint8_t *img,
			   enum vdso_image_gate gate)
{
	struct vdso_image_alt a;

	for (int k = 0; k < info->alts; k++) {
		vdso_image_alt(info, k, &a);
		if (a.kind >= VDSO_IMAGE_ALT_GATE_SKIP)
			memcpy(img + a.instr, info->elf + a.instr, a.instrlen);
	}
	for (int k = 0; k < info->alts; k++) {
		vdso_image_alt(info, k, &a);
		if (!enabled(&a, gate))
			continue;
		memcpy(img + a.instr, info->elf + a.repl, a.replacementlen);
		vdso_image_add_nops(img + a.instr + a.replacementlen, a.instrlen - a.replacementlen);
	}
}
