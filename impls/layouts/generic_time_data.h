/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic vDSO data page from v6.15 on and its kernel side, shared by
 * generic_6_15 and generic_6_17:
 *
 *	include/vdso/datapage.h		v6.15: struct vdso_time_data holds
 *					struct vdso_clock clock_data[CS_BASES]
 *					and, out of the per-clock data, tz and
 *					hrtimer_res; v6.17 adds struct
 *					vdso_clock aux_clock_data[MAX_AUX_CLOCKS]
 *					and VDSO_AUX / VDSO_BASE_AUX
 *	include/vdso/helpers.h		vdso_read_begin/retry on a vdso_clock,
 *					vdso_write_begin/end over clock_data[],
 *					(v6.17) vdso_write_begin/end_clock()
 *	include/vdso/auxclock.h		(v6.17) aux_clock_resolution_ns()
 *	include/asm-generic/vdso/vsyscall.h	__arch_get_vdso_u_time_data()
 *	lib/vdso/datastore.c		the page, vdso_u_time_data and
 *					vdso_k_time_data
 *	kernel/time/vsyscall.c		update_vsyscall(), update_vsyscall_tz(),
 *					(v6.17) vdso_time_update_aux()
 *
 * and, at its end as include/vdso/datapage.h does, the architecture's
 * hooks (impls/layouts/arch.h).
 *
 * The including layout states VDSO_KERNEL_VERSION (6.15 or 6.17) and the
 * config x86 selects there: CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT,
 * CONFIG_GENERIC_VDSO_DATA_STORE and, from v6.17, CONFIG_POSIX_AUX_CLOCKS.
 * Time namespaces (CONFIG_TIME_NS) are not modelled on this page; the
 * read path compiles them out as upstream does without them.
 */
#ifndef VDSOBENCH_GENERIC_TIME_DATA_H
#define VDSOBENCH_GENERIC_TIME_DATA_H

#if VDSO_KERNEL_VERSION < KERNEL_VERSION(6, 15, 0)
#error "struct vdso_time_data with struct vdso_clock is v6.15 on"
#endif
#if IS_ENABLED(CONFIG_POSIX_AUX_CLOCKS) &&                                \
	VDSO_KERNEL_VERSION < KERNEL_VERSION(6, 17, 0)
#error "auxiliary clocks are v6.17 on"
#endif
#ifdef CONFIG_TIME_NS
#error "generic_time_data.h has no time-namespace page"
#endif

#define VDSO_HAS_AUX_CLOCK_DATA (VDSO_KERNEL_VERSION >= KERNEL_VERSION(6, 17, 0))

#define VDSO_BASES (CLOCK_TAI + 1)
#define VDSO_BASE_AUX 0
#define VDSO_HRES                                                           \
	(BIT(CLOCK_REALTIME) | BIT(CLOCK_MONOTONIC) | BIT(CLOCK_BOOTTIME) | \
	 BIT(CLOCK_TAI))
#define VDSO_COARSE (BIT(CLOCK_REALTIME_COARSE) | BIT(CLOCK_MONOTONIC_COARSE))
#define VDSO_RAW (BIT(CLOCK_MONOTONIC_RAW))
#if VDSO_HAS_AUX_CLOCK_DATA
#define VDSO_AUX __GENMASK(CLOCK_AUX_LAST, CLOCK_AUX)
#endif

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

/* x86 has no arch_vdso_time_data (CONFIG_ARCH_HAS_VDSO_TIME_DATA): empty */
struct arch_vdso_time_data {};

/* struct vdso_clock: one clocksource's conversion and its clocks' bases */
struct vdso_clock {
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
		struct timens_offset offset[VDSO_BASES];
	};
};

/* struct vdso_time_data: the page; tz and hrtimer_res once, after the clocks */
struct vdso_time_data {
	struct arch_vdso_time_data arch_data;

	struct vdso_clock clock_data[CS_BASES];
#if VDSO_HAS_AUX_CLOCK_DATA
	struct vdso_clock aux_clock_data[MAX_AUX_CLOCKS];
#endif

	s32 tz_minuteswest;
	s32 tz_dsttime;
	u32 hrtimer_res;
	u32 __unused;
} ____cacheline_aligned;

/*
 * lib/vdso/datastore.c: the page. Readers reach it as vdso_u_time_data
 * (the vDSO's hidden symbol), the kernel as vdso_k_time_data; here both
 * are the same memory, as for a task outside a time namespace.
 */
