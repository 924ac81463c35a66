/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ELF class of the process's own vDSO, which is its own class: a 64-bit
 * process's is ELF64, a 32-bit one's (i386's vdso32) ELF32. ELF_T(Sym) is
 * Elf64_Sym or Elf32_Sym; ELF_BLOOM, a DT_GNU_HASH bloom word, is as wide as
 * an address (64 or 32 bits). ELF_HOST_MACHINE is its e_machine.
 */
#ifndef VDSOBENCH_ELF_CLASS_H
#define VDSOBENCH_ELF_CLASS_H

#include <elf.h>

#if __SIZEOF_POINTER__ == 8
#define ELF_T(t) Elf64_##t
#define ELF_CLASS ELFCLASS64
#define ELF_CLASS_NAME "ELFCLASS64"
#define ELF_OTHER_CLASS ELFCLASS32
#define ELF_OTHER_CLASS_NAME "ELFCLASS32"
#define ELF_ST_BIND_OF(i) ELF64_ST_BIND(i)
#define ELF_ST_TYPE_OF(i) ELF64_ST_TYPE(i)
#else
#define ELF_T(t) Elf32_##t
#define ELF_CLASS ELFCLASS32
#define ELF_CLASS_NAME "ELFCLASS32"
#define ELF_OTHER_CLASS ELFCLASS64
#define ELF_OTHER_CLASS_NAME "ELFCLASS64"
#define ELF_ST_BIND_OF(i) ELF32_ST_BIND(i)
#define ELF_ST_TYPE_OF(i) ELF32_ST_TYPE(i)
#endif
#define ELF_BLOOM ELF_T(Addr)

/* the e_machine of the process's own code (0: not one the project runs on) */
#if defined(__x86_64__)
#define ELF_HOST_MACHINE EM_X86_64
#elif defined(__i386__)
#define ELF_HOST_MACHINE EM_386
#elif defined(__aarch64__)
#define ELF_HOST_MACHINE EM_AARCH64
#elif defined(__arm__)
#define ELF_HOST_MACHINE EM_ARM
#else
#define ELF_HOST_MACHINE 0
#endif

#endif /* VDSOBENCH_ELF_CLASS_H */
