/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for arch/x86/include/asm/msr.h, of which the vDSO uses
 * rdtsc_ordered() (and a patch may use rdtsc(), below): the counter read.
 * Here it is the variant's counter axis, vdso_read_cycles() of
 * impls/counters/<counter>.h (-D
 * VDSO_COUNTER_HEADER), the same hook every transcribed layout reads
 * through (impls/layouts/arch/x86.h): rdtscp, lfence;rdtsc ... or the
 * fake counter of the tests.
 *
 * The counter headers speak the project's kernel vocabulary
 * (impls/common/compiler.h: u32, u64, __always_inline, READ_ONCE), which
 * this compile unit already has from the shim under the same names, so
 * the project's own definitions stand aside; the fake counter's
 * per-thread value is declared with the type impls/kernel/fake_counter.h
 * gives it (u64 there is uint64_t, unsigned long on x86-64, unsigned long
 * long on i386: x86's 32-bit vDSO, arch/x86/entry/vdso/vdso32).
 */
#ifndef _ASM_X86_MSR_H
#define _ASM_X86_MSR_H

#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/stringify.h>
#include <linux/types.h>

#ifndef VDSO_COUNTER_HEADER
#error "an imported tree is compiled by impls/variants.bzl, which sets VDSO_COUNTER_HEADER"
#endif

#define VDSOBENCH_COMPILER_H /* impls/common/compiler.h: the shim's stand in */
#define VDSOBENCH_FAKE_COUNTER_H /* impls/kernel/fake_counter.h: declared here */
#ifdef __x86_64__
extern __thread unsigned long vdso_fake_cycles;
#else
extern __thread unsigned long long vdso_fake_cycles;
#endif

#include __stringify(VDSO_COUNTER_HEADER)

#define rdtsc_ordered() vdso_read_cycles()

/*
 * rdtsc(), as the kernel's asm/msr.h has it (DECLARE_ARGS and
 * EAX_EDX_RET/VAL spelled out: x86-64's, and i386's "=A"): the hardware's
 * counter, unordered, never the variant's. A tree or a patch that calls
 * it in the vDSO reads the counter itself, which verify sees
 * (verify/check_common.c's probe) and checks as a real counter, through
 * the counter trap where there is one.
 */
#ifdef __x86_64__
static __always_inline unsigned long long rdtsc(void)
{
	unsigned long low, high;

	asm volatile("rdtsc" : "=a" (low), "=d" (high));
	return low | high << 32;
}
#else
static __always_inline unsigned long long rdtsc(void)
{
	unsigned long long val;

	asm volatile("rdtsc" : "=A" (val));
	return val;
}
#endif

#endif /* _ASM_X86_MSR_H */
