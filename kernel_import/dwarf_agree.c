// SPDX-License-Identifier: GPL-2.0
/*
 * An import's two writers of its data page, byte for byte: the tree's own
 * update path (glue/writer.c: its kernel/time/vsyscall.c under the shim,
 * prefix VDSO_PREFIX) and the DWARF writer (glue/dwarf_writer.c from the
 * layout its kbuild image's DWARF states, prefix kdw_agree). Both pages
 * start as the same noise (a store to a wrong offset shows), then each
 * writer gets the same sequence of simulated timekeeper states: updates
 * (clock modes TSC, kvm-clock, none; shifts, carries), tz changes, aux
 * clocks where the tree has them, and a time namespace's offsets on its
 * page. After each step the data page and the namespace page must be
 * identical. Then one tz change given to one writer only must show: the
 * comparison can fail. Exit 0 agreed, 1 a difference (its offset and the
 * field there, from the tree's table), 2 the pages could not be had.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIMPORT_SYM(name) KDW_TREE(VDSO_PREFIX, name)
#define KDW_TREE_1(a, b) a##__##b
#define KDW_TREE(a, b) KDW_TREE_1(a, b)
#include "kernel_import/glue/kimport.h"

#define DW(name) kdw_agree__##name

void DW(attach)(void *k_pages);
void DW(publish)(const struct kimport_tk *tk);
void DW(publish_tz)(int minuteswest, int dsttime);
void DW(publish_aux)(const struct kimport_tk *tk);
void DW(timens_setup)(void *ns_page, const struct kimport_timens *offs);

struct field {
	const char *name;
	uint32_t offset, size;
};
extern const struct field KIMPORT_SYM(fields)[];

#define PAGE KIMPORT_PAGE_SIZE
static unsigned char tree_pages[2 * PAGE] __attribute__((aligned(PAGE)));
static unsigned char dwarf_pages[2 * PAGE] __attribute__((aligned(PAGE)));
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const char *field_at(uint32_t off)
{
	const char *best = "no field of the table";

	for (int i = 0; i < KDW_NR_FIELDS; i++) {
		const struct field *f = &KIMPORT_SYM(fields)[i];

		if (off >= f->offset && off < f->offset + f->size)
			best = f->name; /* the last, the narrowest of the table's */
	}
	return best;
}

static int differ(const char *step, int n)
{
	for (int i = 0; i < 2 * PAGE; i++) {
		if (tree_pages[i] == dwarf_pages[i])
			continue;
		fprintf(stderr, "dwarf agree: %s %d: the %s page differs at byte %d (%s): "
			"tree 0x%02x, DWARF 0x%02x\n", step, n, i < PAGE ? "data" : "namespace",
			i % PAGE, i < PAGE ? field_at((uint32_t)i) : "namespace data",
			tree_pages[i], dwarf_pages[i]);
		return 1;
	}
	return 0;
}

/* a state as the simulated timekeeper makes them: xtime_nsec below 1 s << shift */
static void state(struct kimport_tk *s, int n)
{
	unsigned int shift = (unsigned int)(next() % 32);

	memset(s, 0, sizeof(*s));
	s->tkr_mono.shift = s->tkr_raw.shift = shift;
	s->tkr_mono.mult = (uint32_t)next() | 1;
	s->tkr_raw.mult = (uint32_t)next() | 1;
	s->tkr_mono.mask = s->tkr_raw.mask = n % 5 == 4 ? 0xffffffffULL : ~0ULL;
	s->tkr_mono.cycle_last = next();
	s->tkr_raw.cycle_last = next();
	s->tkr_mono.xtime_nsec = next() % (1000000000ULL << shift);
	s->tkr_raw.xtime_nsec = next() % (1000000000ULL << shift);
	s->xtime_sec = 1700000000ULL + next() % 100000000ULL;
	s->wall_to_monotonic_sec = -(long long)(s->xtime_sec - next() % 1000000);
	s->wall_to_monotonic_nsec = (long long)(next() % 1000000000ULL);
	s->monotonic_to_boot_sec = (long long)(next() % 1000000) - (n % 2 ? 500000 : 0);
	s->monotonic_to_boot_nsec = (long long)(next() % 1000000000ULL);
	s->offs_boot = s->monotonic_to_boot_sec * 1000000000LL + s->monotonic_to_boot_nsec;
	s->tai_offset = (int)(next() % 64);
	s->raw_sec = next() % 10000000ULL;
	s->max_cycles = next();
	s->vdso_capable = n % 7 != 3;
	s->paravirt = n % 11 == 5 ? 2 : n % 13 == 6 ? 3 : 0;
	s->hrtimer_res = n % 3 ? 1 : 4000000;
	s->id = 1 + (int)(next() % 8);
	s->clock_valid = n % 4 != 1;
	/* one union in the simulated timekeeper, as in v6.17's struct timekeeper */
	s->monotonic_to_aux_sec = s->monotonic_to_boot_sec;
	s->monotonic_to_aux_nsec = s->monotonic_to_boot_nsec;
}

int main(void)
{
	const int states = 2000;
	struct kimport_tk s;
	struct kimport_timens o;

	for (int i = 0; i < 2 * PAGE; i++)
		tree_pages[i] = dwarf_pages[i] = (unsigned char)next();
	KIMPORT_SYM(attach)(tree_pages);
	DW(attach)(dwarf_pages);
	for (int n = 0; n < states; n++) {
		state(&s, n);
		KIMPORT_SYM(publish)(&s);
		DW(publish)(&s);
		if (differ("update", n))
			return 1;
#ifdef CONFIG_POSIX_AUX_CLOCKS
		KIMPORT_SYM(publish_aux)(&s);
		DW(publish_aux)(&s);
		if (differ("aux update", n))
			return 1;
#endif
		if (n % 10 == 0) {
			int west = (int)(next() % 1440) - 720, dst = (int)(next() % 3);

			KIMPORT_SYM(publish_tz)(west, dst);
			DW(publish_tz)(west, dst);
			if (differ("tz change", n))
				return 1;
		}
		if (n % 50 == 0) {
			o.monotonic_sec = (long long)(next() % 2000000) - 1000000;
			o.monotonic_nsec = (long long)(next() % 1000000000ULL);
			o.boottime_sec = (long long)(next() % 2000000) - 1000000;
			o.boottime_nsec = (long long)(next() % 1000000000ULL);
			KIMPORT_SYM(timens_setup)(tree_pages + PAGE, &o);
			DW(timens_setup)(dwarf_pages + PAGE, &o);
			if (differ("namespace offsets", n))
				return 1;
		}
	}
	/* the control: a change to one writer's page must be seen */
	DW(publish_tz)(7, 1);
	KIMPORT_SYM(publish_tz)(8, 1);
	if (!memcmp(tree_pages, dwarf_pages, sizeof(tree_pages))) {
		fprintf(stderr, "dwarf agree: a tz change to one writer left the pages equal\n");
		return 1;
	}
	printf("dwarf agree: %d states (updates, tz, namespace offsets%s): the data and "
	       "namespace pages identical byte for byte (%d bytes of data)\n", states,
#ifdef CONFIG_POSIX_AUX_CLOCKS
	       ", aux clocks",
#else
	       "",
#endif
	       KDW_DATA_SIZE);
	return 0;
}
