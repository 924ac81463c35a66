// SPDX-License-Identifier: GPL-2.0
/*
 * The counter trap on AArch32 (verify/tsc_trap.h's interface): where
 * EL0's CNTVCT read, mrrc p15, 1, Rt, Rt2, c14, is SIGILL (qemu-arm 7.2's
 * user mode has no AArch32 generic timer; a kernel that clears
 * CNTKCTL.EL0VCTEN), the SIGILL handler answers it with the thread's
 * vdso_fake_cycles, Rt the low word and Rt2 the high, and steps over it
 * (4 bytes, ARM or Thumb-2). So the compat vDSO's own asm read runs as
 * written and returns the value its check chose. There is nothing to turn
 * on: where the read does not fault (EL0 access granted, real hardware),
 * tsc_trap_on() refuses, EOPNOTSUPP, and real reads are bracketed.
 *
 * Any other SIGILL, or one in a thread whose trap is off, gets back the
 * action it had before and is re-raised: a real crash still crashes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "impls/kernel/fake_counter.h"
#include "verify/tsc_trap.h"

int cntvct_trap_answer(u32 *r, u32 insn, u64 now)
{
	unsigned int rt = (insn >> 12) & 15, rt2 = (insn >> 16) & 15;

	/* MRRC p15, opc1 1, CRm c14: A1 (any condition) and T1 alike */
	if ((insn & 0x0ff00fff) != 0x0c500f1e || rt >= 13 || rt2 >= 13 ||
	    rt == rt2)
		return 0;
	r[rt] = (u32)now;
	r[rt2] = (u32)(now >> 32);
	return 4;
}

#if defined(__arm__)

#include <pthread.h>
#include <signal.h>
#include <ucontext.h>

static __thread volatile bool trap_on;
static __thread volatile u64 trap_reads;

static pthread_mutex_t trap_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int trap_users;
static struct sigaction prev_ill;

static void trap_handler(int sig, siginfo_t *info, void *uctx)
{
	mcontext_t *mc = &((ucontext_t *)uctx)->uc_mcontext;
	/* arm_r0 .. arm_r10, arm_fp, arm_ip: r0..r12 in a row */
	u32 *r = (u32 *)&mc->arm_r0;
	const u16 *pc = (const u16 *)mc->arm_pc;
	u32 insn;

	if (!trap_on || info->si_code <= 0)
		goto reraise;
	/* CPSR.T: Thumb's halfwords in order, else one ARM word */
	insn = mc->arm_cpsr & (1U << 5) ? (u32)pc[0] << 16 | pc[1] :
					  *(const u32 *)pc;
	if (!cntvct_trap_answer(r, insn, READ_ONCE(vdso_fake_cycles)))
		goto reraise;
	mc->arm_pc += 4;
	trap_reads++;
	return;
reraise:
	sigaction(sig, &prev_ill, NULL);
	if (info->si_code <= 0)
		raise(sig);
}

/* one read must come back as the trap's answer */
static bool trap_works(void)
{
	const u64 probe = 0x8badf00d0defacedULL;
	u64 saved = vdso_fake_cycles, reads = trap_reads, res;

	vdso_fake_cycles = probe;
	__asm__ __volatile__("mrrc p15, 1, %Q0, %R0, c14" : "=r"(res) : : "memory");
	vdso_fake_cycles = saved;
	trap_reads = reads;
	return res == probe;
}

int tsc_trap_on(char *why, size_t why_len)
{
	struct sigaction sa = { .sa_sigaction = trap_handler,
				.sa_flags = SA_SIGINFO };
	int err = 0;

	if (trap_on)
		return 0;
	sigemptyset(&sa.sa_mask);
	pthread_mutex_lock(&trap_lock);
	if (trap_users == 0 && sigaction(SIGILL, &sa, &prev_ill))
		err = errno;
	if (!err)
		trap_users++;
	pthread_mutex_unlock(&trap_lock);
	if (err) {
		snprintf(why, why_len, "sigaction(SIGILL): %s", strerror(err));
		errno = err;
		return -1;
	}
	trap_on = true;
	if (!trap_works()) {
		tsc_trap_off();
		snprintf(why, why_len, "CNTVCT's mrrc reads without faulting "
			 "here (EL0 access granted): nothing to trap");
		errno = EOPNOTSUPP;
		return -1;
	}
	return 0;
}

int tsc_trap_off(void)
{
	if (!trap_on)
		return 0;
	trap_on = false;
	pthread_mutex_lock(&trap_lock);
	if (--trap_users == 0)
		sigaction(SIGILL, &prev_ill, NULL);
	pthread_mutex_unlock(&trap_lock);
	return 0;
}

bool tsc_trap_active(void)
{
	return trap_on;
}

u64 tsc_trap_reads(void)
{
	return trap_reads;
}

u64 tsc_trap_emulated(void)
{
	return 0;
}

#endif /* __arm__ */
