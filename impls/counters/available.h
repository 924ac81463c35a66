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
 * qemu64 model, some hypervisors' masks) still exists. On aarch64 only
 * CNTVCTSS_EL0 is: it comes with FEAT_ECV (Armv8.6), which the kernel
 * advertises as HWCAP2_ECV in AT_HWCAP2 and uses itself only then (the
 * ARM64_HAS_ECV alternative of __arch_get_hw_counter()). Without it the
 * register is undefined and reading it is SIGILL: qemu-user 7.2 has none,
 * even with -cpu max. CNTVCT_EL0 is in every arm64 CPU.
 */
#ifndef VDSOBENCH_COUNTER_AVAILABLE_H
#define VDSOBENCH_COUNTER_AVAILABLE_H

#include <stddef.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__)
#include <sys/auxv.h>
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

/* AT_HWCAP2: HWCAP2_ECV (arch/arm64/include/uapi/asm/hwcap.h, 1 << 19) */
#define VDSO_HWCAP2_ECV (1UL << 19)

/*
 * The decision from AT_HWCAP2 (so that tests can give any): NULL if
 * CNTVCTSS_EL0 reads, else why not.
 */
static inline const char *vdso_cntvctss_unavailable(unsigned long hwcap2)
{
	if (!(hwcap2 & VDSO_HWCAP2_ECV))
		return "this CPU has no FEAT_ECV, so no CNTVCTSS_EL0 "
		       "(AT_HWCAP2 lacks HWCAP2_ECV, bit 19)";
	return NULL;
}

#if defined(__arm__)
#include <setjmp.h>
#include <signal.h>

static sigjmp_buf vdso_mrrc_probe_env;

static void vdso_mrrc_probe_ill(int sig)
{
	(void)sig;
	siglongjmp(vdso_mrrc_probe_env, 1);
}

/*
 * AArch32 has no hwcap for it: EL0's CNTVCT read is the kernel's choice
 * (CNTKCTL_EL1.EL0VCTEN, which arm64 sets) and qemu-arm 7.2's user mode
 * has no AArch32 generic timer at all. So one read, SIGILL caught. NULL
 * if it reads, else why not; asked once.
 */
static inline const char *vdso_mrrc_cntvct_unavailable(void)
{
	static int known; /* 0 not asked, 1 reads, 2 SIGILL */
	struct sigaction sa = { .sa_handler = vdso_mrrc_probe_ill }, old;
	unsigned long long res;

	if (!known) {
		sigemptyset(&sa.sa_mask);
		sigaction(SIGILL, &sa, &old);
		if (sigsetjmp(vdso_mrrc_probe_env, 1)) {
			known = 2;
		} else {
			__asm__ __volatile__("mrrc p15, 1, %Q0, %R0, c14"
					     : "=r"(res));
			(void)res;
			known = 1;
		}
		sigaction(SIGILL, &old, NULL);
	}
	return known == 1 ? NULL :
	       "CNTVCT's mrrc p15, 1, c14 is SIGILL here (qemu-arm has no "
	       "AArch32 generic timer in user mode)";
}
#endif

/*
 * NULL if this CPU can read counter ("rdtscp", "rdtsc", "fake", ... as a
 * variant's ->counter names it), else one line saying why not.
 */
static inline const char *vdso_counter_unavailable(const char *counter)
{
	if (counter && !strcmp(counter, "cntvctss")) {
#if defined(__aarch64__)
		return vdso_cntvctss_unavailable(getauxval(AT_HWCAP2));
#else
		return "CNTVCTSS_EL0 is an arm64 register";
#endif
	}
	if (counter && !strcmp(counter, "isb_mrrc_isb")) {
#if defined(__arm__)
		return vdso_mrrc_cntvct_unavailable();
#else
		return "CNTVCT's mrrc p15 is an AArch32 read";
#endif
	}
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