static union {
	struct vdso_time_data data;
	u8 page[PAGE_SIZE];
} vdso_time_data_store __aligned(PAGE_SIZE);

_Static_assert(sizeof(vdso_time_data_store) == PAGE_SIZE,
	       "the data must fit its vvar page");

#define vdso_u_time_data (vdso_time_data_store.data)
#define vdso_k_time_data (&vdso_time_data_store.data)

/* include/asm-generic/vdso/vsyscall.h: the default accessor */
static __always_inline const struct vdso_time_data *__arch_get_vdso_u_time_data(void)
{
	return &vdso_u_time_data;
}

#if VDSO_HAS_AUX_CLOCK_DATA
/* include/vdso/auxclock.h */
static __always_inline u64 aux_clock_resolution_ns(void)
{
	return 1;
}
#endif

/* include/vdso/helpers.h */
static __always_inline u32 vdso_read_begin(const struct vdso_clock *vc)
{
	u32 seq;

	while (unlikely((seq = READ_ONCE(vc->seq)) & 1))
		cpu_relax();

	smp_rmb();
	return seq;
}

static __always_inline u32 vdso_read_retry(const struct vdso_clock *vc,
					   u32 start)
{
	u32 seq;

	smp_rmb();
	seq = READ_ONCE(vc->seq);
	return seq != start;
}

static __always_inline void vdso_write_seq_begin(struct vdso_clock *vc)
{
	WRITE_ONCE(vc->seq, vc->seq + 1);
}

static __always_inline void vdso_write_seq_end(struct vdso_clock *vc)
{
	WRITE_ONCE(vc->seq, vc->seq + 1);
}

static __always_inline void vdso_write_begin_clock(struct vdso_clock *vc)
{
	vdso_write_seq_begin(vc);
	/* Ensure the sequence invalidation is visible before data is modified */
	smp_wmb();
}

static __always_inline void vdso_write_end_clock(struct vdso_clock *vc)
{
	/* Ensure the data update is visible before the sequence is set valid again */
	smp_wmb();
	vdso_write_seq_end(vc);
}

static __always_inline void vdso_write_begin(struct vdso_time_data *vd)
{
	struct vdso_clock *vc = vd->clock_data;

	vdso_write_seq_begin(&vc[CS_HRES_COARSE]);
	vdso_write_seq_begin(&vc[CS_RAW]);
	/* Ensure the sequence invalidation is visible before data is modified */
	smp_wmb();
}

static __always_inline void vdso_write_end(struct vdso_time_data *vd)
{
	struct vdso_clock *vc = vd->clock_data;

	/* Ensure the data update is visible before the sequence is set valid again */
	smp_wmb();
	vdso_write_seq_end(&vc[CS_HRES_COARSE]);
	vdso_write_seq_end(&vc[CS_RAW]);
}

#include "impls/layouts/arch.h"
#include "impls/layouts/vsyscall_bases.h"

/* include/asm-generic/vdso/vsyscall.h: what an architecture may override */
/* vdsobench: the kernel builds without -Wunused-parameter */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#if VDSO_KERNEL_VERSION >= KERNEL_VERSION(6, 17, 0)
#ifndef __arch_update_vdso_clock
static __always_inline void __arch_update_vdso_clock(struct vdso_clock *vc)
{
}
#endif /* __arch_update_vdso_clock */
#else
#ifndef __arch_update_vsyscall
static __always_inline void __arch_update_vsyscall(struct vdso_time_data *vdata)
{
}
#endif /* __arch_update_vsyscall */
#endif
#pragma GCC diagnostic pop

/*
 * kernel/time/vsyscall.c, v6.17 shape (v6.15 open-codes the same stores
 * without fill_clock_configuration()); the bases' arithmetic is
 * vsyscall_bases.h's.
 */
static inline void fill_clock_configuration(struct vdso_clock *vc,
					    const struct tk_read_base *base,
					    const struct timekeeper *tk)
{
	vc->cycle_last = base->cycle_last;
#ifdef CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
	vc->max_cycles = tk->max_cycles; /* base->clock->max_cycles */
#else
	(void)tk;
#endif
	vc->mask = base->mask;
	vc->mult = base->mult;
	vc->shift = base->shift;
}

