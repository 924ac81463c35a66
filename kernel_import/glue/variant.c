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
 *
 * With KIMPORT_IMAGE (the +image variants) the reader is the tree's own
 * vdso64.so instead of reader.c: glue/image.h maps it, with the same
 * memfd's pages as its data and timens pages and the data where the
 * image's symbols put it (offset 128 up to v6.14, 0 in the data store).
 */
#define VDSO_KERNEL_VERSION                                                 \
	KERNEL_VERSION(KIMPORT_VERSION, KIMPORT_PATCHLEVEL, KIMPORT_SUBLEVEL)

/*
 * The kernel the reader is of: the shim's configuration of the tree, or,
 * for an image kbuild built, the .config of that build (kimport_image.h's
 * KIMPORT_IMAGE_CONFIG_*), which may differ: Debian's 7.3 has no aux
 * clocks, so its image and its syscall refuse them. (The one option that
 * changes the data's layout, max_cycles, import refuses to differ.)
 */
#ifdef KIMPORT_IMAGE_CONFIG_POSIX_AUX_CLOCKS
#define VDSO_KERNEL_AUX_CLOCKS KIMPORT_IMAGE_CONFIG_POSIX_AUX_CLOCKS
#define KIMPORT_READS_TIMENS KIMPORT_IMAGE_CONFIG_TIME_NS
#else
#define KIMPORT_READS_TIMENS IS_ENABLED(CONFIG_TIME_NS)
#endif

#include "impls/common/variant_prelude.h"

/* v6.17's lib/vdso (the data's aux_clock_data): getres of any aux id */
#ifdef KIMPORT_AUX_CLOCK_DATA
#define KIMPORT_GETRES_AUX true
#else
#define KIMPORT_GETRES_AUX false
#endif

#include "impls/common/vvar_memfd.h"
#include "kernel_import/glue/kimport.h"
#ifdef KIMPORT_IMAGE
#include "kernel_import/glue/image.h"
#define KIMPORT_DATA_OFFSET KIMPORT_IMAGE_DATA_OFFSET
#else
#define KIMPORT_DATA_OFFSET 0
#endif

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

/* the kernel's view (k_pages): [0] the data page, [1] the namespace page */
static struct vvar_memfd vvar_mem = VVAR_MEMFD_INIT;
static u8 *k_pages;

static int vvar_map(bool timens_task)
{
#ifdef KIMPORT_IMAGE
	return kimage_map_vvar(&vvar_mem, timens_task);
#endif
	return vvar_memfd_map(&vvar_mem, &KIMPORT_SYM(vvar_area), KIMPORT_VVAR_PAGES,
			      timens_task);
}

static int kimport_init(void)
{
	if (k_pages)
		return 0;
#ifdef KIMPORT_IMAGE
	if (kimage_init(&vvar_mem))
		return -1;
#else
	if (vvar_memfd_init(&vvar_mem, "vdsobench-kernel-import", &KIMPORT_SYM(vvar_area),
			    KIMPORT_VVAR_PAGES))
		return -1;
#endif
	/* where the data sits in each page: the tree's update path writes there */
	k_pages = (u8 *)vvar_mem.k + KIMPORT_DATA_OFFSET;
	KIMPORT_SYM(attach)(k_pages);
	return 0;
}

/*
 * The simulated timekeeper, handed over field by field; the clock mode
 * rule is impls/layouts/arch/x86.h's __arch_get_clock_mode(): a vDSO
 * clocksource on x86 has a 64-bit mask, a narrower one never had a mode;
 * on arm64 impls/layouts/arch/arm64.h's arm64_vdso_direct(): the arch
 * timer's 56 bits (VDSO_PRECISION_MASK) or more.
 */
#ifdef CONFIG_ARM64
#define KIMPORT_VDSO_MASK_OK(mask) ((mask) >= ~(0xFF00ULL << 48))
#else
#define KIMPORT_VDSO_MASK_OK(mask) ((mask) == U64_MAX)
#endif

static void kimport_tk_of(const struct timekeeper *tk, struct kimport_tk *out)
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
		.vdso_capable = tk->vdso_capable && KIMPORT_VDSO_MASK_OK(tk->tkr_mono.mask),
		.paravirt = sim_vclock_clock_mode() == SIM_CLOCKMODE_TSC ? 0 :
			    sim_vclock_clock_mode(),
		.hrtimer_res = tk->hrtimer_res,
		.id = tk->id,
		.clock_valid = tk->clock_valid,
		.monotonic_to_aux_sec = tk->monotonic_to_aux.tv_sec,
		.monotonic_to_aux_nsec = tk->monotonic_to_aux.tv_nsec,
	};

	*out = s;
}

VDSO_ENTRY void VDSO_SYM(update_vsyscall)(const struct timekeeper *tk)
{
	struct kimport_tk s;

	if (!k_pages)
		return; /* not attached yet: nothing is published */
	kimport_tk_of(tk, &s);
	KIMPORT_SYM(publish)(&s);
}

#ifdef CONFIG_POSIX_AUX_CLOCKS
/* v6.17: an auxiliary timekeeper, through the tree's vdso_time_update_aux() */
static void kimport_update_aux(const struct timekeeper *tk)
{
	struct kimport_tk s;

	if (!k_pages)
		return;
	kimport_tk_of(tk, &s);
	KIMPORT_SYM(publish_aux)(&s);
}
#define KIMPORT_AUX_HOOKS                                                    \
	.aux_clocks = VDSO_KERNEL_AUX_CLOCKS ? KIMPORT_AUX_CLOCKS : 0,           \
	.update_vsyscall_aux = kimport_update_aux
#else
#define KIMPORT_AUX_HOOKS .aux_clocks = 0
#endif

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

#ifdef KIMPORT_IMAGE
/* the image's own entry points are the variant's (glue/image.h) */
#define KIMPORT_VVAR kimage_area, .vvar_size = KIMAGE_VVAR_LEN
#define KIMPORT_IMAGE_ENTRIES , .trap_fallbacks = kimage_trap_fallbacks, \
	.no_pvclock_page = KIMPORT_IMAGE_PVCLOCK_PAGE < 0, \
	.no_hvclock_page = KIMPORT_IMAGE_HVCLOCK_PAGE < 0
#else
#define KIMPORT_VVAR &KIMPORT_SYM(vvar_area), .vvar_size = KIMPORT_VVAR_PAGES * PAGE_SIZE
/* the shim builds the tree without CONFIG_HYPERV_TIMER */
#define KIMPORT_IMAGE_ENTRIES , .no_hvclock_page = true
#endif

VDSO_VARIANT_DEFINE(.source = KIMPORT_SOURCE, .summary = KIMPORT_SUMMARY,
		    .vvar = KIMPORT_VVAR, .data_size = KIMPORT_DATA_SIZE,
		    .hres_clocks = KIMPORT_HRES_CLOCKS,
		    .coarse_clocks = KIMPORT_COARSE_CLOCKS,
		    .raw_clocks = KIMPORT_RAW_CLOCKS, KIMPORT_AUX_HOOKS,
		    .has_getres = KIMPORT_HAS_GETRES,
		    .getres_aux = KIMPORT_GETRES_AUX,
		    .has_max_cycles = IS_ENABLED(CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT),
		    .has_timens = KIMPORT_READS_TIMENS,
		    .fields = KIMPORT_SYM(fields), .nr_fields = KIMPORT_NR_FIELDS,
		    .init = kimport_init, .timens_enter = kimport_timens_enter,
		    .timens_leave = kimport_timens_leave KIMPORT_IMAGE_ENTRIES);
