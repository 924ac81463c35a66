// SPDX-License-Identifier: GPL-2.0
/*
 * generic_timens_switch: generic_timens with the offset chosen the way
 * the Safonov/Vagin time namespace RFC's clk_to_ns() did (seed 004):
 * switch (clk) over named monotonic and boottime offsets. tglx: "The
 * switch case is slower ... the I-cache footprint is smaller and no
 * conditional branches" for the array he merged instead.
 */
#define VDSO_KERNEL_VERSION KERNEL_VERSION(6, 10, 0)
#define CONFIG_TIME_NS 1
#define TIMENS_NAMED_OFFSETS 1

#include "impls/common/variant_prelude.h"

#include "impls/layouts/generic_datapage.h"

static const struct timens_offset timens_no_offset;

static __always_inline const struct timens_offset *
timens_offset_of(const struct vdso_data *vdns, clockid_t clk)
{
	switch (clk) {
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_MONOTONIC_RAW:
		return &vdns->named.monotonic;
	case CLOCK_BOOTTIME:
	case CLOCK_BOOTTIME_ALARM:
		return &vdns->named.boottime;
	default:
		return &timens_no_offset;
	}
}

#include "impls/layouts/lib_vdso_v6_10.h"
#include "impls/layouts/vclock_gettime.h"

VDSO_VARIANT_DEFINE(GENERIC_VARIANT_COMMON,
		    .source = "seed 004: Safonov/Vagin timens RFC clk_to_ns() "
			      "on lib/vdso @ v6.10 (CONFIG_TIME_NS=y)",
		    .summary = "time namespaces, offset from a switch over "
			       "named offsets (RFC)");
