/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The x86 vDSO read path before the generic vDSO (v4.20..v5.2):
 * arch/x86/entry/vdso/vclock_gettime.c, arch/x86/include/asm/vgtod.h and
 * arch/x86/entry/vsyscall/vsyscall_gtod.c, as of 315f28fa3a7b
 * ("x86/vdso: Add CLOCK_TAI support") and the 5.2 vgetcyc() barrier.
 *
 * Hooks the including layout must provide before including this file:
 *
 *	struct vgtod_ts			one basetime entry
 *	struct vsyscall_gtod_data	with seq, vclock_mode, cycle_last,
 *					mask, basetime[VGTOD_BASES],
 *					tz_minuteswest, tz_dsttime
 *	VGTOD_HRES, VGTOD_COARSE	clock masks served in userspace
 *	X86_VDSO_EXTRA_CLOCKS(clock, ts) optional: dispatch for clocks
 *					outside both masks (v2's copied raw path)
 *	X86_GTOD_OWN_DO_HRES		1: the layout defines do_hres() itself
 *					after the include (patches that change
 *					it); otherwise v5.2's below is used
 *	X86_GTOD_RAW_MULT_SHIFT		1: struct has raw_mult/raw_shift (seed
 *					000 v1 and v2): x86_update_raw_mult_shift()
 *
 * and after it:
 *
 *	VDSO_SYM(update_vsyscall)()	using x86_update_common_bases()
 *
 * The vvar page, seqlock, counter read, do_coarse(), the entry points,
 * update_vsyscall_tz() and the common part of update_vsyscall() live
 * here once.
 */
#ifndef VDSOBENCH_X86_VCLOCK_H
#define VDSOBENCH_X86_VCLOCK_H

#define VGTOD_BASES (CLOCK_TAI + 1)

#define VCLOCK_NONE 0
#define VCLOCK_TSC 1
#define VCLOCK_PVCLOCK 2
#define VCLOCK_HVCLOCK 3

#if defined(__x86_64__) || defined(__i386__)
/* vdsobench: the variant's counter axis, as in arch/x86.h */
#define rdtsc_ordered() vdso_read_cycles()
#include "impls/layouts/arch/x86_hvclock.h"
#include "impls/layouts/arch/x86_pvclock.h"
#endif

static union {
	struct vsyscall_gtod_data data;
	u8 page[PAGE_SIZE];
} vvar_page __aligned(PAGE_SIZE);

#define gtod (&vvar_page.data)

_Static_assert(sizeof(struct vsyscall_gtod_data) <= PAGE_SIZE,
	       "the data must fit its vvar page");

static inline unsigned int gtod_read_begin(const struct vsyscall_gtod_data *s)
{
	unsigned int ret;

repeat:
	ret = READ_ONCE(s->seq);
	if (unlikely(ret & 1)) {
		cpu_relax();
		goto repeat;
	}
	smp_rmb();
	return ret;
}

static inline int gtod_read_retry(const struct vsyscall_gtod_data *s,
				  unsigned int start)
{
	smp_rmb();
	return unlikely(READ_ONCE(s->seq) != start);
}

static inline void gtod_write_begin(struct vsyscall_gtod_data *s)
{
	WRITE_ONCE(s->seq, s->seq + 1);
	smp_wmb();
}

static inline void gtod_write_end(struct vsyscall_gtod_data *s)
{
	smp_wmb();
	WRITE_ONCE(s->seq, s->seq + 1);
}

notrace static inline u64 vgetcyc(int mode)
{
	if (mode == VCLOCK_TSC)
		return vdso_read_cycles();
#if defined(__x86_64__) || defined(__i386__)
	/*
	 * For any memory-mapped vclock type, we need to make sure that gcc
	 * doesn't cleverly hoist a load before the mode check.  Otherwise we
	 * might end up touching the memory-mapped page even if the vclock in
	 * question isn't enabled, which will segfault.  Hence the barriers.
	 */
	if (mode == VCLOCK_PVCLOCK) {
		barrier();
		return vread_pvclock();
	}
	if (mode == VCLOCK_HVCLOCK) {
		barrier();
		return vread_hvclock();
	}
#endif
	return UINT64_MAX;
}

static long vdso_fallback_gettime(long clock, struct timespec *ts)
{
	return clock_gettime_fallback((clockid_t)clock, ts);
}

__vdso_hot_inline int do_hres(clockid_t clk, struct timespec *ts);

__vdso_hot_inline void do_coarse(clockid_t clk, struct timespec *ts)
{
	struct vgtod_ts *base = &gtod->basetime[clk];
	unsigned int seq;

	do {
		seq = gtod_read_begin(gtod);
		ts->tv_sec = base->sec;
		ts->tv_nsec = base->nsec;
	} while (unlikely(gtod_read_retry(gtod, seq)));
}

#ifndef X86_VDSO_EXTRA_CLOCKS
#define X86_VDSO_EXTRA_CLOCKS(clock, ts)
#endif

notrace VDSO_ENTRY int VDSO_SYM(clock_gettime)(clockid_t clock,
					       struct timespec *ts)
{
	unsigned int msk;

	/* Sort out negative (CPU/FD) and invalid clocks */
	if (unlikely((unsigned int)clock >= MAX_CLOCKS))
		return vdso_fallback_gettime(clock, ts);

	/*
	 * Convert the clockid to a bitmask and use it to check which
	 * clocks are handled in the VDSO directly.
	 */
	msk = 1U << clock;
	if (likely(msk & VGTOD_HRES)) {
		return do_hres(clock, ts);
	} else if (msk & VGTOD_COARSE) {
		do_coarse(clock, ts);
		return 0;
	}
	X86_VDSO_EXTRA_CLOCKS(clock, ts);
	return vdso_fallback_gettime(clock, ts);
}

/* x86 had no __vdso_clock_getres before the generic vDSO: always a syscall */
notrace VDSO_ENTRY int VDSO_SYM(clock_getres)(clockid_t clock,
					      struct timespec *res)
{
	return clock_getres_fallback(clock, res);
}

notrace VDSO_ENTRY int VDSO_SYM(gettimeofday)(struct timeval *tv,
					      struct timezone *tz)
{
	if (likely(tv != NULL)) {
		/* struct timeval overlays struct timespec on x86-64 */
		struct timespec *ts = (struct timespec *)tv;

		do_hres(CLOCK_REALTIME, ts);
		tv->tv_usec /= 1000;
	}
	if (unlikely(tz != NULL)) {
		tz->tz_minuteswest = gtod->tz_minuteswest;
		tz->tz_dsttime = gtod->tz_dsttime;
	}

	return 0;
}

/*
 * This will break when the xtime seconds get inaccurate, but that is
 * unlikely
 */
notrace VDSO_ENTRY time_t VDSO_SYM(time)(time_t *t)
{
	/* This is atomic on x86 so we don't need any locks. */
	time_t result = READ_ONCE(gtod->basetime[CLOCK_REALTIME].sec);

	if (t)
		*t = result;
	return result;
}

VDSO_ENTRY void VDSO_SYM(update_vsyscall_tz)(const struct timezone *tz)
{
	gtod->tz_minuteswest = tz->tz_minuteswest;
	gtod->tz_dsttime = tz->tz_dsttime;
}

/*
 * Every x86 vclock (TSC, pvclock, hvclock) has a 64-bit mask, and this
 * read path never applies the mask: a narrower clocksource could never
 * have had a vclock_mode, so it gets VCLOCK_NONE and every hres read
 * falls back.
 */
static int x86_vclock_mode(const struct timekeeper *tk)
{
	if (tk->vdso_capable && tk->tkr_mono.mask == UINT64_MAX)
		return sim_vclock_clock_mode(); /* kvm-clock: VCLOCK_PVCLOCK, ... */
	return VCLOCK_NONE;
}

/*
 * The part of update_vsyscall() every x86 layout shares: vclock_mode,
 * cycle_last, mask and the sec/nsec of REALTIME, TAI, MONOTONIC and the
 * coarse clocks. Called between gtod_write_begin() and gtod_write_end().
 */
static void x86_update_common_bases(struct vsyscall_gtod_data *vdata,
				    const struct timekeeper *tk)
{
	struct vgtod_ts *base;
	u64 nsec;

	vdata->vclock_mode = x86_vclock_mode(tk);
	vdata->cycle_last = tk->tkr_mono.cycle_last;
	vdata->mask = tk->tkr_mono.mask;

	base = &vdata->basetime[CLOCK_REALTIME];
	base->sec = tk->xtime_sec;
	base->nsec = tk->tkr_mono.xtime_nsec;

	base = &vdata->basetime[CLOCK_TAI];
	base->sec = tk->xtime_sec + (s64)tk->tai_offset;
	base->nsec = tk->tkr_mono.xtime_nsec;

	base = &vdata->basetime[CLOCK_MONOTONIC];
	base->sec = tk->xtime_sec + tk->wall_to_monotonic.tv_sec;
	nsec = tk->tkr_mono.xtime_nsec;
	nsec += ((u64)tk->wall_to_monotonic.tv_nsec << tk->tkr_mono.shift);
	while (nsec >= (((u64)NSEC_PER_SEC) << tk->tkr_mono.shift)) {
		nsec -= ((u64)NSEC_PER_SEC) << tk->tkr_mono.shift;
		base->sec++;
	}
	base->nsec = nsec;

	base = &vdata->basetime[CLOCK_REALTIME_COARSE];
	base->sec = tk->xtime_sec;
	base->nsec = tk->tkr_mono.xtime_nsec >> tk->tkr_mono.shift;

	base = &vdata->basetime[CLOCK_MONOTONIC_COARSE];
	base->sec = tk->xtime_sec + tk->wall_to_monotonic.tv_sec;
	nsec = tk->tkr_mono.xtime_nsec >> tk->tkr_mono.shift;
	nsec += tk->wall_to_monotonic.tv_nsec;
	while (nsec >= NSEC_PER_SEC) {
		nsec -= NSEC_PER_SEC;
		base->sec++;
	}
	base->nsec = nsec;
}

#if X86_GTOD_RAW_MULT_SHIFT
/* seed 000 v1/v2's addition to update_vsyscall() */
static void x86_update_raw_mult_shift(struct vsyscall_gtod_data *vdata,
				      const struct timekeeper *tk)
{
	struct vgtod_ts *base;

	vdata->mult = tk->tkr_mono.mult;
	vdata->shift = tk->tkr_mono.shift;
	vdata->raw_mult = tk->tkr_raw.mult;
	vdata->raw_shift = tk->tkr_raw.shift;

	base = &vdata->basetime[CLOCK_MONOTONIC_RAW];
	base->sec = tk->raw_sec;
	base->nsec = tk->tkr_raw.xtime_nsec;
}
#endif

#if !X86_GTOD_OWN_DO_HRES
/* arch/x86/entry/vdso/vclock_gettime.c at v5.2 */
__vdso_hot_inline int do_hres(clockid_t clk, struct timespec *ts)
{
	struct vgtod_ts *base = &gtod->basetime[clk];
	u64 cycles, last, sec, ns;
	unsigned int seq;

	do {
		seq = gtod_read_begin(gtod);
		cycles = vgetcyc(gtod->vclock_mode);
		ns = base->nsec;
		last = gtod->cycle_last;
		if (unlikely((s64)cycles < 0))
			return vdso_fallback_gettime(clk, ts);
		if (cycles > last)
			ns += (cycles - last) * gtod->mult;
		ns >>= gtod->shift;
		sec = base->sec;
	} while (unlikely(gtod_read_retry(gtod, seq)));

	/*
	 * Do this outside the loop: a race inside the loop could result
	 * in __iter_div_u64_rem() being extremely slow.
	 */
	ts->tv_sec = sec + __iter_div_u64_rem(ns, NSEC_PER_SEC, &ns);
	ts->tv_nsec = ns;

	return 0;
}
#endif

#define X86_GTOD_FIELDS                                      \
	VDSO_FIELD(struct vsyscall_gtod_data, seq, "seq"),                  \
	VDSO_FIELD(struct vsyscall_gtod_data, vclock_mode, "vclock_mode"),  \
	VDSO_FIELD(struct vsyscall_gtod_data, cycle_last, "cycle_last"),    \
	VDSO_FIELD(struct vsyscall_gtod_data, mask, "mask")

#define X86_GTOD_BASES                                                      \
	VDSO_FIELD(struct vsyscall_gtod_data, basetime,                     \
		   "basetime[VGTOD_BASES]"),                                 \
	VDSO_FIELD(struct vsyscall_gtod_data, basetime[CLOCK_REALTIME],     \
		   "basetime[CLOCK_REALTIME]"),                              \
	VDSO_FIELD(struct vsyscall_gtod_data, basetime[CLOCK_MONOTONIC],    \
		   "basetime[CLOCK_MONOTONIC]"),                             \
	VDSO_FIELD(struct vsyscall_gtod_data,                               \
		   basetime[CLOCK_MONOTONIC_RAW],                            \
		   "basetime[CLOCK_MONOTONIC_RAW]"),                         \
	VDSO_FIELD(struct vsyscall_gtod_data,                               \
		   basetime[CLOCK_REALTIME_COARSE],                          \
		   "basetime[CLOCK_REALTIME_COARSE]"),                       \
	VDSO_FIELD(struct vsyscall_gtod_data,                               \
		   basetime[CLOCK_MONOTONIC_COARSE],                         \
		   "basetime[CLOCK_MONOTONIC_COARSE]"),                      \
	VDSO_FIELD(struct vsyscall_gtod_data, basetime[CLOCK_BOOTTIME],     \
		   "basetime[CLOCK_BOOTTIME]"),                              \
	VDSO_FIELD(struct vsyscall_gtod_data, basetime[CLOCK_TAI],          \
		   "basetime[CLOCK_TAI]"),                                   \
	VDSO_FIELD(struct vsyscall_gtod_data, tz_minuteswest,               \
		   "tz_minuteswest"),                                        \
	VDSO_FIELD(struct vsyscall_gtod_data, tz_dsttime, "tz_dsttime")

#define X86_VARIANT_COMMON                                                 \
	.vvar = &vvar_page, .data_size = sizeof(struct vsyscall_gtod_data), \
	.vvar_size = sizeof(vvar_page), .hres_clocks = VGTOD_HRES,          \
	.coarse_clocks = VGTOD_COARSE, .aux_clocks = 0,                     \
	.has_getres = false, .has_max_cycles = false,                       \
	.has_timens = false, .fields = x86_fields,                          \
	.nr_fields = ARRAY_SIZE(x86_fields)

#endif /* VDSOBENCH_X86_VCLOCK_H */
