// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated kernel's fallbacks enter the real kernel as the vDSO's do:
 * an inline syscall on x86-64 and arm64, and on i386 a call to
 * __kernel_vsyscall (AT_SYSINFO) where the process has one, as vdso32's
 * fallbacks call it.
 * A seccomp filter traps the fallback's clock_gettime, and SIGSYS says
 * where the system call was made: in this program's text, or in the vDSO.
 * Under qemu-user (no vDSO on i386, no seccomp of the guest's calls) it skips.
 */
#define _GNU_SOURCE /* REG_EAX, REG_RAX */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>

#include "impls/kernel/sim_kernel.h"
#include "testing/tap.h"

#if defined(__i386__)
#define ARCH AUDIT_ARCH_I386
#define SET_RET(uc) ((uc)->uc_mcontext.gregs[REG_EAX] = 0)
#define IS_I386 1
#elif defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#define SET_RET(uc) ((uc)->uc_mcontext.gregs[REG_RAX] = 0)
#define IS_I386 0
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#define SET_RET(uc) ((uc)->uc_mcontext.regs[0] = 0)
#define IS_I386 0
#endif

extern const char __executable_start[], etext[];

static volatile uintptr_t call_addr;
static volatile int trapped_nr = -1;

static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	call_addr = (uintptr_t)si->si_call_addr;
	trapped_nr = si->si_syscall;
	SET_RET(uc); /* the call "succeeded" */
}

/* clock_gettime(CLOCK_PROCESS_CPUTIME_ID, ...) of this ABI, trapped */
static int trap_cputime(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 0, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CLOCK_PROCESS_CPUTIME_ID, 1,
			 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	struct sigaction sa = {.sa_sigaction = on_sigsys,
			       .sa_flags = SA_SIGINFO};

	if (sigaction(SIGSYS, &sa, NULL))
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* the [vdso] mapping's bounds from /proc/self/maps; 0 when there is none */
static int vdso_bounds(uintptr_t *lo, uintptr_t *hi)
{
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%lx-%lx", &a, &b) == 2) {
			*lo = a;
			*hi = b;
			found = 1;
		}
	}
	fclose(f);
	return found;
}

int main(void)
{
	uintptr_t text_lo = (uintptr_t)__executable_start,
		  text_hi = (uintptr_t)etext;
	uintptr_t vdso_lo = 0, vdso_hi = 0;
	struct timespec ts;
	long ret;

#if defined(__i386__)
	if (!getauxval(AT_SYSINFO)) {
		tap_ok(true,
		       "# SKIP no AT_SYSINFO (qemu-i386 maps no vDSO): the "
		       "fallback is int $0x80, and seccomp sees the emulator's "
		       "calls");
		return tap_done();
	}
#endif
	if (trap_cputime()) {
		tap_ok(true, "# SKIP no seccomp filter here: %s",
		       strerror(errno));
		return tap_done();
	}
	ret = sim_sys_clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts, 0, false);
	tap_ok(ret == 0 && trapped_nr == SYS_clock_gettime,
	       "the fallback's clock_gettime (%d) was trapped, ret %ld",
	       trapped_nr, ret);
#if defined(__i386__)
	tap_ok(vdso_bounds(&vdso_lo, &vdso_hi),
	       "this process has a [vdso] mapping");
	tap_ok(call_addr >= vdso_lo && call_addr < vdso_hi,
	       "the fallback entered the kernel from the vDSO's "
	       "__kernel_vsyscall "
	       "(0x%lx in [0x%lx, 0x%lx)), not by an int $0x80 of its own",
	       (unsigned long)call_addr, (unsigned long)vdso_lo,
	       (unsigned long)vdso_hi);
#else
	(void)vdso_bounds;
	(void)vdso_lo;
	(void)vdso_hi;
#endif
	tap_ok((call_addr >= text_lo && call_addr < text_hi) == !IS_I386,
	       "the system call was made %s this program's text (0x%lx)",
	       IS_I386 ? "outside" : "inside", (unsigned long)call_addr);
	return tap_done();
}
