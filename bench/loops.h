/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The timed loops. Each loop makes n calls of one operation, with one
 * between-call body per mode, and nothing else: Google Benchmark times a
 * whole loop (KeepRunningBatch), so the harness adds no per-call cost
 * beyond the loop itself, which floor/empty measures.
 *
 * The contract: a subject (a variant, a system reference) provides a
 * struct bench_loops, built with BENCH_DEFINE_LOOPS() from four calls:
 * its clock_gettime, clock_getres, gettimeofday and time. Variants get
 * theirs from variant_loops.c, compiled once per variant, so the call is
 * a direct call into that variant's entry point, as the vDSO's own
 * callers make; the pointer mode calls through memory instead, as glibc
 * does with the vDSO's address.
 *
 * The cold loop is the one exception to timing the loop whole: it evicts
 * the data's lines before each call and times each call alone between two
 * ordered counter reads, outside of which the eviction runs (cold.h).
 */
#ifndef VDSOBENCH_BENCH_LOOPS_H
#define VDSOBENCH_BENCH_LOOPS_H

#include <linux/time_types.h>
#include <sys/time.h>
#include <time.h>

#include "bench/cold.h"
#include "bench/footprint.h"
#include "impls/common/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

enum bench_op {
	BENCH_OP_GETTIME,
	BENCH_OP_GETRES,
	BENCH_OP_GETTIMEOFDAY,
	BENCH_OP_TIME,
	BENCH_NR_OPS,
};

/* what runs between two calls */
enum bench_body {
	BENCH_BODY_NONE,     /* hot, writer, timens, pointer */
	BENCH_BODY_PRESSURE, /* read every line of an L1D-sized buffer */
	BENCH_BODY_COMPUTE,  /* BENCH_COMPUTE_STEPS dependent multiply-adds */
	BENCH_BODY_COLD,     /* evict the data's lines; time each call alone */
	BENCH_BODY_FOOTPRINT, /* walk the caller's chain over the data's sets */
	BENCH_NR_BODIES,
};

/*
 * The page offsets the pressure mode evicts: every layout's data lies in
 * the first 496 bytes of its page, the kernel's vdso_data at 128 of its
 * vvar page; 1 KiB covers both.
 */
#define BENCH_PRESSURE_SPAN 1024

/* tglx's "small computation": ~4 cycles of latency per step */
#define BENCH_COMPUTE_STEPS 20

struct bench_env {
	clockid_t clk;
	const volatile u8 *pressure_buf;
	size_t pressure_len; /* bytes: 2 x L1D, whole pages */
	/* the pointer mode's targets, read from memory on every call */
	int (*volatile clock_gettime)(clockid_t, struct timespec *);
	int (*volatile clock_getres)(clockid_t, struct timespec *);
	int (*volatile gettimeofday)(struct timeval *, struct timezone *);
	time_t (*volatile time)(time_t *);
	/* the cold modes: what is evicted before each call */
	struct cold_evict cold;
	/* each call's ticks, counted by the cold loop (NULL: not counted) */
	struct cold_hist *cold_hist;
	/* the footprint mode: the caller's chain and the controls */
	struct footprint_env footprint;
};

typedef void (*bench_loop_fn)(const struct bench_env *env, u64 n);

struct bench_loops {
	bench_loop_fn op[BENCH_NR_OPS][BENCH_NR_BODIES];
	/* the subject's counter read alone, or NULL */
	bench_loop_fn floor[BENCH_NR_BODIES];
};

/* keep a result alive without a store the real callers would not make */
#define bench_keep(x) __asm__ __volatile__("" : : "g"(x) : "memory")

static __always_inline void bench_between(enum bench_body body,
					  const struct bench_env *env)
{
	if (body == BENCH_BODY_PRESSURE) {
		/*
		 * An L1D is virtually indexed within a page (size / ways
		 * is 4 KiB on x86), so the lines at the same offsets of
		 * other pages are the ones competing with the data page:
		 * reading BENCH_PRESSURE_SPAN bytes at the start of
		 * 2 x L1D / 4 KiB pages (twice the ways, so that even a
		 * pseudo-LRU lets go) evicts every data page's lines, and
		 * costs a quarter of streaming the whole L1D.
		 */
		for (size_t p = 0; p < env->pressure_len; p += 4096)
			for (size_t off = 0; off < BENCH_PRESSURE_SPAN;
			     off += 64)
				(void)env->pressure_buf[p + off];
	} else if (body == BENCH_BODY_COMPUTE) {
		u64 x = (u64)env->clk;

		for (int i = 0; i < BENCH_COMPUTE_STEPS; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			__asm__ __volatile__("" : "+r"(x));
		}
		bench_keep(x);
	}
}

