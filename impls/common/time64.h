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
 * include/linux/math64.h: (a * mul + add) >> shift without losing the
 * upper bits of the product; generic_6_10 uses it when a delta exceeds
 * max_cycles.
 */
static __always_inline u64 mul_u64_u32_add_u64_shr(u64 a, u32 mul, u64 b,
						   unsigned int shift)
{
	return (u64)((((unsigned __int128)a * mul) + b) >> shift);
}

#endif /* VDSOBENCH_TIME64_H */
