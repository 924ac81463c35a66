// SPDX-License-Identifier: GPL-2.0
/*
 * vdsobench_vvar: the running kernel's vDSO data page and a bracketed
 * sample of its clocks, as JSON, for `vdsobench layout --live` to decode
 * with the layout that models this kernel and check.
 *
 * The sample: a snapshot of the page, then each clock through the vDSO
 * (libc's clock_gettime), one ordered counter read, each clock again, and
 * the page again; repeated until both snapshots agree, so the kernel did
 * not publish in between and the kernel's own arithmetic on that page and
 * that counter value must land between the two readings of each clock.
 *
 * Every readable page of [vvar] (the first SAMPLED) is snapshotted so, not
 * only the first: in a time namespace (unshare --time) the first page is
 * the namespace's (seq 1, clock_mode VDSO_CLOCKMODE_TIMENS, its offsets)
 * and the kernel's own data is another page. /proc/self/timens_offsets
 * goes with them, for the decoder to tell the two apart and check.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/clocks.h"
#include "common/json_writer.h"
#include "live/vvar.h"

/* the suite's clocks that read the counter: the coarse ones do not */
#define SAMPLED_CLOCK(name, id, kind, base, label, short, abbrev) \
	SAMPLED_CLOCK_##kind(name, id)
#define SAMPLED_CLOCK_HRES(name, id) {name, id},
#define SAMPLED_CLOCK_RAW(name, id) {name, id},
#define SAMPLED_CLOCK_COARSE(name, id)

static const struct {
	const char *name;
	clockid_t id;
} clocks[] = { SUITE_CLOCKS(SAMPLED_CLOCK) };
#define NR_CLOCKS (sizeof(clocks) / sizeof(clocks[0]))

/* the readable pages of [vvar] sampled, and the bytes of each (the data) */
#define SAMPLED 4
#define DATA_BYTES 4096

/* the counter the kernel's vDSO reads, ordered as it orders it */
#if defined(__x86_64__)
#include <cpuid.h>
static const char *counter_name(void)
{
	unsigned int a, b, c, d;

	if (__get_cpuid(0x80000001, &a, &b, &c, &d) && (d & (1u << 27)))
		return "rdtscp";
	return "lfence_rdtsc";
}

static uint64_t read_counter(void)
{
	uint32_t lo, hi;

	if (!strcmp(counter_name(), "rdtscp"))
		__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi) : : "ecx");
	else
		__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
static const char *counter_name(void)
{
	return "isb_cntvct_isb";
}

static uint64_t read_counter(void)
{
	uint64_t v;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0; isb" : "=r"(v));
	return v;
}
#else
#error "vdsobench_vvar knows x86-64 and aarch64 counters"
#endif

