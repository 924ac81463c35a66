// SPDX-License-Identifier: GPL-2.0
/*
 * generic_timens: the generic vDSO with time namespaces (v5.6, seed 004):
 * a namespaced task has a timens page (seq = 1, clock_mode =
 * VDSO_CLOCKMODE_TIMENS, per-clock offsets in offset[], a union with
 * basetime) where the data page was, and the real data page in the
 * timens slot. The odd-seq spin loop notices the mode and takes
 * do_hres_timens(), which adds offset[clk]: an array, no branches.
 * Host tasks pay only for the timens-aware code.
 */
#include "impls/common/variant_prelude.h"

#define CONFIG_TIME_NS 1
#define CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT 0
#define TIMENS_NAMED_OFFSETS 0

#include "impls/layouts/generic_datapage.h"

static __always_inline struct timens_offset
timens_offset_of(const struct vdso_data *vdns, clockid_t clk)
{
	return vdns->offset[clk];
}

#include "impls/layouts/lib_vdso.h"

VDSO_VARIANT_DEFINE(GENERIC_VARIANT_COMMON,
		    .source = "lib/vdso/gettimeofday.c do_hres_timens(), "
			      "kernel/time/namespace.c @ v5.6",
		    .summary = "time namespaces, offset from an array "
			       "(upstream)");
