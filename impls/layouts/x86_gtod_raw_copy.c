// SPDX-License-Identifier: GPL-2.0
/*
 * x86_gtod_raw_copy: seed 000, "[PATCH v2] x86/vdso: implement
 * clock_gettime(CLOCK_MONOTONIC_RAW, ...)": the same data as v1 (raw_mult,
 * raw_shift after shift; basetime at 40), but do_hres() is left alone and
 * MONOTONIC_RAW gets its own copy, do_monotonic_raw(), with every field
 * read inside the seqlock. Correct; code duplication instead of a branch.
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

#define VGTOD_HRES (BIT(CLOCK_REALTIME) | BIT(CLOCK_MONOTONIC) | BIT(CLOCK_TAI))
#define VGTOD_COARSE (BIT(CLOCK_REALTIME_COARSE) | BIT(CLOCK_MONOTONIC_COARSE))

static int do_monotonic_raw(struct timespec *ts);

#define X86_VDSO_EXTRA_CLOCKS(clock, ts)                                    \
	do {                                                                \
		if (clock == CLOCK_MONOTONIC_RAW)                           \
			return do_monotonic_raw(ts);                        \
	} while (0)

#define X86_GTOD_RAW_MULT_SHIFT 1

#include "impls/layouts/x86_vclock.h"

/*
 * Attempts to merge the below copy with the above routine led to 5% performance
 * drop (CLOCK_MONOTONIC, CLOCK_REALTIME) up to now. Test before making changes.
 */
notrace static int do_monotonic_raw(struct timespec *ts)
{
	struct vgtod_ts *base = &gtod->basetime[CLOCK_MONOTONIC_RAW];
	u64 cycles, last, sec, ns;
	unsigned int seq;

	do {
		seq = gtod_read_begin(gtod);
		cycles = vgetcyc(gtod->vclock_mode);
		ns = base->nsec;
		last = gtod->cycle_last;
		if (unlikely((s64)cycles < 0))
			return vdso_fallback_gettime(CLOCK_MONOTONIC_RAW, ts);
		if (cycles > last)
			ns += (cycles - last) * gtod->raw_mult;
		ns >>= gtod->raw_shift;
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

VDSO_VARIANT_DEFINE(X86_VARIANT_COMMON,
		    .raw_clocks = BIT(CLOCK_MONOTONIC_RAW),
		    .source = "seed 000: [PATCH v2] x86/vdso: implement "
			      "clock_gettime(CLOCK_MONOTONIC_RAW, ...) "
			      "(2019-06-04) on v5.2",
		    .summary = "MONOTONIC_RAW through a copied "
			       "do_monotonic_raw()");
