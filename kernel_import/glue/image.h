/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The image half of an imported variant kernel:NAME+COUNTER+image
 * (variant.c with KIMPORT_IMAGE): the tree's own vdso64.so, embedded as
 * include/generated/kimport_image.h (scripts/vdsobench_cli/kimport/vdso_image.py),
 * mapped by impls/image/loader.c into a static page-aligned area, so its
 * entry points have addresses the linker knows and the variant table
 * calls them directly, as it calls every layout's.
 *
 * The vvar area is where the image's symbols put it (impls/image/check.c):
 * v6.1..v6.14's vdso-layout.lds.S has vvar, pvclock, hvclock and timens
 * pages before the text, the data at offset 128 of the vvar page
 * (asm/vvar.h); from v6.15 the generic data store's vdso_u_time_data
 * page holds the data at offset 0 and the time namespace's page follows
 * it (then the random generator's and the arch's pages). The data and
 * timens pages are the two pages of variant.c's memfd, which the tree's
 * update_vsyscall() writes; a task in a time namespace gets them
 * swapped, as the kernel's vvar fault handler serves them. The other
 * pages stay zeros: the clocksource is the TSC.
 *
 * Built for i386 (an x86-64 import's i386 +image variants) the image is the
 * tree's vdso32.so (include/generated/kimport_image32.h), the one an
 * x86-64 kernel maps for an i386 task, mapped by the i386 loader; its entry
 * points take the time32 types of the i386 variant contract (the C
 * library's struct timespec of 32-bit time_t), as its own do.
 */
#ifndef KIMPORT_GLUE_IMAGE_H
#define KIMPORT_GLUE_IMAGE_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "impls/image/loader.h"
#include "impls/kernel/fake_counter.h"

#define KIMAGE_VVAR_LEN (KIMPORT_IMAGE_VVAR_PAGES * PAGE_SIZE)
#define KIMAGE_MAP_LEN                                                       \
	(KIMAGE_VVAR_LEN + KIMPORT_IMAGE_SPAN_PAGES * PAGE_SIZE + PAGE_SIZE)

/* where the image is mapped: the linker's address, the loader's MAP_FIXED */
__attribute__((used)) u8 VDSO_SYM(image_area)[KIMAGE_MAP_LEN] __aligned(PAGE_SIZE);
#define kimage_area VDSO_SYM(image_area)
static struct vdso_loaded kimage;

/*
 * The variant's entry points VDSO_SYM(clock_gettime) ... are the image's
 * own functions: symbols at their addresses in the area, so the harness's
 * loops, which call a variant's entry points by name, call the image's
 * code directly, as a program calls its vDSO's. One the image does not
 * export is a function returning -ENOSYS (the kernel's vDSO of before
 * v5.3 had no clock_getres).
 */
#define KIMAGE_ENTRY(name, off)                                              \
	asm(".globl " __stringify(VDSO_SYM(name)) "\n\t"                       \
	    ".type " __stringify(VDSO_SYM(name)) ", @function\n\t"              \
	    ".set " __stringify(VDSO_SYM(name)) ", " __stringify(               \
		    VDSO_SYM(image_area)) " + " __stringify(KIMAGE_VVAR_LEN_BYTES) \
	    " + " __stringify(off))
#define KIMAGE_VVAR_LEN_BYTES (KIMPORT_IMAGE_VVAR_PAGES * 4096)

_Static_assert(KIMPORT_IMAGE_CLOCK_GETTIME >= 0, "the image has __vdso_clock_gettime");
_Static_assert(KIMPORT_IMAGE_GETTIMEOFDAY >= 0 && KIMPORT_IMAGE_TIME >= 0,
	       "the image has __vdso_gettimeofday and __vdso_time");
KIMAGE_ENTRY(clock_gettime, KIMPORT_IMAGE_CLOCK_GETTIME);
KIMAGE_ENTRY(gettimeofday, KIMPORT_IMAGE_GETTIMEOFDAY);
KIMAGE_ENTRY(time, KIMPORT_IMAGE_TIME);
#if KIMPORT_IMAGE_CLOCK_GETRES >= 0
KIMAGE_ENTRY(clock_getres, KIMPORT_IMAGE_CLOCK_GETRES);
#else
VDSO_ENTRY int VDSO_SYM(clock_getres)(clockid_t clock, struct timespec *res)
{
	(void)clock;
	(void)res;
	return -ENOSYS;
}
#endif

/* KIMPORT_IMAGE_COUNTER: the variant's counter, from kernel_import/imports.bzl */

static int kimage_map(void)
{
	struct vdso_image_opts o = {
		.counter = KIMPORT_IMAGE_COUNTER,
		.fake_counter = &vdso_fake_cycles,
		.vvar_start = KIMPORT_IMAGE_VVAR_START,
		.vvar_pages = KIMPORT_IMAGE_VVAR_PAGES,
		.at = kimage_area,
		.at_len = sizeof(kimage_area),
	};
	char why[160];

	if (kimage.map)
		return 0;
	if (vdso_image_map(&kimage, kimport_image_bytes, sizeof(kimport_image_bytes), &o, why,
			   sizeof(why))) {
		fprintf(stderr, "vdsobench: %s: its %s: %s\n", KIMPORT_SOURCE,
			sizeof(void *) == 4 ? "vdso32.so" : "vdso64.so", why);
		return -1;
	}
	return 0;
}

/* the reader's vvar and timens slots from the memfd's pages 0 and 1 */
static int kimage_map_vvar(const struct vvar_memfd *m, bool timens_task)
{
	static const int slot[2] = { KIMPORT_IMAGE_DATA_PAGE, KIMPORT_IMAGE_TIMENS_PAGE };

	for (int page = 0; page < 2; page++) {
		int s = slot[timens_task ? page ^ 1 : page];
		void *p = mmap(kimage_area + (size_t)s * PAGE_SIZE, PAGE_SIZE, PROT_READ,
			       MAP_SHARED | MAP_FIXED, m->fd, (off_t)page * PAGE_SIZE);

		if (p == MAP_FAILED)
			return -1;
	}
	return 0;
}

/* an image stored before its paravirtual pages were read: none known */
#ifndef KIMPORT_IMAGE_PVCLOCK_PAGE
#define KIMPORT_IMAGE_PVCLOCK_PAGE (-1)
#endif
#ifndef KIMPORT_IMAGE_HVCLOCK_PAGE
#define KIMPORT_IMAGE_HVCLOCK_PAGE (-1)
#endif

/* page slot of the area: the simulated host's page in memfd fd, as a guest maps the host's */
static __maybe_unused int kimage_map_host_page(int slot, int fd)
{
	if (fd < 0)
		return -1;
	return mmap(kimage_area + (size_t)slot * PAGE_SIZE, PAGE_SIZE, PROT_READ,
		    MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ? -1 : 0;
}

/* once: the image, then the memfd (its slots in a scratch area), then the slots */
static int kimage_init(struct vvar_memfd *m)
{
	static u8 scratch[2 * PAGE_SIZE] __aligned(PAGE_SIZE);

	if (m->k)
		return 0;
	if (kimage_map() || vvar_memfd_init(m, "vdsobench-kernel-image", scratch, 2))
		return -1;
#if KIMPORT_IMAGE_PVCLOCK_PAGE >= 0
	if (kimage_map_host_page(KIMPORT_IMAGE_PVCLOCK_PAGE, sim_pvclock_fd()))
		return -1;
#endif
#if KIMPORT_IMAGE_HVCLOCK_PAGE >= 0
	if (kimage_map_host_page(KIMPORT_IMAGE_HVCLOCK_PAGE, sim_hvclock_fd()))
		return -1;
#endif
	return kimage_map_vvar(m, false);
}

/*
 * The image's fallbacks are its own syscall instructions, which would ask
 * the real kernel. For the checkers only (trap_fallbacks, never called by
 * a benchmark): a seccomp filter traps clock_gettime, clock_getres,
 * gettimeofday and time made from the image's pages (SECCOMP_RET_TRAP),
 * and the SIGSYS handler answers from the simulated kernel, as every
 * layout's fallbacks do (impls/common/variant_prelude.h). Another image
 * variant's trap is chained to.
 */
static struct sigaction kimage_prev_sigsys;

/*
 * A time system call the image made, answered from the simulated kernel
 * (i386: the time32 calls vdso32's fallbacks make, __NR_clock_gettime and
 * the others, on the C library's 32-bit struct timespec); -ENOSYS else.
 */
static long kimage_answer(long nr, long a1, long a2)
{
	switch (nr) {
	case SYS_clock_gettime:
		return clock_gettime_fallback((clockid_t)a1, (struct timespec *)a2);
	case SYS_clock_getres:
		return clock_getres_fallback((clockid_t)a1, (struct timespec *)a2);
	case SYS_gettimeofday:
		return gettimeofday_fallback((struct timeval *)a1, (struct timezone *)a2);
	case SYS_time: {
		struct timeval tv;
		long rc = gettimeofday_fallback(&tv, NULL);

		if (rc)
			return rc;
		if (a1)
			*(time_t *)a1 = tv.tv_sec;
		return tv.tv_sec;
	}
	default:
		return -ENOSYS;
	}
}

#ifdef __i386__
#define KIMAGE_AUDIT_ARCH AUDIT_ARCH_I386
#define KIMAGE_REG_RET REG_EAX
#define KIMAGE_REG_A1 REG_EBX
#define KIMAGE_REG_A2 REG_ECX
#else
#define KIMAGE_AUDIT_ARCH AUDIT_ARCH_X86_64
#define KIMAGE_REG_RET REG_RAX
#define KIMAGE_REG_A1 REG_RDI
#define KIMAGE_REG_A2 REG_RSI
#endif

static void kimage_sigsys(int sig, siginfo_t *info, void *uctx)
{
	ucontext_t *uc = uctx;
	greg_t *r = uc->uc_mcontext.gregs;
	const u8 *at = info->si_call_addr;

	if (at < kimage_area || at >= kimage_area + sizeof(kimage_area)) {
		if (kimage_prev_sigsys.sa_flags & SA_SIGINFO)
			kimage_prev_sigsys.sa_sigaction(sig, info, uctx);
		return;
	}
	r[KIMAGE_REG_RET] = kimage_answer(info->si_syscall, r[KIMAGE_REG_A1], r[KIMAGE_REG_A2]);
}

#ifndef KIMPORT_IMAGE_KERNEL_VSYSCALL
#define KIMPORT_IMAGE_KERNEL_VSYSCALL (-1)
#endif

#if defined(__i386__) && KIMPORT_IMAGE_KERNEL_VSYSCALL >= 0
/*
 * Where seccomp is refused (qemu-user refuses every filter, to keep the
 * system calls it needs), the checkers' trap is at the image's system call
 * gate instead: __kernel_vsyscall, which every vdso32 fallback calls
 * (asm/vdso/gettimeofday.h: eax the number, ebx, ecx the arguments), begins
 * with a jump to kimage_gate_entry, which answers the time calls from the
 * simulated kernel and makes the others. The gate's first 5 bytes are the
 * only bytes of the image rewritten but what the kernel patches itself at
 * boot, which the loader applies as it does (the counter slots; 7.x's
 * SYSFAST32 calls, impls/image/sysfast32.c): its time code is the kernel's.
 */
#define kimage_gate VDSO_SYM(image_gate)
#define kimage_gate_entry VDSO_SYM(image_gate_entry)
long kimage_gate(long nr, long a1, long a2, long a3);
__attribute__((used)) long kimage_gate(long nr, long a1, long a2, long a3)
{
	long rc = kimage_answer(nr, a1, a2);

	if (rc != -ENOSYS)
		return rc;
	rc = syscall(nr, a1, a2, a3);
	return rc == -1 ? -errno : rc;
}

/* the gate's contract: eax the result, every other register as it was */
void kimage_gate_entry(void);
asm(".pushsection .text\n"
    ".type " __stringify(kimage_gate_entry) ", @function\n"
    __stringify(kimage_gate_entry) ":\n\t"
    "push %ebp\n\tmov %esp, %ebp\n\tpush %ecx\n\tpush %edx\n\t"
    "and $-16, %esp\n\t"
    "push %edx\n\tpush %ecx\n\tpush %ebx\n\tpush %eax\n\t"
    "call " __stringify(kimage_gate) "\n\t"
    "lea -8(%ebp), %esp\n\tpop %edx\n\tpop %ecx\n\tpop %ebp\n\tret\n"
    ".size " __stringify(kimage_gate_entry) ", . - " __stringify(kimage_gate_entry) "\n"
    ".popsection");

static int kimage_hook_gate(void)
{
	u8 *gate = kimage_area + KIMAGE_VVAR_LEN + KIMPORT_IMAGE_KERNEL_VSYSCALL;
	uintptr_t page = (uintptr_t)gate & ~(uintptr_t)(PAGE_SIZE - 1);
	s32 rel = (s32)((uintptr_t)kimage_gate_entry - (uintptr_t)(gate + 5));

	if (kimage_map() || mprotect((void *)page, 2 * PAGE_SIZE, PROT_READ | PROT_WRITE))
		return -1;
	gate[0] = 0xe9; /* jmp rel32 */
	memcpy(gate + 1, &rel, 4);
	if (mprotect((void *)page, 2 * PAGE_SIZE, PROT_READ | PROT_EXEC))
		return -1;
	fprintf(stderr, "vdsobench: %s: seccomp is refused here (qemu-user?): the image's "
		"fallbacks are trapped at its __kernel_vsyscall instead (docs/image.md)\n",
		KIMPORT_SOURCE);
	return 0;
}
#else
static int kimage_hook_gate(void)
{
	return -1;
}
#endif

/*
 * The filter knows a fallback by its address: an int $0x80 in the image.
 * A vdso32 gate's fast entry would come back through the running kernel's
 * landing pad, outside the area (impls/image/gate32.c), so a checker's
 * image enters by int $0x80; a benchmark's keeps the fast one.
 */
static int kimage_gate_int80(void)
{
	char why[160];

	if (kimage_map())
		return -1;
	if (kimage.gate == VDSO_IMAGE_GATE_INT80)
		return 0;
	if (vdso_image_set_gate(&kimage, kimport_image_bytes, sizeof(kimport_image_bytes),
				VDSO_IMAGE_GATE_INT80, why, sizeof(why))) {
		fprintf(stderr, "vdsobench: %s: its gate: %s\n", KIMPORT_SOURCE, why);
		return -1;
	}
	return 0;
}

static int kimage_trap_fallbacks(void)
{
	uintptr_t lo = (uintptr_t)kimage_area, hi = lo + sizeof(kimage_area);
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KIMAGE_AUDIT_ARCH, 0, 12),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_getres, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_gettimeofday, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_time, 0, 7),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, instruction_pointer) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (u32)((u64)lo >> 32), 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, instruction_pointer)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (u32)lo, 0, 3),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (u32)hi, 2, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct sigaction sa = { .sa_sigaction = kimage_sigsys, .sa_flags = SA_SIGINFO };
	static bool trapped;

	if (trapped)
		return 0;
	if (kimage_gate_int80())
		return -1;
	if (((u64)lo >> 32) != ((u64)(hi - 1) >> 32)) {
		errno = ERANGE; /* the filter compares the low words only */
		return -1;
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, &kimage_prev_sigsys) ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) && kimage_hook_gate())
		return -1;
	trapped = true;
	return 0;
}

#endif /* KIMPORT_GLUE_IMAGE_H */
