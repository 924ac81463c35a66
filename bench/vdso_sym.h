/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own vDSO functions (__vdso_clock_gettime and friends), found
 * by parsing the vDSO's ELF image the way the kernel's reference parser does
 * (tools/testing/selftests/vDSO/parse_vdso.c), so that the harness can time
 * `sys/vdso` without going through libc's wrapper.
 *
 * Unlike parse_vdso.c, every read is bounded by the image length: a corrupt
 * image is an error (-1, EINVAL, a reason in vdso_image_error()), not a
 * crash. The process's own ELF class (ELF64, or a 32-bit process's ELF32:
 * i386's vdso32) and the host's byte order only.
 */
#ifndef VDSOBENCH_VDSO_SYM_H
#define VDSOBENCH_VDSO_SYM_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vdso_image;

/*
 * The running process's vDSO: -1 with errno ENOENT when the kernel maps none
 * (AT_SYSINFO_EHDR is 0), EINVAL when it is not of this process's machine.
 * The image is bounded by its "[vdso]" line in /proc/self/maps, or by its
 * ELF headers when /proc is not there.
 */
int vdso_image_open(struct vdso_image **img);

/*
 * Any in-memory image of len bytes (tests; len bounds every access); -1 with
 * errno EINVAL and a reason for a bad image, ENOMEM if out of memory.
 */
int vdso_image_open_mem(struct vdso_image **img, const void *base, size_t len);

void vdso_image_close(struct vdso_image *img);

/*
 * The image's e_machine (EM_X86_64, EM_386, EM_AARCH64 ...), -1 for no
 * image. vdso_image_open_mem() reads an image of any machine of this
 * process's class (tests read other architectures' images): its caller
 * checks this where it matters.
 */
int vdso_image_machine(const struct vdso_image *img);
/* its e_machine is this process's own (vdso_image_open() refuses others) */
bool vdso_image_own_machine(const struct vdso_image *img);

/*
 * The address of a defined function symbol with this version (NULL: any
 * version); NULL with errno ENOENT if absent. An image without version
 * tables matches every version, as in parse_vdso.c.
 */
void *vdso_image_sym(const struct vdso_image *img, const char *name,
		     const char *version);

/* The bytes the image was opened with: the bound every lookup stays in. */
const void *vdso_image_base(const struct vdso_image *img);
size_t vdso_image_len(const struct vdso_image *img);

/*
 * Why the last open in this thread failed, one line (e.g. "AT_SYSINFO_EHDR
 * is 0: this kernel maps no vDSO"); "" if none failed.
 */
const char *vdso_image_error(void);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_VDSO_SYM_H */
