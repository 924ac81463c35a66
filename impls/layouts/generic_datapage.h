/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic vDSO data page of v5.3..v6.14 (struct vdso_data[CS_BASES])
 * and its kernel side, shared by generic_5_3, generic_6_10 and
 * generic_timens*:
 *
 *	include/vdso/datapage.h		(v5.3; the timens union from v5.6;
 *					 max_cycles from v6.10's
 *					 CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT)
 *	include/vdso/helpers.h		vdso_read_begin/retry, write_begin/end
 *	kernel/time/vsyscall.c		update_vsyscall(), update_vdso_data()
 *	kernel/time/namespace.c		timens_setup_vdso_data()
 *
 * and, at its end as include/vdso/datapage.h does, the architecture's
 * hooks (impls/layouts/arch.h).
 *
 * Config the including layout sets (defined or not, as Kconfig does):
 *
 *	CONFIG_TIME_NS				a second, time-namespace page
 *	CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT	max_cycles and its slow path
 *
 *	TIMENS_NAMED_OFFSETS			the Safonov/Vagin RFC's named
 *						monotonic/boottime offsets
 *						instead of offset[]; the layout
 *						then defines timens_offset_of()
 *						(upstream: &vdns->offset[clk])
 */
#ifndef VDSOBENCH_GENERIC_DATAPAGE_H
#define VDSOBENCH_GENERIC_DATAPAGE_H

#include <string.h>

#include "impls/common/vvar_memfd.h"

#define VDSO_BASES (CLOCK_TAI + 1)
#define VDSO_HRES                                                           \
	(BIT(CLOCK_REALTIME) | BIT(CLOCK_MONOTONIC) | BIT(CLOCK_BOOTTIME) | \
	 BIT(CLOCK_TAI))
#define VDSO_COARSE (BIT(CLOCK_REALTIME_COARSE) | BIT(CLOCK_MONOTONIC_COARSE))
#define VDSO_RAW (BIT(CLOCK_MONOTONIC_RAW))

#define CS_HRES_COARSE 0
#define CS_RAW 1
#define CS_BASES (CS_RAW + 1)

struct vdso_timestamp {
	u64 sec;
	u64 nsec;
};

struct timens_offset {
	s64 sec;
	u64 nsec;
};

/*
 * the RFC's timens page content: one named offset per clock family (a
 * struct timespec64 there, the same 16 bytes on 64-bit)
 */
struct timens_named_offsets {
	struct timens_offset monotonic;
	struct timens_offset boottime;
};

struct vdso_data {
	u32 seq;

	s32 clock_mode;
	u64 cycle_last;
#ifdef CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
	u64 max_cycles;
#endif
	u64 mask;
	u32 mult;
	u32 shift;

	union {
		struct vdso_timestamp basetime[VDSO_BASES];
#ifdef CONFIG_TIME_NS
		struct timens_offset offset[VDSO_BASES];
		struct timens_named_offsets named;
#endif
	};

	s32 tz_minuteswest;
	s32 tz_dsttime;
	u32 hrtimer_res;
	u32 __unused;
};

/*
 * The vvar area readers see: the data page, and with CONFIG_TIME_NS the
 * timens page slot after it. A time-namespaced task has the two swapped
 * (tglx in seed 004: "TIMENS ... VVAR"), which vvar_remap() does with a
 * memfd mapped over this very array, so readers keep the RIP-relative
 * addressing of the real vvar.
 */
#define VVAR_PAGES (1 + IS_ENABLED(CONFIG_TIME_NS))

static union {
	struct vdso_data data[CS_BASES];
	u8 page[PAGE_SIZE];
} vvar_area[VVAR_PAGES] __aligned(PAGE_SIZE);

_Static_assert(sizeof(struct vdso_data) * CS_BASES <= PAGE_SIZE,
	       "the data must fit its vvar page");

/* x86's VVAR(_vdso_data) and TIMENS(_vdso_data): what the arch hooks return */
#define __vdso_data (vvar_area[0].data)
#define __timens_vdso_data (vvar_area[1].data)

