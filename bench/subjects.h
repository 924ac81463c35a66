/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the harness can measure, and how a selection expands.
 *
 * A subject is a variant (built from the registry), a system reference
 * (sys/syscall, sys/libc, sys/vdso; sys/vdso_gettime64 in the i386 build)
 * or a floor (a bare counter read, or
 * floor/empty: the loop alone). A benchmark is subject x clock x mode x
 * CPU, named "<subject>/<clock>/<mode>/cpu<N>"; floors have the one
 * clock "none".
 */
#ifndef VDSOBENCH_BENCH_SUBJECTS_H
#define VDSOBENCH_BENCH_SUBJECTS_H

#include "bench/loops.h"
#include "common/clocks.h"
#include "impls/common/variant.h"
#include "impls/table_sizes_capacity.h"

/*
 * sys/vdso_gettime64, __vdso_clock_gettime64: a 32-bit vDSO's entry with
 * 64-bit time_t. i386's vdso32 has it (v5.3 on); a 64-bit vDSO has none,
 * its clock_gettime's time_t being 64-bit already, so 64-bit builds do not
 * offer the subject.
 */
#if defined(__i386__)
#define BENCH_HAS_GETTIME64 1
#else
#define BENCH_HAS_GETTIME64 0
#endif
#define BENCH_NR_SYS_SUBJECTS (3 + BENCH_HAS_GETTIME64)

/*
 * Every subject there can be: each variant, the system references, a
 * floor per counter in the table, and floor/empty. From the table, so a
 * new layout or counter needs no change here.
 */
#define BENCH_MAX_SUBJECTS                                                     \
	(VDSO_TABLE_VARIANTS_CAPACITY + BENCH_NR_SYS_SUBJECTS +                \
	 VDSO_TABLE_COUNTERS_CAPACITY + 1)

#ifdef __cplusplus
extern "C" {
#endif

enum subject_kind { SUBJECT_VARIANT, SUBJECT_SYS, SUBJECT_FLOOR };

struct subject {
	char name[96];
	enum subject_kind kind;
	const struct vdso_variant *variant; /* SUBJECT_VARIANT only */
	const struct bench_loops *loops;
	bool floor; /* time loops->floor, not loops->op */
	/* the pointer mode's targets (NULL: no pointer mode) */
	int (*clock_gettime)(clockid_t, struct timespec *);
	int (*clock_getres)(clockid_t, struct timespec *);
	int (*gettimeofday)(struct timeval *, struct timezone *);
	time_t (*time)(time_t *);
	/* sys/vdso_gettime64's entry, which no other subject has */
	int (*clock_gettime64)(clockid_t, struct __kernel_timespec *);
	const char *unavailable; /* why it cannot run here, or NULL */
	/* its calls fail as the vDSO's entries do: -errno, errno untouched */
	bool raw_errno;
};

enum bench_mode {
	MODE_HOT,
	MODE_PRESSURE,
	MODE_COMPUTE,
	MODE_WRITER,
	MODE_TIMENS,
	MODE_POINTER,
	MODE_COLD,
	MODE_COLD_L2,
	MODE_WARM,
	MODE_FOOTPRINT,
	NR_MODES,
};

struct mode_info {
	const char *name;
	enum bench_body body;
	const char *help; /* what real effect it exposes */
};
extern const struct mode_info bench_modes[NR_MODES];

/* a benchmark's "clock": an operation and the clock id it passes */
struct clock_choice {
	const char
		*name; /* "monotonic", "getres:tai", "gettimeofday", "none" */
	enum bench_op op;
	clockid_t clk;
};

/* the suite's clocks (common/clocks.h) first, their getres, gettimeofday, time */
#define NR_CLOCK_CHOICES (2 * NR_SUITE_CLOCKS + 2)
extern const struct clock_choice bench_clocks[NR_CLOCK_CHOICES];
extern const struct clock_choice bench_clock_none;
/* the choice with this exact name, or NULL */
const struct clock_choice *bench_clock_find(const char *name);

/*
 * Build the subject list: every real-counter variant of the registry,
 * the system references, the floors. vdso_reason: why sys/vdso is not
 * available (NULL: it is, and bench_vdso_* are set); gettime64_reason:
 * why sys/vdso_gettime64 is not (NULL: bench_vdso_clock_gettime64 is set;
 * ignored where BENCH_HAS_GETTIME64 is 0).
 */
int subjects_init(const char *vdso_reason, const char *gettime64_reason);

/*
 * strerror() of a failed call of a system subject's: a vDSO entry's -errno
 * (raw_errno), else libc's and syscall()'s -1 with errno
 */
const char *subject_error(const struct subject *s, int ret);
unsigned int subjects_nr(void);
const struct subject *subject_at(unsigned int i);

/*
 * The cold modes: each call timed alone (bench/cold.h), after an eviction
 * (cold, cold-l2) or not (warm, their control)
 */
static inline bool bench_mode_is_cold(enum bench_mode mode)
{
	return mode == MODE_COLD || mode == MODE_COLD_L2 || mode == MODE_WARM;
}

/*
 * does this subject x clock x mode make sense (floors: clock none; a
 * subject only the operations it has loops for)
 */
bool subject_applies(const struct subject *s, const struct clock_choice *c,
		     enum bench_mode mode);

/*
 * Selection from comma-separated lists (NULL: the default). Patterns are
 * exact names or fnmatch globs, and each must match something; on a bad
 * value -1, and err names it and lists the valid ones.
 */
struct selection {
	bool subject[BENCH_MAX_SUBJECTS];
	bool clock[NR_CLOCK_CHOICES];
	bool mode[NR_MODES];
};
/*
 * The counter read the default selection measures every layout with: the
 * one the kernel's own vDSO reads on this CPU, so that a default run times
 * what the machine runs. On x86-64 that is rdtsc_ordered()
 * (arch/x86/include/asm/msr.h, v5.2 on: ALTERNATIVE_2 of rdtsc, "lfence;
 * rdtsc" and "rdtscp", patched at boot): RDTSCP where the CPU has it, else
 * lfence; rdtsc (some hypervisors mask RDTSCP: a Zen 5 guest without it
 * ran the default selection with no variant at all when this was fixed to
 * rdtscp). On arm64, __arch_counter_get_cntvct(): CNTVCTSS_EL0 with
 * FEAT_ECV, else isb; mrs cntvct_el0 with the fake dependency (v5.13 on).
 * Decided once, by impls/counters/available.h, outside every timed loop.
 */
const char *bench_default_counter(void);
/* every layout with bench_default_counter(), sys/ and floor/ subjects */
const char *bench_default_subjects(void);
/* what --help says the default is, whatever this CPU has */
#define BENCH_DEFAULT_SUBJECTS_HELP                                            \
	"*+<counter>+always,sys/*,floor/*',\n"                                 \
	"                    <counter> being the kernel's own read here:\n"    \
	"                    rdtscp, or lfence_rdtsc without RDTSCP; on arm64\n"\
	"                    cntvctss with FEAT_ECV, else isb_cntvct_dep"
#define BENCH_DEFAULT_CLOCKS SUITE_CLOCKS(SUITE_CLOCK_LIST_ITEM)
#define BENCH_DEFAULT_MODES "hot"
int selection_parse(struct selection *sel, const char *subjects,
		    const char *clocks, const char *modes, char *err,
		    size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_BENCH_SUBJECTS_H */
