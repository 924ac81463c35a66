// SPDX-License-Identifier: GPL-2.0
/*
 * impls/image/loader.h: map a vdso64.so as the x86-64 kernel does
 * (follows v6.12: arch/x86/entry/vdso/vma.c, vdso-layout.lds.S; v6.1 is
 * the same for what is used here), or, built for i386, the vdso32.so it
 * maps for an i386 task (the same vma.c, vdso32's image). What the image says is read by
 * check.c and alternatives.c only: this file maps what they accepted.
 */
#define _GNU_SOURCE
#include "impls/image/loader.h"

#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#define fail vdso_image_fail

/*
 * The thunk the fake counter's slot calls, rdtsc's contract (only eax and
 * edx change; the vDSO is built with -mno-red-zone, and i386 has no red
 * zone): the counter is a thread-local variable of the executable (static
 * TLS: one offset from the thread pointer in every thread), loaded
 * fs-relative on x86-64, gs-relative on i386, as the project's fake
 * counter read (impls/counters/fake.h) loads it. A few instructions and
 * the call, where the layouts' fake read is one load.
 */
#ifdef __x86_64__
#define HOST_CLASS 64
static size_t write_thunk(uint8_t *t, int32_t tls_offset)
{
	static const uint8_t load[] = { 0x64, 0x48, 0x8b, 0x04, 0x25 }; /* mov rax, fs:[d32] */
	static const uint8_t rest[] = {
		0x48, 0x89, 0xc2,	/* mov rdx, rax */
		0x48, 0xc1, 0xea, 0x20, /* shr rdx, 32 */
		0x89, 0xc0,		/* mov eax, eax */
		0xc3,			/* ret */
	};
	size_t n = 0;

	memcpy(t, load, sizeof(load));
	n += sizeof(load);
	memcpy(t + n, &tls_offset, 4);
	n += 4;
	memcpy(t + n, rest, sizeof(rest));
	return n + sizeof(rest);
}

static intptr_t thread_pointer(void)
{
	return (intptr_t)__builtin_thread_pointer();
}
#else
#define HOST_CLASS 32
static size_t write_thunk(uint8_t *t, int32_t tls_offset)
{
	int32_t high = tls_offset + 4;

	t[0] = 0x65; /* mov eax, gs:[d32] */
	t[1] = 0xa1;
	memcpy(t + 2, &tls_offset, 4);
	t[6] = 0x65; /* mov edx, gs:[d32 + 4] */
	t[7] = 0x8b;
	t[8] = 0x15;
	memcpy(t + 9, &high, 4);
	t[13] = 0xc3; /* ret */
	return 14;
}

/* the TCB's self pointer, gs:0 (the i386 TLS ABI) */
static intptr_t thread_pointer(void)
{
	intptr_t tp;

	asm("movl %%gs:0, %0" : "=r"(tp));
	return tp;
}
#endif

/* the fake counter's offset from the thread pointer: -1 when it is no static TLS */
static int fake_offset(const struct vdso_image_opts *o, int32_t *off)
{
	intptr_t d;

	if (o->counter != VDSO_IMAGE_FAKE)
		return 0;
	d = (intptr_t)o->fake_counter - thread_pointer();
	if (!o->fake_counter || d != (int32_t)d)
		return -1;
	*off = (int32_t)d;
	return 0;
}

/*
 * VDSO_IMAGE_GATE_HERE: the fast entry of this process's own gate
 * (AT_SYSINFO, the running kernel's __kernel_vsyscall, patched at its
 * boot), whose landing pad a fast entry returns through (gate32.c)
 */
static enum vdso_image_gate resolve_gate(enum vdso_image_gate want, const char **why)
{
	const uint8_t *own;
	enum vdso_image_gate g;

	*why = NULL;
	if (want != VDSO_IMAGE_GATE_HERE)
		return want;
	if (HOST_CLASS == 64) {
		*why = "an x86-64 image has no gate";
		return VDSO_IMAGE_GATE_INT80;
	}
	own = (const uint8_t *)getauxval(AT_SYSINFO);
	if (!own) {
		*why = "this process has no AT_SYSINFO: no kernel gate here (qemu-user maps no vDSO)";
		return VDSO_IMAGE_GATE_INT80;
	}
	g = vdso_image_gate_at(own);
	if (g == VDSO_IMAGE_GATE_INT80)
		*why = "the running kernel's own __kernel_vsyscall makes int $0x80";
	return g;
}

static int protect_image(struct vdso_loaded *img, int prot, char *why, size_t n)
{
	if (mprotect(img->base, img->len + VDSO_IMAGE_PAGE, prot))
		return fail(why, n, "mprotect: %m");
	return 0;
}

