/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/kconfig.h, force-included like the kernel's:
 * IS_ENABLED() and friends, the same macros, and the configuration.
 *
 * The configuration is include/generated/autoconf.h, which `vdsobench
 * import` writes into the imported tree as the kernel's build would (only
 * the symbols the vDSO and the update path test: what the tree's
 * arch/x86/Kconfig selects, plus CONFIG_TIME_NS=y as Debian builds it; the
 * import lists them).
 */
#ifndef __LINUX_KCONFIG_H
#define __LINUX_KCONFIG_H

#include <generated/autoconf.h>

#define __ARG_PLACEHOLDER_1 0,
#define __take_second_arg(__ignored, val, ...) val

#define __and(x, y) ___and(x, y)
#define ___and(x, y) ____and(__ARG_PLACEHOLDER_##x, y)
#define ____and(arg1_or_junk, y) __take_second_arg(arg1_or_junk y, 0)

#define __or(x, y) ___or(x, y)
#define ___or(x, y) ____or(__ARG_PLACEHOLDER_##x, y)
#define ____or(arg1_or_junk, y) __take_second_arg(arg1_or_junk 1, y)

#define __is_defined(x) ___is_defined(x)
#define ___is_defined(val) ____is_defined(__ARG_PLACEHOLDER_##val)
#define ____is_defined(arg1_or_junk) __take_second_arg(arg1_or_junk 1, 0)

/* no modules here: every option is y or not set */
#define IS_BUILTIN(option) __is_defined(option)
#define IS_MODULE(option) 0
#define IS_REACHABLE(option) IS_BUILTIN(option)
#define IS_ENABLED(option) IS_BUILTIN(option)

#endif /* __LINUX_KCONFIG_H */