#ifdef CONFIG_TIME_NS
/*
 * upstream's offset lookup: an array indexed by clock id; the RFC's
 * (TIMENS_NAMED_OFFSETS) is its layout's switch
 */
#ifndef TIMENS_NAMED_OFFSETS
#define timens_offset_of(vdns, clk) (&(vdns)->offset[clk])
#endif

/* the kernel's own view: [0] the real data, [1] the namespace page */
static union {
	struct vdso_data data[CS_BASES];
	u8 page[PAGE_SIZE];
} *k_vvar;
static struct vvar_memfd vvar_mem = VVAR_MEMFD_INIT;

static int vvar_map(bool timens_task)
{
	return vvar_memfd_map(&vvar_mem, vvar_area, VVAR_PAGES, timens_task);
}

static int generic_vvar_init(void)
{
	if (vvar_memfd_init(&vvar_mem, "vdsobench-vvar", vvar_area, VVAR_PAGES))
		return -1;
	k_vvar = vvar_mem.k;
	return 0;
}

/* __arch_get_k_vdso_data(): NULL until init, when nothing is published */
#define __arch_get_k_vdso_data() (k_vvar ? k_vvar[0].data : NULL)
#else
static int generic_vvar_init(void)
{
	return 0;
}

#define __arch_get_k_vdso_data() (vvar_area[0].data)
#endif /* CONFIG_TIME_NS */

/* include/vdso/helpers.h */
static __always_inline u32 vdso_read_begin(const struct vdso_data *vd)
{
	u32 seq;

	while (unlikely((seq = READ_ONCE(vd->seq)) & 1))
		cpu_relax();

	smp_rmb();
	return seq;
}

static __always_inline u32 vdso_read_retry(const struct vdso_data *vd,
					   u32 start)
{
	u32 seq;

	smp_rmb();
	seq = READ_ONCE(vd->seq);
	return seq != start;
}

static __always_inline void vdso_write_begin(struct vdso_data *vd)
{
	WRITE_ONCE(vd[CS_HRES_COARSE].seq, vd[CS_HRES_COARSE].seq + 1);
	WRITE_ONCE(vd[CS_RAW].seq, vd[CS_RAW].seq + 1);
	smp_wmb();
}

static __always_inline void vdso_write_end(struct vdso_data *vd)
{
	smp_wmb();
	WRITE_ONCE(vd[CS_HRES_COARSE].seq, vd[CS_HRES_COARSE].seq + 1);
	WRITE_ONCE(vd[CS_RAW].seq, vd[CS_RAW].seq + 1);
}

#include "impls/layouts/arch.h"
#include "impls/layouts/vsyscall_bases.h"

/* include/asm-generic/vdso/vsyscall.h: what an architecture may override */
/* vdsobench: the kernel builds without -Wunused-parameter */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#if VDSO_KERNEL_VERSION < KERNEL_VERSION(5, 4, 0)
#ifndef __arch_use_vsyscall
static __always_inline int __arch_use_vsyscall(struct vdso_data *vdata)
{
	return 1;
}
#endif /* __arch_use_vsyscall */
#endif

#ifndef __arch_update_vsyscall
static __always_inline void __arch_update_vsyscall(struct vdso_data *vdata,
						   const struct timekeeper *tk)
{
}
#endif /* __arch_update_vsyscall */
#pragma GCC diagnostic pop

static inline void update_vdso_data(struct vdso_data *vdata,
				    const struct timekeeper *tk)
{
	vdata[CS_HRES_COARSE].cycle_last = tk->tkr_mono.cycle_last;
	vdata[CS_HRES_COARSE].mask = tk->tkr_mono.mask;
	vdata[CS_HRES_COARSE].mult = tk->tkr_mono.mult;
	vdata[CS_HRES_COARSE].shift = tk->tkr_mono.shift;
	vdata[CS_RAW].cycle_last = tk->tkr_raw.cycle_last;
	vdata[CS_RAW].mask = tk->tkr_raw.mask;
	vdata[CS_RAW].mult = tk->tkr_raw.mult;
	vdata[CS_RAW].shift = tk->tkr_raw.shift;
#ifdef CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
	vdata[CS_HRES_COARSE].max_cycles = tk->max_cycles;
	vdata[CS_RAW].max_cycles = tk->max_cycles;
#endif

	vsyscall_update_hres(vdata[CS_HRES_COARSE].basetime,
			     vdata[CS_RAW].basetime, tk);
}

