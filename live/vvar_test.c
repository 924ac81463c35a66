// SPDX-License-Identifier: GPL-2.0
/*
 * vvar.c on mappings the test makes: a readable page, a PROT_NONE page
 * (SIGSEGV) and a page of a file mapped past its end (SIGBUS, as an
 * unpopulated vvar page raises), each said, none crashing; the snapshot
 * agrees with the memory; a mapping that does not exist is ENOENT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "live/vvar.h"
#include "testing/tap.h"

int main(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct vvar_page pages[3];
	struct vvar_area a;
	uint8_t *m, copy[64];
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/vvar_test_XXXXXX", tap_tmpdir());
	fd = mkstemp(path);

	/* page 0 readable, page 1 PROT_NONE, page 2 a file page past EOF */
	m = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tap_ok(m != MAP_FAILED && fd >= 0 && !ftruncate(fd, 1),
	       "set up three pages and a one-byte file");
	memset(m, 0xa5, page);
	mprotect(m + page, page, PROT_NONE);
	mmap(m + 2 * page, page, PROT_READ, MAP_SHARED | MAP_FIXED, fd, page);
	tap_ok(vvar_find(path, &a) == 0 && a.nr_pages == 1 &&
		       a.start == (uintptr_t)(m + 2 * page),
	       "a mapping that is there is found by its name, with its pages");
	unlink(path);

	vvar_probe_range((uintptr_t)m, 3 * page, pages, 3);
	tap_ok(pages[0].readable && pages[0].signal == 0,
	       "a readable page is readable");
	tap_ok(!pages[1].readable && pages[1].signal == SIGSEGV,
	       "a PROT_NONE page is SIGSEGV, and the probe goes on");
	tap_ok(!pages[2].readable && pages[2].signal == SIGBUS,
	       "a page past the end of its file is SIGBUS (%d)",
	       pages[2].signal);

	tap_ok(!vvar_snapshot((uintptr_t)m, sizeof(copy), copy, 3) &&
		       copy[0] == 0xa5 && copy[63] == 0xa5,
	       "a snapshot copies what is there");
	tap_ok(vvar_snapshot((uintptr_t)(m + page), sizeof(copy), copy, 3) ==
			       -1 &&
		       errno == EFAULT && strstr(vvar_error(), "signal"),
	       "a snapshot of a page that faults is EFAULT: %s", vvar_error());
	tap_ok(vvar_find("[no such mapping]", &a) == -1 && errno == ENOENT &&
		       strstr(vvar_error(), "no [no such mapping]"),
	       "a mapping that is not there is ENOENT: %s", vvar_error());
	return tap_done();
}
