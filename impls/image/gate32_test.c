// SPDX-License-Identifier: GPL-2.0
/*
 * vdso32's gate alternatives (gate32.c) on the crafted good-i386-gate-v6.so
 * and good-i386-gate-v7.so (scripts/vdsobench_cli/tests/vdso_images.py's
 * gate32()): __kernel_vsyscall at 0xc0, v6.x's fast-entry slot of 4 nops
 * at 0xc3 (sysenter and syscall replacements), v7.x's `int $0x80; ret` at
 * 0xc0 (replaced by nothing) and its sysenter sequence at 0xc6 (replaced
 * by the syscall one). Each gate writes what the kernel of each would on
 * such a CPU, byte for byte, and nothing outside the gate; a patched
 * copy's gate can be put back; the fast entry a gate's code makes is read
 * off it. The hostile shapes are refused by check_test (bad-i386-gate-*).
 */
#include <stdio.h>
#include <string.h>

#include "impls/image/check.h"
#include "testing/tap.h"

#define GATE 0xc0
#define GATE_END 0xca /* pushes, slots; int $0x80 and the pops after */

static const unsigned char nop3[] = {0x0f, 0x1f, 0x00};
static const unsigned char sysenter[] = {0x89, 0xe5, 0x0f, 0x34};
static const unsigned char syscall_[] = {0x89, 0xcd, 0x0f, 0x05};
static const unsigned char nops4[] = {0x90, 0x90, 0x90, 0x90};
static const unsigned char int80_ret[] = {0xcd, 0x80, 0xc3};

static unsigned char file[1 << 16], img[1 << 16];

struct want {
	enum vdso_image_gate gate;
	const unsigned char *skip; /* v7.x's 3 bytes at 0xc0 */
	const unsigned char *slot; /* the fast-entry slot's 4 */
	int applied;
};

static size_t load(const char *path, struct vdso_image_info *info)
{
	FILE *f = fopen(path, "rb");
	size_t len = f ? fread(file, 1, sizeof(file), f) : 0;
	char why[256] = "";

	if (f)
		fclose(f);
	tap_ok(len > 0 && !vdso_image_check_each(info, file, len,
						 VDSO_IMAGE_IMPORT_COUNTERS,
						 why, sizeof(why)),
	       "%s is taken (%s)", path, why);
	return len;
}

static void gated(const struct vdso_image_info *info, int version,
		  unsigned int slot, const struct want *w)
{
	const char *name = vdso_image_gate_names[w->gate];

	memcpy(img, file, info->span);
	vdso_image_patch_gate(info, img, w->gate);
	tap_ok(!memcmp(img + slot, w->slot, 4) &&
		       (version == 6 || !memcmp(img + GATE, w->skip, 3)),
	       "v%d, %s: the gate as the kernel patches it", version, name);
	tap_ok(!memcmp(img, file, GATE) &&
		       !memcmp(img + GATE_END, file + GATE_END,
			       info->span - GATE_END),
	       "v%d, %s: nothing written outside the gate", version, name);
	tap_ok(vdso_image_gates(info, w->gate) == w->applied,
	       "v%d, %s: %d applied (%d)", version, name, w->applied,
	       vdso_image_gates(info, w->gate));
	tap_ok(vdso_image_gate_of(img + GATE, GATE_END - GATE) == w->gate,
	       "v%d, %s: read off the patched code", version, name);
	vdso_image_patch_gate(info, img, VDSO_IMAGE_GATE_INT80);
	tap_ok(!memcmp(img, file, info->span),
	       "v%d, %s: put back to int $0x80, the file's", version, name);
}

/*
 * A mapped gate is read no further than its page: one whose fast entry
 * crosses into the next page says int $0x80, never reads on
 */
static void at_a_page_end(void)
{
	static unsigned char page[2 * VDSO_IMAGE_PAGE] __attribute__((aligned(VDSO_IMAGE_PAGE)));
	static const unsigned char gate[] = { 0x51, 0x52, 0x55, 0x89, 0xe5, 0x0f, 0x34 };
	unsigned char *end = page + VDSO_IMAGE_PAGE;

	memcpy(end - sizeof(gate), gate, sizeof(gate));
	tap_ok(vdso_image_gate_at(end - sizeof(gate)) == VDSO_IMAGE_GATE_SYSENTER,
	       "a gate ending at its page's end: sysenter");
	memset(page, 0, sizeof(page));
	memcpy(end - 4, gate, sizeof(gate));
	tap_ok(vdso_image_gate_at(end - 4) == VDSO_IMAGE_GATE_INT80,
	       "a gate crossing its page's end: read to the end only, int $0x80");
	tap_ok(vdso_image_gate_of(end - 4, sizeof(gate)) == VDSO_IMAGE_GATE_SYSENTER,
	       "(the same bytes read on: sysenter)");
}

int main(void)
{
	const struct want v6[] = {
		{VDSO_IMAGE_GATE_INT80, NULL, nops4, 0},
		{VDSO_IMAGE_GATE_SYSENTER, NULL, sysenter, 1},
		{VDSO_IMAGE_GATE_SYSCALL, NULL, syscall_, 1},
	};
	const struct want v7[] = {
		{VDSO_IMAGE_GATE_INT80, int80_ret, sysenter, 0},
		{VDSO_IMAGE_GATE_SYSENTER, nop3, sysenter, 1},
		{VDSO_IMAGE_GATE_SYSCALL, nop3, syscall_, 2},
	};
	struct vdso_image_info info;

	at_a_page_end();
	if (load("impls/image/testdata/good-i386-gate-v6.so", &info)) {
		tap_ok(info.gate_sites == 2, "v6: 2 gate alternatives (%d)",
		       info.gate_sites);
		for (unsigned int i = 0; i < 3; i++)
			gated(&info, 6, GATE + 3, &v6[i]);
	}
	if (load("impls/image/testdata/good-i386-gate-v7.so", &info)) {
		tap_ok(info.gate_sites == 2, "v7: 2 gate alternatives (%d)",
		       info.gate_sites);
		for (unsigned int i = 0; i < 3; i++)
			gated(&info, 7, GATE + 6, &v7[i]);
	}
	/* an x86-64 image has no gate: its bytes are never read as one */
	if (load("impls/image/testdata/good-v6.12.so", &info))
		tap_ok(info.gate_sites == 0 &&
			       vdso_image_gates(&info,
						VDSO_IMAGE_GATE_SYSENTER) == 0,
		       "x86-64: no gate alternatives");
	return tap_done();
}
