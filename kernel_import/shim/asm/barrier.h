/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for arch/x86/include/asm/barrier.h (and arm64's): the SMP
 * barriers of the seqcount protocol. x86-64 is TSO, so the kernel's
 * smp_rmb() and smp_wmb() are compiler barriers there (barrier(), as
 * asm-generic/barrier.h defines them when the architecture gives no
 * stronger one), and so are i386's (x86's vdso32, whose smp_mb() is the
 * same locked add on %esp); arm64's are dmb ishld and dmb ishst, and so
 * are those of its compat vDSO (32-bit arm, ARMv8: asm/vdso/compat_barrier.h).
 *
 * Also cpu_relax(), which the sequence count's read loop spins with
 * (include/vdso/helpers.h): the kernel's comes from asm/processor.h, which
 * the headers around it include long before; from v6.15 the data page
 * header no longer brings it, so here it comes with the barriers
 * helpers.h includes (the tree's own include/vdso/processor.h).
 */
#ifndef _ASM_X86_BARRIER_H
#define _ASM_X86_BARRIER_H

#include <linux/compiler.h>
#include <vdso/processor.h>

#if defined(__x86_64__)
#define smp_rmb() barrier()
#define smp_wmb() barrier()
#define smp_mb() __asm__ __volatile__("lock addl $0,-4(%%rsp)" ::: "memory", "cc")
/* asm-generic/barrier.h: virt_rmb() is __smp_rmb(), x86's a compiler barrier */
#define virt_rmb() barrier()
#elif defined(__i386__)
#define smp_rmb() barrier()
#define smp_wmb() barrier()
#define smp_mb() __asm__ __volatile__("lock addl $0,-4(%%esp)" ::: "memory", "cc")
#define virt_rmb() barrier()
#elif defined(__aarch64__) || defined(__arm__)
#define smp_rmb() __asm__ __volatile__("dmb ishld" ::: "memory")
#define smp_wmb() __asm__ __volatile__("dmb ishst" ::: "memory")
#define smp_mb() __asm__ __volatile__("dmb ish" ::: "memory")
#endif

#if defined(__arm__) && !defined(isb)
/* arm64's isb(), which the compat vDSO's counter read takes from here */
#define isb() __asm__ __volatile__("isb" : : : "memory")
#endif

#endif /* _ASM_X86_BARRIER_H */
