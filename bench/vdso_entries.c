// SPDX-License-Identifier: GPL-2.0
/*
 * The vDSO's entry names per architecture (vdso_entries.h), as the
 * kernel's linker scripts export them: checked against Linux 6.12's.
 */
#include <stddef.h>

#include "bench/vdso_entries.h"

const struct vdso_entries vdso_entries_x86_64 = {
	.arch = "x86-64",
	.version = "LINUX_2.6",
	.clock_gettime = "__vdso_clock_gettime",
	.clock_getres = "__vdso_clock_getres",
	.gettimeofday = "__vdso_gettimeofday",
	.time = "__vdso_time",
};

const struct vdso_entries vdso_entries_i386 = {
	.arch = "i386",
	.version = "LINUX_2.6",
	.clock_gettime = "__vdso_clock_gettime",
	.clock_getres = "__vdso_clock_getres",
	.gettimeofday = "__vdso_gettimeofday",
	.time = "__vdso_time",
	.clock_gettime64 = "__vdso_clock_gettime64",
};

/* no __kernel_time: glibc's time() there is clock_gettime's coarse clock */
const struct vdso_entries vdso_entries_arm64 = {
	.arch = "arm64",
	.version = "LINUX_2.6.39",
	.clock_gettime = "__kernel_clock_gettime",
	.clock_getres = "__kernel_clock_getres",
	.gettimeofday = "__kernel_gettimeofday",
};

const struct vdso_entries *vdso_entries_own(void)
{
#if defined(__x86_64__) && !defined(__ILP32__)
	return &vdso_entries_x86_64;
#elif defined(__i386__)
	return &vdso_entries_i386;
#elif defined(__aarch64__) && !defined(__ILP32__)
	return &vdso_entries_arm64;
#else
	return NULL;
#endif
}
