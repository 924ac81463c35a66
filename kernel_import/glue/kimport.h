/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between the two halves of an imported variant, which
 * cannot share a compile unit: the project's half (variant.c: the
 * variant contract of impls/common/variant.h, the simulated kernel's
 * struct timekeeper) and the tree's half (reader.c and writer.c: the
 * tree's own code against the shim, with the tree's struct timekeeper,
 * struct vdso_data ...). Both name the same types differently, so this
 * header uses only C's own types, and every function here has the
 * variant's prefix (KIMPORT_SYM(), the names VDSO_SYM() makes).
 */
#ifndef KIMPORT_KIMPORT_H
#define KIMPORT_KIMPORT_H

#ifndef KIMPORT_SYM
#define KIMPORT_SYM(name) VDSO_SYM(name)
#endif

/*
 * What the simulated timekeeper (impls/kernel/timekeeper.h) publishes,
 * which writer.c copies into a struct timekeeper of the tree's own
 * definition before calling the tree's update_vsyscall().
 */
struct kimport_tkr {
	unsigned long long cycle_last;
	unsigned long long mask;
	unsigned int mult;
	unsigned int shift;
	unsigned long long xtime_nsec; /* shifted left by shift */
};

struct kimport_tk {
	struct kimport_tkr tkr_mono;
	struct kimport_tkr tkr_raw;
	unsigned long long xtime_sec;
	long long wall_to_monotonic_sec;
	long long wall_to_monotonic_nsec;
	long long monotonic_to_boot_sec;
	long long monotonic_to_boot_nsec;
	long long offs_boot; /* ns, MONOTONIC -> BOOTTIME */
	int tai_offset;
	unsigned long long raw_sec;
	unsigned long long max_cycles; /* the clocksource's */
	/* the clocksource has a vDSO clock mode: the tree's VDSO_CLOCKMODE_TSC */
	int vdso_capable;
	/*
	 * x86: that mode is VDSO_CLOCKMODE_PVCLOCK (kvm-clock) or _HVCLOCK
	 * (Hyper-V's TSC page): sim_vclock.h's SIM_CLOCKMODE_*; 0: the TSC
	 */
	int paravirt;
	unsigned int hrtimer_res;
	/* v6.17 auxiliary timekeepers: TIMEKEEPER_AUX_FIRST + n, enabled */
	int id;
	int clock_valid;
	long long monotonic_to_aux_sec;
	long long monotonic_to_aux_nsec;
};

/* a time namespace's offsets (struct timens_offsets) */
struct kimport_timens {
	long long monotonic_sec, monotonic_nsec;
	long long boottime_sec, boottime_nsec;
};

/* the vvar area the reader sees: [0] its vvar page, [1] the timens slot */
#define KIMPORT_VVAR_PAGES 2
#define KIMPORT_PAGE_SIZE 4096
/* defined by writer.c with the tree's types; an incomplete type elsewhere */
struct kimport_vvar;
extern struct kimport_vvar KIMPORT_SYM(vvar_area);

/* writer.c: the tree's update path */
/* the kernel's own mapping of the data page ([0]) and the namespace page ([1]) */
void KIMPORT_SYM(attach)(void *k_pages);
void KIMPORT_SYM(publish)(const struct kimport_tk *tk);
void KIMPORT_SYM(publish_tz)(int minuteswest, int dsttime);
/* v6.17: vdso_time_update_aux() of one auxiliary timekeeper */
void KIMPORT_SYM(publish_aux)(const struct kimport_tk *tk);
/* kernel/time/namespace.c timens_setup_vdso_data() on the namespace page */
void KIMPORT_SYM(timens_setup)(void *ns_page, const struct kimport_timens *offs);

/*
 * variant.c: the fallbacks, which enter the simulated kernel as every
 * layout's do (impls/common/variant_prelude.h). The pointers are the
 * userspace structures (struct timespec, timeval, timezone), which on
 * x86-64 are the kernel's __kernel_timespec, __kernel_old_timeval and
 * struct timezone bit for bit.
 */
long KIMPORT_SYM(fallback_clock_gettime)(int clk, void *ts);
long KIMPORT_SYM(fallback_clock_getres)(int clk, void *res);
long KIMPORT_SYM(fallback_gettimeofday)(void *tv, void *tz);

#endif /* KIMPORT_KIMPORT_H */
