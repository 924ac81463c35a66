/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/spinlock.h, of which kernel/time/vsyscall.c
 * uses raw_spin_lock_irqsave() and raw_spin_unlock_irqrestore() on
 * timekeeper_lock, in vdso_update_begin()/vdso_update_end() only: the
 * entry points for architecture code that updates its own vDSO data,
 * which the simulated kernel never calls (it serialises its writers with
 * its own lock, as timekeeping.c holds timekeeper_lock around
 * update_vsyscall()). A test-and-set lock, so that the functions are
 * still what they say; there are no interrupts to disable in userspace.
 */
#ifndef _LINUX_SPINLOCK_H
#define _LINUX_SPINLOCK_H

#include <linux/compiler.h>
#include <linux/types.h>

typedef struct {
	int locked;
} raw_spinlock_t;

#define raw_spin_lock_irqsave(lock, flags)                                  \
	do {                                                                \
		(flags) = 0;                                                \
		while (__atomic_exchange_n(&(lock)->locked, 1,              \
					   __ATOMIC_ACQUIRE))               \
			;                                                   \
	} while (0)
#define raw_spin_unlock_irqrestore(lock, flags)                             \
	do {                                                                \
		(void)(flags);                                              \
		__atomic_store_n(&(lock)->locked, 0, __ATOMIC_RELEASE);     \
	} while (0)

#endif /* _LINUX_SPINLOCK_H */
