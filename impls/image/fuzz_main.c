// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_image.c's target on files, without libFuzzer (gcc, --config=asan):
 * each FILE, or each file of a DIRECTORY (the crafted corpus,
 * impls/image/testdata), whole and cut every 7 bytes. One TAP line a file;
 * a disagreement aborts.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing/tap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void replay(const char *path)
{
	static uint8_t buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t len = f ? fread(buf, 1, sizeof(buf), f) : 0;
	uint8_t *copy;

	if (f)
		fclose(f);
	if (!tap_ok(f && len > 0, "%s is readable", path))
		return;
	/* a heap copy of each length, so ASan sees a read past its end */
	for (size_t n = len;; n = n > 7 ? n - 7 : 0) {
		copy = malloc(n ? n : 1);
		if (!copy)
			abort();
		memcpy(copy, buf, n);
		LLVMFuzzerTestOneInput(copy, n);
		free(copy);
		if (!n)
			break;
	}
	tap_ok(true, "%s: %zu bytes and every cut of it: the check and the loader agree", path,
	       len);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		char path[4096];

		if (!d) {
			replay(argv[i]);
			continue;
		}
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
				replay(path);
			}
		closedir(d);
	}
	return tap_done();
}
