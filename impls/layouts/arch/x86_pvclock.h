/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86's pvclock read in the vDSO (CONFIG_PARAVIRT_CLOCK, which every x86
 * distribution kernel and x86_64_defconfig select through KVM_GUEST):
 * arch/x86/include/asm/pvclock.h and vread_pvclock() of
 * arch/x86/include/asm/vdso/gettimeofday.h (v5.2's vclock_gettime.c has
 * the same body), read from the simulated host's page
 * (impls/kernel/sim_vclock.h) as every guest mapping reads the host's.
 *
 *	< v6.8	vread_pvclock() returns the cycles whole
 *	v6.8+	masked with S64_MAX ("x86/vdso: Make delta calculation
 *		overflow safe"): the sign bit is the invalid marker
 *
 * pvclock_scale_delta() has both of the kernel's branches, __i386__'s
 * (vdso32's) and x86-64's, as in v6.12's asm/pvclock.h: 32-bit x86 reads
 * the page too (--config=i386).
 *
 * VDSOBENCH_VCLOCK_NO_RETRY (a known-bad layout only): the read without
 * its version retry, the torn read a host update can give.
 *
 * Needs rdtsc_ordered() and VDSO_KERNEL_VERSION.
 */
#ifndef VDSOBENCH_ARCH_X86_PVCLOCK_H
#define VDSOBENCH_ARCH_X86_PVCLOCK_H

#include "impls/kernel/sim_vclock.h"

/* vdsobench: the host page's struct is the ABI's, field for field */
#define pvclock_vcpu_time_info sim_pvclock
#define PVCLOCK_TSC_STABLE_BIT SIM_PVCLOCK_TSC_STABLE_BIT
struct pvclock_vsyscall_time_info {
	struct pvclock_vcpu_time_info pvti;
} __aligned(64);
/*
 * vdsobench: vvar's pvclock_page is the simulated host's (sim_pvclock_page
 * expands to the object's name, pvclock_page, which is not expanded again)
 */
#define pvclock_page (*(struct pvclock_vsyscall_time_info *)&sim_pvclock_page)

/* x86: virt_rmb() is __smp_rmb(), a compiler barrier */
#define virt_rmb() barrier()

static __always_inline
unsigned pvclock_read_begin(const struct pvclock_vcpu_time_info *src)
{
	unsigned version = src->version & ~1;
	/* Make sure that the version is read before the data. */
	virt_rmb();
	return version;
}

static __always_inline
bool pvclock_read_retry(const struct pvclock_vcpu_time_info *src,
			unsigned version)
{
	/* Make sure that the version is re-read after the data. */
	virt_rmb();
	return unlikely(version != src->version);
}

/*
 * Scale a 64-bit delta by scaling and multiplying by a 32-bit fraction,
 * yielding a 64-bit result.
 */
static __always_inline u64 pvclock_scale_delta(u64 delta, u32 mul_frac, int shift)
{
	u64 product;
#ifdef __i386__
	u32 tmp1, tmp2;
#else
	unsigned long tmp;
#endif

	if (shift < 0)
		delta >>= -shift;
	else
		delta <<= shift;

#ifdef __i386__
	__asm__ (
		"mul  %5       ; "
		"mov  %4,%%eax ; "
		"mov  %%edx,%4 ; "
		"mul  %5       ; "
		"xor  %5,%5    ; "
		"add  %4,%%eax ; "
		"adc  %5,%%edx ; "
		: "=A" (product), "=r" (tmp1), "=r" (tmp2)
		: "a" ((u32)delta), "1" ((u32)(delta >> 32)), "2" (mul_frac) );
#elif defined(__x86_64__)
	__asm__ (
		"mulq %[mul_frac] ; shrd $32, %[hi], %[lo]"
		: [lo]"=a"(product),
		  [hi]"=d"(tmp)
		: "0"(delta),
		  [mul_frac]"rm"((u64)mul_frac));
#else
#error implement me!
#endif

	return product;
}

static __always_inline
u64 __pvclock_read_cycles(const struct pvclock_vcpu_time_info *src, u64 tsc)
{
	u64 delta = tsc - src->tsc_timestamp;
	u64 offset = pvclock_scale_delta(delta, src->tsc_to_system_mul,
					     src->tsc_shift);
	return src->system_time + offset;
}

static u64 vread_pvclock(void)
{
	const struct pvclock_vcpu_time_info *pvti = &pvclock_page.pvti;
	u32 version;
	u64 ret;

	/*
	 * Note: The kernel and hypervisor must guarantee that cpu ID
	 * number maps 1:1 to per-CPU pvclock time info.
	 *
	 * We only do pvclock vdso timing at all if
	 * PVCLOCK_TSC_STABLE_BIT is set, and we interpret that bit to
	 * mean that all vCPUs have matching pvti and that the TSC is
	 * synced, so we can just look at vCPU 0's pvti.
	 */

	do {
		version = pvclock_read_begin(pvti);

		if (unlikely(!(pvti->flags & PVCLOCK_TSC_STABLE_BIT)))
			return U64_MAX;

		ret = __pvclock_read_cycles(pvti, rdtsc_ordered());
#ifdef VDSOBENCH_VCLOCK_NO_RETRY
	} while (0); /* vdsobench: the known-bad control: no retry */
	(void)version;
#else
	} while (pvclock_read_retry(pvti, version));
#endif

#if VDSO_KERNEL_VERSION >= KERNEL_VERSION(6, 8, 0)
	return ret & S64_MAX;
#else
	return ret;
#endif
}

#endif /* VDSOBENCH_ARCH_X86_PVCLOCK_H */
