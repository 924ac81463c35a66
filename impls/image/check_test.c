// SPDX-License-Identifier: GPL-2.0
/*
 * vdso_image_check() on the crafted corpus (impls/image/testdata, written
 * by scripts/vdsobench_cli/tests/vdso_images.py): each good image passes
 * for every counter an import uses, each hostile one is refused with the
 * phrase cases.txt gives for it, in one line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impls/image/check.h"
#include "testing/tap.h"

#define DIR "impls/image/testdata"

static void one(const char *name, const char *want)
{
	static unsigned char buf[1 << 20];
	struct vdso_image_info info;
	char path[sizeof(DIR) + 512], why[256] = "";
	FILE *f;
	size_t len;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", DIR, name);
	f = fopen(path, "rb");
	len = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	if (!tap_ok(len > 0, "%s is readable", path))
		return;
	rc = vdso_image_check_each(&info, buf, len, VDSO_IMAGE_IMPORT_COUNTERS, why, sizeof(why));
	if (!strcmp(want, "ok"))
		tap_ok(rc == 0 && info.lfence_slots > 0 && info.rdtscp_slots > 0,
		       "%s: taken, %d slots (%s)", name, info.lfence_slots, why);
	else
		tap_ok(rc == -1 && strstr(why, want) && !strchr(why, '\n'),
		       "%s: refused: %s", name, why);
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
	return tap_done();
}
