// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzz target over the image parser and the loader (libFuzzer's entry
 * point: //impls/image:image_fuzzer runs it under libFuzzer, fuzz_main.c
 * replays files through it). For every counter: a refusal is one line and
 * the loader's own; an image the check accepts is patched into a heap copy
 * of its span (ASan sees every write), and the loader maps it with the
 * slots, alternatives and entry points the check found; an i386 image
 * (ELFCLASS32), which the check reads too, is patched in the copy only and
 * refused by this x86-64 loader. A disagreement
 * aborts, which a fuzzer reports as a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impls/image/loader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static __thread uint64_t fuzz_cycles;

static void disagree(const char *what, enum vdso_image_counter c, const char *why)
{
	fprintf(stderr, "image fuzz: %s (counter %s): %s\n", what, vdso_image_counter_names[c],
		why);
	abort();
}

static void same_entry_points(const struct vdso_image_info *info, const struct vdso_loaded *img,
			      enum vdso_image_counter c)
{
	for (int i = 0; i < VDSO_IMAGE_NR_SYMS; i++) {
		const uint8_t *at = img->sym[i];

		if (info->sym[i] < 0 ? at != NULL : at != img->base + info->sym[i])
			disagree("an entry point moved", c, vdso_image_sym_names[i]);
	}
}

static void one(const uint8_t *data, size_t size, enum vdso_image_counter c)
{
	struct vdso_image_opts o = { .counter = c,
				     .fake_counter = &fuzz_cycles,
				     .vvar_start = VDSO_IMAGE_VVAR_START,
				     .vvar_pages = VDSO_IMAGE_VVAR_PAGES };
	struct vdso_image_info info;
	struct vdso_loaded img;
	char why[256] = "", lwhy[256] = "";
	int refused = vdso_image_check(&info, data, size, c, o.vvar_start, o.vvar_pages, why,
				       sizeof(why));
	int unmapped = vdso_image_map(&img, data, size, &o, lwhy, sizeof(lwhy));
	uint8_t *copy;

	if (refused) {
		if (!*why || strchr(why, '\n'))
			disagree("a refusal is not one line", c, why);
		if (!unmapped || strcmp(why, lwhy))
			disagree("the loader did not refuse it for the check's reason", c, lwhy);
		return;
	}
	/* the check reads both classes, the x86-64 loader maps only its own: patch a copy */
	if (info.elf_class == 32) {
		if (!unmapped || !strstr(lwhy, "this loader is x86-64's"))
			disagree("the x86-64 loader took an i386 image", c, lwhy);
		copy = malloc(info.span + VDSO_IMAGE_PAGE);
		if (!copy)
			abort();
		memcpy(copy, data, info.span);
		vdso_image_patch(&info, copy, c, info.span);
		/* each gate, then back: the gate's writes stay in its slots */
		for (int g = VDSO_IMAGE_GATE_INT80; g < VDSO_IMAGE_NR_GATES; g++)
			vdso_image_patch_gate(&info, copy, (enum vdso_image_gate)g);
		free(copy);
		return;
	}
	if (unmapped)
		disagree("the loader refused what the check accepted", c, lwhy);
	if (img.slots != vdso_image_slots(&info, c) || img.alts != info.alts ||
	    img.syscalls != vdso_image_syscalls(&info, c))
		disagree("the loader patched other slots than the check counted", c, "");
	same_entry_points(&info, &img, c);
	copy = malloc(info.span);
	if (!copy)
		abort();
	memcpy(copy, data, info.span);
	vdso_image_patch(&info, copy, c, img.len);
	if (memcmp(copy, img.base, info.span))
		disagree("the loader's image is not the patch's", c, "");
	free(copy);
	vdso_image_unmap(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int c = 0; c < VDSO_IMAGE_NR_COUNTERS; c++)
		one(data, size, (enum vdso_image_counter)c);
	return 0;
}
