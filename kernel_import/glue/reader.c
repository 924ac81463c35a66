// SPDX-License-Identifier: GPL-2.0
/*
 * The read side of an imported tree: its lib/vdso/gettimeofday.c,
 * unmodified, with the tree's include/vdso and arch/x86/include/asm/vdso
 * (or arch/arm64/include/asm/vdso) headers, compiled against the shim
 * (kernel_import/shim), and the vDSO entry points
 * arch/x86/entry/vdso/vclock_gettime.c (arm64: vgettimeofday.c) puts around it
 * (__vdso_clock_gettime() calling __cvdso_clock_gettime() ...), named as
 * the variant's (VDSO_SYM(), impls/common/variant_prelude.h declares
 * them). do_hres(), do_coarse() and do_hres_timens() are the tree's; the
 * counter read is the variant's counter (shim asm/msr.h; arm64's: shim
 * asm/sysreg.h).
 *
 * arm64's compat vDSO (ENABLE_COMPAT_VDSO, 32-bit arm: kernel_import/
 * copts.bzl's COMPAT_COPTS): the tree's asm/vdso/compat_gettimeofday.h is
 * the arch header (include/vdso/datapage.h picks it), the entry points are
 * arch/arm64/kernel/vdso32/vgettimeofday.c's, and the counter read is the
 * tree's own "isb; mrrc p15, 1; isb": no shim reaches an inline asm, so
 * every counter choice runs it (under qemu-arm verify's trap answers it).
 *
 * x86's 32-bit vDSO (i386, an x86-64 tree's i386 variants): as
 * arch/x86/entry/vdso/vdso32/vclock_gettime.c, BUILD_VDSO32 and the tree's
 * fake_32bit_build.h (a 32-bit configuration made of the 64-bit one) before
 * anything else, then the same arch header, whose BUILD_VDSO32 fallbacks
 * are renamed below, and the i386 entry points of ../vclock_gettime.c.
 *
 * One substitution: the tree's fallbacks (an inline `syscall' each, in
 * its asm/vdso/gettimeofday.h) are compiled under other names and never
 * called; the ones below enter the simulated kernel, as every layout's
 * fallbacks do, so that a clock served by the syscall gets the simulated
 * kernel's answer at the variant's counter value (and costs a syscall).
 */
#ifdef __i386__
/*
 * arch/x86/entry/vdso/vdso32/vclock_gettime.c's first two lines (v6.12;
 * v7.x has them in vdso32's Makefile: -DBUILD_VDSO32, -include)
 */
#define BUILD_VDSO32
#include "arch/x86/entry/vdso/vdso32/fake_32bit_build.h"
#endif

#include "kernel_import/glue/kimport.h"

/*
 * gettimeofday.c's own includes, in its order (`vdsobench import` copies its
 * #include lines into kimport_includes.h), with the arch header: they define
 * the fallbacks, under other names while these are in force.
 */
#define clock_gettime_fallback kimport_tree_clock_gettime_fallback
#define clock_getres_fallback kimport_tree_clock_getres_fallback
#define gettimeofday_fallback kimport_tree_gettimeofday_fallback
#define clock_gettime32_fallback kimport_tree_clock_gettime32_fallback
#define clock_getres32_fallback kimport_tree_clock_getres32_fallback
#include <generated/kimport_includes.h>
#include <asm/vdso/gettimeofday.h>
#undef clock_gettime_fallback
#undef clock_getres_fallback
#undef gettimeofday_fallback
#undef clock_gettime32_fallback
#undef clock_getres32_fallback

#include "kernel_import/glue/tree.h"

static __always_inline long clock_gettime_fallback(clockid_t clk,
						   struct __kernel_timespec *ts)
{
	return KIMPORT_SYM(fallback_clock_gettime)(clk, ts);
}

static __always_inline long clock_getres_fallback(clockid_t clk,
						  struct __kernel_timespec *res)
{
	return KIMPORT_SYM(fallback_clock_getres)(clk, res);
}

