/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/compiler_types.h and the parts of
 * include/linux/compiler_attributes.h the vDSO and the update path use,
 * force-included like the kernel's: the same GCC attributes under the
 * same names.
 *
 * One deliberate difference, the variant's inline axis
 * (VDSO_INLINE_ALWAYS, impls/variants.bzl): "always" keeps the kernel's
 * __always_inline; "auto" makes it plain inline, so the compiler decides
 * for every function the tree marks __always_inline (do_hres(),
 * do_coarse(), the helpers), which is what "auto" means for a
 * transcribed layout's do_hres() and do_coarse().
 *
 * Left out: the kernel's redefinition of `inline' (gnu_inline and
 * notrace; every inline function here is static, and nothing is traced),
 * the sanitizer and checker annotations (__user, __iomem, __rcu: sparse
 * only), and the per-compiler fallbacks (GCC only).
 */
#ifndef __LINUX_COMPILER_TYPES_H
#define __LINUX_COMPILER_TYPES_H

#ifndef VDSO_INLINE_ALWAYS
#error "an imported tree is compiled by impls/variants.bzl, which sets VDSO_INLINE_ALWAYS"
#endif

#if VDSO_INLINE_ALWAYS
#define __always_inline inline __attribute__((__always_inline__))
#else
#define __always_inline inline
#endif
#define noinline __attribute__((__noinline__))
#define notrace __attribute__((__no_instrument_function__))
#define __maybe_unused __attribute__((__unused__))
#define __always_unused __attribute__((__unused__))
#define __used __attribute__((__used__))
#define __visible __attribute__((__externally_visible__))
#define __aligned(x) __attribute__((__aligned__(x)))
#define __packed __attribute__((__packed__))
#define __section(s) __attribute__((__section__(s)))
#define __weak __attribute__((__weak__))
#define __cold __attribute__((__cold__))
#define __pure __attribute__((__pure__))
#define __must_check __attribute__((__warn_unused_result__))
#define __noreturn __attribute__((__noreturn__))
#define __no_sanitize_address
#define __user
#define __iomem
#define __force
#define __rcu

/* GCC 9 on (CONFIG_CC_HAS_ASM_INLINE): an asm statement sized as one instruction */
#define asm_inline asm __inline

#define ___PASTE(a, b) a##b
#define __PASTE(a, b) ___PASTE(a, b)

#endif /* __LINUX_COMPILER_TYPES_H */
