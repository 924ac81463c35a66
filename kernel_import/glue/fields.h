/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The offsetof() table of an imported tree's vDSO data (struct vdso_field,
 * impls/common/variant.h), computed on the tree's own struct: `layout'
 * draws it as cache lines and cross-checks it with pahole on writer.c's
 * object. The entries and their names are those of the transcribed
 * layouts of the same shape (impls/layouts/generic_datapage.h up to
 * v6.14, generic_time_data.h from v6.15), so `layout --diff` lines an
 * import up against a transcription field by field. A tree that lacks
 * one of these members fails to compile here, naming it.
 *
 * KIMPORT_FIELDS expands to the initialisers; the probe (probe.c), with
 * its own KIMPORT_FIELD_AT, to asm markers that it counts for
 * kimport_desc.h, which variant.c needs as constants.
 */
#ifndef KIMPORT_FIELDS_H
#define KIMPORT_FIELDS_H

/* the probe (probe.c) defines its own: each entry as an asm marker */
#ifndef KIMPORT_FIELD_AT
#define KIMPORT_FIELD_AT(type, base, member, label)                          \
	{                                                                   \
		.name = (label),                                            \
		.offset = (u32)((base) + __builtin_offsetof(type, member)), \
		.size = (u32)sizeof(((type *)0)->member)                    \
	}
#endif

#ifndef KIMPORT_TIME_DATA

/* v5.3..v6.14: struct vdso_data vd[CS_BASES] */
#define KIMPORT_F(member, label) KIMPORT_FIELD_AT(struct vdso_data, 0, member, label)
#define KIMPORT_RAW(member, label)                                          \
	KIMPORT_FIELD_AT(struct vdso_data, sizeof(struct vdso_data), member, label)
#ifdef CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
#define KIMPORT_MAX_CYCLES KIMPORT_F(max_cycles, "max_cycles"),
#define KIMPORT_RAW_MAX_CYCLES KIMPORT_RAW(max_cycles, "vd[CS_RAW].max_cycles"),
#else
#define KIMPORT_MAX_CYCLES
#define KIMPORT_RAW_MAX_CYCLES
#endif

#define KIMPORT_FIELDS                                                      \
	KIMPORT_F(seq, "seq"), KIMPORT_F(clock_mode, "clock_mode"),         \
	KIMPORT_F(cycle_last, "cycle_last"), KIMPORT_MAX_CYCLES             \
	KIMPORT_F(mask, "mask"), KIMPORT_F(mult, "mult"),                   \
	KIMPORT_F(shift, "shift"),                                          \
	KIMPORT_F(basetime, "basetime[VDSO_BASES]"),                        \
	KIMPORT_F(basetime[CLOCK_REALTIME], "basetime[CLOCK_REALTIME]"),    \
	KIMPORT_F(basetime[CLOCK_MONOTONIC], "basetime[CLOCK_MONOTONIC]"),  \
	KIMPORT_F(basetime[CLOCK_REALTIME_COARSE],                          \
		  "basetime[CLOCK_REALTIME_COARSE]"),                       \
	KIMPORT_F(basetime[CLOCK_MONOTONIC_COARSE],                         \
		  "basetime[CLOCK_MONOTONIC_COARSE]"),                      \
	KIMPORT_F(basetime[CLOCK_BOOTTIME], "basetime[CLOCK_BOOTTIME]"),    \
	KIMPORT_F(basetime[CLOCK_TAI], "basetime[CLOCK_TAI]"),              \
	KIMPORT_F(tz_minuteswest, "tz_minuteswest"),                        \
	KIMPORT_F(tz_dsttime, "tz_dsttime"),                                \
	KIMPORT_F(hrtimer_res, "hrtimer_res"),                              \
	KIMPORT_RAW(seq, "vd[CS_RAW].seq"),                                 \
	KIMPORT_RAW(clock_mode, "vd[CS_RAW].clock_mode"),                   \
	KIMPORT_RAW(cycle_last, "vd[CS_RAW].cycle_last"),                   \
	KIMPORT_RAW_MAX_CYCLES                                              \
	KIMPORT_RAW(mask, "vd[CS_RAW].mask"),                               \
	KIMPORT_RAW(mult, "vd[CS_RAW].mult"),                               \
	KIMPORT_RAW(shift, "vd[CS_RAW].shift"),                             \
	KIMPORT_RAW(basetime[CLOCK_MONOTONIC_RAW],                          \
		    "vd[CS_RAW].basetime[CLOCK_MONOTONIC_RAW]")

#else /* KIMPORT_TIME_DATA */

