/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VDSOBENCH_FAKE_COUNTER_H
#define VDSOBENCH_FAKE_COUNTER_H

#include "impls/common/compiler.h"

/*
 * The fake clocksource: per thread, so that concurrent readers in the
 * concurrency checker each know exactly which counter value their call
 * used.
 */
extern __thread u64 vdso_fake_cycles;

#endif /* VDSOBENCH_FAKE_COUNTER_H */
