/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Can this CPU execute a counter read? Not a counter header (those are the
 * ones impls/variants.bzl names): whoever runs a variant with a real
 * counter asks this once, outside every timed loop, and reports the variant
 * as unavailable with the reason instead of dying of SIGILL. The reads
 * themselves stay the kernel's instruction sequences, with no CPUID in
 * them: the kernel patches rdtsc_ordered() with alternatives at boot and
 * pays nothing per call either.
 *
 * Only RDTSCP is optional among the counters built for x86-64 (RDTSC and
 * the fences are in every x86-64 CPU); a CPU or VM without it (QEMU's
 * qemu64 model, some hypervisors' masks) still exists. The aarch64 counters
 * are not asked about here.
 */
#ifndef VDSOBENCH_COUNTER_AVAILABLE_H
#define VDSOBENCH_COUNTER_AVAILABLE_H

#include <stddef.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* CPUID 0x80000001 EDX: RDTSCP (X86_FEATURE_RDTSCP in the kernel) */
#define VDSO_CPUID_RDTSCP (1U << 27)

/*
 * The decision, from the two CPUID answers it needs (so that tests can give
 * any): max_ext is the highest extended leaf (0x80000000's EAX), edx is leaf
 * 0x80000001's EDX. NULL if RDTSCP runs, else why not.
 */
static inline const char *vdso_rdtscp_unavailable(unsigned int max_ext,
						  unsigned int edx)
{
	if (max_ext < 0x80000001U)
		return "this CPU has no RDTSCP (CPUID has no leaf 0x80000001)";
	if (!(edx & VDSO_CPUID_RDTSCP))
		return "this CPU has no RDTSCP (CPUID 0x80000001 EDX bit 27 is "
		       "clear)";
	return NULL;
}

/*
 * NULL if this CPU can read counter ("rdtscp", "rdtsc", "fake", ... as a
 * variant's ->counter names it), else one line saying why not.
 */
static inline const char *vdso_counter_unavailable(const char *counter)
{
	if (!counter || strcmp(counter, "rdtscp"))
		return NULL;
#if defined(__x86_64__) || defined(__i386__)
	{
		unsigned int max_ext = __get_cpuid_max(0x80000000U, NULL);
		unsigned int a = 0, b = 0, c = 0, d = 0;

		if (max_ext >= 0x80000001U)
			__cpuid(0x80000001U, a, b, c, d);
		return vdso_rdtscp_unavailable(max_ext, d);
	}
#else
	return "RDTSCP is an x86 instruction";
#endif
}

#endif /* VDSOBENCH_COUNTER_AVAILABLE_H */
