/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Force-included first into every compile unit of an imported tree (the
 * kernel force-includes linux/kconfig.h and linux/compiler_types.h the
 * same way; those two follow this one).
 *
 * Stands for no kernel header: it is what lets many builds of one tree
 * (one per counter x inline choice, and several trees) link into one
 * program. Every global the tree's vDSO and update path define or name is
 * given the variant's prefix (VDSO_PREFIX, set by impls/variants.bzl as
 * for every layout), exactly as a layout's VDSO_SYM() names its symbols.
 * Renaming a global changes nothing else about the code that uses it.
 */
#ifndef KIMPORT_PREFIX_H
#define KIMPORT_PREFIX_H

#ifndef VDSO_PREFIX
#error "an imported tree is compiled by impls/variants.bzl, which sets VDSO_PREFIX"
#endif

#define __KIMPORT_PASTE_1(a, b) a##b
#define __KIMPORT_PASTE(a, b) __KIMPORT_PASTE_1(a, b)
/* the same names impls/common/variant_prelude.h's VDSO_SYM() makes */
#define KIMPORT_SYM(name) __KIMPORT_PASTE(VDSO_PREFIX, __KIMPORT_PASTE(__, name))

/* kernel/time/vsyscall.c: what it defines */
#define update_vsyscall KIMPORT_SYM(k_update_vsyscall)
#define update_vsyscall_tz KIMPORT_SYM(k_update_vsyscall_tz)
#define vdso_update_begin KIMPORT_SYM(k_vdso_update_begin)
#define vdso_update_end KIMPORT_SYM(k_vdso_update_end)
#define vdso_time_update_aux KIMPORT_SYM(k_vdso_time_update_aux)
/* and what it reads: kernel/time/{hrtimer,time,timekeeping}.c's globals */
#define hrtimer_resolution KIMPORT_SYM(k_hrtimer_resolution)
#define sys_tz KIMPORT_SYM(k_sys_tz)
#define timekeeper_lock KIMPORT_SYM(k_timekeeper_lock)
#define timekeeper_lock_irqsave KIMPORT_SYM(k_timekeeper_lock_irqsave)
#define timekeeper_unlock_irqrestore KIMPORT_SYM(k_timekeeper_unlock_irqrestore)
/*
 * the data the kernel writes: up to v6.14 x86's _vdso_data[CS_BASES] (an
 * array, reached here through a pointer to the kernel's mapping of the
 * data page: (*p) is that array, so every use reads as upstream's), from
 * v6.15 the generic data store's vdso_k_time_data pointer
 */
#if defined(__aarch64__) || defined(__arm__)
/*
 * arm64 up to v6.14: _vdso_data and _timens_data are the vDSO's own, the
 * hidden symbols its linker script (arch/arm64/kernel/vdso/vdso.lds.S)
 * places at the data page and the time namespace page before it; here
 * the two pages of the variant's vvar area (writer.c sets them there).
 * The kernel's pointer is arm64's vdso_data (writer.c). Its compat vDSO
 * (32-bit arm) reads the same two symbols (arch/arm64/kernel/vdso32/vdso.lds.S).
 */
#define _vdso_data KIMPORT_SYM(u_vdso_data)
#define _timens_data KIMPORT_SYM(u_timens_data)
#else
#define _vdso_data (*KIMPORT_SYM(k_vdso_data))
#define _timens_data (*KIMPORT_SYM(k_timens_data))
#endif
#define _vdso_rng_data KIMPORT_SYM(k_vdso_rng_data)
/*
 * v6.15+: what the vDSO reads, the hidden vdso_u_time_data its linker script
 * places at the data pages: here the first page of the variant's vvar area
 * (kernel_import/glue/writer.c makes it an alias of that page)
 */
#define vdso_u_time_data KIMPORT_SYM(u_time_data)
#define vdso_u_rng_data KIMPORT_SYM(u_rng_data)
#define vdso_u_arch_data KIMPORT_SYM(u_arch_data)
#define vdso_k_time_data KIMPORT_SYM(k_time_data)
#define vdso_k_rng_data KIMPORT_SYM(k_rng_data)
#define vdso_k_arch_data KIMPORT_SYM(k_arch_data)

#endif /* KIMPORT_PREFIX_H */