#define BENCH_LOOP(sym, body, call)                                            \
	static void sym(const struct bench_env *env, u64 n)                    \
	{                                                                      \
		for (u64 i = 0; i < n; i++) {                                  \
			call;                                                  \
			bench_between(body, env);                              \
		}                                                              \
	}

/*
 * Each call alone: the eviction and the dither, the bracket's first
 * read, the call, the second read, the ticks counted. The loop reads its environment from a
 * copy in its own frame, which the harness and the sim driver place above
 * the evicted offsets (cold_with_stack_at(COLD_STACK_OFFSET, ...)), so
 * that what the call reads besides its subject's data is in L1.
 */
#define BENCH_COLD_LOOP(sym, call)                                             \
	static void sym(const struct bench_env *cold_env_, u64 n)              \
	{                                                                      \
		const struct bench_env cold_copy_ = *cold_env_;                \
		const struct bench_env *env = &cold_copy_;                     \
		u32 cold_state_ = COLD_DITHER_SEED;                            \
		for (u64 i = 0; i < n; i++) {                                  \
			u64 t0, t1;                                            \
			cold_evict_now(&env->cold, &cold_state_);              \
			t0 = cold_bracket();                                   \
			call;                                                  \
			t1 = cold_bracket();                                   \
			if (env->cold_hist)                                    \
				cold_record(env->cold_hist, t1 - t0);          \
		}                                                              \
	}

/*
 * The footprint mode (footprint.h): blocks of FOOTPRINT_BLOCK iterations of
 * each kind in turn (the call, then controls loading 0..3 lines); each
 * iteration a dither, the bracket, the call or control, the bracket, the
 * walk, the bracket; the ticks added up per kind, the sums stored at the
 * end. The environment is copied into the frame, which the harness places
 * above the data's offsets, as the cold loop's.
 */
#define BENCH_FOOTPRINT_LOOP(sym, call)                                        \
	static void sym(const struct bench_env *fp_env_, u64 n)                \
	{                                                                      \
		const struct bench_env fp_copy_ = *fp_env_;                    \
		const struct bench_env *env = &fp_copy_;                       \
		const struct footprint_env *fe_ = &env->footprint;             \
		struct footprint_acc acc_ = {};                                \
		struct footprint_node *p_ = fe_->head;                         \
		u32 fp_state_ = COLD_DITHER_SEED;                              \
		bool back_ = false;                                            \
		if (!p_)                                                       \
			return;                                                \
		for (u64 i = 0; i < n; i++) {                                  \
			unsigned int kind_ = (unsigned int)(                   \
				(i / FOOTPRINT_BLOCK) % FOOTPRINT_KINDS);      \
			u64 t0, t1, t2;                                        \
			if (fe_->dither)                                       \
				for (u32 k = cold_random(&fp_state_) %         \
					     fe_->dither;                      \
				     k; k--)                                   \
					__asm__ __volatile__("" : "+r"(k));    \
			t0 = cold_bracket();                                   \
			if (kind_ == FOOTPRINT_KIND_CALL)                      \
				call;                                          \
			else                                                   \
				footprint_control(fe_, kind_ - 1);             \
			t1 = cold_bracket();                                   \
			p_ = footprint_walk(p_, fe_->chain_len, back_);        \
			t2 = cold_bracket();                                   \
			back_ = !back_;                                        \
			if (t2 - t0 > fe_->fence) {                            \
				acc_.dropped[kind_]++;                         \
				continue;                                      \
			}                                                      \
			acc_.n[kind_]++;                                       \
			acc_.action[kind_] += t1 - t0;                         \
			acc_.walk[kind_] += t2 - t1;                           \
		}                                                              \
		if (fe_->acc)                                                  \
			*fe_->acc = acc_;                                      \
	}

/* a call into the struct its entry takes (ts_type), tv_nsec kept */
#define BENCH_CALL_INTO(fn, ts_type)                                           \
	do {                                                                   \
		ts_type ts;                                                    \
		bench_keep(fn(env->clk, &ts));                                 \
		bench_keep(ts.tv_nsec);                                        \
	} while (0)
