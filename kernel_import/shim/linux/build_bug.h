/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/build_bug.h and the compiletime_assert() of
 * include/linux/compiler_types.h, which v6.15's lib/vdso/gettimeofday.c
 * uses: the same mechanism, a call to a function carrying GCC's error
 * attribute that fails the build unless the optimiser removes it (so
 * BUILD_BUG() in a branch that is compiled out costs nothing, as upstream).
 */
#ifndef _LINUX_BUILD_BUG_H
#define _LINUX_BUILD_BUG_H

#include <linux/compiler.h>

#define __compiletime_assert(condition, msg, prefix, suffix)                 \
	do {                                                                \
		extern void prefix##suffix(void) __attribute__((__error__(msg))); \
		if (!(condition))                                           \
			prefix##suffix();                                   \
	} while (0)
#define _compiletime_assert(condition, msg, prefix, suffix)                  \
	__compiletime_assert(condition, msg, prefix, suffix)
#define compiletime_assert(condition, msg)                                   \
	_compiletime_assert(condition, msg, __compiletime_assert_, __COUNTER__)

#define BUILD_BUG_ON_MSG(cond, msg) compiletime_assert(!(cond), msg)
#define BUILD_BUG_ON(condition)                                              \
	BUILD_BUG_ON_MSG(condition, "BUILD_BUG_ON failed: " #condition)
#define BUILD_BUG() BUILD_BUG_ON_MSG(1, "BUILD_BUG failed")

#endif /* _LINUX_BUILD_BUG_H */
