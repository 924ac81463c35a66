// SPDX-License-Identifier: GPL-2.0
/*
 * impls/image/loader.c on real images: the running kernel's own [vdso]
 * (copied out of this process, its vvar area found in /proc/self/maps),
 * and a kbuild vdso64.so of v6.1..v6.12: Debian 6.12's
 * (bench/testdata), or the one VDSOBENCH_TEST_VDSO_IMAGE names
 * (docs/image.md says how to build one), each counter's slot checked byte
 * by byte. Built for i386 (--config=i386) the same on a vdso32.so(.dbg),
 * the image an x86-64 kernel maps for an i386 task: its fallback calls its
 * own __kernel_vsyscall, which enters by the running kernel's own gate's
 * fast instruction (sysenter or syscall) and comes back through that
 * gate's landing pad (gate32.c), or by int $0x80 (under qemu-i386, qemu's
 * system call; qemu maps no [vdso], so the first part skips). With the
 * vvar area all zeros (clock_mode VDSO_CLOCKMODE_NONE) every read takes
 * the image's own fallback syscall, so its answer is the real kernel's,
 * by each gate. Then hostile images: each refused with a reason, none
 * crashes.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

#include "impls/image/loader.h"
#include "testing/tap.h"

#ifdef __x86_64__
typedef Elf64_Ehdr ehdr_t;
typedef struct timespec vdso_timespec;
#else
typedef Elf32_Ehdr ehdr_t;
/* vdso32's __vdso_clock_gettime: struct old_timespec32, whatever libc's time_t */
typedef struct {
	int32_t tv_sec, tv_nsec;
} vdso_timespec;
#endif
typedef int (*gettime_fn)(clockid_t, vdso_timespec *);

static long long ns_of(long long sec, long long nsec)
{
	return sec * 1000000000LL + nsec;
}

/* its __vdso_clock_gettime(CLOCK_MONOTONIC) between two of libc's */
static bool reads_between(const struct vdso_loaded *img)
{
	struct timespec a, b;
	vdso_timespec v = { 0 };
	long long at;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &a);
	rc = ((gettime_fn)img->sym[VDSO_IMAGE_CLOCK_GETTIME])(CLOCK_MONOTONIC, &v);
	clock_gettime(CLOCK_MONOTONIC, &b);
	at = ns_of(v.tv_sec, v.tv_nsec);
	return rc == 0 && ns_of(a.tv_sec, a.tv_nsec) <= at && at <= ns_of(b.tv_sec, b.tv_nsec);
}

/* the [vdso] mapping and the [vvar*] ones right before it */
static int system_vdso(uint8_t **copy, size_t *len, long *vvar_start)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi, vvar_lo = 0, vvar_hi = 0, base = getauxval(AT_SYSINFO_EHDR);
	size_t n = 0;

	if (!f || !base)
		return f ? fclose(f), -1 : -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		if (strstr(line, "[vvar")) {
			if (lo != vvar_hi)
				vvar_lo = lo;
			vvar_hi = hi;
		} else if (lo == base && strstr(line, "[vdso]")) {
			n = hi - lo;
		}
	}
	fclose(f);
	if (!n || vvar_hi != base)
		return -1;
	*copy = malloc(n);
	if (!*copy)
		return -1;
	memcpy(*copy, (void *)base, n);
	*len = n;
	*vvar_start = -(long)(base - vvar_lo);
	return 0;
}

