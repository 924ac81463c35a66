/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reference's wide arithmetic: the simulated kernel and the checks
 * compute in more bits than the vDSO's 64, so that they never share an
 * overflow with the code they check.
 *
 *	wide_ns		a signed nanosecond count: __int128 where the
 *			compiler has one (x86-64, arm64); 32-bit x86 has
 *			none, and s64 there (+-292 years, which every value
 *			the checks choose is well within)
 *	div_u128_u64()	(hi:lo) / d, its remainder, where the quotient fits
 *			64 bits: __int128's division, or a shift-and-subtract
 *			loop on 32-bit x86
 *	mul_u64_u32_wide()	a * mul as hi:lo
 *	mul_u64_u64_wide()	a * b as hi:lo
 */
#ifndef VDSOBENCH_WIDE_H
#define VDSOBENCH_WIDE_H

#include "impls/common/time64.h"

#if defined(__SIZEOF_INT128__)
typedef __int128 wide_ns;
#else
typedef s64 wide_ns;
#endif

static inline void mul_u64_u32_wide(u64 a, u32 mul, u64 *hi, u64 *lo)
{
	u64 low = (u64)(u32)a * mul;
	u64 high = (a >> 32) * mul;

	*lo = low + (high << 32);
	*hi = (high >> 32) + (*lo < low);
}

static inline void mul_u64_u64_wide(u64 a, u64 b, u64 *hi, u64 *lo)
{
	u64 ll = (u64)(u32)a * (u32)b, lh = (u64)(u32)a * (b >> 32);
	u64 hl = (a >> 32) * (u32)b, hh = (a >> 32) * (b >> 32);
	u64 mid = (ll >> 32) + (u32)lh + (u32)hl;

	*lo = (mid << 32) | (u32)ll;
	*hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* d below 2^63 and hi below d: the quotient fits, the remainder's double too */
static inline u64 div_u128_u64(u64 hi, u64 lo, u64 d, u64 *rem)
{
#if defined(__SIZEOF_INT128__)
	unsigned __int128 n = ((unsigned __int128)hi << 64) | lo;

	*rem = (u64)(n % d);
	return (u64)(n / d);
#else
	u64 q = 0, r = hi;
	int bit;

	for (bit = 63; bit >= 0; bit--) {
		r = (r << 1) | ((lo >> bit) & 1);
		q <<= 1;
		if (r >= d) {
			r -= d;
			q |= 1;
		}
	}
	*rem = r;
	return q;
#endif
}

/*
 * ceil((y << shift) / d), shift 1..64, d below 2^63, into *q: false where
 * it does not fit 64 bits
 */
static inline bool shl_div_ceil(u64 y, unsigned int shift, u64 d, u64 *q)
{
	u64 hi = shift == 64 ? y : y >> (64 - shift);
	u64 lo = shift == 64 ? 0 : y << shift;
	u64 rem;

	if (hi >= d)
		return false;
	*q = div_u128_u64(hi, lo, d, &rem);
	if (rem && ++*q == 0)
		return false;
	return true;
}

#endif /* VDSOBENCH_WIDE_H */
