/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Clock ids, time constants and the division helpers the vDSO uses
 * (include/uapi/linux/time.h, include/vdso/math.h, include/linux/math64.h).
 */
#ifndef VDSOBENCH_TIME64_H
#define VDSOBENCH_TIME64_H

#include <time.h>

#include "impls/common/compiler.h"

#define NSEC_PER_USEC 1000L
#define NSEC_PER_SEC 1000000000L
#define USEC_PER_SEC 1000000L

/*
 * The uapi clock ids; glibc's <time.h> already defines most of them with
 * the same values, the kernel-only ones are added here.
 */
#ifndef CLOCK_REALTIME_ALARM
#define CLOCK_REALTIME_ALARM 8
#endif
#ifndef CLOCK_BOOTTIME_ALARM
#define CLOCK_BOOTTIME_ALARM 9
#endif
#define CLOCK_SGI_CYCLE 10 /* removed from the kernel: always -EINVAL */
#define MAX_CLOCKS 16

/* include/uapi/linux/time.h (v6.17): the auxiliary clocks, ids 16..23 */
#ifndef CLOCK_AUX
#define CLOCK_AUX MAX_CLOCKS
#define MAX_AUX_CLOCKS 8
#define CLOCK_AUX_LAST (CLOCK_AUX + MAX_AUX_CLOCKS - 1)
#endif

/* HZ of the simulated kernel: TICK_NSEC is what coarse getres reports. */
#define HZ 250
#define TICK_NSEC ((NSEC_PER_SEC + HZ / 2) / HZ)
#define LOW_RES_NSEC TICK_NSEC

struct timespec64 {
	s64 tv_sec;
	long tv_nsec;
};

/* include/vdso/time32.h: the 32-bit compat entry points' type */
struct old_timespec32 {
	s32 tv_sec;
	s32 tv_nsec;
};

/*
 * include/vdso/math.h: the vDSO divides by repeated subtraction because
 * the quotient is almost always 0 or 1 and a real 64-bit division would
 * pull in libgcc on 32-bit architectures.
 */
static __always_inline u32 __iter_div_u64_rem(u64 dividend, u32 divisor,
					      u64 *remainder)
{
	u32 ret = 0;

	while (dividend >= divisor) {
		/*
		 * The following asm() prevents the compiler from optimising
		 * this loop into a modulo operation.
		 */
		__asm__("" : "+rm"(dividend));

		dividend -= divisor;
		ret++;
	}

	*remainder = dividend;

	return ret;
}

/*
 * include/linux/math64.h: products wider than 64 bits, shifted back,
 * without losing their upper bits; generic_6_10 uses
 * mul_u64_u32_add_u64_shr() when a delta exceeds max_cycles, x86's hvclock
 * read mul_u64_u64_shr(). With a 128-bit integer where the compiler has one
 * (ARCH_SUPPORTS_INT128, x86-64 and arm64), else the kernel's generic
 * 32-bit versions (32-bit x86).
 */
#if defined(__SIZEOF_INT128__)
static __always_inline u64 mul_u64_u32_shr(u64 a, u32 mul, unsigned int shift)
{
	return (u64)(((unsigned __int128)a * mul) >> shift);
}

static __always_inline u64 mul_u64_u64_shr(u64 a, u64 mul, unsigned int shift)
{
	return (u64)(((unsigned __int128)a * mul) >> shift);
}

static __always_inline u64 mul_u64_u32_add_u64_shr(u64 a, u32 mul, u64 b,
						   unsigned int shift)
{
	return (u64)((((unsigned __int128)a * mul) + b) >> shift);
}
#else
static __always_inline u64 mul_u32_u32(u32 a, u32 b)
{
	return (u64)a * b;
}

static __always_inline u64 mul_u64_u32_shr(u64 a, u32 mul, unsigned int shift)
{
	u32 ah, al;
	u64 ret;

	al = a;
	ah = a >> 32;

	ret = mul_u32_u32(al, mul) >> shift;
	if (ah)
		ret += mul_u32_u32(ah, mul) << (32 - shift);

	return ret;
}

static __always_inline u64 mul_u64_u64_shr(u64 a, u64 b, unsigned int shift)
{
	union {
		u64 ll;
		struct {
			u32 low, high; /* little-endian */
		} l;
	} rl, rm, rn, rh, a0, b0;
	u64 c;

	a0.ll = a;
	b0.ll = b;

	rl.ll = mul_u32_u32(a0.l.low, b0.l.low);
	rm.ll = mul_u32_u32(a0.l.low, b0.l.high);
	rn.ll = mul_u32_u32(a0.l.high, b0.l.low);
	rh.ll = mul_u32_u32(a0.l.high, b0.l.high);

	/*
	 * Each of these lines computes a 64-bit intermediate result into "c",
	 * starting at bits 32-95.  The low 32-bits go into the result of the
	 * multiplication, the high 32-bits are carried into the next step.
	 */
	rl.l.high = c = (u64)rl.l.high + rm.l.low + rn.l.low;
	rh.l.low = c = (c >> 32) + rm.l.high + rn.l.high + rh.l.low;
	rh.l.high = (c >> 32) + rh.l.high;

	/*
	 * The 128-bit result of the multiplication is in rl.ll and rh.ll,
	 * shift it right and throw away the high part of the result.
	 */
	if (shift == 0)
		return rl.ll;
	if (shift < 64)
		return (rl.ll >> shift) | (rh.ll << (64 - shift));
	return rh.ll >> (shift & 63);
}

static __always_inline u64 mul_u64_u32_add_u64_shr(u64 a, u32 mul, u64 b,
						   unsigned int shift)
{
	u32 ah = a >> 32, al = a;
	bool ovf;
	u64 ret;

	ovf = __builtin_add_overflow(mul_u32_u32(al, mul), b, &ret);
	ret >>= shift;
	if (ovf && shift)
		ret += 1ULL << (64 - shift);
	if (ah)
		ret += mul_u32_u32(ah, mul) << (32 - shift);

	return ret;
}
#endif

#endif /* VDSOBENCH_TIME64_H */