static void test_system(void)
{
	struct vdso_image_opts o = { .counter = VDSO_IMAGE_KEEP };
	struct vdso_loaded img;
	uint8_t *copy;
	size_t len;
	char why[160] = "";

	if (system_vdso(&copy, &len, &o.vvar_start)) {
		tap_ok(true, "the system's vDSO # SKIP no [vdso] with [vvar] before it here");
		return;
	}
	o.vvar_pages = (int)(-o.vvar_start / VDSO_IMAGE_PAGE);
	if (!tap_ok(vdso_image_map(&img, copy, len, &o, why, sizeof(why)) == 0,
		    "the system's vDSO maps (%zu bytes, vvar at %ld)%s%s", len, o.vvar_start,
		    *why ? ": " : "", why)) {
		free(copy);
		return;
	}
	tap_ok(img.sym[VDSO_IMAGE_GETTIMEOFDAY] && img.sym[VDSO_IMAGE_TIME],
	       "its __vdso_gettimeofday and __vdso_time are found");
	tap_ok(reads_between(&img), "its clock_gettime, on zeros, falls back to the real kernel");
	tap_ok(vdso_image_set_gate(&img, copy, len, VDSO_IMAGE_GATE_INT80, why, sizeof(why)) ==
			       -1 && strstr(why, "its gate is its own"),
	       "its gate is not changed: %s", why);
	vdso_image_unmap(&img);

	/* hostile copies of it */
	{
		static const struct {
			size_t at, n;
			uint8_t byte;
			const char *what;
		} cuts[] = {
			{ 0, 1, 0x00, "not ELF" },
			{ offsetof(ehdr_t, e_machine), 1, EM_ARM, "another machine" },
			{ offsetof(ehdr_t, e_phoff), sizeof(((ehdr_t *)0)->e_phoff), 0xff,
			  "program headers past the end" },
			{ offsetof(ehdr_t, e_phnum), 2, 0x00, "no PT_LOAD" },
		};
		uint8_t *bad = malloc(len);

		for (size_t i = 0; bad && i < sizeof(cuts) / sizeof(cuts[0]); i++) {
			memcpy(bad, copy, len);
			memset(bad + cuts[i].at, cuts[i].byte, cuts[i].n);
			*why = 0;
			tap_ok(vdso_image_map(&img, bad, len, &o, why, sizeof(why)) == -1 && *why,
			       "refused: %s (%s)", cuts[i].what, why);
		}
		tap_ok(vdso_image_map(&img, copy, 40, &o, why, sizeof(why)) == -1,
		       "refused: 40 bytes (%s)", why);
		free(bad);
	}
	free(copy);
}

static __thread uint64_t test_cycles;

/* the fake counter: each slot a call to the thunk, which loads this thread's counter */
static void test_fake(const uint8_t *buf, size_t len)
{
	struct vdso_image_opts o = { .counter = VDSO_IMAGE_FAKE,
				     .fake_counter = &test_cycles,
				     .vvar_start = -4 * VDSO_IMAGE_PAGE,
				     .vvar_pages = 4 };
	struct vdso_image_opts keep = o;
	struct vdso_loaded img, orig;
	char why[160] = "";
	int calls = 0;

	keep.counter = VDSO_IMAGE_KEEP;
	if (!tap_ok(vdso_image_map(&img, buf, len, &o, why, sizeof(why)) == 0 &&
			    vdso_image_map(&orig, buf, len, &keep, why, sizeof(why)) == 0,
		    "fake: maps%s%s", *why ? ": " : "", why))
		return;
	for (size_t k = 0; k + 5 <= img.len; k++) {
		int32_t rel;

		if (memcmp(orig.base + k, "\x0f\x31\x90\x90\x90", 5) || img.base[k] != 0xe8)
			continue;
		memcpy(&rel, img.base + k + 1, 4);
		calls += (size_t)((ptrdiff_t)k + 5 + rel) == img.len;
	}
	tap_ok(img.slots > 0 && calls == img.slots, "fake: %d slots, %d of them call the thunk",
	       img.slots, calls);
#ifndef __x86_64__
	/* i386 returns a u64 in edx:eax, rdtsc's registers: the thunk is callable from C */
	test_cycles = 0x123456789abcdefULL;
	tap_ok(((uint64_t (*)(void))(img.base + img.len))() == test_cycles,
	       "fake: the thunk loads this thread's counter (gs-relative)");
#endif
	vdso_image_unmap(&img);
	vdso_image_unmap(&orig);
}

#ifdef __x86_64__
static void test_gate(const uint8_t *buf, size_t len)
{
	(void)buf;
	(void)len;
}
#else
/*
 * The image's gate as this process's kernel enters (its AT_SYSINFO's code),
 * and each gate's fallback answering: a fast entry returns through the
 * running gate's landing pad, never the copy's, and the read still lands
 * between two of libc's
 */
