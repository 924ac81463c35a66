/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fake counter: each thread reads the value its test put in
 * vdso_fake_cycles. It makes every result a pure function of the
 * timekeeper state and that value, so tests compare nanosecond for
 * nanosecond; never benchmarked.
 */
#include "impls/kernel/fake_counter.h"

#define VDSO_COUNTER_REAL 0

static __always_inline u64 vdso_read_cycles(void)
{
	return READ_ONCE(vdso_fake_cycles);
}
