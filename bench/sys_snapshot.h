/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The running kernel's own vDSO under valgrind, which hides it (no
 * AT_SYSINFO_EHDR for the guest): a native process copies its [vdso] image
 * (with the alternatives the kernel applied at boot: this CPU's counter
 * read) and the first page of its [vvar] (the time data, v6.15 on:
 * lib/vdso/datastore.c), and the sim driver maps both again at the same
 * distance from each other, so the image's RIP-relative loads of the data
 * find it.
 *
 * The copy of the data page is frozen: its cycle_last would fall further
 * behind the counter with every second, and its nanoseconds would carry
 * into more rounds of __iter_div_u64_rem(). So the loaded copy is set to
 * the counter now and to whole seconds (cycle_last and every base's nsec,
 * in both clocksource entries), which makes every call take the same path
 * for the length of a run, as the fake clocksource does for the variants.
 * That needs the data page's struct: v6.15's struct vdso_clock (follows
 * include/vdso/datapage.h, v6.15-v6.18) with the overflow protection x86
 * configures, checked for plausibility before it is touched; a page that
 * does not fit (an older kernel, a clocksource other than the TSC, such as
 * kvm-clock's pvclock page, which the copy does not carry) is refused with
 * the reason.
 *
 * Handles never fail to be created: 0 or -1 with errno, and
 * sys_snapshot_error() says why in words.
 */
#ifndef VDSOBENCH_SYS_SNAPSHOT_H
#define VDSOBENCH_SYS_SNAPSHOT_H

#include <stddef.h>

/* the largest [vdso] and distance from [vvar] the format takes */
#define SYS_SNAPSHOT_MAX_IMAGE (64UL << 10)

/*
 * natively: the image and the data page to path (created, 0600); in a
 * time namespace the kernel's own data page, and sys_snapshot_note() says
 * so (else it is "")
 */
int sys_snapshot_take(const char *path);
const char *sys_snapshot_note(void);

/*
 * Hazard: the file's image is code this process runs. `vdsobench sim` only
 * loads the file it had sys_snapshot_take() write, O_EXCL and 0600, in its
 * own private temporary directory; never load one from elsewhere.
 *
 * Under valgrind (or anywhere): map path's snapshot, set its data page
 * to the counter now, and point bench_vdso_clock_gettime and its
 * siblings at the image's __vdso_* functions. -1 with errno EINVAL
 * (a malformed file or a data page refused), ENOENT, ENOMEM.
 */
int sys_snapshot_load(const char *path);

/* the loaded copy's data page, for the driver's output */
const void *sys_snapshot_vvar(void);

const char *sys_snapshot_error(void);

#endif /* VDSOBENCH_SYS_SNAPSHOT_H */
