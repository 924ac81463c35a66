// SPDX-License-Identifier: GPL-2.0
/*
 * generic_vclock_noretry: KNOWN BAD under pvclock and hvclock, kept on
 * purpose as those clock modes' negative control (verify --clock-mode
 * pvclock|hvclock).
 *
 * generic_6_17 with the retry taken out of x86's paravirtual clock reads:
 * vread_pvclock() no longer brackets its loads of the host's pvclock page
 * with pvclock_read_begin()/pvclock_read_retry(), and
 * hv_read_tsc_page_tsc() no longer compares tsc_sequence after its loads,
 * so a host update between the loads pairs one update's fields with
 * another's. The timekeeper's own seqcount is intact: the TSC mode and
 * every other check see a correct vDSO, only a concurrent host catches it.
 * x86 only: arm64 has neither.
 */
#define VDSO_KERNEL_VERSION KERNEL_VERSION(6, 17, 0)
#define CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT 1
#define CONFIG_GENERIC_VDSO_DATA_STORE 1
#define CONFIG_POSIX_AUX_CLOCKS 1
#define VDSOBENCH_VCLOCK_NO_RETRY 1

#include "impls/common/variant_prelude.h"

#include "impls/layouts/generic_time_data.h"
#include "impls/layouts/lib_vdso_v6_17.h"
#include "impls/layouts/vclock_gettime.h"

VDSO_VARIANT_DEFINE(GENERIC_TIME_VARIANT_COMMON,
		    .source = "lib/vdso/gettimeofday.c @ v6.17, "
			      "arch/x86/include/asm/vdso/gettimeofday.h "
			      "vread_pvclock() and vread_hvclock() without "
			      "their retries",
		    .summary = "v6.17 with paravirtual clock reads that "
			       "ignore the host page's version",
		    .known_bad = "reads the host's pvclock or Hyper-V TSC page "
				 "without its version retry: a host update "
				 "mid-read pairs one update's fields with "
				 "another's",
		    .known_bad_clock_mode = "pvclock hvclock");