VDSO_ENTRY void VDSO_SYM(update_vsyscall)(const struct timekeeper *tk)
{
	struct vdso_data *vdata = (struct vdso_data *)__arch_get_k_vdso_data();
	s32 clock_mode;

	if (!vdata)
		return;

	/* copy vsyscall data */
	vdso_write_begin(vdata);

	clock_mode = __arch_get_clock_mode(tk);
	vdata[CS_HRES_COARSE].clock_mode = clock_mode;
	vdata[CS_RAW].clock_mode = clock_mode;

	vsyscall_update_coarse(vdata[CS_HRES_COARSE].basetime, tk);

	/*
	 * Read without the seqlock held by clock_getres().
	 * Note: No need to have a second copy.
	 */
	WRITE_ONCE(vdata[CS_HRES_COARSE].hrtimer_res, tk->hrtimer_res);

#if VDSO_KERNEL_VERSION < KERNEL_VERSION(5, 4, 0)
	/* vdsobench: v5.3 asks the architecture (arm64: clock mode 0) */
	if (__arch_use_vsyscall(vdata))
		update_vdso_data(vdata, tk);
#else
	/*
	 * If the current clocksource is not VDSO capable, then spare the
	 * update of the high resolution parts.
	 */
	if (clock_mode != VDSO_CLOCKMODE_NONE)
		update_vdso_data(vdata, tk);
#endif

	__arch_update_vsyscall(vdata, tk);

	vdso_write_end(vdata);
}

VDSO_ENTRY void VDSO_SYM(update_vsyscall_tz)(const struct timezone *tz)
{
	struct vdso_data *vdata = (struct vdso_data *)__arch_get_k_vdso_data();

	if (!vdata)
		return;
	vdata[CS_HRES_COARSE].tz_minuteswest = tz->tz_minuteswest;
	vdata[CS_HRES_COARSE].tz_dsttime = tz->tz_dsttime;
}

#ifdef CONFIG_TIME_NS
/* kernel/time/namespace.c timens_setup_vdso_data() and timens_commit() */
static void timens_setup_vdso_data(struct vdso_data *vdata,
				   const struct timens_offsets *offs)
{
	struct timens_offset *offset = vdata->offset;
	struct timens_offset monotonic = { offs->monotonic.tv_sec,
					   (u64)offs->monotonic.tv_nsec };
	struct timens_offset boottime = { offs->boottime.tv_sec,
					  (u64)offs->boottime.tv_nsec };

#ifdef TIMENS_NAMED_OFFSETS
	vdata->named.monotonic = monotonic;
	vdata->named.boottime = boottime;
#else
	offset[CLOCK_MONOTONIC] = monotonic;
	offset[CLOCK_MONOTONIC_RAW] = monotonic;
	offset[CLOCK_MONOTONIC_COARSE] = monotonic;
	offset[CLOCK_BOOTTIME] = boottime;
	offset[CLOCK_BOOTTIME_ALARM] = boottime;
#endif
	(void)offset;
	vdata->seq = 1;
	vdata->clock_mode = VDSO_CLOCKMODE_TIMENS;
}

static int generic_timens_enter(const struct timens_offsets *offs)
{
	if (generic_vvar_init())
		return -1;
	memset(&k_vvar[1], 0, sizeof(k_vvar[1]));
	for (int i = 0; i < CS_BASES; i++)
		timens_setup_vdso_data(&k_vvar[1].data[i], offs);
	return vvar_map(true);
}

static int generic_timens_leave(void)
{
	if (generic_vvar_init())
		return -1;
	return vvar_map(false);
}
#endif /* CONFIG_TIME_NS */

