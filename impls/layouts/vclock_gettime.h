/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The vDSO entry points on the generic read path, as
 * arch/x86/entry/vdso/vclock_gettime.c (v5.3 on) defines
 * __vdso_clock_gettime() and the others: each a call of the __cvdso_*()
 * function of the lib/vdso rebuild included before this. Here they carry
 * the variant's prefix (VDSO_SYM()) and are what the registry calls.
 */
#ifndef VDSOBENCH_VCLOCK_GETTIME_H
#define VDSOBENCH_VCLOCK_GETTIME_H

VDSO_ENTRY int VDSO_SYM(gettimeofday)(struct timeval *tv, struct timezone *tz)
{
	return __cvdso_gettimeofday(tv, tz);
}

VDSO_ENTRY int VDSO_SYM(clock_gettime)(clockid_t clock, struct timespec *ts);

VDSO_ENTRY time_t VDSO_SYM(time)(time_t *t)
{
#ifdef VDSO_HAS_TIME
	return __cvdso_time(t);
#else
	/*
	 * vdsobench: an architecture whose vDSO has no time() (arm64): glibc's
	 * time() there calls the vDSO's clock_gettime(CLOCK_REALTIME_COARSE)
	 * through a pointer, and so does this: __cvdso_clock_gettime() keeps
	 * its one caller, the entry point, and is inlined there as in the
	 * kernel's vDSO (a second inlined copy would make the compiler
	 * outline it).
	 */
	int (*gettime)(clockid_t, struct timespec *) = VDSO_SYM(clock_gettime);
	struct timespec ts;

	__asm__("" : "+r"(gettime)); /* an address the compiler cannot follow */
	if (gettime(CLOCK_REALTIME_COARSE, &ts))
		return (time_t)-1;
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
#endif
}

VDSO_ENTRY int VDSO_SYM(clock_gettime)(clockid_t clock, struct timespec *ts)
{
	return __cvdso_clock_gettime(clock, ts);
}

VDSO_ENTRY int VDSO_SYM(clock_getres)(clockid_t clock, struct timespec *res)
{
	return __cvdso_clock_getres(clock, res);
}

#endif /* VDSOBENCH_VCLOCK_GETTIME_H */
