/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seven clocks the suite measures and checks, in the order every list
 * of them is printed: the harness's default --clocks (bench/subjects.c,
 * whose table starts with them), verify's readers and its comparison with
 * the system, the live sample, and the sim driver's --list-json
 * ("default_clocks"), which is where the Python side takes them from.
 * X(name, clock id, coarse): coarse clocks advance only at the tick and
 * read no counter.
 */
#ifndef VDSOBENCH_COMMON_CLOCKS_H
#define VDSOBENCH_COMMON_CLOCKS_H

#include <time.h>

#define SUITE_CLOCKS(X)                                                        \
	X("realtime", CLOCK_REALTIME, 0)                                       \
	X("monotonic", CLOCK_MONOTONIC, 0)                                     \
	X("monotonic_raw", CLOCK_MONOTONIC_RAW, 0)                             \
	X("boottime", CLOCK_BOOTTIME, 0)                                       \
	X("tai", CLOCK_TAI, 0)                                                 \
	X("realtime_coarse", CLOCK_REALTIME_COARSE, 1)                         \
	X("monotonic_coarse", CLOCK_MONOTONIC_COARSE, 1)

#define SUITE_CLOCK_ONE(name, id, coarse) +1
#define NR_SUITE_CLOCKS (0 SUITE_CLOCKS(SUITE_CLOCK_ONE))

/* an initializer item of each: { SUITE_CLOCKS(SUITE_CLOCK_ID) } */
#define SUITE_CLOCK_ID(name, id, coarse) id,
/* "realtime,monotonic,...," (a list the harness's --clocks parser reads) */
#define SUITE_CLOCK_LIST_ITEM(name, id, coarse) name ","

#endif /* VDSOBENCH_COMMON_CLOCKS_H */
