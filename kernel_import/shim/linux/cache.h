/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/cache.h, which the kernel's x86 vDSO headers
 * reach through asm/vgtod.h's includes: SMP_CACHE_BYTES, which
 * arch/x86/include/asm/pvclock.h aligns struct pvclock_vsyscall_time_info
 * to.
 */
#ifndef __LINUX_CACHE_H
#define __LINUX_CACHE_H

#include <asm/cache.h>

#ifndef SMP_CACHE_BYTES
#define SMP_CACHE_BYTES L1_CACHE_BYTES
#endif

#endif /* __LINUX_CACHE_H */