static long long ns_of(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return -1;
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void print_area(struct json_writer *w, const char *name,
		       const struct vvar_area *a, size_t page, int err,
		       const char *why)
{
	char start[32];

	json_begin_object(w);
	json_kv_string(w, "name", name);
	if (err) {
		json_kv_string(w, "error", why);
		json_end_object(w);
		return;
	}
	snprintf(start, sizeof(start), "0x%lx", (unsigned long)a->start);
	json_kv_string(w, "start", start);
	json_kv_uint(w, "size", a->end - a->start);
	json_key(w, "pages");
	json_begin_array(w);
	for (unsigned int i = 0; i < a->nr_pages; i++) {
		json_begin_object(w);
		json_kv_uint(w, "offset", i * page);
		json_kv_bool(w, "readable", a->pages[i].readable);
		json_kv_string(w, "signal",
			       a->pages[i].signal == 0	 ? NULL
			       : a->pages[i].signal == 7 ? "SIGBUS"
							 : "SIGSEGV");
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

static void print_hex(struct json_writer *w, const char *key,
		      const uint8_t *data, size_t len)
{
	static char hex[2 * DATA_BYTES + 1];

	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", data[i]);
	hex[2 * len] = '\0';
	json_kv_string(w, key, hex);
}

/* the agreed snapshots of the pages, and the clocks around the counter read */
static void print_sample(struct json_writer *w, uint8_t (*data)[DATA_BYTES],
			 const unsigned int *sampled, unsigned int nr,
			 size_t page, size_t len, uint64_t cycles,
			 const long long *before, const long long *after)
{
	json_key(w, "snapshot");
	json_begin_object(w);
	json_kv_string(w, "area", "[vvar]");
	json_kv_uint(w, "offset", sampled[0] * page);
	print_hex(w, "hex", data[0], len);
	json_end_object(w);
	json_key(w, "pages");
	json_begin_array(w);
	for (unsigned int i = 0; i < nr; i++) {
		json_begin_object(w);
		json_kv_uint(w, "offset", sampled[i] * page);
		print_hex(w, "hex", data[i], len);
		json_end_object(w);
	}
	json_end_array(w);
	json_key(w, "sample");
	json_begin_object(w);
	json_kv_string(w, "counter", counter_name());
	json_kv_uint(w, "cycles", cycles);
	json_key(w, "clocks");
	json_begin_object(w);
	for (unsigned int k = 0; k < NR_CLOCKS; k++) {
		json_key(w, clocks[k].name);
		json_begin_array(w);
		json_int(w, before[k]);
		json_int(w, after[k]);
		json_end_array(w);
	}
	json_end_object(w);
	json_end_object(w);
}

/* each sampled page's first len bytes into out[i]; -1 if any failed */
static int snapshot_pages(const struct vvar_area *a,
			  const unsigned int *sampled, unsigned int nr,
			  size_t page, size_t len, uint8_t (*out)[DATA_BYTES])
{
	for (unsigned int i = 0; i < nr; i++)
		if (vvar_snapshot(a->start + (uintptr_t)sampled[i] * page, len,
				  out[i], 3))
			return -1;
	return 0;
}

/* /proc/self/timens_offsets as it reads, or null (no time namespaces) */
static void print_timens_offsets(struct json_writer *w)
{
	char text[256];
	FILE *f = fopen("/proc/self/timens_offsets", "re");
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;

	if (f)
		fclose(f);
	text[n] = '\0';
	json_key(w, "timens_offsets");
	if (f && n)
		json_string(w, text);
	else
		json_null(w);
}

int main(void)
{
	static uint8_t first[SAMPLED][DATA_BYTES], second[SAMPLED][DATA_BYTES];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = page < DATA_BYTES ? page : DATA_BYTES;
	struct vvar_area vvar, vclock;
	long long before[NR_CLOCKS], after[NR_CLOCKS];
	unsigned int sampled[SAMPLED], nr = 0;
	uint64_t cycles = 0;
	int vvar_err, vclock_err, agreed = 0;
	char vvar_why[256], vclock_why[256];
	struct utsname u;
	struct json_writer w;

	vvar_err = vvar_find("[vvar]", &vvar) ? -1 : vvar_probe(&vvar);
	snprintf(vvar_why, sizeof(vvar_why), "%s", vvar_error());
	vclock_err =
		vvar_find("[vvar_vclock]", &vclock) ? -1 : vvar_probe(&vclock);
	snprintf(vclock_why, sizeof(vclock_why), "%s", vvar_error());
	for (unsigned int i = 0; !vvar_err && i < vvar.nr_pages && nr < SAMPLED;
	     i++)
		if (vvar.pages[i].readable)
			sampled[nr++] = i;
	for (int tries = 0; nr && tries < 100 && !agreed; tries++) {
		if (snapshot_pages(&vvar, sampled, nr, page, len, first))
			continue;
		for (unsigned int k = 0; k < NR_CLOCKS; k++)
			before[k] = ns_of(clocks[k].id);
		cycles = read_counter();
		for (unsigned int k = 0; k < NR_CLOCKS; k++)
			after[k] = ns_of(clocks[k].id);
		if (snapshot_pages(&vvar, sampled, nr, page, len, second))
			continue;
		agreed = !memcmp(first, second, sizeof(first));
	}

	uname(&u);
	json_init_file(&w, stdout);
	json_begin_object(&w);
	json_kv_string(&w, "kernel", u.release);
	json_kv_string(&w, "machine", u.machine);
	json_kv_uint(&w, "page_size", page);
	json_key(&w, "areas");
	json_begin_array(&w);
	print_area(&w, "[vvar]", &vvar, page, vvar_err, vvar_why);
	print_area(&w, "[vvar_vclock]", &vclock, page, vclock_err, vclock_why);
	json_end_array(&w);
	print_timens_offsets(&w);
	if (agreed) {
		print_sample(&w, first, sampled, nr, page, len, cycles, before,
			     after);
	} else {
		json_key(&w, "snapshot");
		json_null(&w);
		json_kv_string(&w, "why",
			       !nr ? "no page of [vvar] is readable"
				   : "the page never held still");
	}
	json_end_object(&w);
	if (json_end_line(&w))
		return 1;
	return 0;
}
