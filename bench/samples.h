// SPDX-License-Identifier: GPL-2.0
//
// Seed 003's experiment: read a clock N times back to back into an array,
// then count the deltas that are zero (the clock did not advance between
// two reads) and negative (it went backwards), and average them (the
// latency of one read, as the seed's timer.c reports it).
#ifndef VDSOBENCH_BENCH_SAMPLES_H
#define VDSOBENCH_BENCH_SAMPLES_H

#include <stdio.h>

// every planned clock_gettime benchmark in hot mode; JSON lines on out
int samples_run(unsigned int n, FILE *out);

#endif // VDSOBENCH_BENCH_SAMPLES_H
