// SPDX-License-Identifier: GPL-2.0
/*
 * vdso_sym against this kernel's vDSO, against a copy of it, and against
 * copies corrupted on purpose (which must fail cleanly, under ASan+UBSan
 * too). The time checks are brackets, not measurements: libc, vDSO, libc
 * read in that order must be ordered on a monotonic clock.
 *
 * x86-64's vDSO has __vdso_clock_getres only since Linux 5.3 (the generic
 * vDSO library): on an older kernel its absence is expected and skipped,
 * on 5.3 or later it is a failure.
 *
 * The names and version are this architecture's (vdso_entries.h): x86's
 * __vdso_* at LINUX_2.6, arm64's __kernel_* at LINUX_2.6.39, which has no
 * time entry (skipped).
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>

#include "bench/elf_class.h"
#include "bench/vdso_entries.h"
#include "bench/vdso_sym.h"
#include "testing/tap.h"

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*clock_getres_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, void *);
typedef time_t (*time_fn)(time_t *);

/* this architecture's, from its row in main(); NULL: its vDSO has none */
static const char *names[4];
static const char *version;
static const char *const roles[] = {"clock_gettime", "gettimeofday", "time",
				    "clock_getres"};
#define NR_NAMES (sizeof(names) / sizeof(names[0]))
#define GETRES 3 /* names[GETRES]: x86-64's only since Linux 5.3 */

/*
 * Must a kernel of this release ("5.2.21", "4.19.0-26-amd64") have
 * __vdso_clock_getres? From 5.3 on; a release that does not parse is
 * held to the newer rule.
 */
static bool getres_required(const char *release)
{
	unsigned int major, minor;

	if (sscanf(release, "%u.%u", &major, &minor) != 2)
		return true;
	return major > 5 || (major == 5 && minor >= 3);
}

/* this kernel's answer; why its absence is fine goes in why */
static bool this_kernel_requires_getres(char *why, size_t len)
{
	struct utsname u;

	if (uname(&u))
		return true;
	snprintf(why, len,
		 "x86-64's vDSO has no __vdso_clock_getres before Linux 5.3, "
		 "and this kernel is %s",
		 u.release);
	return getres_required(u.release);
}

static void check_getres_rule(void)
{
	static const struct {
		const char *release;
		bool required;
	} cases[] = {
		{"5.3.0", true},
		{"5.2.21", false},
		{"4.19.0-26-amd64", false},
		{"6.1.0-18-amd64", true},
		{"5.10.0", true},
		{"3.10.0-1160.el7.x86_64", false},
		{"10.0", true},
		{"not-a-release", true},
	};
	unsigned int i, bad = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (getres_required(cases[i].release) != cases[i].required) {
			tap_diag("%s: got %d", cases[i].release,
				 !cases[i].required);
			bad++;
		}
	tap_ok(!bad,
	       "__vdso_clock_getres is required from Linux 5.3 on, and not "
	       "before (%u releases)",
	       i);
}

