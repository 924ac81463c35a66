/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for include/linux/math64.h, whose part the vDSO and its update path
 * use is the tree's own include/vdso/math64.h (__iter_div_u64_rem(),
 * mul_u64_u32_add_u64_shr()), which it includes the same way.
 */
#ifndef _LINUX_MATH64_H
#define _LINUX_MATH64_H

#include <linux/types.h>
#include <vdso/math64.h>

#endif /* _LINUX_MATH64_H */