int vdso_image_set_gate(struct vdso_loaded *img, const void *elf, size_t len,
			enum vdso_image_gate gate, char *why, size_t n)
{
	struct vdso_image_info info;
	const char *gate_why;

	if (!img->map)
		return fail(why, n, "the image is not mapped");
	if (img->counter == VDSO_IMAGE_KEEP)
		return fail(why, n, "a running kernel's copy: its gate is its own, as patched");
	if (vdso_image_check(&info, elf, len, VDSO_IMAGE_KEEP, img->vvar_start, img->vvar_pages,
			     why, n))
		return -1;
	gate = resolve_gate(gate, &gate_why);
	if (protect_image(img, PROT_READ | PROT_WRITE, why, n))
		return -1;
	vdso_image_patch_gate(&info, img->base, gate);
	img->gate = gate;
	img->gates = vdso_image_gates(&info, gate);
	img->gate_why = gate_why;
	return protect_image(img, PROT_READ | PROT_EXEC, why, n);
}

int vdso_image_map(struct vdso_loaded *img, const void *elf, size_t len,
		   const struct vdso_image_opts *o, char *why, size_t n)
{
	struct vdso_image_info info;
	int32_t tls = 0;
	size_t vvar_len;

	memset(img, 0, sizeof(*img));
	if (vdso_image_check(&info, elf, len, o->counter, o->vvar_start, o->vvar_pages, why, n))
		return -1;
	/* the check reads either class; the code runs only where it was built for */
	if (info.elf_class != HOST_CLASS)
		return fail(why, n, "it is an %s image (%s): this loader is %s's",
			    info.elf_class == 32 ? "i386" : "x86-64",
			    info.elf_class == 32 ? "a vdso32.so" : "a vdso64.so",
			    HOST_CLASS == 32 ? "i386" : "x86-64");
	if (fake_offset(o, &tls))
		return fail(why, n, "the fake counter is not a static thread-local variable");
	img->len = (info.span + VDSO_IMAGE_PAGE - 1) & ~(size_t)(VDSO_IMAGE_PAGE - 1);
	img->vvar_start = info.vvar_start;
	img->vvar_pages = info.vvar_pages;
	img->data_page = info.data_page;
	img->timens_page = info.timens_page;
	img->pvclock_page = info.pvclock_page;
	img->hvclock_page = info.hvclock_page;
	img->data_offset = info.data_offset;
	vvar_len = (size_t)img->vvar_pages * VDSO_IMAGE_PAGE;
	img->map_len = vvar_len + img->len + VDSO_IMAGE_PAGE;
	if (o->at && (o->at_len != img->map_len || (uintptr_t)o->at % VDSO_IMAGE_PAGE))
		return fail(why, n, "the image needs %zu bytes of mapping, the caller has %zu",
			    img->map_len, o->at_len);
	img->map = mmap(o->at, img->map_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | (o->at ? MAP_FIXED : 0), -1, 0);
	if (img->map == MAP_FAILED) {
		img->map = NULL;
		return fail(why, n, "mmap: %m");
	}
	img->fixed = !!o->at;
	img->vvar = img->map;
	img->base = img->map + vvar_len;
	memcpy(img->base, elf, info.span);
	vdso_image_patch(&info, img->base, o->counter, img->len);
	img->counter = o->counter;
	/* a running kernel's copy has its own gate already */
	img->gate = resolve_gate(o->counter == VDSO_IMAGE_KEEP ? VDSO_IMAGE_GATE_INT80 : o->gate,
				 &img->gate_why);
	if (o->counter == VDSO_IMAGE_KEEP)
		img->gate_why = "a running kernel's copy: its gate as it is";
	else
		vdso_image_patch_gate(&info, img->base, img->gate);
	img->gates = o->counter == VDSO_IMAGE_KEEP ? 0 : vdso_image_gates(&info, img->gate);
	img->alts = info.alts;
	img->slots = vdso_image_slots(&info, o->counter);
	img->syscalls = vdso_image_syscalls(&info, o->counter);
	for (int i = 0; i < VDSO_IMAGE_NR_SYMS; i++)
		img->sym[i] = info.sym[i] < 0 ? NULL : img->base + info.sym[i];
	if (o->counter == VDSO_IMAGE_FAKE)
		write_thunk(img->base + img->len, tls);
	if (mprotect(img->vvar, vvar_len, PROT_READ) ||
	    mprotect(img->base, img->len + VDSO_IMAGE_PAGE, PROT_READ | PROT_EXEC)) {
		fail(why, n, "mprotect: %m");
		vdso_image_unmap(img);
		return -1;
	}
	return 0;
}

void vdso_image_unmap(struct vdso_loaded *img)
{
	if (img->map && img->fixed)
		mmap(img->map, img->map_len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	else if (img->map)
		munmap(img->map, img->map_len);
	img->map = NULL;
}
