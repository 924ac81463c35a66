/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Did a timed batch lose its CPU? Another runnable task on the measured
 * CPU (a busy loop, a build) takes time slices in the middle of a batch,
 * and since every batch of a round absorbs them alike, each paired ratio
 * is pulled toward 1 and a real difference shrinks (floor/rdtsc against
 * floor/lfence_rdtsc: 0.613 idle, 0.787 beside a busy loop). The rounds
 * (bench/rounds.cc) read the thread's CPU time and involuntary context
 * switches around each batch, retry a batch that lost the CPU up to
 * LOST_CPU_RETRIES times, and mark the ones that still did.
 *
 * The decision is a pure function of two samples, so that it is tested
 * on made-up numbers; only batch_usage_now() reads the system.
 */
#ifndef VDSOBENCH_LOST_CPU_H
#define VDSOBENCH_LOST_CPU_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The thread's share of the wall time under which a batch lost the CPU:
 * 2% of a 10 ms batch is 200 us, more than a few interrupts or a kworker
 * take, less than one time slice of a competing task (0.75 ms and up).
 */
#define LOST_CPU_MIN_SHARE 0.98
/* retries of a batch that lost the CPU, before it is kept as disturbed */
#define LOST_CPU_RETRIES 3

/* one sample, taken just before and just after the timed loop */
struct batch_usage {
	long nivcsw;	/* getrusage(RUSAGE_THREAD).ru_nivcsw */
	double cpu_ns;	/* CLOCK_THREAD_CPUTIME_ID */
	double wall_ns; /* CLOCK_MONOTONIC */
};

/* the calling thread's sample: 0, or -1 with errno */
int batch_usage_now(struct batch_usage *u);

/* what happened between two samples */
struct batch_loss {
	double share;  /* thread CPU time / wall time, at most 1 */
	long switches; /* involuntary context switches */
	bool lost;     /* share < LOST_CPU_MIN_SHARE */
};

/*
 * Between a and b: the share of the wall time the thread ran and whether
 * it lost the CPU. Involuntary switches alone are no loss (a kworker that
 * runs for microseconds preempts too); the time they took is. A batch of
 * no wall time (or samples out of order) lost nothing.
 */
struct batch_loss batch_lost_cpu(const struct batch_usage *a,
				 const struct batch_usage *b);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_LOST_CPU_H */
