/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TSC trapped instead of substituted (x86-64 and i386), for the
 * checkers only.
 *
 * After tsc_trap_on() the calling thread's RDTSC and RDTSCP fault
 * (prctl(PR_SET_TSC, PR_TSC_SIGSEGV): CR4.TSD while the thread runs) and
 * the SIGSEGV handler answers each with the thread's vdso_fake_cycles in
 * EDX:EAX, RDTSCP also TSC_TRAP_AUX in ECX (on x86-64 the upper halves of
 * RAX, RDX and RCX zero, as the hardware leaves them), and steps over the
 * instruction. So a variant's own counter read runs exactly as written,
 * not a byte changed, and returns the value its check chose. Where the
 * CPU has no RDTSCP the instruction is #UD (SIGILL): the SIGILL handler
 * emulates 0f 01 f9 the same way.
 *
 * Any other SIGSEGV or SIGILL gets back the action it had before the
 * trap, and is re-raised: a real crash still crashes.
 *
 * Per thread: the prctl, the answer and the counts are the calling
 * thread's; the handlers are the process's, installed by the first thread
 * to turn the trap on and restored by the last to turn it off. A thread
 * created meanwhile inherits the faulting TSC (the kernel copies the
 * flag) but not the answer: it must call tsc_trap_on() itself, or it dies
 * of its first RDTSC. While on, the system's own vDSO in this thread
 * reads the TSC too and gets vdso_fake_cycles: time nothing with it on.
 *
 * A kernel can accept the prctl and its hypervisor still let RDTSC run
 * (a PVM guest): tsc_trap_on() tries one and refuses, EOPNOTSUPP.
 *
 * On AArch32 (--config=arm) the same interface traps CNTVCT's mrrc p15,
 * 1, c14 where it is SIGILL (qemu-arm: verify/cntvct_trap_arm.c).
 *
 * hwloc-style: 0, or -1 with errno and one line in why. Elsewhere (arm64)
 * there is no trap: tsc_trap_on() is -1, ENOSYS, "no counter trap on this
 * architecture".
 */
#ifndef VDSOBENCH_TSC_TRAP_H
#define VDSOBENCH_TSC_TRAP_H

#include <stddef.h>

#include "impls/common/compiler.h"

/* RDTSCP's ECX under the trap: the kernel's (node << 12) | cpu, made up */
#define TSC_TRAP_AUX 0x3007U

int tsc_trap_on(char *why, size_t why_len);
/* PR_TSC_ENABLE again; 0, or -1 with errno. Off already: 0 */
int tsc_trap_off(void);
bool tsc_trap_active(void);
/* the calling thread's trapped reads, RDTSC and RDTSCP, since it started */
u64 tsc_trap_reads(void);
/* of them, the RDTSCPs emulated on SIGILL (a CPU without RDTSCP) */
u64 tsc_trap_emulated(void);

/*
 * The handler's answer, apart so that tests can give it any instruction:
 * regs as the faulting instruction at insn left them, changed to what it
 * leaves with the counter at now. Its length (2 RDTSC, 3 RDTSCP), or 0 and
 * regs untouched if it is neither. insn must have 3 readable bytes. On
 * i386 the fields hold EAX, ECX, EDX and EIP, zero-extended.
 */
struct tsc_trap_regs {
	u64 rax, rcx, rdx, rip;
};
int tsc_trap_answer(struct tsc_trap_regs *regs, const u8 *insn, u64 now);

/*
 * AArch32's: r[0..12] as the faulting insn (ARM word, or Thumb-2's first
 * halfword above its second) left them; 4 and Rt, Rt2 set to now's low
 * and high words if insn is CNTVCT's mrrc, else 0 and r untouched.
 */
int cntvct_trap_answer(u32 *r, u32 insn, u64 now);

/*
 * NULL if this thread can turn the trap on (it tries, and turns it off
 * again), else why not, one line; the answer is kept.
 */
const char *tsc_trap_unavailable(void);

#endif /* VDSOBENCH_TSC_TRAP_H */