static void test_gate(const uint8_t *buf, size_t len)
{
	const uint8_t *own = (const uint8_t *)getauxval(AT_SYSINFO);
	enum vdso_image_gate here = own ? vdso_image_gate_of(own, 32) : VDSO_IMAGE_GATE_INT80;
	struct vdso_image_opts o = { .counter = VDSO_IMAGE_LFENCE_RDTSC,
				     .vvar_start = -4 * VDSO_IMAGE_PAGE,
				     .vvar_pages = 4 };
	struct vdso_loaded img;
	char why[160] = "";

	if (!tap_ok(vdso_image_map(&img, buf, len, &o, why, sizeof(why)) == 0, "gate: maps%s%s",
		    *why ? ": " : "", why))
		return;
	tap_ok(img.gate == here && (here == VDSO_IMAGE_GATE_INT80 ? img.gate_why != NULL
								   : img.gates > 0),
	       "gate: %s, as this process's kernel's (%d applied%s%s)",
	       vdso_image_gate_names[img.gate], img.gates, img.gate_why ? ": " : "",
	       img.gate_why ? img.gate_why : "");
	tap_ok(reads_between(&img), "gate: %s: the fallback answers", vdso_image_gate_names[here]);
	tap_ok(vdso_image_set_gate(&img, buf, len, VDSO_IMAGE_GATE_INT80, why, sizeof(why)) == 0 &&
		       img.gate == VDSO_IMAGE_GATE_INT80 && img.gates == 0 && reads_between(&img),
	       "gate: int $0x80 (a checker's): the fallback answers%s%s", *why ? ": " : "", why);
	tap_ok(vdso_image_set_gate(&img, buf, len, VDSO_IMAGE_GATE_HERE, why, sizeof(why)) == 0 &&
		       img.gate == here && reads_between(&img),
	       "gate: back to %s", vdso_image_gate_names[here]);
	vdso_image_unmap(&img);
}
#endif

static void test_kbuild(const char *path)
{
	static const struct {
		enum vdso_image_counter c;
		const char *name;
		uint8_t op[5];
		unsigned int n;
	} counters[] = {
		{ VDSO_IMAGE_RDTSC, "rdtsc", { 0x0f, 0x31 }, 2 },
		{ VDSO_IMAGE_LFENCE_RDTSC, "lfence_rdtsc", { 0x0f, 0xae, 0xe8, 0x0f, 0x31 }, 5 },
		{ VDSO_IMAGE_RDTSCP, "rdtscp", { 0x0f, 0x01, 0xf9 }, 3 },
	};
	static uint8_t buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t len = f ? fread(buf, 1, sizeof(buf), f) : 0;
	char why[160] = "";

	if (f)
		fclose(f);
	if (!tap_ok(len > 0, "%s is readable", path))
		return;
	test_fake(buf, len);
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		struct vdso_image_opts o = { .counter = counters[i].c,
					     .vvar_start = -4 * VDSO_IMAGE_PAGE,
					     .vvar_pages = 4 };
		struct vdso_loaded img, orig;
		struct vdso_image_opts keep = o;
		int same = 0;

		keep.counter = VDSO_IMAGE_KEEP;
		if (!tap_ok(vdso_image_map(&img, buf, len, &o, why, sizeof(why)) == 0 &&
				    vdso_image_map(&orig, buf, len, &keep, why, sizeof(why)) == 0,
			    "%s: maps with %s%s%s", path, counters[i].name, *why ? ": " : "", why))
			continue;
		/* each slot now begins with the counter's bytes: find them where rdtsc was */
		for (size_t k = 0; k + 5 <= img.len; k++)
			if (!memcmp(orig.base + k, "\x0f\x31\x90\x90\x90", 5) &&
			    !memcmp(img.base + k, counters[i].op, counters[i].n))
				same++;
		tap_ok(img.slots > 0 && same == img.slots,
		       "%s: %d slots, %d of them hold %s", counters[i].name, img.slots, same,
		       counters[i].name);
		tap_ok(reads_between(&img), "%s: clock_gettime on zeros falls back to the kernel",
		       counters[i].name);
		vdso_image_unmap(&img);
		vdso_image_unmap(&orig);
	}
	test_gate(buf, len);
}

/* the kbuild image the test maps unless VDSOBENCH_TEST_VDSO_IMAGE names one */
#ifdef __x86_64__
#define KBUILD_IMAGE "bench/testdata/vdso-x86_64-v6.12.so"
#else
#define KBUILD_IMAGE "bench/testdata/vdso-i386-v6.12.so"
#endif

int main(void)
{
	const char *path = getenv("VDSOBENCH_TEST_VDSO_IMAGE");

	test_system();
	test_kbuild(path && *path ? path : KBUILD_IMAGE);
	return tap_done();
}
