// SPDX-License-Identifier: GPL-2.0
/*
 * impls/image/check.h: v7.x's vdso32 system call alternative, its rule and
 * its patch. arch/x86/include/asm/vdso/sys_call.h makes a vdso32 fallback's
 * system call with
 *
 *	ALTERNATIVE("ds;ds;ds;int $0x80", "call __kernel_vsyscall",
 *		    X86_FEATURE_SYSFAST32)
 *
 * and an x86-64 kernel sets X86_FEATURE_SYSFAST32 on every CPU
 * (cpu/common.c: CONFIG_X86_64; FRED and Xen PV, which clear it, are not
 * simulated), so the vdso32 it maps has the call: apply_alternatives()
 * copies the replacement, and __apply_relocation() moves its rel32 by
 * (repl - instr), so that it calls from the original's place what it
 * called from the replacement's. The loader does the same for every
 * counter but VDSO_IMAGE_KEEP (a running kernel's copy has it already).
 *
 * An entry whose original is the 5 bytes 3e 3e 3e cd 80 is applied only
 * when its replacement is exactly a 5-byte call whose target, taken from
 * the replacement's own address, is the image's __kernel_vsyscall, and the
 * entry has no patching flags (ALT_FLAG_NOT would patch on a CPU without
 * the feature). Anything else of that shape is refused in one line, never
 * written: the image would not be the code the kernel runs. The feature
 * number is not read (told by the bytes, as the counter slots are).
 */
#include "impls/image/view.h"

static const uint8_t op_int80[] = { 0x3e, 0x3e, 0x3e, 0xcd, 0x80 }; /* ds;ds;ds;int $0x80 */
#define CALL_OPCODE 0xe8
#define CALL_LEN 5

bool vdso_image_is_syscall(const uint8_t *orig, unsigned int len)
{
	return len >= sizeof(op_int80) && !memcmp(orig, op_int80, sizeof(op_int80));
}

/* a's call target, from the replacement's own address (a 5-byte call) */
static int64_t target_of(const struct vdso_image_info *info, const struct vdso_image_alt *a)
{
	int32_t rel;

	memcpy(&rel, info->elf + a->repl + 1, 4);
	/* repl is inside a span of at most 64 MiB: no overflow */
	return (int64_t)a->repl + CALL_LEN + rel;
}

int vdso_image_check_syscall(const struct vdso_image_info *info, const struct vdso_image_alt *a,
			     char *why, size_t n)
{
	unsigned long long at = a->instr;
	int64_t target, gate = info->sym[VDSO_IMAGE_KERNEL_VSYSCALL];

	if (a->instrlen != sizeof(op_int80) || a->replacementlen != CALL_LEN)
		return fail(why, n, "its system call alternative at 0x%llx replaces %u bytes with "
			    "%u: not a 5-byte call over the 5-byte ds;ds;ds;int $0x80", at,
			    a->instrlen, a->replacementlen);
	if (info->elf[a->repl] != CALL_OPCODE)
		return fail(why, n, "its system call alternative at 0x%llx: the replacement is "
			    "not a call (e8 rel32)", at);
	if (a->flags)
		return fail(why, n, "its system call alternative at 0x%llx has patching flags "
			    "0x%x: not applied as on every x86-64 CPU", at, a->flags);
	target = target_of(info, a);
	if (target < 0 || (uint64_t)target >= info->span)
		return fail(why, n, "its system call alternative at 0x%llx calls %s0x%llx, "
			    "outside the image", at, target < 0 ? "-" : "",
			    (unsigned long long)(target < 0 ? -target : target));
	if (gate < 0)
		return fail(why, n, "its system call alternative at 0x%llx calls 0x%llx, and it "
			    "exports no __kernel_vsyscall", at, (unsigned long long)target);
	if (target != gate)
		return fail(why, n, "its system call alternative at 0x%llx calls 0x%llx, not "
			    "__kernel_vsyscall (0x%llx)", at, (unsigned long long)target,
			    (unsigned long long)gate);
	return 0;
}

/* the call, from the original's place, to the target check_syscall() accepted */
void vdso_image_patch_syscall(const struct vdso_image_info *info, uint8_t *img,
			      const struct vdso_image_alt *a)
{
	int64_t target = target_of(info, a);
	int32_t rel = (int32_t)(target - (int64_t)(a->instr + CALL_LEN));

	img[a->instr] = CALL_OPCODE;
	memcpy(img + a->instr + 1, &rel, 4);
}

/* the original's bytes left in [0, len): system calls made in place */
int vdso_image_count_int80(const uint8_t *img, size_t len)
{
	int found = 0;

	for (size_t i = 0; i + sizeof(op_int80) <= len; i++)
		found += !memcmp(img + i, op_int80, sizeof(op_int80));
	return found;
}
