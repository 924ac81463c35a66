// SPDX-License-Identifier: GPL-2.0
/*
 * generic_pvclock_noretry: KNOWN BAD under pvclock, kept on purpose as the
 * pvclock mode's negative control (verify --clock-mode pvclock).
 *
 * generic_6_17 with vread_pvclock()'s version retry taken out: the read of
 * the host's pvclock page (tsc_timestamp, system_time, mul, shift) is no
 * longer bracketed by pvclock_read_begin()/pvclock_read_retry(), so a host
 * update between its loads pairs one update's tsc_timestamp with another's
 * system_time. The timekeeper's own seqcount is intact: the TSC mode and
 * every other check see a correct vDSO, only a concurrent host catches it.
 * x86 only: arm64 has no pvclock.
 */
#define VDSO_KERNEL_VERSION KERNEL_VERSION(6, 17, 0)
#define CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT 1
#define CONFIG_GENERIC_VDSO_DATA_STORE 1
#define CONFIG_POSIX_AUX_CLOCKS 1
#define VDSOBENCH_PVCLOCK_NO_RETRY 1

#include "impls/common/variant_prelude.h"

#include "impls/layouts/generic_time_data.h"
#include "impls/layouts/lib_vdso_v6_17.h"
#include "impls/layouts/vclock_gettime.h"

VDSO_VARIANT_DEFINE(GENERIC_TIME_VARIANT_COMMON,
		    .source = "lib/vdso/gettimeofday.c @ v6.17, "
			      "arch/x86/include/asm/vdso/gettimeofday.h "
			      "vread_pvclock() without its retry",
		    .summary = "v6.17 with a pvclock read that ignores the "
			       "host page's version",
		    .known_bad = "reads the host's pvclock page without its "
				 "version retry: a host update mid-read pairs "
				 "one update's tsc_timestamp with another's "
				 "system_time",
		    .known_bad_clock_mode = "pvclock");
