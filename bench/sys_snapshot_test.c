// SPDX-License-Identifier: GPL-2.0
/*
 * sys_snapshot: this process's vDSO copied and mapped again, and copies
 * damaged on purpose (each refused with a reason, under ASan+UBSan too).
 * The calls checked are brackets of values, never timed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/loops.h"
#include "bench/sys_snapshot.h"
#include "testing/tap.h"

#define HEADER 32 /* magic, vvar_len, image_offset, image_len */
#define CLOCK_SIZE 232 /* v6.15's struct vdso_clock: the second base */

static char dir[4096];
static char *good;
static long good_len;

static char *path_of(const char *name)
{
	static char buf[8][4200];
	static int i;
	char *p = buf[i++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
	return p;
}

static char *slurp(const char *path, long *len)
{
	FILE *f = fopen(path, "rb");
	char *b;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*len = ftell(f);
	rewind(f);
	b = malloc((size_t)*len);
	if (b && fread(b, 1, (size_t)*len, f) != (size_t)*len) {
		free(b);
		b = NULL;
	}
	fclose(f);
	return b;
}

/*
 * a copy of the good snapshot, edited at at (and at also, if not 0), refused
 * with a reason naming why
 */
static void refused_twice(const char *what, long len, long at, long also,
			  const void *bytes, size_t n, const char *reason)
{
	char *copy = malloc((size_t)good_len + 16);
	const char *path = path_of(what);
	FILE *f;

	memcpy(copy, good, (size_t)good_len);
	if (bytes)
		memcpy(copy + at, bytes, n);
	if (bytes && also)
		memcpy(copy + also, bytes, n);
	f = fopen(path, "wb");
	fwrite(copy, 1, (size_t)len, f);
	fclose(f);
	free(copy);
	errno = 0;
	tap_ok(sys_snapshot_load(path) == -1 && errno == EINVAL &&
		       strstr(sys_snapshot_error(), reason),
	       "%s refused: %s", what, sys_snapshot_error());
	unlink(path);
}

static void refused(const char *what, long len, long at, const void *bytes,
		    size_t n, const char *reason)
{
	refused_twice(what, len, at, 0, bytes, n, reason);
}

int main(void)
{
	const char *snap;
	uint32_t odd = 7;
	int32_t pvclock = 2;
	const struct {
		uint32_t seq;
		int32_t clock_mode;
	} timens = {1, INT32_MAX};
	uint64_t huge = 1ULL << 40, unaligned = 4097;
	struct timespec a, b;
	int rc;

	snprintf(dir, sizeof(dir), "%s/vdsobench-snapshot-XXXXXX", tap_tmpdir());
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snap = strdup(path_of("good"));
	if (sys_snapshot_take(snap)) {
		tap_ok(errno == ENOENT || errno == EINVAL || errno == E2BIG,
		       "# SKIP no vDSO to copy here: %s", sys_snapshot_error());
		free((void *)snap);
		rmdir(dir);
		return tap_done();
	}
	tap_ok(true, "this process's vDSO copied");
	errno = 0;
	tap_ok(sys_snapshot_take(snap) == -1 && errno == EEXIST,
	       "an existing file is never overwritten: %s",
	       sys_snapshot_error());
	good = slurp(snap, &good_len);
	tap_ok(good && good_len > HEADER + 4096 && !memcmp(good, "VDSOSNP1", 8),
	       "the file: header, data page, image (%ld bytes)", good_len);

	refused("bad-magic", good_len, 0, "NOTASNAP", 8, "bad header");
	refused("truncated", good_len - 1, 0, NULL, 0, "bad header");
	refused("longer", good_len + 8, 0, NULL, 0, "bad header");
	refused("huge-image", good_len, 24, &huge, 8, "bad header");
	refused("unaligned-offset", good_len, 16, &unaligned, 8, "bad header");
	refused("seq-odd", good_len, HEADER, &odd, 4, "during an update");
	refused("pvclock", good_len, HEADER + 4, &pvclock, 4, "clock_mode is 2");
	/* a time namespace's page (both bases): said as one, not "an update" */
	refused_twice("timens", good_len, HEADER, HEADER + CLOCK_SIZE, &timens,
		      sizeof(timens), "a time namespace's");
	tap_ok(mkfifo(path_of("fifo"), 0600) == 0 &&
		       sys_snapshot_load(path_of("fifo")) == -1 &&
		       strstr(sys_snapshot_error(), "not a snapshot"),
	       "a FIFO is refused without blocking: %s", sys_snapshot_error());
	unlink(path_of("fifo"));
	tap_ok(symlink(snap, path_of("link")) == 0 &&
		       sys_snapshot_load(path_of("link")) == -1 && errno == ELOOP,
	       "a symbolic link is not followed: %s", sys_snapshot_error());
	unlink(path_of("link"));

	rc = sys_snapshot_load(snap);
	if (rc && strstr(sys_snapshot_error(), "clock_mode")) {
		tap_ok(true, "# SKIP the kernel does not read the TSC here: %s",
		       sys_snapshot_error());
	} else {
		tap_ok(rc == 0 && sys_snapshot_vvar(), "the copy maps: %s",
		       sys_snapshot_error());
		tap_ok(bench_vdso_clock_gettime &&
			       !bench_vdso_clock_gettime(CLOCK_MONOTONIC, &a) &&
			       !bench_vdso_clock_gettime(CLOCK_MONOTONIC, &b),
		       "the copied image's clock_gettime answers");
		tap_ok(a.tv_nsec >= 0 && a.tv_nsec < 1000000000L &&
			       (b.tv_sec > a.tv_sec ||
				(b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec)),
		       "from the copied data page, in order: %ld.%09ld, "
		       "%ld.%09ld", (long)a.tv_sec, a.tv_nsec, (long)b.tv_sec,
		       b.tv_nsec);
		tap_ok(a.tv_nsec < 1000000000L / 2,
		       "set to whole seconds at load: %ld ns past", a.tv_nsec);
	}
	unlink(snap);
	free((void *)snap);
	free(good);
	rmdir(dir);
	return tap_done();
}
