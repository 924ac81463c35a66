/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The counter-read axis.
 *
 * A variant is compiled with -DVDSO_COUNTER_HEADER=<one of the headers
 * beside this one>. Each header provides exactly one hook:
 *
 *	static __always_inline u64 vdso_read_cycles(void);
 *
 * the instruction sequence the kernel's __arch_get_hw_counter() /
 * rdtsc_ordered() would execute, plus VDSO_COUNTER_REAL (0 for the fake
 * counter, which is never benchmarked).
 */
#ifndef VDSOBENCH_COUNTER_H
#define VDSOBENCH_COUNTER_H

#include "impls/common/compiler.h"

#ifndef VDSO_COUNTER_HEADER
#error "compile a variant with -DVDSO_COUNTER_HEADER=impls/counters/<name>.h"
#endif

#include __stringify(VDSO_COUNTER_HEADER)

#endif /* VDSOBENCH_COUNTER_H */