static __always_inline long gettimeofday_fallback(struct __kernel_old_timeval *tv,
						  struct timezone *tz)
{
	return KIMPORT_SYM(fallback_gettimeofday)(tv, tz);
}

#ifdef BUILD_VDSO32
/*
 * the time32 fallbacks of the 32-bit vDSOs (arm64's compat one defines
 * BUILD_VDSO32 in its header): struct timespec is old_timespec32 there
 */
static __always_inline long clock_gettime32_fallback(clockid_t clk,
						     struct old_timespec32 *ts)
{
	return KIMPORT_SYM(fallback_clock_gettime)(clk, ts);
}

static __always_inline long clock_getres32_fallback(clockid_t clk,
						    struct old_timespec32 *res)
{
	return KIMPORT_SYM(fallback_clock_getres)(clk, res);
}
#endif

#include "lib/vdso/gettimeofday.c"

/*
 * arch/x86/entry/vdso/vclock_gettime.c: the entry points, taking the
 * userspace types of impls/common/variant_prelude.h's declarations
 * (struct timespec, timeval: the kernel's __kernel_timespec and
 * __kernel_old_timeval on x86-64, tree.h checks), named as the variant's.
 */
__attribute__((visibility("default"))) int
KIMPORT_SYM(gettimeofday)(struct timeval *tv, struct timezone *tz)
{
	return __cvdso_gettimeofday((struct __kernel_old_timeval *)tv, tz);
}

#ifdef VDSO_HAS_TIME
__attribute__((visibility("default"))) __kernel_old_time_t
KIMPORT_SYM(time)(__kernel_old_time_t *t)
{
	return __cvdso_time(t);
}
#endif

#ifdef BUILD_VDSO32
/*
 * arch/arm64/kernel/vdso32/vgettimeofday.c and x86's vclock_gettime.c for
 * i386: __vdso_clock_gettime and __vdso_clock_getres take old_timespec32,
 * the C library's struct timespec of 32-bit time_t (tree.h checks);
 * __vdso_clock_gettime64 has no place in the variant contract and is not
 * built.
 */
__attribute__((visibility("default"))) int
KIMPORT_SYM(clock_gettime)(clockid_t clock, struct timespec *ts)
{
	return __cvdso_clock_gettime32(clock, (struct old_timespec32 *)ts);
}
#else
__attribute__((visibility("default"))) int
KIMPORT_SYM(clock_gettime)(clockid_t clock, struct timespec *ts)
{
	return __cvdso_clock_gettime(clock, (struct __kernel_timespec *)ts);
}
#endif

#ifndef VDSO_HAS_TIME
/*
 * arm64 (arch/arm64/kernel/vdso/vgettimeofday.c: __kernel_clock_gettime,
 * __kernel_gettimeofday and __kernel_clock_getres, the entry points here
 * but this one): its vDSO has no time(). glibc's time() there calls the vDSO's
 * clock_gettime(CLOCK_REALTIME_COARSE) through a pointer, and so does
 * this, as impls/layouts/vclock_gettime.h does for the transcribed arm64
 * layouts: the read is still the tree's.
 */
__attribute__((visibility("default"))) __kernel_old_time_t
KIMPORT_SYM(time)(__kernel_old_time_t *t)
{
	int (*gettime)(clockid_t, struct timespec *) = KIMPORT_SYM(clock_gettime);
	struct timespec ts;

	__asm__("" : "+r"(gettime)); /* an address the compiler cannot follow */
	if (gettime(CLOCK_REALTIME_COARSE, &ts))
		return (__kernel_old_time_t)-1;
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
#endif

__attribute__((visibility("default"))) int
KIMPORT_SYM(clock_getres)(clockid_t clock, struct timespec *res)
{
#ifdef BUILD_VDSO32
	return __cvdso_clock_getres_time32(clock, (struct old_timespec32 *)res);
#else
	return __cvdso_clock_getres(clock, (struct __kernel_timespec *)res);
#endif
}
