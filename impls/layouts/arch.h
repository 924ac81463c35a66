/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <asm/vdso/gettimeofday.h> and <asm/vdso/vsyscall.h>: the architecture's
 * hooks into the generic read path (lib/vdso/gettimeofday.c) and into
 * update_vsyscall(), picked here and nowhere else. The data page headers
 * include this at their end, where include/vdso/datapage.h includes
 * <asm/vdso/gettimeofday.h>.
 *
 * Each architecture header follows its kernel file of the version the
 * layout cites (VDSO_KERNEL_VERSION) and defines what it overrides the
 * way the kernel does, `#define hook hook`, so that the #ifndef defaults
 * of the generic read path stand aside. What every one provides:
 *
 *	__arch_get_hw_counter()		the counter read (its counter axis:
 *					vdso_read_cycles()), or an invalid value
 *	__arch_get_vdso_data()		the reader's data (up to v6.14; from
 *					v6.15 the generic accessor of the data
 *					page header serves)
 *	__arch_get_timens_vdso_data()	with CONFIG_TIME_NS (up to v6.14)
 *	VDSO_HAS_TIME, VDSO_HAS_CLOCK_GETRES
 *	__arch_get_clock_mode(tk)	the simulated clocksource's vDSO clock
 *					mode, which update_vsyscall() stores
 *	and any of vdso_calc_ns() (vdso_calc_delta() before v6.10),
 *	vdso_clocksource_ok(), vdso_cycles_ok(), __arch_vdso_hres_capable()
 *	the architecture replaces.
 */
#ifndef VDSOBENCH_ARCH_H
#define VDSOBENCH_ARCH_H

#ifndef VDSO_KERNEL_VERSION
#error "a layout defines VDSO_KERNEL_VERSION, the kernel it follows, before the prelude"
#endif

#if defined(__x86_64__) || defined(__i386__)
#include "impls/layouts/arch/x86.h"
#elif defined(__aarch64__)
#include "impls/layouts/arch/arm64.h"
#elif defined(__arm__)
#include "impls/layouts/arch/arm64_compat.h"
#else
#error "vdsobench supports x86 (64- and 32-bit), aarch64 and AArch32"
#endif

#endif /* VDSOBENCH_ARCH_H */
