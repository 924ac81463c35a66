/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The variant contract.
 *
 * A variant is one layout source (impls/layouts/<layout>.c) compiled with
 * one counter read (impls/counters/<counter>.h) and one inlining choice.
 * impls/variants.bzl compiles every combination with these defines:
 *
 *	VDSO_PREFIX		symbol prefix, e.g. generic_5_3__rdtscp__always
 *	VDSO_LAYOUT, VDSO_COUNTER, VDSO_INLINE	the axes, as bare words
 *	VDSO_COUNTER_HEADER	impls/counters/<counter>.h
 *	VDSO_INLINE_ALWAYS	1: do_hres()/do_coarse() are __always_inline
 *
 * Before the prelude (impls/common/variant_prelude.h) a layout states the
 * kernel it follows, as that kernel's build would:
 *
 *	VDSO_KERNEL_VERSION	KERNEL_VERSION(6, 10, 0): picks the arch hooks
 *				of that version (impls/layouts/arch/)
 *	CONFIG_*		defined to 1 or not at all, as Kconfig does;
 *				CONFIG_POSIX_AUX_CLOCKS also decides what the
 *				simulated syscalls answer for ids CLOCK_AUX..
 *				CLOCK_AUX_LAST (-EINVAL without it, as before
 *				v6.17)
 *
 * and each layout source must provide:
 *
 *	- its data page: the kernel's struct, alone in a 4 KiB-aligned page,
 *	  at offset 0 (the kernel puts it at vvar offset 128, which is
 *	  line-aligned, so the cache lines are the kernel's);
 *	- the vDSO entry points VDSO_SYM(clock_gettime), VDSO_SYM(clock_getres),
 *	  VDSO_SYM(gettimeofday), VDSO_SYM(time), returning 0 or -errno as
 *	  the kernel's __vdso_* functions do;
 *	- the kernel side: VDSO_SYM(update_vsyscall) and
 *	  VDSO_SYM(update_vsyscall_tz), which copy the simulated timekeeper
 *	  under the seqlock write protocol;
 *	- a field table built with offsetof() (VDSO_FIELD below);
 *	- one VDSO_VARIANT_DEFINE() describing it.
 *
 * Everything else in a layout source is static, so any number of
 * variants link into one binary.
 */
#ifndef VDSOBENCH_VARIANT_H
#define VDSOBENCH_VARIANT_H

#include <sys/time.h>
#include <time.h>

#include "impls/common/compiler.h"
#include "impls/kernel/timekeeper.h"

struct vdso_field {
	const char *name;
	u32 offset; /* from the start of the variant's vvar area */
	u32 size;
};

struct vdso_variant {
	const char *name; /* "<layout>+<counter>+<inline>" */
	const char *layout;
	const char *counter;
	const char *inline_mode;
	const char *source; /* the kernel code the layout follows */
	u32 kernel_version; /* KERNEL_VERSION() of that code: VDSO_KERNEL_VERSION */
	const char *summary;
	/* NULL, or why this variant is broken and kept as a negative control */
	const char *known_bad;
	/* NULL: broken in every clock mode; else those it is, by name ("pvclock hvclock") */
	const char *known_bad_clock_mode;

	/* clock ids served in userspace, as BIT(clk) masks */
	u32 hres_clocks;
	u32 coarse_clocks;
	u32 raw_clocks;
	/*
	 * v6.17 auxiliary clocks, BIT(clk) of CLOCK_AUX..CLOCK_AUX_LAST:
	 * served in userspace while enabled, the fallback's -ENODEV while not
	 */
	u32 aux_clocks;
	bool has_getres; /* a vDSO clock_getres (x86 before 5.3 had none) */
	/*
	 * v6.17's clock_getres() answers every aux id itself (1 ns, VDSO_AUX),
	 * with CONFIG_POSIX_AUX_CLOCKS or without: without, the syscall says
	 * -EINVAL. Upstream's own difference (the running 6.18 here does it),
	 * which an image built without aux clocks keeps.
	 */
	bool getres_aux;
	/*
	 * CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT: the data carries max_cycles
	 * and a delta above it takes a 128-bit multiply
	 */
	bool has_max_cycles;
	bool has_timens;
	bool real_counter; /* false: the fake counter, tests only */
	/*
	 * a kernel image whose vvar area has no pvclock (hvclock) page the
	 * loader knows: its vread_pvclock() (vread_hvclock()) cannot read the
	 * simulated host's; no_hvclock_page also where the read is not built
	 */
	bool no_pvclock_page, no_hvclock_page;

	/* the data as readers see it */
	const void *vvar;
	size_t data_size; /* sizeof the kernel struct(s) in the vvar page */
	size_t vvar_size; /* bytes of vvar area (pages) */
	const struct vdso_field *fields;
	u32 nr_fields;

	/* hwloc-style: 0, or -1 with errno */
	int (*init)(void);

	/* the vDSO entry points */
	int (*clock_gettime)(clockid_t clk, struct timespec *ts);
	int (*clock_getres)(clockid_t clk, struct timespec *res);
	int (*gettimeofday)(struct timeval *tv, struct timezone *tz);
	time_t (*time)(time_t *t);

	/* the kernel side */
	void (*update_vsyscall)(const struct timekeeper *tk);
	void (*update_vsyscall_tz)(const struct timezone *tz);
	/*
	 * v6.17 vdso_time_update_aux(): publish one auxiliary timekeeper
	 * (tk->id) under its own clock's seqcount; NULL without aux_clocks
	 */
	void (*update_vsyscall_aux)(const struct timekeeper *tk);
	/*
	 * checkers only (verify), never a benchmark: make the variant's own
	 * fallback syscalls (an image's syscall instruction) answer from the
	 * simulated kernel, as every layout's fallbacks do; NULL where they
	 * already do. 0, or -1 with errno.
	 */
	int (*trap_fallbacks)(void);
	/* time namespaces: swap the vvar mappings as timens_commit() does */
	int (*timens_enter)(const struct timens_offsets *offs);
	int (*timens_leave)(void);
};

#define VDSO_FIELD(type, member, label)                                     \
	{                                                                   \
		.name = (label), .offset = (u32)offsetof(type, member),     \
		.size = (u32)sizeof(((type *)0)->member)                    \
	}

#endif /* VDSOBENCH_VARIANT_H */
