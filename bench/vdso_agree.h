/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The system's vDSO entries against their own syscalls, before they are
 * timed: sys/vdso's __vdso_clock_gettime against clock_gettime, and a
 * 32-bit vDSO's __vdso_clock_gettime64 against clock_gettime64 (i386's
 * syscall 403), each with its own struct.
 *
 * Per clock (the suite's and the alarm clocks): the syscall, the entry,
 * the syscall again. Both read the kernel's one timekeeper (the coarse
 * clocks its last tick), so the entry's reading lies between the two,
 * with no tolerance, and its tv_nsec in [0, 1e9); where the syscall
 * refuses a clock the entry refuses it with the same errno. A clock is
 * judged on the best of AGREE_TRIES, so that a REALTIME step between the
 * reads is not a disagreement; a wrong struct, clock or offset is one on
 * every try.
 */
#ifndef VDSOBENCH_BENCH_VDSO_AGREE_H
#define VDSOBENCH_BENCH_VDSO_AGREE_H

#include <stddef.h>
#include <time.h>

#include "bench/subjects.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AGREE_TRIES 3

/* a reading in ns: 0, or -errno (-ERANGE: a tv_nsec out of [0, 1e9)) */
typedef int (*agree_read_fn)(clockid_t clk, long long *ns);

/*
 * 0 and in why what was compared, or -1 and in why the first clock the
 * entry disagrees on, and how
 */
int vdso_agree(agree_read_fn entry, agree_read_fn syscall, char *why,
	       size_t len);

/* bench_vdso_clock_gettime, and the clock_gettime syscall */
int agree_vdso_gettime(clockid_t clk, long long *ns);
int agree_syscall_gettime(clockid_t clk, long long *ns);

#if BENCH_HAS_GETTIME64
/* bench_vdso_clock_gettime64, and the clock_gettime64 syscall */
int agree_vdso_gettime64(clockid_t clk, long long *ns);
int agree_syscall_gettime64(clockid_t clk, long long *ns);
#endif

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_BENCH_VDSO_AGREE_H */
