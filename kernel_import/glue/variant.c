// SPDX-License-Identifier: GPL-2.0
/*
 * The project's half of an imported variant (the tree's half is
 * reader.c and writer.c): the variant contract of impls/common/variant.h
 * for a kernel tree that `vdsobench import` took in. impls/variants.bzl
 * compiles this once per counter x inline choice, like a layout source,
 * with -include of the tree's include/generated/autoconf.h (its
 * configuration) and kimport_desc.h (what the probe measured of its
 * data), so this file states the kernel it follows as a layout does.
 *
 * Here: the vvar area's memory (one memfd, mapped for the reader as the
 * vvar and timens pages and for the kernel as its own view), the
 * fallbacks, update_vsyscall() handing the simulated timekeeper to the
 * tree's, and the time-namespace switch.
 */
#define VDSO_KERNEL_VERSION                                                 \
	KERNEL_VERSION(KIMPORT_VERSION, KIMPORT_PATCHLEVEL, KIMPORT_SUBLEVEL)

#include "impls/common/variant_prelude.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kernel_import/glue/kimport.h"

_Static_assert(KIMPORT_PAGE_SIZE == PAGE_SIZE, "one page size");

/* writer.c's offsetof() table of the tree's data (fields.h) */
extern const struct vdso_field KIMPORT_SYM(fields)[];

/* the fallbacks, for reader.c: those of every layout */
long KIMPORT_SYM(fallback_clock_gettime)(int clk, void *ts)
{
	return clock_gettime_fallback(clk, ts);
}

long KIMPORT_SYM(fallback_clock_getres)(int clk, void *res)
{
	return clock_getres_fallback(clk, res);
}

long KIMPORT_SYM(fallback_gettimeofday)(void *tv, void *tz)
{
	return gettimeofday_fallback(tv, tz);
}

/* the kernel's view: [0] the data page, [1] the namespace page */
static u8 *k_pages;
static int vvar_memfd = -1;

/* the reader's slots: page p of the memfd at slot p, or swapped */
static int vvar_map(bool timens_task)
{
	u8 *slots = (u8 *)&KIMPORT_SYM(vvar_area);

	for (int slot = 0; slot < KIMPORT_VVAR_PAGES; slot++) {
		int page = slot ^ (timens_task ? 1 : 0);
		void *p = mmap(slots + slot * PAGE_SIZE, PAGE_SIZE, PROT_READ,
			       MAP_SHARED | MAP_FIXED, vvar_memfd,
			       (off_t)page * (off_t)PAGE_SIZE);

		if (p == MAP_FAILED)
			return -1;
	}
	return 0;
}

static int kimport_init(void)
{
	void *k;

	if (vvar_memfd >= 0)
		return 0;
	vvar_memfd = memfd_create("vdsobench-kernel-import", MFD_CLOEXEC);
	if (vvar_memfd < 0)
		return -1;
	if (ftruncate(vvar_memfd, KIMPORT_VVAR_PAGES * PAGE_SIZE))
		goto fail;
	k = mmap(NULL, KIMPORT_VVAR_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_SHARED, vvar_memfd, 0);
	if (k == MAP_FAILED)
		goto fail;
	if (vvar_map(false)) {
		munmap(k, KIMPORT_VVAR_PAGES * PAGE_SIZE);
		goto fail;
	}
	k_pages = k;
	KIMPORT_SYM(attach)(k_pages);
	return 0;
fail:
	close(vvar_memfd);
	vvar_memfd = -1;
	return -1;
}

/*
 * The simulated timekeeper, handed over field by field; the clock mode
 * rule is impls/layouts/arch/x86.h's __arch_get_clock_mode(): a vDSO
 * clocksource on x86 has a 64-bit mask, a narrower one never had a mode.
 */
VDSO_ENTRY void VDSO_SYM(update_vsyscall)(const struct timekeeper *tk)
{
	struct kimport_tk s = {
		.tkr_mono = { tk->tkr_mono.cycle_last, tk->tkr_mono.mask,
			      tk->tkr_mono.mult, tk->tkr_mono.shift,
			      tk->tkr_mono.xtime_nsec },
		.tkr_raw = { tk->tkr_raw.cycle_last, tk->tkr_raw.mask,
			     tk->tkr_raw.mult, tk->tkr_raw.shift,
			     tk->tkr_raw.xtime_nsec },
		.xtime_sec = tk->xtime_sec,
		.wall_to_monotonic_sec = tk->wall_to_monotonic.tv_sec,
		.wall_to_monotonic_nsec = tk->wall_to_monotonic.tv_nsec,
		.monotonic_to_boot_sec = tk->monotonic_to_boot.tv_sec,
		.monotonic_to_boot_nsec = tk->monotonic_to_boot.tv_nsec,
		.offs_boot = tk->offs_boot,
		.tai_offset = tk->tai_offset,
		.raw_sec = tk->raw_sec,
		.max_cycles = tk->max_cycles,
		.vdso_capable = tk->vdso_capable && tk->tkr_mono.mask == U64_MAX,
		.hrtimer_res = tk->hrtimer_res,
	};

	if (!k_pages)
		return; /* not attached yet: nothing is published */
	KIMPORT_SYM(publish)(&s);
}

VDSO_ENTRY void VDSO_SYM(update_vsyscall_tz)(const struct timezone *tz)
{
	if (k_pages)
		KIMPORT_SYM(publish_tz)(tz->tz_minuteswest, tz->tz_dsttime);
}

/* kernel/time/namespace.c timens_set_vvar_page() and timens_commit() */
static int kimport_timens_enter(const struct timens_offsets *offs)
{
	struct kimport_timens o = {
		offs->monotonic.tv_sec, offs->monotonic.tv_nsec,
		offs->boottime.tv_sec, offs->boottime.tv_nsec,
	};

	if (kimport_init())
		return -1;
	KIMPORT_SYM(timens_setup)(k_pages + PAGE_SIZE, &o);
	return vvar_map(true);
}

static int kimport_timens_leave(void)
{
	if (kimport_init())
		return -1;
	return vvar_map(false);
}

VDSO_VARIANT_DEFINE(.source = KIMPORT_SOURCE, .summary = KIMPORT_SUMMARY,
		    .vvar = &KIMPORT_SYM(vvar_area), .data_size = KIMPORT_DATA_SIZE,
		    .vvar_size = KIMPORT_VVAR_PAGES * PAGE_SIZE,
		    .hres_clocks = KIMPORT_HRES_CLOCKS,
		    .coarse_clocks = KIMPORT_COARSE_CLOCKS,
		    .raw_clocks = KIMPORT_RAW_CLOCKS, .aux_clocks = 0,
		    .has_getres = KIMPORT_HAS_GETRES,
		    .has_max_cycles = IS_ENABLED(CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT),
		    .has_timens = IS_ENABLED(CONFIG_TIME_NS),
		    .fields = KIMPORT_SYM(fields), .nr_fields = KIMPORT_NR_FIELDS,
		    .init = kimport_init, .timens_enter = kimport_timens_enter,
		    .timens_leave = kimport_timens_leave);
