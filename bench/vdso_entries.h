/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names the kernel's vDSO gives its time functions, and the version
 * they are defined at, one row per architecture: x86-64 and i386
 * (arch/x86/entry/vdso/vdso.lds.S, vdso32/vdso32.lds.S) export
 * __vdso_clock_gettime and friends at LINUX_2.6; arm64
 * (arch/arm64/kernel/vdso/vdso.lds.S) exports __kernel_clock_gettime,
 * __kernel_gettimeofday and __kernel_clock_getres at LINUX_2.6.39, and no
 * time function.
 *
 * A NULL name: that vDSO has no such entry. Where it has no time entry,
 * glibc's time() is clock_gettime(CLOCK_REALTIME_COARSE), and so is
 * sys/vdso's (bench_vdso_time_coarse). These are the names the harness
 * looks up and records (the results' vdso.symbols), so a results file says
 * what was looked for.
 */
#ifndef VDSOBENCH_VDSO_ENTRIES_H
#define VDSOBENCH_VDSO_ENTRIES_H

#ifdef __cplusplus
extern "C" {
#endif

struct vdso_entries {
	const char *arch;    /* "x86-64", "i386", "arm64" */
	const char *version; /* "LINUX_2.6" */
	const char *clock_gettime;
	const char *clock_getres;
	const char *gettimeofday;
	const char *time; /* NULL: time() is the coarse clock_gettime */
	/* a 32-bit vDSO's clock_gettime with 64-bit time_t; NULL: none */
	const char *clock_gettime64;
};

extern const struct vdso_entries vdso_entries_x86_64;
extern const struct vdso_entries vdso_entries_i386;
extern const struct vdso_entries vdso_entries_arm64;

/*
 * This process's own architecture's row (the one its vDSO is looked up
 * with); NULL for an architecture the table does not know.
 */
const struct vdso_entries *vdso_entries_own(void);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_VDSO_ENTRIES_H */
