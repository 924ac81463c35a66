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
#define SAMPLED_CLOCK(name, id, coarse) SAMPLED_CLOCK_##coarse(name, id)
#define SAMPLED_CLOCK_0(name, id) {name, id},
#define SAMPLED_CLOCK_1(name, id)

static const struct {
	const char *name;
	clockid_t id;
} clocks[] = { SUITE_CLOCKS(SAMPLED_CLOCK) };
#define NR_CLOCKS (sizeof(clocks) / sizeof(clocks[0]))

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

/* the agreed snapshot of the page, and the clocks around the counter read */
static void print_sample(struct json_writer *w, const uint8_t *data,
			 size_t page, size_t offset, uint64_t cycles,
			 const long long *before, const long long *after)
{
	static char hex[2 * 4096 + 1];

	for (size_t i = 0; i < page && i < 4096; i++)
		snprintf(hex + 2 * i, 3, "%02x", data[i]);
	json_key(w, "snapshot");
	json_begin_object(w);
	json_kv_string(w, "area", "[vvar]");
	json_kv_uint(w, "offset", offset);
	json_kv_string(w, "hex", hex);
	json_end_object(w);
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

int main(void)
{
	static uint8_t first[4096], second[4096];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct vvar_area vvar, vclock;
	long long before[NR_CLOCKS], after[NR_CLOCKS];
	uint64_t cycles = 0;
	int vvar_err, vclock_err, first_readable = -1, agreed = 0;
	char vvar_why[256], vclock_why[256];
	struct utsname u;
	struct json_writer w;

	vvar_err = vvar_find("[vvar]", &vvar) ? -1 : vvar_probe(&vvar);
	snprintf(vvar_why, sizeof(vvar_why), "%s", vvar_error());
	vclock_err =
		vvar_find("[vvar_vclock]", &vclock) ? -1 : vvar_probe(&vclock);
	snprintf(vclock_why, sizeof(vclock_why), "%s", vvar_error());
	for (unsigned int i = 0; !vvar_err && i < vvar.nr_pages; i++)
		if (vvar.pages[i].readable) {
			first_readable = (int)i;
			break;
		}
	for (int tries = 0; first_readable >= 0 && tries < 100 && !agreed;
	     tries++) {
		uintptr_t at = vvar.start + (uintptr_t)first_readable * page;

		if (vvar_snapshot(at, page, first, 3))
			continue;
		for (unsigned int k = 0; k < NR_CLOCKS; k++)
			before[k] = ns_of(clocks[k].id);
		cycles = read_counter();
		for (unsigned int k = 0; k < NR_CLOCKS; k++)
			after[k] = ns_of(clocks[k].id);
		if (vvar_snapshot(at, page, second, 3))
			continue;
		agreed = !memcmp(first, second, page);
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
	if (agreed) {
		print_sample(&w, first, page, (size_t)first_readable * page,
			     cycles, before, after);
	} else {
		json_key(&w, "snapshot");
		json_null(&w);
		json_kv_string(&w, "why",
			       first_readable < 0
				       ? "no page of [vvar] is readable"
				       : "the page never held still");
	}
	json_end_object(&w);
	if (json_end_line(&w))
		return 1;
	return 0;
}
