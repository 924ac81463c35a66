// SPDX-License-Identifier: GPL-2.0
/*
 * generic_timens: the generic vDSO with time namespaces (v5.6, seed 004):
 * a namespaced task has a timens page (seq = 1, clock_mode =
 * VDSO_CLOCKMODE_TIMENS, per-clock offsets in offset[], a union with
 * basetime) where the data page was, and the real data page in the
 * timens slot. The odd-seq spin loop notices the mode and takes
 * do_hres_timens(), which adds offset[clk]: an array, no branches.
 * Host tasks pay only for the timens-aware code.
 *
 * The read path is lib/vdso/gettimeofday.c of v6.10 with CONFIG_TIME_NS
 * (the timens code is that of v5.6 there), without the overflow
 * protection, so the data is generic_5_3's and x86's delta is that of
 * v6.8..v6.9 (impls/layouts/arch/x86.h).
 */
#define VDSO_KERNEL_VERSION KERNEL_VERSION(6, 10, 0)
#define CONFIG_TIME_NS 1

#include "impls/common/variant_prelude.h"

#include "impls/layouts/generic_datapage.h"
#include "impls/layouts/lib_vdso_v6_10.h"
#include "impls/layouts/vclock_gettime.h"

VDSO_VARIANT_DEFINE(GENERIC_VARIANT_COMMON,
		    .source = "lib/vdso/gettimeofday.c @ v6.10 "
			      "(CONFIG_TIME_NS=y), do_hres_timens() and "
			      "kernel/time/namespace.c as of v5.6",
		    .summary = "time namespaces, offset from an array "
			       "(upstream)");
