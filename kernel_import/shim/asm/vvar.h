/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands for arch/x86/include/asm/vvar.h (v4.x..v6.14): where the vDSO
 * finds the data page the kernel maps beside it. Upstream, VVAR(_vdso_data)
 * is vvar__vdso_data, a hidden symbol the vDSO's linker script places in
 * the vvar page (at offset 128), and TIMENS(_vdso_data) the same in the
 * page after it (the time namespace page); DEFINE_VVAR() is the kernel's
 * own copy, in a section the kernel maps there.
 *
 * Here the vvar area is the variant's two page-aligned pages
 * (KIMPORT_SYM(vvar_area), defined by kernel_import/glue/writer.c): [0] is
 * what the task sees as its vvar page, [1] the timens slot, each mapped
 * from one memfd, and a time-namespaced task gets them swapped, as the
 * kernel swaps the VVAR and TIMENS mappings. The data sits at offset 0 of
 * its page rather than 128: both are line-aligned, so the cache lines are
 * the kernel's (the project's convention for every layout). Loads stay
 * hidden-visibility and PC-relative, as upstream's are.
 *
 * The kernel's copy (DEFINE_VVAR in v6.1's asm/vdso/vsyscall.h) is the
 * same pages seen through the kernel's own mapping of the memfd:
 * _vdso_data is that array (kimport/prefix.h), so DEFINE_VVAR() declares
 * it and writer.c defines it.
 */
#ifndef _ASM_X86_VVAR_H
#define _ASM_X86_VVAR_H

#include <vdso/datapage.h>

#define KIMPORT_PAGE_BYTES (1UL << CONFIG_PAGE_SHIFT)

union kimport_vvar_page {
	struct vdso_data data[CS_BASES];
	u8 page[KIMPORT_PAGE_BYTES];
};

struct kimport_vvar {
	union kimport_vvar_page page[2];
};

extern struct kimport_vvar KIMPORT_SYM(vvar_area) __attribute__((visibility("hidden")));

#define KIMPORT_VVAR__vdso_data (KIMPORT_SYM(vvar_area).page[0].data)
#define KIMPORT_TIMENS__vdso_data (KIMPORT_SYM(vvar_area).page[1].data)
/* only _vdso_data is mapped: any other name fails to compile */
#define VVAR(name) KIMPORT_VVAR_##name
#define TIMENS(name) KIMPORT_TIMENS_##name

#define DECLARE_VVAR(offset, type, name)
#define DECLARE_VVAR_SINGLE(offset, type, name)
#define DEFINE_VVAR(type, name) extern type name[CS_BASES]
#define DEFINE_VVAR_SINGLE(type, name) extern type name

#endif /* _ASM_X86_VVAR_H */
