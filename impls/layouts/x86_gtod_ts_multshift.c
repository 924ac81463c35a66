// SPDX-License-Identifier: GPL-2.0
/*
 * x86_gtod_ts_multshift: seed 000, "[PATCH v3 1/2] x86/vdso: Move mult and
 * shift into struct vgtod_ts" and "[PATCH v3 2/2]" (MONOTONIC_RAW in
 * VGTOD_HRES), on v5.2 (Alexander Sverdlin, June 2019).
 *
 * struct vgtod_ts grows to 24 bytes and basetime starts at 24, so
 * basetime[CLOCK_MONOTONIC] is 48..71 and straddles lines 0 and 1. tglx
 * refused it: +1% on the micro benchmark, ~2% more L1 misses in a
 * cache-heavy application, -1.7% on another host.
 */
#define VDSO_KERNEL_VERSION KERNEL_VERSION(5, 2, 0)

#include "impls/common/variant_prelude.h"

struct vgtod_ts {
	u64 sec;
	u64 nsec;
	u32 mult;
	u32 shift;
};

struct vsyscall_gtod_data {
	unsigned int seq;
	int vclock_mode;
	u64 cycle_last;
	u64 mask;
	struct vgtod_ts basetime[CLOCK_TAI + 1];
	int tz_minuteswest;
	int tz_dsttime;
};

#define VGTOD_HRES                                                          \
	(BIT(CLOCK_REALTIME) | BIT(CLOCK_MONOTONIC) |                       \
	 BIT(CLOCK_MONOTONIC_RAW) | BIT(CLOCK_TAI))
#define VGTOD_COARSE (BIT(CLOCK_REALTIME_COARSE) | BIT(CLOCK_MONOTONIC_COARSE))

#define X86_GTOD_OWN_DO_HRES 1

#include "impls/layouts/x86_vclock.h"

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
			ns += (cycles - last) * base->mult;
		ns >>= base->shift;
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

VDSO_ENTRY void VDSO_SYM(update_vsyscall)(const struct timekeeper *tk)
{
	static const clockid_t mono_bases[] = { CLOCK_REALTIME, CLOCK_TAI,
						CLOCK_MONOTONIC };
	struct vsyscall_gtod_data *vdata = gtod;
	struct vgtod_ts *base;

	gtod_write_begin(vdata);
	x86_update_common_bases(vdata, tk);
	for (unsigned int i = 0; i < ARRAY_SIZE(mono_bases); i++) {
		base = &vdata->basetime[mono_bases[i]];
		base->mult = tk->tkr_mono.mult;
		base->shift = tk->tkr_mono.shift;
	}

	base = &vdata->basetime[CLOCK_MONOTONIC_RAW];
	base->sec = tk->raw_sec;
	base->nsec = tk->tkr_raw.xtime_nsec;
	base->mult = tk->tkr_raw.mult;
	base->shift = tk->tkr_raw.shift;
	gtod_write_end(vdata);
}

static const struct vdso_field x86_fields[] = {
	X86_GTOD_FIELDS,
	X86_GTOD_BASES,
};

VDSO_VARIANT_DEFINE(X86_VARIANT_COMMON,
		    .source = "seed 000: [PATCH v3 1/2] x86/vdso: Move mult "
			      "and shift into struct vgtod_ts + v3 2/2 "
			      "(2019-06-05) on v5.2",
		    .summary = "mult/shift per basetime entry; MONOTONIC "
			       "straddles a cache line");
