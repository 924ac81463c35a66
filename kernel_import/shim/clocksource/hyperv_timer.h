/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/clocksource/hyperv_timer.h, which the x86 vDSO needs
 * only with CONFIG_HYPERV_TIMER, left out of the imported configuration
 * for the reason asm/pvclock.h gives.
 */
#ifndef __CLKSOURCE_HYPERV_TIMER_H
#define __CLKSOURCE_HYPERV_TIMER_H
#endif /* __CLKSOURCE_HYPERV_TIMER_H */
