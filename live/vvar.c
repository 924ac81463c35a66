// SPDX-License-Identifier: GPL-2.0
/* The running kernel's [vvar] pages, read safely: see vvar.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "live/vvar.h"

static __thread char vvar_err[256];
static __thread sigjmp_buf probe_env;
static __thread volatile sig_atomic_t probing;

const char *vvar_error(void)
{
	return vvar_err;
}

static int fail(int err, const char *fmt, const char *arg)
{
	snprintf(vvar_err, sizeof(vvar_err), fmt, arg);
	errno = err;
	return -1;
}

int vvar_find(const char *name, struct vvar_area *a)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int found = 0;

	memset(a, 0, sizeof(*a));
	if (!f)
		return fail(errno, "/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		uintptr_t start, end;
		char *nl = strchr(line, '\n'), *last;

		if (nl)
			*nl = '\0';
		last = strrchr(line, ' ');
		if (!last || strcmp(last + 1, name) ||
		    sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &start, &end) != 2)
			continue;
		a->start = start;
		a->end = end;
		found = 1;
		break;
	}
	fclose(f);
	if (!found)
		return fail(ENOENT, "no %s mapping in /proc/self/maps", name);
	if ((a->end - a->start) / (uintptr_t)sysconf(_SC_PAGESIZE) >
	    VVAR_MAX_PAGES)
		return fail(E2BIG, "%s has more pages than this tool reads",
			    name);
	a->nr_pages = (a->end - a->start) / (uintptr_t)sysconf(_SC_PAGESIZE);
	return 0;
}

static void on_fault(int sig)
{
	if (probing)
		siglongjmp(probe_env, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* run touch(addr, len, out) with SIGBUS/SIGSEGV turned into a return */
static int guarded(void (*touch)(uintptr_t, size_t, void *), uintptr_t addr,
		   size_t len, void *out)
{
	struct sigaction sa = {.sa_handler = on_fault}, old_bus, old_segv;
	int sig;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	sig = sigsetjmp(probe_env, 1);
	if (!sig) {
		probing = 1;
		touch(addr, len, out);
	}
	probing = 0;
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return sig;
}

static void touch_first_byte(uintptr_t addr, size_t len, void *out)
{
	(void)len;
	*(volatile uint8_t *)out = *(const volatile uint8_t *)addr;
}

static void copy_bytes(uintptr_t addr, size_t len, void *out)
{
	const volatile uint8_t *src = (const volatile uint8_t *)addr;
	uint8_t *dst = out;

	for (size_t i = 0; i < len; i++)
		dst[i] = src[i];
}

int vvar_probe_range(uintptr_t start, size_t len, struct vvar_page *pages,
		     unsigned int max)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t byte;

	for (unsigned int i = 0; i < max && i * page < len; i++) {
		int sig = guarded(touch_first_byte, start + i * page, 1, &byte);

		pages[i] = (struct vvar_page){.readable = !sig, .signal = sig};
	}
	return 0;
}

int vvar_probe(struct vvar_area *a)
{
	return vvar_probe_range(a->start, a->end - a->start, a->pages,
				a->nr_pages);
}

int vvar_snapshot(uintptr_t addr, size_t len, void *out, unsigned int tries)
{
	uint8_t again[4096];

	if (len > sizeof(again))
		return fail(EINVAL, "%s", "a snapshot is at most one page");
	for (unsigned int i = 0; i < tries; i++) {
		if (guarded(copy_bytes, addr, len, out) ||
		    guarded(copy_bytes, addr, len, again))
			return fail(EFAULT, "%s",
				    "touching the page raised a signal");
		if (!memcmp(out, again, len))
			return 0;
	}
	return fail(EAGAIN, "%s",
		    "the page changed during every copy (the kernel kept "
		    "updating it)");
}