static long long ts_ns(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static long long tv_us(const struct timeval *tv)
{
	return tv->tv_sec * 1000000LL + tv->tv_usec;
}

/* the [vdso] size, read here independently of the library's own reading */
static size_t vdso_mapping_size(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long start, end;
	size_t size = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%lx-%lx", &start, &end) == 2)
			size = end - start;
	fclose(f);
	return size;
}

static void check_found(const struct vdso_image *img, void *addr[NR_NAMES])
{
	const char *base = vdso_image_base(img);
	size_t len = vdso_image_len(img);
	unsigned int i;
	char why[160];

	for (i = 0; i < NR_NAMES; i++) {
		void *any;

		addr[i] = NULL;
		if (!names[i]) {
			tap_ok(true,
			       "%s # SKIP this vDSO has no such entry "
			       "(vdso_entries.h)",
			       roles[i]);
			continue;
		}
		any = vdso_image_sym(img, names[i], NULL);
		addr[i] = vdso_image_sym(img, names[i], version);
		if (i == GETRES && !addr[i] && !any &&
		    !this_kernel_requires_getres(why, sizeof(why))) {
			tap_ok(true, "%s@%s # SKIP %s", names[i], version, why);
			continue;
		}
		tap_ok(addr[i] && any == addr[i] && (char *)addr[i] >= base &&
			       (char *)addr[i] < base + len,
		       "%s@%s found inside the image (offset 0x%lx)", names[i],
		       version,
		       addr[i] ? (unsigned long)((char *)addr[i] - base) : 0);
	}
}

static void check_calls(void *addr[NR_NAMES])
{
	static const clockid_t clocks[] = {CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW,
					   CLOCK_BOOTTIME};
	clock_gettime_fn vdso_gettime = (clock_gettime_fn)addr[0];
	gettimeofday_fn vdso_gtod = (gettimeofday_fn)addr[1];
	time_fn vdso_time = (time_fn)addr[2];
	clock_getres_fn vdso_getres = (clock_getres_fn)addr[3];
	struct timespec a, v, b;
	struct timeval ta, tv, tb;
	time_t sa, sv, sb;
	unsigned int i;

	for (i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		int rc;

		clock_gettime(clocks[i], &a);
		rc = vdso_gettime(clocks[i], &v);
		clock_gettime(clocks[i], &b);
		tap_ok(rc == 0 && ts_ns(&a) <= ts_ns(&v) &&
			       ts_ns(&v) <= ts_ns(&b),
		       "%s(%d) between two libc reads: %lld <= %lld <= %lld",
		       names[0], clocks[i], ts_ns(&a), ts_ns(&v), ts_ns(&b));
	}

	gettimeofday(&ta, NULL);
	vdso_gtod(&tv, NULL);
	gettimeofday(&tb, NULL);
	tap_ok(tv_us(&ta) <= tv_us(&tv) && tv_us(&tv) <= tv_us(&tb),
	       "%s between two libc reads: %lld <= %lld <= %lld", names[1],
	       tv_us(&ta), tv_us(&tv), tv_us(&tb));

	if (vdso_time) { /* arm64's vDSO has none */
		sa = time(NULL);
		sv = vdso_time(NULL);
		sb = time(NULL);
		tap_ok(sa <= sv && sv <= sb, "%s between two libc reads",
		       names[2]);
	}

	if (!vdso_getres)
		return; /* an older kernel's, skipped in check_found() */
	clock_getres(CLOCK_MONOTONIC, &a);
	tap_ok(vdso_getres(CLOCK_MONOTONIC, &v) == 0 && ts_ns(&v) == ts_ns(&a),
	       "%s(CLOCK_MONOTONIC) = libc's (%lld ns)", names[3], ts_ns(&a));
}

static void check_absent(const struct vdso_image *img)
{
	void *p;

	errno = 0;
	p = vdso_image_sym(img, "__vdso_no_such_function", NULL);
	tap_ok(!p && errno == ENOENT, "a missing name gives NULL, ENOENT");
	errno = 0;
	p = vdso_image_sym(img, names[0], "LINUX_9.9");
	tap_ok(!p && errno == ENOENT, "a wrong version gives NULL, ENOENT");
	/* the version (LINUX_2.6) is also an ABS object symbol */
	p = vdso_image_sym(img, version, NULL);
	tap_ok(!p, "the version's own object symbol is not a function");
}

static void check_copy(const struct vdso_image *real, void *addr[NR_NAMES],
		       const unsigned char *copy, size_t len, const char *what)
{
	const unsigned char *base = vdso_image_base(real);
	struct vdso_image *img;
	unsigned int i, same = 0;

	if (!tap_ok(vdso_image_open_mem(&img, copy, len) == 0, "%s opens%s%s",
		    what, vdso_image_error()[0] ? ": " : "",
		    vdso_image_error()))
		return;
	for (i = 0; i < NR_NAMES; i++) {
		unsigned char *p =
			names[i] ? vdso_image_sym(img, names[i], version)
				 : NULL;

		/* found at the same offset, or absent from both */
		same += p ? p - copy == (unsigned char *)addr[i] - base
			  : !addr[i];
	}
	tap_ok(same == NR_NAMES, "%s finds the same offsets (%u of %zu)", what,
	       same, NR_NAMES);
	vdso_image_close(img);
}

struct corruption {
	const char *what;
	/* changes a fresh copy; returns the length to open it with */
	size_t (*apply)(unsigned char *img, size_t len);
};

static ELF_T(Ehdr) * ehdr(unsigned char *img)
{
	return (ELF_T(Ehdr) *)img;
}

static ELF_T(Phdr) * phdr(unsigned char *img, unsigned int type)
{
	ELF_T(Phdr) *ph = (ELF_T(Phdr) *)(img + ehdr(img)->e_phoff);
	unsigned int i;

	for (i = 0; i < ehdr(img)->e_phnum; i++)
		if (ph[i].p_type == type)
			return &ph[i];
	abort();
}

/* the first PT_LOAD of the vDSO starts at vaddr 0 = offset 0 */
static ELF_T(Dyn) * dyn_entry(unsigned char *img, ELF_T(Sxword) tag)
{
	ELF_T(Dyn) *d = (ELF_T(Dyn) *)(img + phdr(img, PT_DYNAMIC)->p_offset);

	for (; d->d_tag != DT_NULL; d++)
		if (d->d_tag == tag)
			return d;
	return NULL;
}

static size_t bad_magic(unsigned char *img, size_t len)
{
	img[EI_MAG1] = 'X';
	return len;
}

static size_t shorter_than_header(unsigned char *img, size_t len)
{
	(void)img;
	(void)len;
	return sizeof(ELF_T(Ehdr)) / 2;
}

static size_t cut_in_dynamic(unsigned char *img, size_t len)
{
	(void)len;
	return phdr(img, PT_DYNAMIC)->p_offset + sizeof(ELF_T(Dyn));
}

static size_t other_class(unsigned char *img, size_t len)
{
	img[EI_CLASS] = ELF_OTHER_CLASS;
	return len;
}

static size_t dynamic_past_end(unsigned char *img, size_t len)
{
	phdr(img, PT_DYNAMIC)->p_offset = len + 64;
	return len;
}

static size_t dynamic_huge(unsigned char *img, size_t len)
{
	phdr(img, PT_DYNAMIC)->p_filesz = (ELF_T(Addr)) - 1 - 8;
	return len;
}

static size_t phdrs_past_end(unsigned char *img, size_t len)
{
	ehdr(img)->e_phnum = 0xffff;
	return len;
}

static size_t symtab_past_end(unsigned char *img, size_t len)
{
	dyn_entry(img, DT_SYMTAB)->d_un.d_ptr = len - 8;
	return len;
}

static size_t strtab_wild(unsigned char *img, size_t len)
{
	(void)len;
	dyn_entry(img, DT_STRTAB)->d_un.d_ptr = (ELF_T(Addr)) - 1 - 3;
	return len;
}

/* retag a dynamic entry as DT_DEBUG, which the parser ignores */
static bool hide_tag(unsigned char *img, ELF_T(Sxword) tag)
{
	ELF_T(Dyn) *d = dyn_entry(img, tag);

	if (d)
		d->d_tag = DT_DEBUG;
	return d;
}

static size_t no_hash(unsigned char *img, size_t len)
{
	hide_tag(img, DT_HASH);
	hide_tag(img, DT_GNU_HASH);
	return len;
}

static size_t hash_nchain_huge(unsigned char *img, size_t len)
{
	ELF_T(Dyn) *d = dyn_entry(img, DT_HASH);

	if (d)
		((ELF_T(Word) *)(img + d->d_un.d_ptr))[1] = 0x10000000;
	else
		((ELF_T(Word) *)(img +
				 dyn_entry(img, DT_GNU_HASH)->d_un.d_ptr))[0] =
			0x10000000;
	return len;
}

static size_t verdef_next_past_end(unsigned char *img, size_t len)
{
	ELF_T(Verdef) *def =
		(ELF_T(Verdef) *)(img + dyn_entry(img, DT_VERDEF)->d_un.d_ptr);

	def->vd_next = len;
	return len;
}

/* the top of the process's ELF class's addresses */
#if __SIZEOF_POINTER__ == 8
#define TOP "2^64"
#else
#define TOP "2^32"
#endif

static const struct corruption corruptions[] = {
	{"bad magic", bad_magic},
	{"shorter than an ELF header", shorter_than_header},
	{"truncated inside the dynamic section", cut_in_dynamic},
	{ELF_OTHER_CLASS_NAME, other_class},
	{"PT_DYNAMIC past the end", dynamic_past_end},
	{"PT_DYNAMIC of " TOP " bytes", dynamic_huge},
	{"65535 program headers", phdrs_past_end},
	{"DT_SYMTAB at the last 8 bytes", symtab_past_end},
	{"DT_STRTAB at " TOP " - 4", strtab_wild},
	{"no hash table", no_hash},
	{"2^28 symbols in the hash table", hash_nchain_huge},
	{"a version definition linking past the end", verdef_next_past_end},
};

/* an exact-size heap copy, so that ASan sees any read past len */
static unsigned char *dup_image(const unsigned char *src, size_t len)
{
	unsigned char *p = malloc(len ? len : 1);

	if (!p)
		abort();
	memcpy(p, src, len);
	return p;
}

static bool fails_cleanly(const unsigned char *img, size_t len,
			  const char *what)
{
	struct vdso_image *v = (struct vdso_image *)1;
	int rc;

	errno = 0;
	rc = vdso_image_open_mem(&v, img, len);
	return tap_ok(rc == -1 && errno == EINVAL && !v &&
			      vdso_image_error()[0],
		      "%s: -1 EINVAL (%s)", what, vdso_image_error());
}

static void check_corrupt(const unsigned char *good, size_t len)
{
	unsigned char *img;
	unsigned int i;

	for (i = 0; i < sizeof(corruptions) / sizeof(corruptions[0]); i++) {
		size_t n;

		img = dup_image(good, len);
		n = corruptions[i].apply(img, len);
		fails_cleanly(img, n, corruptions[i].what);
		free(img);
	}

	/* a copy one byte off its alignment */
	img = malloc(len + 1);
	if (!img)
		abort();
	memcpy(img + 1, good, len);
	fails_cleanly(img + 1, len, "a misaligned image");
	free(img);
	fails_cleanly(NULL, len, "a NULL image");
}

/* whatever opens must keep every lookup inside: 1 opened, 0 not, -1 escaped */
static int lookups_inside(const unsigned char *img, size_t len)
{
	struct vdso_image *v;
	unsigned int i;

	if (vdso_image_open_mem(&v, img, len))
		return errno == EINVAL ? 0 : -1;
	for (i = 0; i < NR_NAMES; i++) {
		unsigned char *p =
			names[i] ? vdso_image_sym(v, names[i], version) : NULL;

		if (p && (p < img || p >= img + len)) {
			vdso_image_close(v);
			return -1;
		}
	}
	vdso_image_close(v);
	return 1;
}

static void check_fuzz(const unsigned char *good, size_t len, const char *what)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	unsigned int i, bad = 0, opened = 0;
	/* the headers and tables; the code after them is never parsed */
	size_t tables = phdr((unsigned char *)good, PT_DYNAMIC)->p_offset +
			phdr((unsigned char *)good, PT_DYNAMIC)->p_filesz;

	for (i = 0; i <= len; i++) {
		unsigned char *img = dup_image(good, i);
		int rc = lookups_inside(img, i);

		bad += rc < 0;
		opened += rc > 0;
		free(img);
	}
	tap_ok(!bad,
	       "%s, every truncation (0..%zu bytes): %u open, none escapes",
	       what, len, opened);

	opened = 0;
	for (i = 0; i < 20000; i++) {
		unsigned char *img = dup_image(good, len);
		unsigned int flips = 1 + i % 4, j;
		int rc;

		for (j = 0; j < flips; j++) {
			seed = seed * 6364136223846793005ull +
			       1442695040888963407ull;
			img[(seed >> 33) % tables] ^= 1u << ((seed >> 29) & 7);
		}
		rc = lookups_inside(img, len);
		bad += rc < 0;
		opened += rc > 0;
		free(img);
	}
	tap_ok(!bad,
	       "%s, 20000 copies with 1-4 bits flipped in the first %zu bytes: "
	       "%u open, none escapes",
	       what, tables, opened);
}

