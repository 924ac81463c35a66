// SPDX-License-Identifier: GPL-2.0
/*
 * vdso_entries.h's rows against real vDSO images of Linux 6.12 (Debian's
 * linux-source-6.12, 6.12.118), opened with vdso_image_open_mem(): every
 * entry a row names is found at its version, and the other
 * architecture's names are not. Then this process's own row against its
 * own vDSO, where it has one (qemu-user maps none).
 *
 * The images, in testdata/:
 * - vdso-arm64-v6.12.so: arch/arm64/kernel/vdso/vdso.so of the kernel's own
 *   build, `make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- defconfig
 *   prepare` (Debian's aarch64-linux-gnu-gcc 12.2.0; prepare makes the
 *   vDSO). `import --arch arm64` runs no kbuild and keeps no image.
 * - vdso-x86_64-v6.12.so, vdso-i386-v6.12.so: vdso64.so and vdso32.so of
 *   `import linux-source-6.12`'s kbuild (Debian's amd64 config), as kept
 *   in ~/.cache/vdsobench/kbuild/<key>/.
 * impls/image/testdata's images are crafted, without hash or version
 * tables, which vdso_sym needs: they do not open here.
 *
 * vdso_sym reads its own process's ELF class only (vdso_sym.h), and checks
 * no e_machine: arm64's and x86-64's images open in a 64-bit process of
 * either architecture, i386's in the i386 build alone; an image of the
 * other class is a SKIP, with the parser's own reason.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/elf_class.h"
#include "bench/vdso_entries.h"
#include "bench/vdso_sym.h"
#include "testing/tap.h"

#define DIR "bench/testdata"

/* the row's names, NULL where it has none; 5 of them */
#define NR_ENTRIES 5
static void row_names(const struct vdso_entries *e, const char *out[NR_ENTRIES])
{
	out[0] = e->clock_gettime;
	out[1] = e->clock_getres;
	out[2] = e->gettimeofday;
	out[3] = e->time;
	out[4] = e->clock_gettime64;
}

/* the file in a malloc'd buffer (aligned for any ELF read); NULL: not read */
static unsigned char *read_image(const char *name, size_t *len)
{
	char path[256];
	unsigned char *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", DIR, name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return NULL;
	}
	buf = malloc((size_t)n);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* every entry e names is found at e->version, inside the image */
static void check_row_found(const struct vdso_image *img, const char *what,
			    const struct vdso_entries *e)
{
	const unsigned char *base = vdso_image_base(img);
	size_t len = vdso_image_len(img);
	const char *names[NR_ENTRIES];
	unsigned int i, named = 0;

	row_names(e, names);
	for (i = 0; i < NR_ENTRIES; i++) {
		unsigned char *p;

		if (!names[i])
			continue;
		named++;
		p = vdso_image_sym(img, names[i], e->version);
		tap_ok(p && p >= base && p < base + len,
		       "%s: %s@%s found inside the image (offset 0x%lx)", what,
		       names[i], e->version,
		       p ? (unsigned long)(p - base) : 0ul);
	}
	tap_ok(named >= 2, "%s: %s's row names %u entries", what, e->arch,
	       named);
}

/* none of other's names is there, at its version or at any */
static void check_row_absent(const struct vdso_image *img, const char *what,
			     const struct vdso_entries *other)
{
	const char *names[NR_ENTRIES];
	unsigned int i, named = 0, found = 0;

	row_names(other, names);
	for (i = 0; i < NR_ENTRIES; i++) {
		if (!names[i])
			continue;
		named++;
		if (vdso_image_sym(img, names[i], other->version) ||
		    vdso_image_sym(img, names[i], NULL)) {
			tap_diag("%s: %s is there", what, names[i]);
			found++;
		}
	}
	tap_ok(named && !found,
	       "%s: none of %s's %u names is there (%s's lookup finds "
	       "nothing)",
	       what, other->arch, named, other->arch);
}

/*
 * The image opens where its class is this process's; where it is not,
 * the refusal is the class's (and the test says so). 1: opened.
 */
static int open_image(struct vdso_image **img, const unsigned char *buf,
		      size_t len, const char *what)
{
	int own_class = len > EI_CLASS && buf[EI_CLASS] == ELF_CLASS;

	if (!vdso_image_open_mem(img, buf, len)) {
		tap_ok(own_class, "%s opens", what);
		return own_class;
	}
	if (own_class) {
		tap_ok(false, "%s opens: %s", what, vdso_image_error());
		return 0;
	}
	tap_ok(errno == EINVAL && strstr(vdso_image_error(), "ELFCLASS"),
	       "%s is refused for its class: %s", what, vdso_image_error());
	tap_ok(true,
	       "%s's entries # SKIP vdso_sym reads this process's "
	       "ELF class (" ELF_CLASS_NAME ") only",
	       what);
	return 0;
}

