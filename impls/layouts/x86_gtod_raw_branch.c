// SPDX-License-Identifier: GPL-2.0
/*
 * x86_gtod_raw_branch: KNOWN BAD, kept on purpose as the concurrency
 * checker's negative control.
 *
 * Seed 000, "[PATCH] x86/vdso: implement clock_gettime(CLOCK_MONOTONIC_RAW,
 * ...)" (v1, Alexander Sverdlin, May 2019) on top of x86_gtod: raw_mult
 * and raw_shift after shift (basetime moves to 40), and do_hres() picks
 * mult/shift with a branch *before* the seqlock loop. tglx: "completely
 * broken because you read the mult/shift values outside of the sequence
 * count protected region, so a concurrent update of the timekeeping values
 * will lead to inconsistent state", and -5% MONO/REAL from the extra
 * conditional.
 */
#define VDSO_KERNEL_VERSION KERNEL_VERSION(5, 2, 0)

#include "impls/common/variant_prelude.h"

struct vgtod_ts {
	u64 sec;
	u64 nsec;
};

struct vsyscall_gtod_data {
	unsigned int seq;
	int vclock_mode;
	u64 cycle_last;
	u64 mask;
	u32 mult;
	u32 shift;
	u32 raw_mult;
	u32 raw_shift;
	struct vgtod_ts basetime[CLOCK_TAI + 1];
	int tz_minuteswest;
	int tz_dsttime;
};

#define VGTOD_HRES                                                          \
	(BIT(CLOCK_REALTIME) | BIT(CLOCK_MONOTONIC) |                       \
	 BIT(CLOCK_MONOTONIC_RAW) | BIT(CLOCK_TAI))
#define VGTOD_COARSE (BIT(CLOCK_REALTIME_COARSE) | BIT(CLOCK_MONOTONIC_COARSE))

#define X86_GTOD_OWN_DO_HRES 1
#define X86_GTOD_RAW_MULT_SHIFT 1

#include "impls/layouts/x86_vclock.h"

__vdso_hot_inline int do_hres(clockid_t clk, struct timespec *ts)
{
	struct vgtod_ts *base = &gtod->basetime[clk];
	u64 cycles, last, sec, ns;
	unsigned int seq;
	u32 mult = gtod->mult;
	u32 shift = gtod->shift;

	if (clk == CLOCK_MONOTONIC_RAW) {
		mult = gtod->raw_mult;
		shift = gtod->raw_shift;
	}

	do {
		seq = gtod_read_begin(gtod);
		cycles = vgetcyc(gtod->vclock_mode);
		ns = base->nsec;
		last = gtod->cycle_last;
		if (unlikely((s64)cycles < 0))
			return vdso_fallback_gettime(clk, ts);
		if (cycles > last)
			ns += (cycles - last) * mult;
		ns >>= shift;
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
	struct vsyscall_gtod_data *vdata = gtod;

	gtod_write_begin(vdata);
	x86_update_common_bases(vdata, tk);
	x86_update_raw_mult_shift(vdata, tk);
	gtod_write_end(vdata);
}

static const struct vdso_field x86_fields[] = {
	X86_GTOD_FIELDS,
	VDSO_FIELD(struct vsyscall_gtod_data, mult, "mult"),
	VDSO_FIELD(struct vsyscall_gtod_data, shift, "shift"),
	VDSO_FIELD(struct vsyscall_gtod_data, raw_mult, "raw_mult"),
	VDSO_FIELD(struct vsyscall_gtod_data, raw_shift, "raw_shift"),
	X86_GTOD_BASES,
};

VDSO_VARIANT_DEFINE(
	X86_VARIANT_COMMON,
	.source = "seed 000: [PATCH] x86/vdso: implement "
		  "clock_gettime(CLOCK_MONOTONIC_RAW, ...) (v1, 2019-05-28) "
		  "on v5.2",
	.summary = "MONOTONIC_RAW via a mult/shift branch before the seqlock",
	.known_bad = "reads mult/shift outside the seqlock: a concurrent "
		     "update pairs old mult with new base (tglx: "
		     "\"completely broken\")");
