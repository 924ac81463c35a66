// SPDX-License-Identifier: GPL-2.0
/*
 * One variant's timed loops, compiled once per variant by
 * vdso_per_variant() in impls/variants.bzl: VDSO_SYM() names that
 * variant's entry points, so every call below is a direct call into
 * them, and VDSO_COUNTER_HEADER is its counter read, timed alone as the
 * floor.
 */
#include "bench/loops.h"
#include "impls/common/variant_prelude.h"

int VDSO_SYM(clock_gettime)(clockid_t clk, struct timespec *ts);
int VDSO_SYM(clock_getres)(clockid_t clk, struct timespec *res);
int VDSO_SYM(gettimeofday)(struct timeval *tv, struct timezone *tz);
time_t VDSO_SYM(time)(time_t *t);

#define FLOOR_CALL bench_keep(vdso_read_cycles())
BENCH_LOOPS_OF(floor, FLOOR_CALL)

BENCH_DEFINE_LOOPS(VDSO_SYM(bench_loops), variant, VDSO_SYM(clock_gettime),
		   VDSO_SYM(clock_getres), VDSO_SYM(gettimeofday),
		   VDSO_SYM(time), BENCH_BODIES_OF(floor));
