/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/asm-generic/param.h: HZ is CONFIG_HZ (250, as
 * Debian builds it; include/generated/autoconf.h of the import). The
 * vDSO uses it only in TICK_NSEC, the coarse clocks' clock_getres().
 */
#ifndef __ASM_GENERIC_PARAM_H
#define __ASM_GENERIC_PARAM_H

#define HZ CONFIG_HZ
#define USER_HZ 100

#endif /* __ASM_GENERIC_PARAM_H */
