// SPDX-License-Identifier: GPL-2.0
/*
 * The TSC trap (verify/tsc_trap.h): a prctl per thread, and SIGSEGV and
 * SIGILL handlers that decode the faulting instruction.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* REG_RIP, REG_EIP */
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "impls/kernel/fake_counter.h"
#include "verify/tsc_trap.h"

int tsc_trap_answer(struct tsc_trap_regs *regs, const u8 *insn, u64 now)
{
	int len;

	if (insn[0] == 0x0f && insn[1] == 0x31)
		len = 2; /* RDTSC */
	else if (insn[0] == 0x0f && insn[1] == 0x01 && insn[2] == 0xf9)
		len = 3; /* RDTSCP */
	else
		return 0;
	/* a 32-bit result zero-extends into the 64-bit register */
	regs->rax = (u32)now;
	regs->rdx = now >> 32;
	if (len == 3)
		regs->rcx = TSC_TRAP_AUX;
	regs->rip += (u64)len;
	return len;
}

#if defined(__x86_64__) || defined(__i386__)

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <ucontext.h>

/*
 * The saved registers the handler reads and writes. i386's greg_t is a
 * signed int: an address above 2 GiB must not sign-extend into the u64.
 */
#if defined(__x86_64__)
#define TRAP_AX REG_RAX
#define TRAP_CX REG_RCX
#define TRAP_DX REG_RDX
#define TRAP_IP REG_RIP
#define TRAP_GREG(r) (r)
#else
#define TRAP_AX REG_EAX
#define TRAP_CX REG_ECX
#define TRAP_DX REG_EDX
#define TRAP_IP REG_EIP
#define TRAP_GREG(r) ((u32)(r))
#endif

/* the handler's: this thread's */
static __thread volatile bool trap_on;
static __thread volatile u64 trap_reads, trap_emulated;

/* the handlers' users, and the actions they replaced */
static pthread_mutex_t trap_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int trap_users;
static struct sigaction prev_segv, prev_ill;

/* not ours: the action before the trap, and the fault again */
static void reraise(int sig, const siginfo_t *info)
{
	sigaction(sig, sig == SIGSEGV ? &prev_segv : &prev_ill, NULL);
	/* a fault repeats when the handler returns; a sent signal does not */
	if (info->si_code <= 0)
		raise(sig);
}

static void trap_handler(int sig, siginfo_t *info, void *uctx)
{
	greg_t *r = ((ucontext_t *)uctx)->uc_mcontext.gregs;
	struct tsc_trap_regs regs = {
		TRAP_GREG(r[TRAP_AX]), TRAP_GREG(r[TRAP_CX]),
		TRAP_GREG(r[TRAP_DX]), TRAP_GREG(r[TRAP_IP])
	};
	int len;

	/*
	 * RDTSC(P) under CR4.TSD is #GP: SI_KERNEL, RIP (EIP) at the
	 * instruction. A CPU without RDTSCP gives #UD: ILL_ILLOPN. Only then
	 * is it known to be an instruction that was fetched, and readable.
	 */
	if (!trap_on ||
	    (sig == SIGSEGV && info->si_code != SI_KERNEL) ||
	    (sig == SIGILL && info->si_code != ILL_ILLOPN))
		return reraise(sig, info);
	len = tsc_trap_answer(&regs, (const u8 *)(uintptr_t)regs.rip,
			      READ_ONCE(vdso_fake_cycles));
	/* #UD: only RDTSCP is emulated */
	if (!len || (sig == SIGILL && len != 3))
		return reraise(sig, info);
	r[TRAP_AX] = (greg_t)regs.rax;
	r[TRAP_CX] = (greg_t)regs.rcx;
	r[TRAP_DX] = (greg_t)regs.rdx;
	r[TRAP_IP] = (greg_t)regs.rip;
	trap_reads++;
	trap_emulated += sig == SIGILL;
}

static int trap_fail(char *why, size_t why_len, int err, const char *what)
{
	snprintf(why, why_len, "%s: %s", what, strerror(err));
	errno = err;
	return -1;
}

