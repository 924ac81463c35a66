// SPDX-License-Identifier: GPL-2.0
/*
 * vdso_image_check() on the crafted corpus (impls/image/testdata, written
 * by scripts/vdsobench_cli/tests/vdso_images.py): each good image passes
 * for every counter an import uses, each hostile one is refused with the
 * phrase cases.txt gives for it, in one line; and the data pages placed
 * where each layout has them. The corpus has i386 images (ELFCLASS32, a
 * vdso32.so's class) too: the same parser, good and hostile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impls/image/check.h"
#include "testing/tap.h"

#define DIR "impls/image/testdata"

static unsigned char buf[1 << 20];

static size_t image(const char *name)
{
	char path[sizeof(DIR) + 512];
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", DIR, name);
	f = fopen(path, "rb");
	len = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	tap_ok(len > 0, "%s is readable", path);
	return len;
}

static void one(const char *name, const char *want)
{
	struct vdso_image_info info;
	char why[256] = "";
	size_t len = image(name);
	int rc;

	if (!len)
		return;
	rc = vdso_image_check_each(&info, buf, len, VDSO_IMAGE_IMPORT_COUNTERS, why, sizeof(why));
	if (!strcmp(want, "ok"))
		tap_ok(rc == 0 && info.lfence_slots > 0 && info.rdtscp_slots > 0,
		       "%s: taken, %d slots (%s)", name, info.lfence_slots, why);
	else
		tap_ok(rc == -1 && strstr(why, want) && !strchr(why, '\n'),
		       "%s: refused: %s", name, why);
}

/*
 * the area's pages, its data page and time namespace page, the data's
 * offset, and the page vread_pvclock() reads (-1: not known)
 */
static void area(const char *name, int pages, int data, int timens, int offset, int pvclock,
		 int hvclock)
{
	struct vdso_image_info info = { 0 };
	char why[256] = "";
	size_t len = image(name);
	int rc = len ? vdso_image_check_each(&info, buf, len, VDSO_IMAGE_IMPORT_COUNTERS, why,
					     sizeof(why))
		     : -1;

	tap_ok(!rc && info.vvar_pages == pages && info.data_page == data &&
		       info.timens_page == timens && info.data_offset == offset &&
		       info.pvclock_page == pvclock && info.hvclock_page == hvclock,
	       "%s: %d pages, data in page %d at %d, time namespace page %d, pvclock page %d, "
	       "hvclock page %d (got %d, %d at %d, %d, %d, %d%s%s)", name, pages, data, offset,
	       timens, pvclock, hvclock, info.vvar_pages, info.data_page, info.data_offset,
	       info.timens_page, info.pvclock_page, info.hvclock_page, *why ? ": " : "", why);
}

int main(void)
{
	FILE *f = fopen(DIR "/cases.txt", "r");
	char line[512];
	int n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');

		line[strcspn(line, "\n")] = 0;
		if (!tab)
			continue;
		*tab = 0;
		one(line, tab + 1);
		n++;
	}
	if (f)
		fclose(f);
	tap_ok(n >= 20, "%s/cases.txt names %d cases", DIR, n);
	/*
	 * v6.1..v6.14: vvar, pvclock, hvclock, timens; the data at 128. Their
	 * pvclock and hvclock pages are the second and third where the area is
	 * that script's four pages; an area of another size, without a pvclock_page symbol, has
	 * none known.
	 */
	area("good-v6.12.so", 4, 0, 3, 128, 1, 2);
	area("good-vvar-symtab.so", 6, 0, 5, 128, -1, -1);
	/* the data store: time data first, at 0, the namespace's page next */
	area("good-data-store.so", 6, 0, 1, 0, -1, -1);
	/* i386 (a vdso32.so): its 32-bit vvar_start, 0xffffc000, is the same 4 pages */
	area("good-i386-v6.12.so", 4, 0, 3, 128, 1, 2);
	area("good-i386-stripped.so", 4, 0, 3, 128, 1, 2);
	area("good-i386-data-store.so", 6, 0, 1, 0, -1, -1);
	return tap_done();
}
