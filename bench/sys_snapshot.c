// SPDX-License-Identifier: GPL-2.0
/*
 * bench/sys_snapshot.h: the running kernel's vDSO, copied and mapped again
 * (data page: include/vdso/datapage.h, v6.15-v6.18).
 */
#define _GNU_SOURCE
#include "bench/sys_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/loops.h"
#include "bench/vdso_sym.h"
#include "live/vvar.h"

#define PAGE 4096UL
#define MAGIC "VDSOSNP1"

/* the file: this header, the data page, then the image */
struct snapshot_header {
	char magic[8];
	uint64_t vvar_len;	/* the data page: PAGE */
	uint64_t image_offset;	/* [vdso]'s start - [vvar]'s start */
	uint64_t image_len;
};

/*
 * include/vdso/datapage.h v6.15-v6.18, x86-64: struct vdso_clock with
 * CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT, clock_data[CS_BASES] first in
 * struct vdso_time_data (x86 has no arch_vdso_time_data).
 */
#define VDSO_BASES 12		/* CLOCK_TAI + 1 */
#define CS_BASES 2		/* CS_HRES_COARSE, CS_RAW */
#define VDSO_CLOCKMODE_TSC 1	/* arch/x86/include/asm/vdso/clocksource.h */
#define VDSO_CLOCKMODE_TIMENS INT32_MAX /* include/vdso/clocksource.h */

struct snap_vdso_clock {
	uint32_t seq;
	int32_t clock_mode;
	uint64_t cycle_last;
	uint64_t max_cycles;
	uint64_t mask;
	uint32_t mult;
	uint32_t shift;
	struct {
		uint64_t sec;
		uint64_t nsec;
	} basetime[VDSO_BASES];
};

static char err_text[256];
static char note_text[256];
static const void *loaded_vvar;
static struct vdso_image *loaded_img; /* the symbols' image, for the process */

const char *sys_snapshot_error(void)
{
	return err_text;
}

const char *sys_snapshot_note(void)
{
	return note_text;
}

const void *sys_snapshot_vvar(void)
{
	return loaded_vvar;
}

