// SPDX-License-Identifier: GPL-2.0
/*
 * The system references: the syscall itself, glibc's wrappers (PLT, then
 * glibc's indirect call into the vDSO), and the kernel's own vDSO entry
 * points called through pointers as glibc calls them, and a 32-bit vDSO's
 * __vdso_clock_gettime64 with the kernel's 64-bit struct. Also the pointer
 * mode (any subject's entry points read from memory on every call) and
 * the empty loop, whose time is the harness's own overhead per call.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <unistd.h>

#include "bench/loops.h"

int bench_syscall_clock_gettime(clockid_t clk, struct timespec *ts)
{
	return (int)syscall(SYS_clock_gettime, clk, ts);
}

int bench_syscall_clock_getres(clockid_t clk, struct timespec *res)
{
	return (int)syscall(SYS_clock_getres, clk, res);
}

int bench_syscall_gettimeofday(struct timeval *tv, struct timezone *tz)
{
	return (int)syscall(SYS_gettimeofday, tv, tz);
}

time_t bench_syscall_time(time_t *t)
{
#ifdef SYS_time
	return (time_t)syscall(SYS_time, t);
#else
	/*
	 * arm64 has no time syscall (nor __kernel_time in its vDSO): glibc's
	 * time() there is clock_gettime(CLOCK_REALTIME_COARSE), so the
	 * syscall reference is that.
	 */
	struct timespec ts;

	if (syscall(SYS_clock_gettime, CLOCK_REALTIME_COARSE, &ts))
		return (time_t)-1;
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
#endif
}

BENCH_DEFINE_LOOPS(bench_sys_syscall_loops, syscall,
		   bench_syscall_clock_gettime, bench_syscall_clock_getres,
		   bench_syscall_gettimeofday, bench_syscall_time, {});

BENCH_DEFINE_LOOPS(bench_sys_libc_loops, libc, clock_gettime, clock_getres,
		   gettimeofday, time, {});

int (*bench_vdso_clock_gettime)(clockid_t, struct timespec *);
int (*bench_vdso_clock_getres)(clockid_t, struct timespec *);
int (*bench_vdso_gettimeofday)(struct timeval *, struct timezone *);
time_t (*bench_vdso_time)(time_t *);

/*
 * arm64's vDSO has no time entry (vdso_entries.h): glibc's time() there
 * calls the vDSO's clock_gettime(CLOCK_REALTIME_COARSE), and so does this.
 */
time_t bench_vdso_time_coarse(time_t *t)
{
	struct timespec ts;

	if (bench_vdso_clock_gettime(CLOCK_REALTIME_COARSE, &ts))
		return (time_t)-1;
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}

BENCH_DEFINE_LOOPS(bench_sys_vdso_loops, vdso, bench_vdso_clock_gettime,
		   bench_vdso_clock_getres, bench_vdso_gettimeofday,
		   bench_vdso_time, {});

int (*bench_vdso_clock_gettime64)(clockid_t, struct __kernel_timespec *);

BENCH_LOOPS_OF(vdso64_gettime, BENCH_CALL_GETTIME64(bench_vdso_clock_gettime64))

const struct bench_loops bench_sys_vdso_gettime64_loops = {
	.op = {[BENCH_OP_GETTIME] = BENCH_BODIES_OF(vdso64_gettime)},
};

BENCH_DEFINE_LOOPS(bench_pointer_loops, pointer, env->clock_gettime,
		   env->clock_getres, env->gettimeofday, env->time, {});

/* an empty statement the compiler must keep: the loop stays a loop */
BENCH_LOOPS_OF(empty, __asm__ __volatile__(""))

const struct bench_loops bench_empty_loops = {
	.floor = BENCH_BODIES_OF(empty),
};
