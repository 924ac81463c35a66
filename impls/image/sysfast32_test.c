// SPDX-License-Identifier: GPL-2.0
/*
 * v7.x vdso32's system call alternative (sysfast32.c) on the crafted
 * good-i386-sysfast32.so (scripts/vdsobench_cli/tests/vdso_images.py's
 * sysfast32()): `ds;ds;ds;int $0x80` at 0x105, its replacement a call at
 * 0x118 to __kernel_vsyscall at 0x10c. For each counter an import uses, the
 * patch writes e8 and the displacement from the original's place (2, where
 * the replacement's own is -17) and changes nothing else but the counter
 * slot; VDSO_IMAGE_KEEP (a running kernel's copy) applies nothing. The
 * hostile shapes are refused by check_test (cases.txt, bad-i386-sysfast-*).
 */
#include <stdio.h>
#include <string.h>

#include "impls/image/check.h"
#include "testing/tap.h"

#define IMAGE "impls/image/testdata/good-i386-sysfast32.so"
#define SLOT 0x100 /* the counter slot, 5 bytes */
#define SITE 0x105 /* the system call, 5 bytes */
#define GATE 0x10c /* __kernel_vsyscall */
#define CALL 0x118 /* the replacement */

static unsigned char file[1 << 16], img[1 << 16];

/* img differs from the file only in [SLOT, SITE + 5) */
static int only_slot_and_site_changed(size_t span)
{
	return !memcmp(img, file, SLOT) && !memcmp(img + SITE + 5, file + SITE + 5,
						   span - SITE - 5);
}

static void applied(const struct vdso_image_info *info, enum vdso_image_counter c)
{
	const char *name = vdso_image_counter_names[c];
	int32_t rel, repl_rel;

	memcpy(img, file, info->span);
	vdso_image_patch(info, img, c, info->span);
	memcpy(&rel, img + SITE + 1, 4);
	memcpy(&repl_rel, file + CALL + 1, 4);
	tap_ok(img[SITE] == 0xe8 && rel == GATE - (SITE + 5) && repl_rel == GATE - (CALL + 5),
	       "%s: the system call is a call to __kernel_vsyscall from its own place "
	       "(e8, %d; the replacement's %d)", name, rel, repl_rel);
	tap_ok(only_slot_and_site_changed(info->span), "%s: nothing else written but the slot",
	       name);
	tap_ok(vdso_image_syscalls(info, c) == 1 && vdso_image_count_int80(img, info->span) == 0,
	       "%s: 1 applied, none left in place", name);
}

int main(void)
{
	FILE *f = fopen(IMAGE, "rb");
	size_t len = f ? fread(file, 1, sizeof(file), f) : 0;
	struct vdso_image_info info;
	char why[256] = "";

	if (f)
		fclose(f);
	tap_ok(len > 0, "%s is readable", IMAGE);
	if (!len)
		return tap_done();
	tap_ok(!vdso_image_check_each(&info, file, len, VDSO_IMAGE_IMPORT_COUNTERS, why,
				      sizeof(why)) &&
		       info.syscall_sites == 1 && info.sym[VDSO_IMAGE_KERNEL_VSYSCALL] == GATE,
	       "taken, 1 system call alternative (%s)", why);
	tap_ok(vdso_image_count_int80(file, info.span) == 1, "the file has it in place");
	for (int c = 0; c < VDSO_IMAGE_NR_COUNTERS; c++)
		if (VDSO_IMAGE_IMPORT_COUNTERS & (1u << c))
			applied(&info, (enum vdso_image_counter)c);
	/* a running kernel's copy is patched already: its bytes are kept */
	memcpy(img, file, info.span);
	vdso_image_patch(&info, img, VDSO_IMAGE_KEEP, 0);
	tap_ok(!memcmp(img, file, info.span) && !vdso_image_syscalls(&info, VDSO_IMAGE_KEEP),
	       "keep: nothing applied");
	return tap_done();
}