__attribute__((format(printf, 2, 3))) static int fail(int err,
						       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err_text, sizeof(err_text), fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * A time namespace's page (kernel/time/namespace.c): seq 1, which sends
 * the vDSO off its fast path, and clock_mode TIMENS in every base, the
 * offsets over basetime[].
 */
static bool is_timens(const struct snap_vdso_clock *vc)
{
	for (int i = 0; i < CS_BASES; i++)
		if (vc[i].seq != 1 || vc[i].clock_mode != VDSO_CLOCKMODE_TIMENS)
			return false;
	return true;
}

/*
 * [vvar]'s time data into page: in a time namespace the first page is the
 * namespace's and the kernel's own is the next (lib/vdso/datastore.c),
 * which is copied instead, saying so in the note.
 */
static int copy_time_data(const struct vvar_area *vvar, uint8_t *page)
{
	if (vvar_snapshot(vvar->start, PAGE, page, 100))
		return fail(errno, "[vvar]: %s", vvar_error());
	note_text[0] = '\0';
	if (!is_timens((const struct snap_vdso_clock *)page))
		return 0;
	if (vvar->nr_pages < 2 || !vvar->pages[1].readable ||
	    vvar_snapshot(vvar->start + PAGE, PAGE, page, 100) ||
	    is_timens((const struct snap_vdso_clock *)page))
		return fail(EINVAL, "this process is in a time namespace: "
				    "[vvar]'s first page is the namespace's "
				    "(clock_mode VDSO_CLOCKMODE_TIMENS, its "
				    "offsets), and the kernel's own time data "
				    "page after it cannot be read");
	snprintf(note_text, sizeof(note_text),
		 "this process is in a time namespace: the kernel's own "
		 "time data page was copied, not the namespace's (its "
		 "offsets), so the calls take the path outside a namespace");
	return 0;
}

int sys_snapshot_take(const char *path)
{
	static uint8_t page[PAGE];
	struct snapshot_header h = {.magic = MAGIC, .vvar_len = PAGE};
	struct vvar_area vvar, vdso;
	int fd;

#if !defined(__x86_64__)
	/* an i386 process's vdso32 is no x86-64 image for load() to map */
	(void)path;
	return fail(EINVAL, "the system's vDSO is copied on x86-64 only");
#endif
	if (vvar_find("[vvar]", &vvar) || vvar_find("[vdso]", &vdso))
		return fail(errno, "%s", vvar_error());
	if (vdso.start <= vvar.start ||
	    vdso.start - vvar.start > SYS_SNAPSHOT_MAX_IMAGE ||
	    vdso.end - vdso.start > SYS_SNAPSHOT_MAX_IMAGE)
		return fail(EINVAL,
			    "[vdso] at 0x%lx is not within 64 KiB after [vvar] "
			    "at 0x%lx: not the x86-64 layout this copies",
			    (unsigned long)vdso.start, (unsigned long)vvar.start);
	vvar_probe(&vvar);
	if (!vvar.pages[0].readable)
		return fail(EFAULT, "[vvar]'s first page (the time data) "
				    "cannot be read");
	if (copy_time_data(&vvar, page))
		return -1;
	h.image_offset = vdso.start - vvar.start;
	h.image_len = vdso.end - vdso.start;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return fail(errno, "%s: %s", path, strerror(errno));
	if (write_all(fd, &h, sizeof(h)) || write_all(fd, page, PAGE) ||
	    write_all(fd, (const void *)vdso.start, h.image_len)) {
		int e = errno;

		close(fd);
		unlink(path);
		return fail(e, "%s: %s", path, strerror(e));
	}
	if (close(fd))
		return fail(errno, "%s: %s", path, strerror(errno));
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = read(fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

/* the data page as v6.15's on the TSC, or why not */
static int check_clocks(const struct snap_vdso_clock *vc)
{
	if (is_timens(vc))
		return fail(EINVAL, "the data page is a time namespace's "
				    "(seq 1, clock_mode VDSO_CLOCKMODE_TIMENS: "
				    "its offsets), not the kernel's time data");
	for (int i = 0; i < CS_BASES; i++) {
		if (vc[i].seq & 1)
			return fail(EINVAL, "the data page was copied during "
					    "an update (seq %u)", vc[i].seq);
		if (vc[i].clock_mode != VDSO_CLOCKMODE_TSC)
			return fail(EINVAL,
				    "clock_data[%d].clock_mode is %d, not the "
				    "TSC's (1): the kernel reads another "
				    "clocksource (kvm-clock's pvclock page is "
				    "not copied), or its data page is not "
				    "v6.15's struct vdso_clock",
				    i, vc[i].clock_mode);
		if (!vc[i].mult || vc[i].shift >= 32 || vc[i].mask != ~0ULL ||
		    !vc[i].max_cycles)
			return fail(EINVAL,
				    "clock_data[%d] is not a TSC's conversion "
				    "(mult %u, shift %u, mask 0x%llx): not "
				    "v6.15's struct vdso_clock",
				    i, vc[i].mult, vc[i].shift,
				    (unsigned long long)vc[i].mask);
	}
	return 0;
}

static uint64_t counter_now(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}

int sys_snapshot_load(const char *path)
{
	struct snapshot_header h;
	struct snap_vdso_clock *vc;
	struct vdso_image *img;
	int (*sym_gettime)(clockid_t, struct timespec *);
	struct stat st;
	uint8_t *m;
	int fd;

#if !defined(__x86_64__)
	(void)path;
	return fail(EINVAL, "the system's vDSO is copied on x86-64 only");
#endif
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return fail(errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    read_all(fd, &h, sizeof(h))) {
		close(fd);
		return fail(EINVAL, "%s: not a snapshot file", path);
	}
	if (memcmp(h.magic, MAGIC, 8) || h.vvar_len != PAGE ||
	    h.image_offset < PAGE || h.image_offset % PAGE ||
	    h.image_offset > SYS_SNAPSHOT_MAX_IMAGE || !h.image_len ||
	    h.image_len > SYS_SNAPSHOT_MAX_IMAGE ||
	    (uint64_t)st.st_size != sizeof(h) + PAGE + h.image_len) {
		close(fd);
		return fail(EINVAL, "%s: not a snapshot file (bad header)", path);
	}
	m = mmap(NULL, h.image_offset + h.image_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return fail(ENOMEM, "no memory for the snapshot");
	}
	if (read_all(fd, m, PAGE) ||
	    read_all(fd, m + h.image_offset, h.image_len)) {
		close(fd);
		fail(EINVAL, "%s: truncated", path);
		goto unmap;
	}
	close(fd);

	vc = (struct snap_vdso_clock *)m;
	if (check_clocks(vc))
		goto unmap;
	/* the counter now and whole seconds: every call the same path */
	for (int i = 0; i < CS_BASES; i++) {
		vc[i].cycle_last = counter_now();
		for (int b = 0; b < VDSO_BASES; b++)
			vc[i].basetime[b].nsec = 0;
	}
	if (mprotect(m, PAGE, PROT_READ) ||
	    mprotect(m + h.image_offset, h.image_len, PROT_READ | PROT_EXEC)) {
		fail(errno, "mprotect: %s", strerror(errno));
		goto unmap;
	}
	if (vdso_image_open_mem(&img, m + h.image_offset, h.image_len)) {
		fail(EINVAL, "the copied image: %s", vdso_image_error());
		goto unmap;
	}
	sym_gettime = vdso_image_sym(img, "__vdso_clock_gettime", NULL);
	if (!sym_gettime) {
		vdso_image_close(img);
		fail(EINVAL, "the copied image has no __vdso_clock_gettime");
		goto unmap;
	}
	if (loaded_img)
		vdso_image_close(loaded_img);
	loaded_img = img;
	bench_vdso_clock_gettime = sym_gettime;
	bench_vdso_clock_getres = vdso_image_sym(img, "__vdso_clock_getres",
						 NULL);
	bench_vdso_gettimeofday = vdso_image_sym(img, "__vdso_gettimeofday",
						 NULL);
	bench_vdso_time = vdso_image_sym(img, "__vdso_time", NULL);
	loaded_vvar = m;
	return 0;
unmap:
	munmap(m, h.image_offset + h.image_len);
	return -1;
}
