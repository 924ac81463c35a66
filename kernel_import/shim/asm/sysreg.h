/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for arch/arm64/include/asm/sysreg.h (v6.12), of which the arm64
 * vDSO uses __mrs_s() and SYS_CNTVCTSS_EL0 inside the counter read's
 * ALTERNATIVE() (shim asm/alternative.h drops both instructions), and,
 * with asm/barrier.h, arch_counter_enforce_ordering(), which ends the
 * read: the fake address dependency on the value.
 *
 * The counter read is the variant's: vdso_read_cycles() of
 * impls/counters/<counter>.h (-D VDSO_COUNTER_HEADER), the same hook
 * every transcribed arm64 layout reads through (impls/layouts/arch/
 * arm64.h), whose isb_cntvct_dep is this tree's first alternative with
 * the dependency, cntvctss its second. arch_counter_enforce_ordering(res)
 * is where the tree's read of res ends, so here it is where res gets the
 * variant's counter (the empty asm before it writes nothing). As on x86,
 * the counter headers speak the shim's kernel vocabulary
 * (impls/common/compiler.h stands aside, shim asm/msr.h says why).
 */
#ifndef __ASM_SYSREG_H
#define __ASM_SYSREG_H

#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/stringify.h>
#include <linux/types.h>

#ifndef VDSO_COUNTER_HEADER
#error "an imported tree is compiled by impls/variants.bzl, which sets VDSO_COUNTER_HEADER"
#endif
#if !defined(__aarch64__)
#error "shim asm/sysreg.h is arm64's: an arm64 tree is built by the aarch64 compiler"
#endif

#define VDSOBENCH_COMPILER_H /* impls/common/compiler.h: the shim's stand in */
#define VDSOBENCH_FAKE_COUNTER_H /* impls/kernel/fake_counter.h: declared here */
extern __thread unsigned long vdso_fake_cycles;

#include __stringify(VDSO_COUNTER_HEADER)

/* the counter headers' own (impls/counters/arm64_barrier.h) served their reads */
#undef arch_counter_enforce_ordering
#define arch_counter_enforce_ordering(val) ((val) = vdso_read_cycles())

#define SYS_CNTVCTSS_EL0 cntvctss_el0
#define __mrs_s(v, r) ""

/* arch/arm64/include/asm/barrier.h (v5.13+): as the counter headers have it */
#ifndef isb
#define isb() __asm__ __volatile__("isb" : : : "memory")
#endif

#endif /* __ASM_SYSREG_H */
