// SPDX-License-Identifier: GPL-2.0
/*
 * x86_gtod: the x86 vDSO of v4.20..v5.2 (seed 000 "Before"), the baseline
 * every 2019 patch was measured against. struct vsyscall_gtod_data from
 * arch/x86/include/asm/vgtod.h at 315f28fa3a7b; do_hres() (x86_vclock.h) from
 * arch/x86/entry/vdso/vclock_gettime.c at v5.2.
 *
 * 232 bytes, 4 cache lines: REALTIME 32..47, MONOTONIC 48..63.
 * MONOTONIC_RAW and BOOTTIME are syscalls.
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
	struct vgtod_ts basetime[CLOCK_TAI + 1];
	int tz_minuteswest;
	int tz_dsttime;
};

#define VGTOD_HRES (BIT(CLOCK_REALTIME) | BIT(CLOCK_MONOTONIC) | BIT(CLOCK_TAI))
#define VGTOD_COARSE (BIT(CLOCK_REALTIME_COARSE) | BIT(CLOCK_MONOTONIC_COARSE))

#include "impls/layouts/x86_vclock.h"

VDSO_ENTRY void VDSO_SYM(update_vsyscall)(const struct timekeeper *tk)
{
	struct vsyscall_gtod_data *vdata = gtod;

	gtod_write_begin(vdata);
	x86_update_common_bases(vdata, tk);
	vdata->mult = tk->tkr_mono.mult;
	vdata->shift = tk->tkr_mono.shift;
	gtod_write_end(vdata);
}

static const struct vdso_field x86_fields[] = {
	X86_GTOD_FIELDS,
	VDSO_FIELD(struct vsyscall_gtod_data, mult, "mult"),
	VDSO_FIELD(struct vsyscall_gtod_data, shift, "shift"),
	X86_GTOD_BASES,
};

VDSO_VARIANT_DEFINE(X86_VARIANT_COMMON,
		    .source = "arch/x86/entry/vdso/vclock_gettime.c, "
			      "arch/x86/include/asm/vgtod.h @ v5.2 (4.20..5.2)",
		    .summary = "x86 vDSO before the generic vDSO; the 2019 "
			       "baseline (seed 000 Before)");
