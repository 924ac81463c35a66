/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for arch/x86/include/asm/unistd.h: the system call numbers,
 * which are the userspace ABI, so the system's own uapi header gives
 * them. The tree's fallbacks that use them (an inline `syscall') are
 * compiled but never called: kernel_import/glue/reader.c puts its own,
 * which enter the simulated kernel as every layout's fallbacks do
 * (impls/common/variant_prelude.h), in their place.
 */
/* not upstream's guard: the system header included below has that one */
#ifndef KIMPORT_SHIM_ASM_UNISTD_H
#define KIMPORT_SHIM_ASM_UNISTD_H

#include_next <asm/unistd.h>

#endif /* KIMPORT_SHIM_ASM_UNISTD_H */