static inline void update_vdso_time_data(struct vdso_time_data *vdata,
					 const struct timekeeper *tk)
{
	struct vdso_clock *vc = vdata->clock_data;

	fill_clock_configuration(&vc[CS_HRES_COARSE], &tk->tkr_mono, tk);
	fill_clock_configuration(&vc[CS_RAW], &tk->tkr_raw, tk);
	vsyscall_update_hres(vc[CS_HRES_COARSE].basetime, vc[CS_RAW].basetime, tk);
}

VDSO_ENTRY void VDSO_SYM(update_vsyscall)(const struct timekeeper *tk)
{
	struct vdso_time_data *vdata = vdso_k_time_data;
	struct vdso_clock *vc = vdata->clock_data;
	s32 clock_mode;

	/* copy vsyscall data */
	vdso_write_begin(vdata);

	clock_mode = __arch_get_clock_mode(tk);
	vc[CS_HRES_COARSE].clock_mode = clock_mode;
	vc[CS_RAW].clock_mode = clock_mode;

	vsyscall_update_coarse(vc[CS_HRES_COARSE].basetime, tk);

	/*
	 * Read without the seqlock held by clock_getres().
	 */
	WRITE_ONCE(vdata->hrtimer_res, tk->hrtimer_res);

	/*
	 * If the current clocksource is not VDSO capable, then spare the
	 * update of the high resolution parts.
	 */
	if (clock_mode != VDSO_CLOCKMODE_NONE)
		update_vdso_time_data(vdata, tk);

#if VDSO_KERNEL_VERSION >= KERNEL_VERSION(6, 17, 0)
	__arch_update_vdso_clock(&vc[CS_HRES_COARSE]);
	__arch_update_vdso_clock(&vc[CS_RAW]);
#else
	__arch_update_vsyscall(vdata);
#endif

	vdso_write_end(vdata);
}

VDSO_ENTRY void VDSO_SYM(update_vsyscall_tz)(const struct timezone *tz)
{
	struct vdso_time_data *vdata = vdso_k_time_data;

	vdata->tz_minuteswest = tz->tz_minuteswest;
	vdata->tz_dsttime = tz->tz_dsttime;
}

#ifdef CONFIG_POSIX_AUX_CLOCKS
/*
 * v6.17, with "vdso/vsyscall: Avoid slow division loop in auxiliary clock
 * update" (v6.17-rc5): the aux clock's base is its "monotonic" (xtime)
 * plus monotonic_to_aux; its nanoseconds are stored whole, shifted, so
 * xtime_nsec's sub-nanosecond bits are dropped and a reading can be one
 * ns below the syscall's (ktime_get_aux()).
 */
static void vdso_time_update_aux(const struct timekeeper *tk)
{
	struct vdso_time_data *vdata = vdso_k_time_data;
	struct vdso_timestamp *vdso_ts;
	struct vdso_clock *vc;
	s32 clock_mode;
	u64 nsec;

	vc = &vdata->aux_clock_data[tk->id - TIMEKEEPER_AUX_FIRST];
	vdso_ts = &vc->basetime[VDSO_BASE_AUX];
	clock_mode = __arch_get_clock_mode(tk);
	if (!tk->clock_valid)
		clock_mode = VDSO_CLOCKMODE_NONE;

	/* copy vsyscall data */
	vdso_write_begin_clock(vc);

	vc->clock_mode = clock_mode;

	if (clock_mode != VDSO_CLOCKMODE_NONE) {
		fill_clock_configuration(vc, &tk->tkr_mono, tk);

		vdso_ts->sec = tk->xtime_sec + tk->monotonic_to_aux.tv_sec;

		nsec = tk->tkr_mono.xtime_nsec >> tk->tkr_mono.shift;
		nsec += tk->monotonic_to_aux.tv_nsec;
		vdso_ts->sec += __iter_div_u64_rem(nsec, NSEC_PER_SEC, &nsec);
		nsec = nsec << tk->tkr_mono.shift;
		vdso_ts->nsec = nsec;
	}

	__arch_update_vdso_clock(vc);

	vdso_write_end_clock(vc);
}

#define GENERIC_AUX_HOOKS                                                   \
	.aux_clocks = (u32)VDSO_AUX, .update_vsyscall_aux = vdso_time_update_aux
#else
#define GENERIC_AUX_HOOKS .aux_clocks = 0
#endif /* CONFIG_POSIX_AUX_CLOCKS */

static int generic_time_data_init(void)
{
	return 0;
}

