/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's compiler vocabulary, rebuilt for userspace so that the
 * layout sources read like lib/vdso and arch/x86/entry/vdso and can be
 * diffed against them.
 */
#ifndef VDSOBENCH_COMPILER_H
#define VDSOBENCH_COMPILER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#ifndef __always_inline
#define __always_inline inline __attribute__((__always_inline__))
#endif
#define noinline __attribute__((__noinline__))
#define notrace
#define __maybe_unused __attribute__((__unused__))
#define __aligned(x) __attribute__((__aligned__(x)))

#define barrier() __asm__ __volatile__("" : : : "memory")

#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val) (*(volatile __typeof__(x) *)&(x) = (val))

/*
 * x86 is TSO: loads are not reordered with loads nor stores with stores,
 * so the kernel's smp_rmb()/smp_wmb() are compiler barriers there.
 */
#if defined(__x86_64__) || defined(__i386__)
#define smp_rmb() barrier()
#define smp_wmb() barrier()
#define cpu_relax() __asm__ __volatile__("pause" ::: "memory")
#elif defined(__aarch64__)
#define smp_rmb() __asm__ __volatile__("dmb ishld" ::: "memory")
#define smp_wmb() __asm__ __volatile__("dmb ishst" ::: "memory")
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#elif defined(__arm__)
/* arch/arm64/include/asm/vdso/compat_barrier.h: ARMv8's AArch32 barriers */
#define smp_rmb() __asm__ __volatile__("dmb ishld" ::: "memory")
#define smp_wmb() __asm__ __volatile__("dmb ishst" ::: "memory")
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#error "vdsobench supports x86 (64- and 32-bit), aarch64 and AArch32"
#endif

/*
 * The Arm architected timer (arm64, and its compat vDSO's AArch32 reads):
 * one counter for every CPU, 56 bits wide for the vDSO, never clamped
 * behind cycle_last, as x86's TSC is.
 */
#if defined(__aarch64__) || defined(__arm__)
#define VDSO_ARCH_TIMER 1
#endif

#define BIT(nr) (1UL << (nr))
/*
 * include/uapi/linux/bits.h, its __BITS_PER_LONG spelled out: the C
 * library's asm/bitsperlong.h defines that name too, as 64 on x86-64
 */
#define __GENMASK(h, l) \
	(((~0UL) << (l)) & (~0UL >> (__SIZEOF_LONG__ * 8 - 1 - (h))))

#define S64_MAX ((s64)(~0ULL >> 1))
#define U64_MAX (~0ULL)

#define ____cacheline_aligned __aligned(64)

/*
 * include/linux/kconfig.h: a layout states the kernel configuration it
 * follows as the kernel does, CONFIG_FOO defined to 1 or not defined at
 * all, so that upstream's #ifdef CONFIG_FOO and IS_ENABLED(CONFIG_FOO)
 * read the same here.
 */
#define __ARG_PLACEHOLDER_1 0,
#define __take_second_arg(__ignored, val, ...) val
#define __is_defined(x) ___is_defined(x)
#define ___is_defined(val) ____is_defined(__ARG_PLACEHOLDER_##val)
#define ____is_defined(arg1_or_junk) __take_second_arg(arg1_or_junk 1, 0)
#define IS_ENABLED(option) __is_defined(option)

/* include/generated/uapi/linux/version.h */
#ifndef KERNEL_VERSION
#define KERNEL_VERSION(a, b, c) (((a) << 16) + ((b) << 8) + (c))
#endif
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define PAGE_SIZE 4096UL

#define __stringify_1(x) #x
#define __stringify(x) __stringify_1(x)
#define __PASTE_1(a, b) a##b
#define __PASTE(a, b) __PASTE_1(a, b)

#endif /* VDSOBENCH_COMPILER_H */