/* v6.15+: struct vdso_time_data, its clocks in clock_data[CS_BASES] */
#define KIMPORT_T(member, label) KIMPORT_FIELD_AT(struct vdso_time_data, 0, member, label)
#ifdef CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT
#define KIMPORT_CLOCK_MAX_CYCLES(cs, name)                                  \
	KIMPORT_T(clock_data[cs].max_cycles, "clock_data[" name "].max_cycles"),
#else
#define KIMPORT_CLOCK_MAX_CYCLES(cs, name)
#endif
#define KIMPORT_CLOCK(cs, name)                                             \
	KIMPORT_T(clock_data[cs], "clock_data[" name "]"),                  \
	KIMPORT_T(clock_data[cs].seq, "clock_data[" name "].seq"),          \
	KIMPORT_T(clock_data[cs].clock_mode, "clock_data[" name "].clock_mode"), \
	KIMPORT_T(clock_data[cs].cycle_last, "clock_data[" name "].cycle_last"), \
	KIMPORT_CLOCK_MAX_CYCLES(cs, name)                                  \
	KIMPORT_T(clock_data[cs].mask, "clock_data[" name "].mask"),        \
	KIMPORT_T(clock_data[cs].mult, "clock_data[" name "].mult"),        \
	KIMPORT_T(clock_data[cs].shift, "clock_data[" name "].shift"),      \
	KIMPORT_T(clock_data[cs].basetime, "clock_data[" name "].basetime[VDSO_BASES]")
#define KIMPORT_BASETIME(clk)                                               \
	KIMPORT_T(clock_data[CS_HRES_COARSE].basetime[clk],                 \
		  "clock_data[CS_HRES_COARSE].basetime[" #clk "]")
#ifdef KIMPORT_TZ_STRUCT
/* v6.17: struct timezone tz replaced tz_minuteswest and tz_dsttime */
#define KIMPORT_TZ                                                          \
	KIMPORT_T(tz.tz_minuteswest, "tz.tz_minuteswest"),                  \
	KIMPORT_T(tz.tz_dsttime, "tz.tz_dsttime"),
#else
#define KIMPORT_TZ                                                          \
	KIMPORT_T(tz_minuteswest, "tz_minuteswest"),                        \
	KIMPORT_T(tz_dsttime, "tz_dsttime"),
#endif
#ifdef KIMPORT_AUX_CLOCK_DATA
/* v6.17: the auxiliary clocks, named as generic_time_data.h names them */
#define KIMPORT_AUX_N(n) KIMPORT_T(aux_clock_data[n], "aux_clock_data[" #n "]"),
#define KIMPORT_AUX                                                         \
	KIMPORT_T(aux_clock_data, "aux_clock_data"),                        \
	KIMPORT_AUX_N(0) KIMPORT_AUX_N(1) KIMPORT_AUX_N(2) KIMPORT_AUX_N(3) \
	KIMPORT_AUX_N(4) KIMPORT_AUX_N(5) KIMPORT_AUX_N(6) KIMPORT_AUX_N(7) \
	KIMPORT_T(aux_clock_data[0].seq, "aux_clock_data[0].seq"),          \
	KIMPORT_T(aux_clock_data[0].basetime[VDSO_BASE_AUX],                \
		  "aux_clock_data[0].basetime[VDSO_BASE_AUX]"),
#else
#define KIMPORT_AUX
#endif

#define KIMPORT_FIELDS                                                      \
	KIMPORT_CLOCK(CS_HRES_COARSE, "CS_HRES_COARSE"),                    \
	KIMPORT_BASETIME(CLOCK_REALTIME), KIMPORT_BASETIME(CLOCK_MONOTONIC), \
	KIMPORT_BASETIME(CLOCK_REALTIME_COARSE),                            \
	KIMPORT_BASETIME(CLOCK_MONOTONIC_COARSE),                           \
	KIMPORT_BASETIME(CLOCK_BOOTTIME), KIMPORT_BASETIME(CLOCK_TAI),      \
	KIMPORT_CLOCK(CS_RAW, "CS_RAW"),                                    \
	KIMPORT_T(clock_data[CS_RAW].basetime[CLOCK_MONOTONIC_RAW],         \
		  "clock_data[CS_RAW].basetime[CLOCK_MONOTONIC_RAW]"),      \
	KIMPORT_AUX KIMPORT_TZ KIMPORT_T(hrtimer_res, "hrtimer_res")

#endif /* KIMPORT_TIME_DATA */

#endif /* KIMPORT_FIELDS_H */