#define GENERIC_FIELD(member, label)                                        \
	VDSO_FIELD(struct vdso_data, member, label)
#define GENERIC_RAW_FIELD(member, label)                                    \
	{                                                                   \
		.name = (label),                                            \
		.offset = (u32)(sizeof(struct vdso_data) +                  \
				offsetof(struct vdso_data, member)),        \
		.size = (u32)sizeof(((struct vdso_data *)0)->member)        \
	}

static const struct vdso_field generic_fields[] = {
	GENERIC_FIELD(seq, "seq"),
	GENERIC_FIELD(clock_mode, "clock_mode"),
	GENERIC_FIELD(cycle_last, "cycle_last"),
#ifdef CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
	GENERIC_FIELD(max_cycles, "max_cycles"),
#endif
	GENERIC_FIELD(mask, "mask"),
	GENERIC_FIELD(mult, "mult"),
	GENERIC_FIELD(shift, "shift"),
	GENERIC_FIELD(basetime, "basetime[VDSO_BASES]"),
	GENERIC_FIELD(basetime[CLOCK_REALTIME], "basetime[CLOCK_REALTIME]"),
	GENERIC_FIELD(basetime[CLOCK_MONOTONIC], "basetime[CLOCK_MONOTONIC]"),
	GENERIC_FIELD(basetime[CLOCK_REALTIME_COARSE],
		      "basetime[CLOCK_REALTIME_COARSE]"),
	GENERIC_FIELD(basetime[CLOCK_MONOTONIC_COARSE],
		      "basetime[CLOCK_MONOTONIC_COARSE]"),
	GENERIC_FIELD(basetime[CLOCK_BOOTTIME], "basetime[CLOCK_BOOTTIME]"),
	GENERIC_FIELD(basetime[CLOCK_TAI], "basetime[CLOCK_TAI]"),
	GENERIC_FIELD(tz_minuteswest, "tz_minuteswest"),
	GENERIC_FIELD(tz_dsttime, "tz_dsttime"),
	GENERIC_FIELD(hrtimer_res, "hrtimer_res"),
	GENERIC_RAW_FIELD(seq, "vd[CS_RAW].seq"),
	GENERIC_RAW_FIELD(clock_mode, "vd[CS_RAW].clock_mode"),
	GENERIC_RAW_FIELD(cycle_last, "vd[CS_RAW].cycle_last"),
#ifdef CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
	GENERIC_RAW_FIELD(max_cycles, "vd[CS_RAW].max_cycles"),
#endif
	GENERIC_RAW_FIELD(mask, "vd[CS_RAW].mask"),
	GENERIC_RAW_FIELD(mult, "vd[CS_RAW].mult"),
	GENERIC_RAW_FIELD(shift, "vd[CS_RAW].shift"),
	GENERIC_RAW_FIELD(basetime[CLOCK_MONOTONIC_RAW],
			  "vd[CS_RAW].basetime[CLOCK_MONOTONIC_RAW]"),
};

#ifdef CONFIG_TIME_NS
#define GENERIC_TIMENS_HOOKS                                                \
	.has_timens = true, .timens_enter = generic_timens_enter,           \
	.timens_leave = generic_timens_leave
#else
#define GENERIC_TIMENS_HOOKS .has_timens = false
#endif

#define GENERIC_VARIANT_COMMON                                              \
	.vvar = vvar_area, .data_size = sizeof(struct vdso_data) * CS_BASES, \
	.vvar_size = sizeof(vvar_area), .hres_clocks = VDSO_HRES,           \
	.coarse_clocks = VDSO_COARSE, .raw_clocks = VDSO_RAW,               \
	.aux_clocks = 0, .has_getres = true,                                \
	.has_max_cycles = IS_ENABLED(CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT), \
	.fields = generic_fields,                                           \
	.nr_fields = ARRAY_SIZE(generic_fields),                            \
	.init = generic_vvar_init, GENERIC_TIMENS_HOOKS

#endif /* VDSOBENCH_GENERIC_DATAPAGE_H */