/* the first user installs the handlers; 0 or an errno */
static int handlers_get(void)
{
	struct sigaction sa = { .sa_sigaction = trap_handler,
				.sa_flags = SA_SIGINFO };
	int err = 0;

	sigemptyset(&sa.sa_mask);
	pthread_mutex_lock(&trap_lock);
	if (trap_users == 0) {
		if (sigaction(SIGSEGV, &sa, &prev_segv))
			err = errno;
		else if (sigaction(SIGILL, &sa, &prev_ill)) {
			err = errno;
			sigaction(SIGSEGV, &prev_segv, NULL);
		}
	}
	if (!err)
		trap_users++;
	pthread_mutex_unlock(&trap_lock);
	return err;
}

/* the last user restores them */
static void handlers_put(void)
{
	pthread_mutex_lock(&trap_lock);
	if (--trap_users == 0) {
		sigaction(SIGILL, &prev_ill, NULL);
		sigaction(SIGSEGV, &prev_segv, NULL);
	}
	pthread_mutex_unlock(&trap_lock);
}

/*
 * One RDTSC must come back as the trap's answer: a hypervisor can accept
 * the prctl and still let the guest's RDTSC run (PVM guests do). The probe
 * is nobody's read: not counted.
 */
static bool trap_works(void)
{
	const u64 probe = 0x8badf00d0defacedULL;
	u64 saved = vdso_fake_cycles, reads = trap_reads;
	u32 low, high;
	bool ok;

	vdso_fake_cycles = probe;
	__asm__ __volatile__("rdtsc" : "=a"(low), "=d"(high) : : "memory");
	vdso_fake_cycles = saved;
	ok = trap_reads == reads + 1 && (((u64)high << 32) | low) == probe;
	trap_reads = reads;
	return ok;
}

int tsc_trap_on(char *why, size_t why_len)
{
	int err;

	if (trap_on)
		return 0;
	err = handlers_get();
	if (err)
		return trap_fail(why, why_len, err, "sigaction(SIGSEGV, SIGILL)");
	/* answered from here: the prctl is the last step */
	trap_on = true;
	if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0)) {
		err = errno;
		trap_on = false;
		handlers_put();
		return trap_fail(why, why_len, err,
				 "prctl(PR_SET_TSC, PR_TSC_SIGSEGV) refused");
	}
	if (!trap_works()) {
		prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
		trap_on = false;
		handlers_put();
		snprintf(why, why_len, "PR_SET_TSC accepted, but RDTSC does not "
			 "fault here (CR4.TSD not honoured: a paravirtualised "
			 "guest?)");
		errno = EOPNOTSUPP;
		return -1;
	}
	return 0;
}

int tsc_trap_off(void)
{
	int ret;

	if (!trap_on)
		return 0;
	ret = prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
	if (ret)
		return -1; /* still faulting: still answered */
	trap_on = false;
	handlers_put();
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
	return trap_emulated;
}

#elif !defined(__arm__) /* no trap; AArch32's: cntvct_trap_arm.c */

int tsc_trap_on(char *why, size_t why_len)
{
	snprintf(why, why_len, "no counter trap on this architecture");
	errno = ENOSYS;
	return -1;
}

int tsc_trap_off(void)
{
	return 0;
}

bool tsc_trap_active(void)
{
	return false;
}

u64 tsc_trap_reads(void)
{
	return 0;
}

u64 tsc_trap_emulated(void)
{
	return 0;
}

#endif

const char *tsc_trap_unavailable(void)
{
	static char why[160];
	static int probed; /* 0 not yet, 1 available, -1 not */

	if (!__atomic_load_n(&probed, __ATOMIC_ACQUIRE)) {
		char buf[sizeof(why)] = "";
		bool was_on = tsc_trap_active();
		int ok = 1;

		if (!was_on && tsc_trap_on(buf, sizeof(buf))) {
			ok = 0;
		} else if (!was_on && tsc_trap_off()) {
			snprintf(buf, sizeof(buf), "prctl(PR_SET_TSC, PR_TSC_ENABLE) "
				 "refused: %s", strerror(errno));
			ok = 0;
		}
		if (!ok)
			memcpy(why, buf, sizeof(why));
		__atomic_store_n(&probed, ok ? 1 : -1, __ATOMIC_RELEASE);
	}
	return probed > 0 ? NULL : why;
}
