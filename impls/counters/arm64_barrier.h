/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Not a counter header: what the arm64 counter reads share, as
 * arch/arm64/include/asm/barrier.h has it since 77ec462536a1 (v5.13),
 * which moved it there from arch_timer.h (where it ordered the kernel's
 * own counter reads from early 2019) so that the vDSO could use it.
 */
#ifndef VDSOBENCH_ARM64_BARRIER_H
#define VDSOBENCH_ARM64_BARRIER_H

#if !defined(__aarch64__)
#error "arm64_barrier.h is for the aarch64 counter reads"
#endif

#define isb() __asm__ __volatile__("isb" : : : "memory")

/*
 * Ensure that reads of the counter are treated the same as memory reads
 * for the purposes of ordering by subsequent memory barriers.
 *
 * This insanity brought to you by speculative system register reads,
 * out-of-order memory accesses, sequence locks and Thomas Gleixner.
 *
 * https://lore.kernel.org/r/alpine.DEB.2.21.1902081950260.1662@nanos.tec.linutronix.de/
 */
#define arch_counter_enforce_ordering(val) do {				\
	u64 tmp, _val = (val);						\
									\
	asm volatile(							\
	"	eor	%0, %1, %1\n"					\
	"	add	%0, sp, %0\n"					\
	"	ldr	xzr, [%0]"					\
	: "=r" (tmp) : "r" (_val));					\
} while (0)

#endif /* VDSOBENCH_ARM64_BARRIER_H */
