/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What reader.c and writer.c (the tree's half, compiled against the shim)
 * share, after the tree's vdso/datapage.h: the userspace structures the
 * variant's entry points take, checked against the kernel's, and the
 * vvar area of the v6.15+ data store.
 */
#ifndef KIMPORT_TREE_H
#define KIMPORT_TREE_H

#include <linux/types.h>

/*
 * The userspace structures of impls/common/variant_prelude.h's
 * declarations, as glibc defines them on x86-64, arm64, 32-bit arm and
 * i386 (the kernel's uapi/linux/time.h leaves them to userspace under
 * __KERNEL__): the same tags and members, so the entry points have the
 * same types in both halves.
 */
struct timespec {
	long tv_sec;
	long tv_nsec;
};

struct timeval {
	long tv_sec;
	long tv_usec;
};

#define KIMPORT_SAME(a, b, f)                                                \
	(sizeof(struct a) == sizeof(struct b) &&                            \
	 __builtin_offsetof(struct a, f) == __builtin_offsetof(struct b, f))
#if defined(ENABLE_COMPAT_VDSO) || defined(__i386__)
/*
 * 32-bit arm (arm64's compat vDSO) and i386: the C library's time_t is 32
 * bits. The tree's own old_timespec32: v7.x's vdso/datapage.h no longer
 * brings it to the update path (writer.c), v6.x's did.
 */
#include <vdso/time32.h>
_Static_assert(KIMPORT_SAME(timespec, old_timespec32, tv_sec) &&
		       KIMPORT_SAME(timespec, old_timespec32, tv_nsec),
	       "struct timespec is the kernel's old_timespec32");
#else
_Static_assert(KIMPORT_SAME(timespec, __kernel_timespec, tv_sec) &&
		       KIMPORT_SAME(timespec, __kernel_timespec, tv_nsec),
	       "struct timespec is the kernel's __kernel_timespec");
#endif
_Static_assert(KIMPORT_SAME(timeval, __kernel_old_timeval, tv_sec) &&
		       KIMPORT_SAME(timeval, __kernel_old_timeval, tv_usec),
	       "struct timeval is the kernel's __kernel_old_timeval");
_Static_assert(sizeof(__kernel_old_time_t) == sizeof(long) &&
		       sizeof(clockid_t) == sizeof(int),
	       "time_t and clockid_t are the kernel's");

/* the project's struct vdso_field (impls/common/variant.h), same members */
struct vdso_field {
	const char *name;
	u32 offset;
	u32 size;
};

_Static_assert(sizeof(struct vdso_field) == sizeof(void *) + 8 &&
		       __builtin_offsetof(struct vdso_field, offset) == sizeof(void *) &&
		       __builtin_offsetof(struct vdso_field, size) == sizeof(void *) + 4,
	       "struct vdso_field as impls/common/variant.h has it");

#if !defined(KIMPORT_TIME_DATA) && defined(CONFIG_ARM64)
/*
 * arm64 up to v6.14: the vvar area as its vDSO sees it, the data page
 * (_vdso_data, struct vdso_data[CS_BASES] at offset 0) and the time
 * namespace page (_timens_data); on x86 the shim's asm/vvar.h has it.
 */
union kimport_vvar_page {
	struct vdso_data data[CS_BASES];
	u8 page[KIMPORT_PAGE_SIZE];
};

struct kimport_vvar {
	union kimport_vvar_page page[KIMPORT_VVAR_PAGES];
};
#endif

#ifdef KIMPORT_TIME_DATA
/*
 * v6.15+: the vvar area (kernel_import/glue/kimport.h) as the data store
 * lays it out: the time data page, then the time namespace page, which
 * lib/vdso/gettimeofday.c finds at vd + PAGE_SIZE. (Up to v6.14 the shim's
 * asm/vvar.h defines it, around struct vdso_data.)
 */
union kimport_vvar_page {
	struct vdso_time_data data;
	u8 page[KIMPORT_PAGE_SIZE];
};

struct kimport_vvar {
	union kimport_vvar_page page[KIMPORT_VVAR_PAGES];
};
#endif

#endif /* KIMPORT_TREE_H */