int main(void)
{
	const struct vdso_entries *e = vdso_entries_own();
	struct vdso_image *img;
	void *addr[NR_NAMES];
	unsigned char *copy, *gnu;
	size_t len, maps;

	check_getres_rule();
	if (!e) {
		tap_ok(true, "the vDSO's functions # SKIP vdso_entries.h has "
			     "no row for this architecture");
		return tap_done();
	}
	names[0] = e->clock_gettime;
	names[1] = e->gettimeofday;
	names[2] = e->time;
	names[3] = e->clock_getres;
	version = e->version;
	if (vdso_image_open(&img)) {
		bool none = errno == ENOENT;

		tap_ok(none, "vdso_image_open: %s", vdso_image_error());
		if (none)
			tap_ok(true, "the vDSO's functions # SKIP %s",
			       vdso_image_error());
		return tap_done();
	}
	tap_ok(vdso_image_base(img) ==
			       (const void *)getauxval(AT_SYSINFO_EHDR) &&
		       !vdso_image_error()[0],
	       "the vDSO at AT_SYSINFO_EHDR opens");
	len = vdso_image_len(img);
	maps = vdso_mapping_size();
	tap_ok(len == maps,
	       "the image is bounded by its [vdso] mapping (%zu of %zu bytes)",
	       len, maps);

	check_found(img, addr);
	if (addr[0] && addr[1] && (addr[2] || !names[2]))
		check_calls(addr);
	check_absent(img);

	copy = dup_image(vdso_image_base(img), len);
	check_copy(img, addr, copy, len, "a heap copy");
	check_corrupt(copy, len);
	check_fuzz(copy, len, "DT_HASH");

	/* this parser prefers DT_HASH: hide it to run the DT_GNU_HASH path */
	gnu = dup_image(copy, len);
	if (hide_tag(gnu, DT_HASH) && dyn_entry(gnu, DT_GNU_HASH)) {
		check_copy(img, addr, gnu, len,
			   "a copy with DT_GNU_HASH alone");
		check_fuzz(gnu, len, "DT_GNU_HASH");
	} else {
		tap_ok(true, "DT_GNU_HASH alone # SKIP this vDSO lacks one of "
			     "the two tables");
	}
	free(gnu);
	free(copy);
	vdso_image_close(img);
	return tap_done();
}
