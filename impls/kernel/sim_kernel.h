/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated kernel: one timekeeper for the process (tk_core), the
 * v6.17 auxiliary timekeepers, the system timezone, the current task's
 * time namespace, the variants whose vDSO data it keeps up to date, and
 * the syscalls the vDSO falls back to.
 *
 * Writers: sim_tk_write_begin() returns the timekeeper to change with
 * the tk_*() operations; sim_tk_write_end() publishes it through every
 * attached variant's update_vsyscall() inside tk_core's seqcount, as
 * timekeeping_update() does. Writers are serialised by a lock.
 *
 * The syscalls enter the real kernel first (so a fallback costs what a
 * fallback costs) and then answer from the simulated timekeeper at the
 * caller's counter value (so every path agrees with the oracle).
 */
#ifndef VDSOBENCH_SIM_KERNEL_H
#define VDSOBENCH_SIM_KERNEL_H

#include <sys/time.h>
#include <time.h>

#include "impls/kernel/timekeeper.h"

struct vdso_variant;

/* the clock modes a vDSO data page can carry */
#define VDSO_CLOCKMODE_NONE 0
#define VDSO_CLOCKMODE_TSC 1 /* any counter the vDSO may read */
#define VDSO_CLOCKMODE_PVCLOCK 2 /* x86: kvm-clock (impls/kernel/sim_vclock.h) */
#define VDSO_CLOCKMODE_HVCLOCK 3 /* x86: Hyper-V's TSC page */
#define VDSO_CLOCKMODE_TIMENS 0x7fffffff /* include/vdso/datapage.h (v5.6+) */

/* reset the kernel: a new clocksource, wall time and MONOTONIC at now; every aux clock disabled */
void sim_kernel_reset(const struct tk_clocksource *cs, u64 now,
		      const struct timespec64 *wall,
		      const struct timespec64 *mono);

/* a copy of the current timekeeper, from a latch: never waits for a writer */
void sim_tk_snapshot(struct timekeeper *tk);

struct timekeeper *sim_tk_write_begin(void);
void sim_tk_write_end(void);

/* settimeofday(NULL, tz): sys_tz and update_vsyscall_tz() */
void sim_set_sys_tz(const struct timezone *tz);

/*
 * Attach a variant: its init() is called, and from now on every
 * sim_tk_write_end() publishes to it; it is published to at once.
 * 0, or -1 with errno (ENOSPC: too many attached).
 */
int sim_kernel_attach(const struct vdso_variant *v);
void sim_kernel_detach(const struct vdso_variant *v);
void sim_kernel_detach_all(void);

/*
 * setns() into a time namespace with these offsets (and back): the
 * variant's vvar pages are swapped and the syscalls add the offsets.
 * 0, or -1 with errno (EOPNOTSUPP: the layout has no time namespaces).
 */
int sim_timens_enter(const struct vdso_variant *v,
		     const struct timens_offsets *offs);
int sim_timens_leave(const struct vdso_variant *v);

/* the oracle for the current task: the timekeeper plus namespace offsets */
int sim_clock_ns(const struct timekeeper *tk, clockid_t clk, u64 now,
		 wide_ns *ns);

/*
 * The auxiliary clocks CLOCK_AUX + n, n < MAX_AUX_CLOCKS (v6.17), as their
 * syscall interface allows; 0 or -errno like the syscalls, at counter
 * value now:
 *
 *	sim_aux_clock_enable()	writing /sys/kernel/time/aux_clocks/<n>/
 *				aux_clock_enable: enabling an enabled one (or
 *				disabling a disabled one) changes nothing
 *	sim_aux_clock_settime()	clock_settime(CLOCK_AUX + n, ts)
 *	sim_aux_clock_adjtime()	clock_adjtime(CLOCK_AUX + n) with
 *				ADJ_FREQUENCY, as a mult adjustment
 *
 * Each publishes the clock to every attached variant's
 * update_vsyscall_aux() under its own seqcount. -EINVAL for an id (or n)
 * outside the aux range.
 */
int sim_aux_clock_enable(unsigned int n, bool enable, u64 now);
int sim_aux_clock_settime(clockid_t clk, u64 now, const struct timespec64 *ts);
int sim_aux_clock_adjtime(clockid_t clk, u64 now, s32 mult_adj);

/* a copy of aux timekeeper n, from the latch; the oracle is tk_aux_clock_ns() */
void sim_aux_snapshot(unsigned int n, struct timekeeper *tk);

/*
 * Writers of aux timekeeper n, like sim_tk_write_begin()/end() for the
 * core: end publishes it; n < MAX_AUX_CLOCKS.
 */
struct timekeeper *sim_aux_write_begin(unsigned int n);
void sim_aux_write_end(unsigned int n);

/* a tick of every enabled aux timekeeper (update_wall_time()'s tk_aux_advance()) */
void sim_aux_advance(u64 now);

/*
 * The syscalls: 0 or -errno, like the raw syscall instruction; now is the
 * counter the caller read (the TSC under pvclock, which the kernel turns
 * into the clocksource's cycles: sim_vclock_cycles()). aux_clocks:
 * the kernel has CONFIG_POSIX_AUX_CLOCKS; without it ids from CLOCK_AUX on
 * are -EINVAL, as before v6.17; with it a disabled aux clock is -ENODEV.
 */
long sim_sys_clock_gettime(clockid_t clk, struct timespec *ts, u64 now,
			   bool aux_clocks);
long sim_sys_clock_getres(clockid_t clk, struct timespec *res,
			  bool aux_clocks);
long sim_sys_gettimeofday(struct timeval *tv, struct timezone *tz, u64 now);

/* counts of fallback entries, for tests that check which path ran */
u64 sim_syscall_count(void);

/* a real counter read for the kernel side and checkers, ordered */
u64 sim_read_tsc_ordered(void);
/* the clocksource's read of it: sim_vclock_cycles(sim_read_tsc_ordered()) */
u64 sim_read_clocksource(void);

#endif /* VDSOBENCH_SIM_KERNEL_H */
