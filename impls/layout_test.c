// SPDX-License-Identifier: GPL-2.0
/*
 * The data layouts are facts from the kernel (pahole output in seed 000,
 * include/vdso/datapage.h): pin the offsetof() field tables to them.
 */
#include <stdint.h>
#include <string.h>

#include "impls/registry.h"
#include "testing/tap.h"

struct pin {
	const char *field;
	u32 offset;
	u32 size;
};

static void check_layout(const char *layout, size_t data_size,
			 const struct pin *pins, unsigned int n)
{
	char name[96];
	const struct vdso_variant *v;

	snprintf(name, sizeof(name), "%s+fake+always", layout);
	v = vdso_variant_find(name);
	if (!tap_ok(v != NULL, "%s is in the registry", name))
		return;
	tap_ok(v->data_size == data_size, "%s: data is %zu bytes (want %zu)",
	       layout, v->data_size, data_size);
	for (unsigned int i = 0; i < n; i++) {
		const struct vdso_field *f = NULL;

		for (u32 k = 0; k < v->nr_fields; k++)
			if (!strcmp(v->fields[k].name, pins[i].field))
				f = &v->fields[k];
		tap_ok(f && f->offset == pins[i].offset && f->size == pins[i].size,
		       "%s: %s at %u, %u bytes (got %d, %d)", layout,
		       pins[i].field, pins[i].offset, pins[i].size,
		       f ? (int)f->offset : -1, f ? (int)f->size : -1);
	}
}

#define PINS(...) ((const struct pin[]){ __VA_ARGS__ }), \
	(sizeof((const struct pin[]){ __VA_ARGS__ }) / sizeof(struct pin))

