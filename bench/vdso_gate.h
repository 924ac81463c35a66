/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How this process's kernel enters from a 32-bit vDSO's gate: its
 * __kernel_vsyscall (AT_SYSINFO), patched at the kernel's boot, makes
 * sysenter (Intel), syscall (AMD) or int $0x80, read off its code
 * (impls/image/gate32.c). The results' vdso.gate says it, and an imported
 * vdso32 image's fallbacks enter the same way (impls/image/loader.c).
 */
#ifndef VDSOBENCH_VDSO_GATE_H
#define VDSOBENCH_VDSO_GATE_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * "sysenter", "syscall", "int $0x80", or "none: ..." (no AT_SYSINFO: a
 * kernel without a 32-bit vDSO, qemu-user) in an i386 process; NULL in
 * a 64-bit one, which has no gate
 */
const char *vdso_gate_of_process(void);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_VDSO_GATE_H */