/* where each clock's data and the page's own fields live */
#define TIME_FIELD(member, label) VDSO_FIELD(struct vdso_time_data, member, label)
#define CLOCK_FIELDS(cs, name)                                              \
	TIME_FIELD(clock_data[cs], "clock_data[" name "]"),                 \
	TIME_FIELD(clock_data[cs].seq, "clock_data[" name "].seq"),         \
	TIME_FIELD(clock_data[cs].clock_mode,                               \
		   "clock_data[" name "].clock_mode"),                      \
	TIME_FIELD(clock_data[cs].cycle_last,                               \
		   "clock_data[" name "].cycle_last"),                      \
	MAX_CYCLES_FIELD(cs, name)                                          \
	TIME_FIELD(clock_data[cs].mask, "clock_data[" name "].mask"),       \
	TIME_FIELD(clock_data[cs].mult, "clock_data[" name "].mult"),       \
	TIME_FIELD(clock_data[cs].shift, "clock_data[" name "].shift"),     \
	TIME_FIELD(clock_data[cs].basetime,                                 \
		   "clock_data[" name "].basetime[VDSO_BASES]")
#define BASETIME_FIELD(clk)                                                 \
	TIME_FIELD(clock_data[CS_HRES_COARSE].basetime[clk],                \
		   "clock_data[CS_HRES_COARSE].basetime[" #clk "]")
#define AUX_FIELD(n) TIME_FIELD(aux_clock_data[n], "aux_clock_data[" #n "]")

/* x86 selects the overflow protection from v6.10; arm64 has no max_cycles */
#ifdef CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
#define MAX_CYCLES_FIELD(cs, name)                                          \
	TIME_FIELD(clock_data[cs].max_cycles,                               \
		   "clock_data[" name "].max_cycles"),
#else
#define MAX_CYCLES_FIELD(cs, name)
#endif

static const struct vdso_field generic_time_fields[] = {
	CLOCK_FIELDS(CS_HRES_COARSE, "CS_HRES_COARSE"),
	BASETIME_FIELD(CLOCK_REALTIME),
	BASETIME_FIELD(CLOCK_MONOTONIC),
	BASETIME_FIELD(CLOCK_REALTIME_COARSE),
	BASETIME_FIELD(CLOCK_MONOTONIC_COARSE),
	BASETIME_FIELD(CLOCK_BOOTTIME),
	BASETIME_FIELD(CLOCK_TAI),
	CLOCK_FIELDS(CS_RAW, "CS_RAW"),
	TIME_FIELD(clock_data[CS_RAW].basetime[CLOCK_MONOTONIC_RAW],
		   "clock_data[CS_RAW].basetime[CLOCK_MONOTONIC_RAW]"),
#if VDSO_HAS_AUX_CLOCK_DATA
	TIME_FIELD(aux_clock_data, "aux_clock_data"),
	AUX_FIELD(0), AUX_FIELD(1), AUX_FIELD(2), AUX_FIELD(3),
	AUX_FIELD(4), AUX_FIELD(5), AUX_FIELD(6), AUX_FIELD(7),
	TIME_FIELD(aux_clock_data[0].seq, "aux_clock_data[0].seq"),
	TIME_FIELD(aux_clock_data[0].basetime[VDSO_BASE_AUX],
		   "aux_clock_data[0].basetime[VDSO_BASE_AUX]"),
#endif
	TIME_FIELD(tz_minuteswest, "tz_minuteswest"),
	TIME_FIELD(tz_dsttime, "tz_dsttime"),
	TIME_FIELD(hrtimer_res, "hrtimer_res"),
};

#define GENERIC_TIME_VARIANT_COMMON                                          \
	.vvar = &vdso_time_data_store,                                      \
	.data_size = sizeof(struct vdso_time_data),                         \
	.vvar_size = sizeof(vdso_time_data_store), .hres_clocks = VDSO_HRES, \
	.coarse_clocks = VDSO_COARSE, .raw_clocks = VDSO_RAW,               \
	.has_getres = true,                                                 \
	.has_max_cycles = IS_ENABLED(CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT), \
	.has_timens = false, .fields = generic_time_fields,                 \
	.nr_fields = ARRAY_SIZE(generic_time_fields),                       \
	.init = generic_time_data_init, GENERIC_AUX_HOOKS

#endif /* VDSOBENCH_GENERIC_TIME_DATA_H */
