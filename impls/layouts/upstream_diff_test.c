// SPDX-License-Identifier: GPL-2.0
/*
 * The generic read path rebuilds (lib_vdso*.h) are upstream's
 * lib/vdso/gettimeofday.c of the version each cites but for lines marked
 * "vdsobench:". This test holds a hash of every upstream line
 * (upstream_lines.inc, made by upstream_lines.py from the upstream file,
 * whose git blob it names), diffs each header against it (longest common
 * subsequence of lines) and fails on a hunk of the diff that carries no
 * "vdsobench:" mark: an edit nobody explained. By hand, in a kernel tree:
 *
 *	git show v6.10:lib/vdso/gettimeofday.c | diff - impls/layouts/lib_vdso_v6_10.h
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "impls/common/compiler.h"
#include "testing/tap.h"

#include "impls/layouts/upstream_lines.inc"

#define MARK "vdsobench:"
#define MAX_LINES 2048

struct text {
	char *buf;
	char *line[MAX_LINES];
	u32 hash[MAX_LINES];
	unsigned int n;
};

static u32 fnv1a32(const char *s)
{
	u32 h = 0x811c9dc5;

	for (; *s; s++)
		h = (h ^ (u8)*s) * 0x01000193;
	return h;
}

/* split buf in place into lines; 0, or -1 if there are too many */
static int split(struct text *t)
{
	char *p = t->buf;

	t->n = 0;
	while (*p) {
		char *nl = strchr(p, '\n');

		if (t->n == MAX_LINES)
			return -1;
		t->line[t->n] = p;
		if (nl)
			*nl = '\0';
		t->hash[t->n] = fnv1a32(p);
		t->n++;
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}

static int load(const char *path, struct text *t)
{
	FILE *f = fopen(path, "rb");
	long len;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -1;
	}
	t->buf = calloc(1, (size_t)len + 1);
	if (!t->buf || fread(t->buf, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return split(t);
}

struct verdict {
	unsigned int hunks, unmarked, changed;
	unsigned int first_unmarked; /* the header's line number, 1-based */
};

/*
 * Diff the header (a) against the upstream hashes (b), as diff(1) would
 * show it: a hunk is a run of inserted and deleted lines between lines
 * they share. Each hunk must insert a line carrying MARK.
 */
static struct verdict check(const struct text *a, const u32 *b, unsigned int m)
{
	unsigned int n = a->n, i = 0, j = 0;
	u16 *lcs = calloc((size_t)(n + 1) * (m + 1), sizeof(*lcs));
	struct verdict v = { 0, 0, 0, 0 };
	bool in_hunk = false, marked = false;
	unsigned int hunk_start = 0;

#define L(x, y) lcs[(size_t)(x) * (m + 1) + (y)]
	if (!lcs)
		abort();
	/* L(x, y): the longest common subsequence of a[x..] and b[y..] */
	for (unsigned int x = n + 1; x-- > 0;)
		for (unsigned int y = m + 1; y-- > 0;) {
			if (x == n || y == m)
				L(x, y) = 0;
			else if (a->hash[x] == b[y])
				L(x, y) = L(x + 1, y + 1) + 1;
			else
				L(x, y) = L(x + 1, y) > L(x, y + 1) ? L(x + 1, y) :
								       L(x, y + 1);
		}
	while (i < n || j < m) {
		bool same = i < n && j < m && a->hash[i] == b[j] &&
			    L(i, j) == L(i + 1, j + 1) + 1;

		if (same) {
			if (in_hunk && !marked) {
				v.unmarked++;
				if (!v.first_unmarked)
					v.first_unmarked = hunk_start + 1;
			}
			in_hunk = false;
			i++;
			j++;
			continue;
		}
		if (!in_hunk) {
			in_hunk = true;
			marked = false;
			hunk_start = i;
			v.hunks++;
		}
		v.changed++;
		/* upstream's line goes first, as diff(1) lists "<" before ">" */
		if (j < m && (i == n || L(i, j + 1) >= L(i + 1, j))) {
			j++;
		} else {
			marked |= strstr(a->line[i], MARK) != NULL;
			i++;
		}
	}
	if (in_hunk && !marked) {
		v.unmarked++;
		if (!v.first_unmarked)
			v.first_unmarked = hunk_start + 1;
	}
	free(lcs);
#undef L
	return v;
}

static void check_header(const char *path, const char *tag, const char *blob,
			 const u32 *up, unsigned int m)
{
	struct text t;
	struct verdict v;

	if (!tap_ok(load(path, &t) == 0, "%s: read", path))
		return;
	v = check(&t, up, m);
	tap_ok(v.unmarked == 0,
	       "%s against lib/vdso/gettimeofday.c @ %s (blob %s): %u hunks, "
	       "%u lines changed, %u unmarked (the first at line %u)",
	       path, tag, blob, v.hunks, v.changed, v.unmarked, v.first_unmarked);

	/* the check can fail: an unmarked edit of an upstream line is caught */
	for (unsigned int k = 0; k < t.n; k++) {
		if (strcmp(t.line[k], "\treturn 0;"))
			continue;
		t.line[k] = "\treturn 1;";
		t.hash[k] = fnv1a32(t.line[k]);
		v = check(&t, up, m);
		tap_ok(v.unmarked == 1 && v.first_unmarked == k + 1,
		       "%s: an unmarked edit at line %u is caught (%u unmarked, at %u)",
		       path, k + 1, v.unmarked, v.first_unmarked);
		break;
	}
	free(t.buf);
}

#define CHECK(source) check_header(source)

int main(void)
{
	CHECK(UPSTREAM_V5_3_SOURCE);
	CHECK(UPSTREAM_V6_10_SOURCE);
	CHECK(UPSTREAM_V6_15_SOURCE);
	CHECK(UPSTREAM_V6_17_SOURCE);
	return tap_done();
}