static void check_arm64(void)
{
	const struct vdso_entries *e = &vdso_entries_arm64;
	const char *what = "arm64's 6.12 vDSO";
	struct vdso_image *img;
	unsigned char *buf;
	size_t len;

	buf = read_image("vdso-arm64-v6.12.so", &len);
	if (!tap_ok(buf != NULL, "%s read from " DIR, what))
		return;
	tap_ok(len > sizeof(Elf64_Ehdr) &&
		       ((Elf64_Ehdr *)buf)->e_machine == EM_AARCH64,
	       "%s is an EM_AARCH64 image (%zu bytes)", what, len);
	if (open_image(&img, buf, len, what)) {
		tap_ok(vdso_image_machine(img) == EM_AARCH64 &&
			       vdso_image_own_machine(img) == (ELF_HOST_MACHINE == EM_AARCH64),
		       "%s: its machine is read: %d, this process's: %d", what,
		       vdso_image_machine(img), ELF_HOST_MACHINE);
		check_row_found(img, what, e);
		check_row_absent(img, what, &vdso_entries_x86_64);
		/* its names at x86's version: the version is matched too */
		tap_ok(!vdso_image_sym(img, e->clock_gettime, "LINUX_2.6"),
		       "%s: %s@LINUX_2.6 is not there", what, e->clock_gettime);
		/* no time entry, so the row names none: time is coarse */
		tap_ok(!e->time && !vdso_image_sym(img, "__kernel_time", NULL),
		       "%s: no __kernel_time, and the row names no time", what);
		vdso_image_close(img);
	}
	free(buf);
}

static void check_x86(const char *file, const struct vdso_entries *e, int machine)
{
	struct vdso_image *img;
	unsigned char *buf;
	char what[64];
	size_t len;

	snprintf(what, sizeof(what), "%s's 6.12 vDSO", e->arch);
	buf = read_image(file, &len);
	if (!tap_ok(buf != NULL, "%s read from " DIR, what))
		return;
	if (open_image(&img, buf, len, what)) {
		tap_ok(vdso_image_machine(img) == machine &&
			       vdso_image_own_machine(img) == (ELF_HOST_MACHINE == machine),
		       "%s: its machine is read: %d, this process's: %d", what,
		       vdso_image_machine(img), ELF_HOST_MACHINE);
		check_row_found(img, what, e);
		check_row_absent(img, what, &vdso_entries_arm64);
		vdso_image_close(img);
	}
	free(buf);
}

static void check_own(void)
{
	const struct vdso_entries *e = vdso_entries_own();
	struct vdso_entries own;
	struct vdso_image *img;

#if defined(__x86_64__) && !defined(__ILP32__)
	tap_ok(e == &vdso_entries_x86_64, "an x86-64 process's row is x86-64");
#elif defined(__i386__)
	tap_ok(e == &vdso_entries_i386, "an i386 process's row is i386");
#elif defined(__aarch64__) && !defined(__ILP32__)
	tap_ok(e == &vdso_entries_arm64, "an arm64 process's row is arm64");
#else
	tap_ok(!e, "an architecture the table does not know has no row");
#endif
	if (!e)
		return;
	if (vdso_image_open(&img)) {
		tap_ok(errno == ENOENT, "vdso_image_open: %s",
		       vdso_image_error());
		tap_ok(true, "this process's vDSO # SKIP %s",
		       vdso_image_error());
		return;
	}
	/*
	 * what sys/vdso needs on any kernel: x86's clock_getres and
	 * clock_gettime64 are 5.3's (vdso_sym_test holds those to that)
	 */
	own = *e;
	if (own.clock_getres == vdso_entries_x86_64.clock_getres)
		own.clock_getres = NULL;
	own.clock_gettime64 = NULL;
	check_row_found(img, "this process's vDSO", &own);
	vdso_image_close(img);
}

int main(void)
{
	check_arm64();
	check_x86("vdso-x86_64-v6.12.so", &vdso_entries_x86_64, EM_X86_64);
	check_x86("vdso-i386-v6.12.so", &vdso_entries_i386, EM_386);
	check_own();
	return tap_done();
}
