// SPDX-License-Identifier: GPL-2.0
/*
 * generic_5_3: the unified vDSO as merged for v5.3 (seed 001):
 * lib/vdso/gettimeofday.c and include/vdso/datapage.h at v5.3, with
 * x86's arch hooks of v5.3. tglx merged it instead of seed 000's v3: it
 * "leaves the data struct unmodified and has a separate array for the raw
 * clock".
 *
 * vdso_data[CS_BASES]: 240 bytes each; REALTIME 32..47, MONOTONIC 48..63;
 * the raw clock is vd[CS_RAW] with its own seq, mult and shift.
 */
#define VDSO_KERNEL_VERSION KERNEL_VERSION(5, 3, 0)

#include "impls/common/variant_prelude.h"

#include "impls/layouts/generic_datapage.h"
#include "impls/layouts/lib_vdso_v5_3.h"
#include "impls/layouts/vclock_gettime.h"

VDSO_VARIANT_DEFINE(GENERIC_VARIANT_COMMON,
		    .source = "lib/vdso/gettimeofday.c, "
			      "include/vdso/datapage.h @ v5.3",
		    .summary = "the first generic vDSO; raw clock in its own "
			       "vdso_data (seed 001)");