int main(void)
{
	check_layout("x86_gtod", 232,
		     PINS({ "seq", 0, 4 }, { "vclock_mode", 4, 4 },
			  { "cycle_last", 8, 8 }, { "mask", 16, 8 },
			  { "mult", 24, 4 }, { "shift", 28, 4 },
			  { "basetime[VGTOD_BASES]", 32, 192 },
			  { "basetime[CLOCK_REALTIME]", 32, 16 },
			  { "basetime[CLOCK_MONOTONIC]", 48, 16 },
			  { "tz_minuteswest", 224, 4 }, { "tz_dsttime", 228, 4 }));
	check_layout("x86_gtod_raw_branch", 240,
		     PINS({ "raw_mult", 32, 4 }, { "raw_shift", 36, 4 },
			  { "basetime[CLOCK_REALTIME]", 40, 16 }));
	check_layout("x86_gtod_raw_copy", 240,
		     PINS({ "raw_mult", 32, 4 }, { "raw_shift", 36, 4 },
			  { "basetime[CLOCK_REALTIME]", 40, 16 }));
	/* tglx's pahole in seed 000: 320 bytes, MONOTONIC straddles 48..71 */
	check_layout("x86_gtod_ts_multshift", 320,
		     PINS({ "seq", 0, 4 }, { "vclock_mode", 4, 4 },
			  { "cycle_last", 8, 8 }, { "mask", 16, 8 },
			  { "basetime[VGTOD_BASES]", 24, 288 },
			  { "basetime[CLOCK_REALTIME]", 24, 24 },
			  { "basetime[CLOCK_MONOTONIC]", 48, 24 },
			  { "tz_minuteswest", 312, 4 }, { "tz_dsttime", 316, 4 }));
#ifndef __arm__ /* AArch32 (the compat vDSO) has no v5.3 layout */
	/* two struct vdso_data of 240 bytes: CS_HRES_COARSE and CS_RAW */
	check_layout("generic_5_3", 480,
		     PINS({ "seq", 0, 4 }, { "clock_mode", 4, 4 },
			  { "cycle_last", 8, 8 }, { "mask", 16, 8 },
			  { "mult", 24, 4 }, { "shift", 28, 4 },
			  { "basetime[VDSO_BASES]", 32, 192 },
			  { "basetime[CLOCK_REALTIME]", 32, 16 },
			  { "basetime[CLOCK_MONOTONIC]", 48, 16 },
			  { "tz_minuteswest", 224, 4 }, { "tz_dsttime", 228, 4 },
			  { "hrtimer_res", 232, 4 }, { "vd[CS_RAW].seq", 240, 4 },
			  { "vd[CS_RAW].mult", 264, 4 }));
#endif
#ifdef VDSO_ARCH_TIMER
	/*
	 * arm64 does not select CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT: no
	 * max_cycles, so v6.10's struct vdso_data is v5.3's, MONOTONIC 48..63
	 */
	check_layout("generic_6_10", 480,
		     PINS({ "seq", 0, 4 }, { "clock_mode", 4, 4 },
			  { "cycle_last", 8, 8 }, { "mask", 16, 8 },
			  { "mult", 24, 4 }, { "shift", 28, 4 },
			  { "basetime[CLOCK_REALTIME]", 32, 16 },
			  { "basetime[CLOCK_MONOTONIC]", 48, 16 },
			  { "vd[CS_RAW].seq", 240, 4 }));
	/* 224-byte struct vdso_clock: 448 + 16 -> 512 */
	check_layout("generic_6_15", 512,
		     PINS({ "clock_data[CS_HRES_COARSE]", 0, 224 },
			  { "clock_data[CS_HRES_COARSE].seq", 0, 4 },
			  { "clock_data[CS_HRES_COARSE].mask", 16, 8 },
			  { "clock_data[CS_HRES_COARSE].basetime[CLOCK_REALTIME]", 32, 16 },
			  { "clock_data[CS_HRES_COARSE].basetime[CLOCK_MONOTONIC]", 48, 16 },
			  { "clock_data[CS_RAW].seq", 224, 4 },
			  { "clock_data[CS_RAW].basetime[CLOCK_MONOTONIC_RAW]", 320, 16 },
			  { "tz_minuteswest", 448, 4 }, { "tz_dsttime", 452, 4 },
			  { "hrtimer_res", 456, 4 }));
	/* aux_clock_data[8] of 224 bytes: 2256 -> 2304 */
	check_layout("generic_6_17", 2304,
		     PINS({ "clock_data[CS_HRES_COARSE].basetime[CLOCK_MONOTONIC]", 48, 16 },
			  { "clock_data[CS_RAW].seq", 224, 4 },
			  { "aux_clock_data", 448, 1792 },
			  { "aux_clock_data[0].seq", 448, 4 },
			  { "aux_clock_data[0].basetime[VDSO_BASE_AUX]", 480, 16 },
			  { "aux_clock_data[7]", 2016, 224 },
			  { "tz_minuteswest", 2240, 4 }, { "hrtimer_res", 2248, 4 }));
#else
	check_layout("generic_6_10", 496,
		     PINS({ "seq", 0, 4 }, { "clock_mode", 4, 4 },
			  { "cycle_last", 8, 8 }, { "max_cycles", 16, 8 },
			  { "mask", 24, 8 }, { "mult", 32, 4 }, { "shift", 36, 4 },
			  { "basetime[CLOCK_REALTIME]", 40, 16 },
			  { "basetime[CLOCK_MONOTONIC]", 56, 16 },
			  { "vd[CS_RAW].seq", 248, 4 }));
	/*
	 * v6.15: struct vdso_time_data { struct vdso_clock clock_data[2];
	 * tz, hrtimer_res once }, ____cacheline_aligned: 464 + 16 -> 512
	 */
	check_layout("generic_6_15", 512,
		     PINS({ "clock_data[CS_HRES_COARSE]", 0, 232 },
			  { "clock_data[CS_HRES_COARSE].seq", 0, 4 },
			  { "clock_data[CS_HRES_COARSE].max_cycles", 16, 8 },
			  { "clock_data[CS_HRES_COARSE].basetime[CLOCK_REALTIME]", 40, 16 },
			  { "clock_data[CS_HRES_COARSE].basetime[CLOCK_MONOTONIC]", 56, 16 },
			  { "clock_data[CS_RAW].seq", 232, 4 },
			  { "clock_data[CS_RAW].basetime[CLOCK_MONOTONIC_RAW]", 336, 16 },
			  { "tz_minuteswest", 464, 4 }, { "tz_dsttime", 468, 4 },
			  { "hrtimer_res", 472, 4 }));
	/* v6.17: aux_clock_data[8] (232 bytes each) between them: 2336 -> 2368 */
	check_layout("generic_6_17", 2368,
		     PINS({ "clock_data[CS_HRES_COARSE].basetime[CLOCK_MONOTONIC]", 56, 16 },
			  { "clock_data[CS_RAW].seq", 232, 4 },
			  { "aux_clock_data", 464, 1856 },
			  { "aux_clock_data[0].seq", 464, 4 },
			  { "aux_clock_data[0].basetime[VDSO_BASE_AUX]", 504, 16 },
			  { "aux_clock_data[7]", 2088, 232 },
			  { "tz_minuteswest", 2320, 4 }, { "hrtimer_res", 2328, 4 }));
#endif

	/* the capabilities the rest of the project derives from */
	for (unsigned int i = 0; i < vdso_variants_nr; i++) {
		const struct vdso_variant *v = vdso_variants[i];
		/*
		 * From the data the layout has, not from its name, so a new
		 * layout (or an import) is checked the same way: the slow
		 * path exists where max_cycles does, aux clocks where their
		 * data does (all eight, as v6.17 has them).
		 */
		bool max_cycles = false, aux_data = false;

		for (unsigned int f = 0; f < v->nr_fields; f++) {
			const char *name = v->fields[f].name;
			const char *dot = strrchr(name, '.');

			max_cycles |= !strcmp(dot ? dot + 1 : name, "max_cycles");
			aux_data |= !strncmp(name, "aux_clock_data", 14);
		}
		tap_ok(v->has_max_cycles == max_cycles,
		       "%s: has_max_cycles %d", v->name, v->has_max_cycles);
		tap_ok(v->aux_clocks == (aux_data ? 0xff0000u : 0u),
		       "%s: aux_clocks 0x%x", v->name, v->aux_clocks);
		tap_ok(!v->aux_clocks == !v->update_vsyscall_aux,
		       "%s: an aux publisher exactly when aux clocks are served",
		       v->name);
	}

	for (unsigned int i = 0; i < vdso_variants_nr; i++) {
		const struct vdso_variant *v = vdso_variants[i];

		tap_ok((uintptr_t)v->vvar % 4096 == 0 && v->vvar_size % 4096 == 0 &&
			       v->data_size <= 4096,
		       "%s: data alone in 4 KiB-aligned pages", v->name);
	}
	return tap_done();
}