#define BENCH_CALL_GETTIME(fn) BENCH_CALL_INTO(fn, struct timespec)
/* the 64-bit time_t entry: the kernel's struct, 16 bytes on every ABI */
#define BENCH_CALL_GETTIME64(fn) BENCH_CALL_INTO(fn, struct __kernel_timespec)
#define BENCH_CALL_GETTIMEOFDAY(fn)                                            \
	do {                                                                   \
		struct timeval tv;                                             \
		bench_keep(fn(&tv, NULL));                                     \
		bench_keep(tv.tv_usec);                                        \
	} while (0)
#define BENCH_CALL_TIME(fn) bench_keep(fn(NULL))

#define BENCH_LOOPS_OF(sym, call)                                              \
	BENCH_LOOP(sym##_none, BENCH_BODY_NONE, call)                          \
	BENCH_LOOP(sym##_pressure, BENCH_BODY_PRESSURE, call)                  \
	BENCH_LOOP(sym##_compute, BENCH_BODY_COMPUTE, call)                    \
	BENCH_COLD_LOOP(sym##_cold, call)                                      \
	BENCH_FOOTPRINT_LOOP(sym##_footprint, call)

#define BENCH_BODIES_OF(sym)                                                   \
	{                                                                      \
		sym##_none, sym##_pressure, sym##_compute, sym##_cold,         \
			sym##_footprint                                        \
	}

/*
 * struct bench_loops `name` calling gettime, getres, gettimeofday and
 * time (function names or expressions that yield a function); `local`
 * prefixes the static loop functions.
 */
#define BENCH_DEFINE_LOOPS(name, local, gettime, getres, gtod, tm, floor_init) \
	BENCH_LOOPS_OF(local##_gettime, BENCH_CALL_GETTIME(gettime))           \
	BENCH_LOOPS_OF(local##_getres, BENCH_CALL_GETTIME(getres))             \
	BENCH_LOOPS_OF(local##_gtod, BENCH_CALL_GETTIMEOFDAY(gtod))            \
	BENCH_LOOPS_OF(local##_time, BENCH_CALL_TIME(tm))                      \
	const struct bench_loops name = {                                      \
		.op =                                                          \
			{                                                      \
				BENCH_BODIES_OF(local##_gettime),              \
				BENCH_BODIES_OF(local##_getres),               \
				BENCH_BODIES_OF(local##_gtod),                 \
				BENCH_BODIES_OF(local##_time),                 \
			},                                                     \
		.floor = floor_init,                                           \
	}

/* every variant's loops, in the registry's order (bench/variant_loops.c) */
extern const struct bench_loops *const bench_variant_loops[];
extern const unsigned int bench_variant_loops_nr;

/* the system references and the pointer mode (bench/sys_loops.c) */
extern const struct bench_loops bench_sys_syscall_loops;
extern const struct bench_loops bench_sys_libc_loops;
extern const struct bench_loops bench_sys_vdso_loops;
/* clock_gettime alone: the other operations' loops are NULL */
extern const struct bench_loops bench_sys_vdso_gettime64_loops;
extern const struct bench_loops bench_pointer_loops;
extern const struct bench_loops bench_empty_loops;

/* sys/syscall's entry points: the syscall instruction, through libc's syscall()
 */
int bench_syscall_clock_gettime(clockid_t clk, struct timespec *ts);
int bench_syscall_clock_getres(clockid_t clk, struct timespec *res);
int bench_syscall_gettimeofday(struct timeval *tv, struct timezone *tz);
time_t bench_syscall_time(time_t *t);

/* sys/vdso's entry points, filled by whoever found them (NULL: none) */
extern int (*bench_vdso_clock_gettime)(clockid_t, struct timespec *);
extern int (*bench_vdso_clock_getres)(clockid_t, struct timespec *);
extern int (*bench_vdso_gettimeofday)(struct timeval *, struct timezone *);
extern time_t (*bench_vdso_time)(time_t *);
/*
 * sys/vdso's time where the vDSO has none (arm64): glibc's time() there,
 * bench_vdso_clock_gettime(CLOCK_REALTIME_COARSE)
 */
time_t bench_vdso_time_coarse(time_t *t);
/*
 * A 32-bit vDSO's __vdso_clock_gettime64 (struct __kernel_timespec, 64-bit
 * tv_sec: what a y2038-safe libc calls), sys/vdso_gettime64's; NULL: none
 */
extern int (*bench_vdso_clock_gettime64)(clockid_t,
					 struct __kernel_timespec *);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_BENCH_LOOPS_H */
