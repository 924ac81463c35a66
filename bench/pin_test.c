// SPDX-License-Identifier: GPL-2.0
/*
 * pin on topologies this machine does not have, loaded from hwloc XML
 * (bench/testdata/) and synthetic descriptions, where every value is known
 * and asserted: 48 KiB 12-way L1d, SMT, two packages of two NUMA nodes,
 * hybrid CPUs, offline CPUs, a cpuset without CPU 0. Then on this machine's
 * own topology, where only what holds on every machine is asserted (no CPU
 * model, cache size, CPU count or SMT is assumed) and what this topology
 * cannot show is skipped with the reason. The affinity mask is narrowed in
 * a child process, so that taskset's case runs on any machine.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/pin.h"
#include "testing/tap.h"

#define MAX_CPUS 1024

/*
 * The i386 build's pin.c runs over hwloc_sysfs/ (bench/BUILD), which loads
 * this machine's topology and no description: only that part runs there.
 */
#ifdef VDSOBENCH_HWLOC_SYSFS
static const bool hwloc_sysfs = true;
#else
static const bool hwloc_sysfs = false;
#endif

/* the directory of the XML topologies, relative to the runfiles root */
#define TESTDATA "bench/testdata/"

#define LIST(...)                                                              \
	((const int[]){__VA_ARGS__}),                                          \
		(sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

static void skip(const char *what, const char *why)
{
	tap_ok(true, "%s # SKIP %s", what, why);
}

static bool same_list(const int *a, unsigned int na, const int *b,
		      unsigned int nb)
{
	return na == nb && !memcmp(a, b, na * sizeof(*a));
}

static bool in_list(int cpu, const int *list, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n && i < MAX_CPUS; i++)
		if (list[i] == cpu)
			return true;
	return false;
}

/* ---- loading ---- */

static struct pin_topology *from(const char *desc, const char *what)
{
	struct pin_topology *t;
	int rc = pin_topology_init_from(&t, desc);

	tap_ok(rc == 0 && t, "%s loads%s%s", what, rc ? ": " : "",
	       rc ? strerror(errno) : "");
	return rc ? NULL : t;
}

/* a file of bench/testdata/ as one string; NULL (and a failed test) if not */
static char *read_testdata(const char *name)
{
	char path[256], *buf = NULL;
	size_t n = 0, cap = 0, got;
	FILE *f;

	snprintf(path, sizeof(path), TESTDATA "%s", name);
	f = fopen(path, "r");
	if (!f) {
		tap_ok(false, "%s opens: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *p = realloc(buf, cap = n + 4096 + 1);

			if (!p)
				abort();
			buf = p;
		}
		got = fread(buf + n, 1, 4096, f);
		if (!got)
			break;
		n += got;
	}
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static struct pin_topology *from_xml(const char *name)
{
	char *xml = read_testdata(name);
	struct pin_topology *t;

	if (!xml)
		return NULL;
	t = from(xml, name);
	free(xml);
	return t;
}

/* ---- what a topology answers ---- */

static void expect_cpus(const struct pin_topology *t, const char *spec,
			const int *want, unsigned int nwant)
{
	int cpus[MAX_CPUS];
	unsigned int n = 0;
	char err[256];
	int rc = pin_parse_cpus(t, spec, cpus, MAX_CPUS, &n, err, sizeof(err));

	tap_ok(rc == 0 && same_list(cpus, n, want, nwant),
	       "\"%s\" parses to %u CPUs as given%s%s", spec, nwant,
	       rc ? ": " : "", rc ? err : "");
}

static void expect_error(const struct pin_topology *t, const char *spec,
			 int want_errno, const char *needle)
{
	int cpus[MAX_CPUS];
	unsigned int n = 7;
	char err[256] = "untouched";
	int rc;

	errno = 0;
	rc = pin_parse_cpus(t, spec, cpus, MAX_CPUS, &n, err, sizeof(err));
	tap_ok(rc == -1 && errno == want_errno && n == 0 &&
		       !strncmp(err, "--cpus: ", 8) && strstr(err, needle) &&
		       strstr(err, "(valid: "),
	       "\"%s\" -> %s: %s", spec,
	       want_errno == EINVAL ? "EINVAL" : "ERANGE", err);
}

/* the whole line, for the cases where the user reads exactly this */
static void expect_message(const struct pin_topology *t, const char *spec,
			   const char *want)
{
	int cpus[MAX_CPUS];
	unsigned int n;
	char err[256] = "";

	pin_parse_cpus(t, spec, cpus, MAX_CPUS, &n, err, sizeof(err));
	tap_ok(!strcmp(err, want), "\"%s\" is refused with \"%s\" (got \"%s\")",
	       spec, want, err);
}

static void expect_siblings(const struct pin_topology *t, int cpu,
			    const int *want, unsigned int nwant)
{
	int sib[MAX_CPUS];
	unsigned int n = pin_siblings(t, cpu, sib, MAX_CPUS), i;
	char got[256] = "";

	for (i = 0; i < n && i < 32; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%d",
			 i ? "," : "", sib[i]);
	tap_ok(same_list(sib, n, want, nwant),
	       "the allowed PUs of CPU %d's core are %u: %s", cpu, nwant, got);
}

static void expect_l1d(const struct pin_topology *t, int cpu, size_t size,
		       unsigned int ways)
{
	size_t got = pin_l1d_size(t, cpu);
	unsigned int got_ways = pin_l1d_ways(t, cpu);

	tap_ok(got == size && got_ways == ways,
	       "L1d of CPU %d: %zu bytes, %u-way (got %zu, %u)", cpu, size,
	       ways, got, got_ways);
}

static void expect_kind(const struct pin_topology *t, int cpu, const char *want)
{
	char buf[64] = "untouched";
	int len = pin_cpu_kind(t, cpu, buf, sizeof(buf));

	tap_ok(len == (int)strlen(want) && !strcmp(buf, want),
	       "CPU %d is of kind \"%s\" (got %d, \"%s\")", cpu, want, len,
	       buf);
}

/*
 * Binding to a described topology is refused before anything reaches the
 * OS: the thread's affinity is what it was.
 */
static void expect_bind_refused(const struct pin_topology *t, int cpu)
{
	cpu_set_t before, after;
	int rc;

	CPU_ZERO(&before);
	CPU_ZERO(&after);
	sched_getaffinity(0, sizeof(before), &before);
	errno = 0;
	rc = pin_bind_thread(t, cpu);
	tap_ok(rc == -1 && errno == EXDEV &&
		       strstr(pin_bind_error(), "not from this system"),
	       "binding to described CPU %d -> EXDEV: %s", cpu,
	       pin_bind_error());
	sched_getaffinity(0, sizeof(after), &after);
	tap_ok(CPU_EQUAL(&before, &after),
	       "the thread's affinity is untouched");
}

/* ---- topologies this machine does not have ---- */

static void check_bad_descriptions(void)
{
	static const char *const bad[] = {
		"",
		"pack:2 bogus:3 pu:1",
		"pack:0 pu:1",
		"<topology version=\"2.0\"><object type=",
	};
	struct pin_topology *t = (struct pin_topology *)1;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		tap_ok(pin_topology_init_from(&t, bad[i]) == -1 &&
			       errno == EINVAL && !t,
		       "\"%s\" is refused: EINVAL, no topology", bad[i]);
	}
	errno = 0;
	tap_ok(pin_topology_init_from(&t, NULL) == -1 && errno == EINVAL && !t,
	       "no description is refused: EINVAL");
}

/* --cpus on two single-thread cores, CPUs 0 and 1 */
static void check_parse(void)
{
	struct pin_topology *t = from("pack:1 core:2 pu:1", "two cores");
	int cpus[MAX_CPUS];
	unsigned int n;

	if (!t)
		return;
	expect_cpus(t, "0", LIST(0));
	expect_cpus(t, "0,1", LIST(0, 1));
	expect_cpus(t, "0-1", LIST(0, 1));
	expect_cpus(t, "1,0", LIST(1, 0));
	expect_cpus(t, "all", LIST(0, 1));
	expect_error(t, "0,0", EINVAL, "0 is listed twice");
	expect_error(t, "0-1,1", EINVAL, "1 is listed twice");
	errno = 0;
	tap_ok(pin_parse_cpus(t, "0,1", cpus, 1, &n, NULL, 0) == -1 &&
		       errno == E2BIG && n == 0,
	       "two CPUs into room for one -> E2BIG");

	expect_error(t, "", EINVAL, "\"\"");
	expect_error(t, "x", EINVAL, "\"x\"");
	expect_error(t, "0-", EINVAL, "\"0-\"");
	expect_error(t, "3-1", EINVAL, "3-1");
	expect_error(t, "1,,2", EINVAL, "\"1,,2\"");
	expect_error(t, "0,", EINVAL, "\"0,\"");
	expect_error(t, " 0", EINVAL, "\" 0\"");
	expect_error(t, "all,0", EINVAL, "\"all,0\"");
	expect_error(t, "99999999999", ERANGE, "99999999999 is not a CPU");
	expect_error(t, "-1", ERANGE, "-1 is not a CPU");
	/* saturated, not wrapped to a CPU that exists */
	expect_error(t, "-99999999999", ERANGE, "-99999999999 is not a CPU");
	expect_error(t, "-4294967296", ERANGE, "-4294967296 is not a CPU");
	expect_error(t, "2", ERANGE, "2 is not a CPU here");
	expect_error(t, "0-2", ERANGE, "0-2 includes 2, which is not a CPU");
	expect_message(t, "7", "--cpus: 7 is not a CPU here (valid: 0-1)");
	tap_ok(pin_default_cpu(t) == 1, "the default CPU is the last one, 1");
	expect_kind(t, 0, "");
	expect_bind_refused(t, 0);
	errno = 0;
	tap_ok(pin_bind_thread(t, 2) == -1 && errno == ERANGE &&
		       strstr(pin_bind_error(), "(valid: 0-1)"),
	       "binding to a CPU not described -> ERANGE: %s",
	       pin_bind_error());
	pin_topology_destroy(t);
}

/* on a synthetic topology, the writers for readers a and b are wa and wb */
static void expect_writers(const char *desc, int a, int wa, int b, int wb,
			   const char *why)
{
	struct pin_topology *t = from(desc, desc);
	int ga, gb;

	if (!t)
		return;
	ga = pin_default_writer_cpu(t, a);
	gb = pin_default_writer_cpu(t, b);
	tap_ok(ga == wa && gb == wb, "%s: %d -> %d, %d -> %d (got %d, %d)", why,
	       a, wa, b, wb, ga, gb);
	pin_topology_destroy(t);
}

static void check_smt(void)
{
	struct pin_topology *t = from("pack:1 core:4 pu:2", "4 cores x 2 SMT");
	int w;

	if (t) {
		tap_ok(pin_nr_pus(t) == 8, "8 PUs");
		expect_siblings(t, 0, LIST(0, 1));
		expect_siblings(t, 3, LIST(2, 3));
		tap_ok(pin_core_of(t, 2) == pin_core_of(t, 3) &&
			       pin_core_of(t, 3) != pin_core_of(t, 4) &&
			       pin_core_of(t, 0) != pin_core_of(t, 2),
		       "SMT siblings share a core, other PUs do not");
		w = pin_default_writer_cpu(t, 2);
		tap_ok(pin_pu_allowed(t, w) && w != 2 && w != 3,
		       "the writer for CPU 2 is on another core, not its "
		       "sibling 3 (%d)",
		       w);
		pin_topology_destroy(t);
	}

	expect_writers("pack:1 core:1 pu:2", 0, 1, 1, 0,
		       "with one core, the writer is the SMT sibling");
	expect_writers("pack:2 core:1 pu:2", 0, 2, 3, 0,
		       "a core of the other package goes before the SMT "
		       "sibling");

	t = from("pack:1 core:1 pu:1", "a single PU");
	if (t) {
		tap_ok(pin_nr_pus(t) == 1 && pin_default_cpu(t) == 0 &&
			       pin_default_writer_cpu(t, 0) == -1,
		       "one PU: it is the default, and there is no writer");
		expect_siblings(t, 0, LIST(0));
		pin_topology_destroy(t);
	}
}

/* synthetic PUs are numbered in order: 8 per package here */
static void check_packages_numa(void)
{
	struct pin_topology *t =
		from("pack:2 numa:2 l2:2 l1d:1(size=48KiB) core:1 pu:2",
		     "2 packages x 2 NUMA nodes x 2 cores x 2 SMT");
	unsigned int bad = 0;
	char buf[128];
	int c;

	if (!t)
		return;
	tap_ok(pin_nr_pus(t) == 16, "16 PUs");
	for (c = 0; c < 16; c++) {
		int w = pin_default_writer_cpu(t, c);

		if (w < 0 || w / 8 != c / 8 || w / 2 == c / 2) {
			tap_diag("writer for %d: %d", c, w);
			bad++;
		}
	}
	tap_ok(!bad, "every CPU's writer is another core of its own package");
	/* synthetic caches have a size but no associativity */
	expect_l1d(t, 0, 49152, 0);
	expect_l1d(t, 15, 49152, 0);
	tap_ok(pin_describe(t, 9, buf, sizeof(buf)) > 0 &&
		       !strcmp(buf, "package 1 core 4 pu 9 (L1d 48 KiB)"),
	       "CPU 9 is \"%s\"", buf);
	expect_bind_refused(t, 15);
	pin_topology_destroy(t);
}

static void check_intel_hybrid(void)
{
	struct pin_topology *t = from_xml("intel_hybrid.xml");
	char buf[128];
	int w, len;

	if (!t)
		return;
	tap_ok(pin_nr_pus(t) == 8, "8 PUs");
	expect_l1d(t, 0, 49152, 12);
	expect_l1d(t, 3, 49152, 12);
	expect_l1d(t, 4, 32768, 8);
	expect_l1d(t, 7, 32768, 8);
	expect_siblings(t, 1, LIST(0, 1));
	expect_siblings(t, 5, LIST(5));
	w = pin_default_writer_cpu(t, 0);
	tap_ok(pin_pu_allowed(t, w) && w != 0 && w != 1,
	       "the writer for P-core CPU 0 is on another core (%d)", w);
	expect_kind(t, 0, "IntelCore");
	expect_kind(t, 3, "IntelCore");
	expect_kind(t, 4, "IntelAtom");
	expect_kind(t, 7, "IntelAtom");
	len = pin_cpu_kind(t, 4, buf, 4);
	tap_ok(len == 9 && !strcmp(buf, "Int"),
	       "a short buffer gets what fits, the full length returned");
	errno = 0;
	tap_ok(pin_cpu_kind(t, 8, buf, sizeof(buf)) == -1 && errno == EINVAL &&
		       !buf[0],
	       "a CPU not described has no kind: EINVAL");
	len = pin_describe(t, 2, buf, sizeof(buf));
	tap_ok(len > 0 && !strcmp(buf, "package 0 core 4 pu 2 (L1d 48 KiB)"),
	       "CPU 2 is \"%s\"", buf);
	expect_bind_refused(t, 0);
	pin_topology_destroy(t);
}

/* Zen 5 and Zen 5c: 48 KiB L1d everywhere; kinds by frequency only */
static void check_amd_hybrid(void)
{
	struct pin_topology *t = from_xml("amd_zen5_hybrid.xml");

	if (!t)
		return;
	expect_l1d(t, 0, 49152, 12);
	expect_l1d(t, 6, 49152, 12);
	expect_kind(t, 0, "kind 1");
	expect_kind(t, 4, "kind 0");
	expect_siblings(t, 6, LIST(6, 7));
	pin_topology_destroy(t);
}

/* complete_cpuset 0-7, online 0-3 */
static void check_offline(void)
{
	struct pin_topology *t = from_xml("offline_cpus.xml");
	int sib[MAX_CPUS], w;
	char buf[128];

	if (!t)
		return;
	tap_ok(pin_nr_pus(t) == 4 && !pin_pu_allowed(t, 4) &&
		       !pin_pu_allowed(t, 7),
	       "4 PUs allowed: the offline CPUs 4-7 are not");
	expect_cpus(t, "all", LIST(0, 1, 2, 3));
	expect_message(t, "5", "--cpus: 5 is not a CPU here (valid: 0-3)");
	expect_error(t, "2-5", ERANGE, "2-5 includes 4, which is not a CPU");
	tap_ok(pin_default_cpu(t) == 3,
	       "the default CPU is the last online, 3");
	w = pin_default_writer_cpu(t, 3);
	tap_ok(w >= 0 && w <= 2, "the writer for CPU 3 is online (%d)", w);
	errno = 0;
	tap_ok(pin_describe(t, 5, buf, sizeof(buf)) == -1 && errno == EINVAL &&
		       !pin_siblings(t, 5, sib, MAX_CPUS) &&
		       pin_l1d_size(t, 5) == 0 && pin_l1d_ways(t, 5) == 0,
	       "an offline CPU has no description, siblings or L1d");
	expect_l1d(t, 0, 0, 0);
	pin_topology_destroy(t);
}

/* CPUs 0-3, two SMT cores, in a cpuset of 1-3 */
static void check_no_cpu0(void)
{
	struct pin_topology *t = from_xml("no_cpu0.xml");
	int cpus[MAX_CPUS], w;
	unsigned int n = 0;

	if (!t)
		return;
	tap_ok(pin_nr_pus(t) == 3 && !pin_pu_allowed(t, 0),
	       "3 PUs allowed, CPU 0 not");
	tap_ok(!pin_parse_cpus(t, "all", cpus, MAX_CPUS, &n, NULL, 0) &&
		       !in_list(0, cpus, n),
	       "\"all\" does not include CPU 0");
	expect_cpus(t, "all", LIST(1, 2, 3));
	tap_ok(pin_default_cpu(t) == 3, "the default CPU is 3, not 0");
	expect_message(t, "0", "--cpus: 0 is not a CPU here (valid: 1-3)");
	expect_error(t, "0-1", ERANGE, "0-1 includes 0, which is not a CPU");
	/* CPU 1's SMT sibling is CPU 0, which this process may not use */
	expect_siblings(t, 1, LIST(1));
	w = pin_default_writer_cpu(t, 3);
	tap_ok(w == 1, "the writer for CPU 3 is 1, on the other core (%d)", w);
	w = pin_default_writer_cpu(t, 1);
	tap_ok(w == 2 || w == 3, "the writer for CPU 1 is not 0 (%d)", w);
	errno = 0;
	tap_ok(pin_bind_thread(t, 0) == -1 && errno == ERANGE &&
		       strstr(pin_bind_error(), "(valid: 1-3)"),
	       "binding to CPU 0 -> ERANGE: %s", pin_bind_error());
	pin_topology_destroy(t);
}

/* ---- this machine: what holds on any machine ---- */

/* one word of /sys/devices/system/cpu/cpuN/cache/indexI/name */
static bool cache_attr(int cpu, unsigned int idx, const char *name, char *buf)
{
	char path[128];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/cpu/cpu%d/cache/index%u/%s", cpu, idx,
		 name);
	f = fopen(path, "r");
	if (!f)
		return false;
	ok = fscanf(f, "%31s", buf) == 1;
	fclose(f);
	return ok;
}

/* sysfs's own L1 data cache of cpu: size in bytes (0 if none) and ways */
static size_t sysfs_l1d(int cpu, unsigned int *ways)
{
	char level[32], type[32], size[32], w[32];
	unsigned int idx;

	*ways = 0;
	for (idx = 0; cache_attr(cpu, idx, "level", level); idx++)
		if (!strcmp(level, "1") && cache_attr(cpu, idx, "type", type) &&
		    strcmp(type, "Instruction") &&
		    cache_attr(cpu, idx, "size", size)) {
			if (cache_attr(cpu, idx, "ways_of_associativity", w))
				*ways = strtoul(w, NULL, 10);
			return strtoul(size, NULL, 10) *
			       (strchr(size, 'K') ? 1024 : 1);
		}
	return 0;
}

static void check_machine_cpus(const struct pin_topology *t, const int *all,
			       unsigned int nr_all)
{
	cpu_set_t mine;
	char spec[32];
	int c, cpu = pin_default_cpu(t);
	unsigned int bad = 0;

	tap_ok(!pin_pu_allowed(t, -1) && !pin_pu_allowed(t, 1 << 30),
	       "-1 and 2^30 are not allowed PUs");
	if (!sched_getaffinity(0, sizeof(mine), &mine)) {
		for (c = 0; c < CPU_SETSIZE; c++)
			bad += CPU_ISSET(c, &mine) && !pin_pu_allowed(t, c);
		tap_ok(!bad,
		       "every CPU in this process's affinity mask is allowed");
		for (c = 0, bad = 0; c < CPU_SETSIZE; c++)
			bad += pin_pu_allowed(t, c) && !CPU_ISSET(c, &mine);
		tap_ok(!bad, "every allowed CPU is in the affinity mask");
	}
	tap_ok(pin_pu_allowed(t, cpu) && cpu == all[nr_all - 1],
	       "the default CPU %d is the last allowed", cpu);

	/* the first CPU number that is not allowed here */
	for (c = 0; pin_pu_allowed(t, c); c++)
		;
	snprintf(spec, sizeof(spec), "%d", c);
	expect_error(t, spec, ERANGE, "is not a CPU here");
}

static void check_machine_cores(const struct pin_topology *t, const int *all,
				unsigned int nr_all)
{
	unsigned int i, bad = 0, other_core = 0;
	int sib[MAX_CPUS];

	for (i = 0; i < nr_all; i++) {
		unsigned int ns = pin_siblings(t, all[i], sib, MAX_CPUS), j;

		bad += pin_core_of(t, all[i]) < 0 || !ns ||
		       !in_list(all[i], sib, ns);
		for (j = 0; j < ns && j < MAX_CPUS; j++)
			bad += pin_core_of(t, sib[j]) != pin_core_of(t, all[i]);
		other_core += ns < nr_all;
	}
	tap_ok(!bad, "every PU's siblings include it and share its core");
	errno = 0;
	tap_ok(pin_core_of(t, -1) == -1 && errno == EINVAL &&
		       !pin_siblings(t, -1, sib, MAX_CPUS),
	       "an invalid PU has no core and no siblings");

	for (i = 0, bad = 0; i < nr_all; i++) {
		int cpu = all[i], w = pin_default_writer_cpu(t, cpu);
		unsigned int ns = pin_siblings(t, cpu, sib, MAX_CPUS);

		if (nr_all == 1)
			bad += w != -1;
		else if (ns < nr_all)
			/* the topology has another core: the writer is on it */
			bad += w == cpu || !pin_pu_allowed(t, w) ||
			       in_list(w, sib, ns);
		else
			bad += w == cpu || !pin_pu_allowed(t, w);
		if (i == 0)
			tap_diag("default writer for a reader on %d: %d", cpu,
				 w);
	}
	tap_ok(!bad, "the default writer is %s",
	       nr_all == 1  ? "-1 on a single PU"
	       : other_core ? "another PU on another core"
			    : "another PU of the only core");
	errno = 0;
	tap_ok(pin_default_writer_cpu(t, -1) == -1 && errno == EINVAL,
	       "no default writer for an invalid PU");
}

static void check_machine_bind(const struct pin_topology *t, const int *all,
			       unsigned int nr_all)
{
	unsigned int i, bad = 0;
	cpu_set_t saved, now;

	if (sched_getaffinity(0, sizeof(saved), &saved))
		CPU_ZERO(&saved);
	for (i = 0; i < nr_all && i < 64; i++) {
		int rc = pin_bind_thread(t, all[i]);

		/* the kernel migrates a task off CPUs it may no longer use
		 * before sched_setaffinity returns, so this is deterministic */
		if (rc || sched_getcpu() != all[i] ||
		    sched_getaffinity(0, sizeof(now), &now) ||
		    CPU_COUNT(&now) != 1 || !CPU_ISSET(all[i], &now)) {
			tap_diag("bind to %d: rc %d (%s), now on %d", all[i],
				 rc, pin_bind_error(), sched_getcpu());
			bad++;
		}
	}
	tap_ok(!bad, "bound to each of %u PUs in turn, the thread runs there",
	       i);
	errno = 0;
	tap_ok(pin_bind_thread(t, -1) == -1 && errno == ERANGE &&
		       strstr(pin_bind_error(), "valid: "),
	       "binding to -1 -> ERANGE: %s", pin_bind_error());
	if (CPU_COUNT(&saved))
		sched_setaffinity(0, sizeof(saved), &saved);
}

static void check_machine_caches(const struct pin_topology *t, const int *all,
				 unsigned int nr_all)
{
	unsigned int i, bad = 0, known = 0, ways, sys_ways;
	int cpu = all[0], len;
	size_t l1, sys;
	char buf[128], pu[32];

	/* a cache is whole lines: nothing about its size or shape beyond */
	for (i = 0; i < nr_all; i++) {
		l1 = pin_l1d_size(t, all[i]);
		ways = pin_l1d_ways(t, all[i]);
		known += l1 != 0;
		bad += l1 % 64 != 0 || (!l1 && ways);
	}
	tap_ok(!bad,
	       "every PU's L1d is unknown or a whole number of 64-byte lines "
	       "(%u of %u known)",
	       known, nr_all);

	l1 = pin_l1d_size(t, cpu);
	ways = pin_l1d_ways(t, cpu);
	sys = sysfs_l1d(cpu, &sys_ways);
	if (l1 && sys) {
		tap_ok(l1 == sys,
		       "hwloc's L1d of PU %d agrees with sysfs (%zu)", cpu,
		       sys);
		if (ways && sys_ways)
			tap_ok(ways == sys_ways,
			       "hwloc's L1d ways agree with sysfs (%u)",
			       sys_ways);
		else
			skip("L1d ways against sysfs",
			     "hwloc or sysfs does not know them here");
	} else {
		skip("L1d against sysfs",
		     "hwloc or sysfs reports no L1 data cache here");
	}
	tap_ok(pin_l1d_size(t, -1) == 0 && pin_l1d_ways(t, -1) == 0,
	       "an invalid PU has no L1d");

	for (i = nr_all, bad = 0; i-- > 0;) {
		len = pin_cpu_kind(t, all[i], buf, sizeof(buf));
		bad += len < 0 || (size_t)len != strlen(buf);
	}
	/* buf: the kind of all[0], the last one asked */
	tap_ok(!bad, "every PU has a kind, or none (\"%s\" for PU %d)", buf,
	       cpu);

	len = pin_describe(t, cpu, buf, sizeof(buf));
	snprintf(pu, sizeof(pu), "pu %d", cpu);
	tap_ok(len > 0 && (size_t)len == strlen(buf) && strstr(buf, pu) &&
		       strstr(buf, "core "),
	       "PU %d is \"%s\"", cpu, buf);
	errno = 0;
	tap_ok(pin_describe(t, -1, buf, sizeof(buf)) == -1 && errno == EINVAL,
	       "an invalid PU has no description");
}

/* ---- a narrowed affinity mask, as under `taskset -c N` ---- */

/* the child's results, one "1 text" or "0 text" line each, for the parent */
static FILE *child_out;

__attribute__((format(printf, 2, 3))) static void child_ok(bool ok,
							   const char *fmt, ...)
{
	va_list ap;

	fprintf(child_out, "%d ", ok);
	va_start(ap, fmt);
	vfprintf(child_out, fmt, ap);
	va_end(ap);
	fputc('\n', child_out);
}

/* in the child, its mask narrowed to cpu: other is a CPU it may not use */
static void narrowed_checks(int cpu, int other, bool other_in_cgroup)
{
	struct pin_topology *t, *d;
	int cpus[MAX_CPUS], rc;
	unsigned int n = 0;
	char spec[32], err[256] = "", want[256];

	if (pin_topology_init(&t)) {
		child_ok(false, "the topology loads under a one-CPU mask: %s",
			 strerror(errno));
		return;
	}
	child_ok(pin_nr_pus(t) == 1 && pin_pu_allowed(t, cpu) &&
			 !pin_pu_allowed(t, other),
		 "under a mask of CPU %d, only CPU %d is allowed (%u PUs)", cpu,
		 cpu, pin_nr_pus(t));
	child_ok(pin_default_cpu(t) == cpu, "the default CPU is %d (got %d)",
		 cpu, pin_default_cpu(t));
	rc = pin_parse_cpus(t, "all", cpus, MAX_CPUS, &n, NULL, 0);
	child_ok(!rc && n == 1 && cpus[0] == cpu, "\"all\" is CPU %d alone",
		 cpu);
	child_ok(pin_default_writer_cpu(t, cpu) == -1,
		 "no default writer CPU besides the only one (got %d)",
		 pin_default_writer_cpu(t, cpu));
	snprintf(spec, sizeof(spec), "%d", other);
	errno = 0;
	rc = pin_parse_cpus(t, spec, cpus, MAX_CPUS, &n, err, sizeof(err));
	if (other_in_cgroup)
		snprintf(want, sizeof(want),
			 "--cpus: %d is not a CPU this process may use "
			 "(allowed: %d)",
			 other, cpu);
	else
		snprintf(want, sizeof(want),
			 "--cpus: %d is not a CPU here (valid: %d)", other,
			 cpu);
	child_ok(rc == -1 && errno == ERANGE && !strcmp(err, want),
		 "--cpus %d is refused with \"%s\" (got \"%s\")", other, want,
		 err);
	errno = 0;
	child_ok(pin_bind_thread(t, other) == -1 && errno == ERANGE,
		 "binding to CPU %d is refused: %s", other, pin_bind_error());
	pin_topology_destroy(t);

	/* a description is not this process: its own allowed set stays */
	if (hwloc_sysfs) {
		/* (no descriptions there: refused, checked in main) */
	} else if (!pin_topology_init_from(&d, "pack:1 core:4 pu:1")) {
		child_ok(pin_nr_pus(d) == 4 && pin_default_cpu(d) == 3,
			 "a described topology keeps its 4 PUs under the mask");
		pin_topology_destroy(d);
	} else {
		child_ok(false, "the described topology loads");
	}
}

/*
 * A child narrows its own affinity to one CPU this process may use, then
 * checks what the topology allows; its lines come back over a pipe and are
 * reported here. On a machine with one CPU, "another CPU" is one that does
 * not exist.
 */
static void check_narrowed_affinity(const struct pin_topology *t)
{
	cpu_set_t mine, one;
	int fds[2], status, cpu = -1, other = -1, c;
	char line[512];
	FILE *in;
	pid_t pid;

	if (sched_getaffinity(0, sizeof(mine), &mine)) {
		skip("a narrowed affinity mask", strerror(errno));
		return;
	}
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &mine) || !pin_pu_allowed(t, c))
			continue;
		if (cpu < 0)
			cpu = c;
		else if (other < 0)
			other = c;
	}
	if (cpu < 0) {
		tap_ok(false, "some CPU of the affinity mask is allowed");
		return;
	}
	if (other < 0)
		for (other = cpu + 1; pin_pu_allowed(t, other); other++)
			;
	if (pipe(fds)) {
		tap_ok(false, "pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		child_out = fdopen(fds[1], "w");
		if (!child_out)
			_exit(3);
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			child_ok(false, "sched_setaffinity to CPU %d: %s", cpu,
				 strerror(errno));
		else
			narrowed_checks(cpu, other, pin_pu_allowed(t, other));
		fclose(child_out);
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		tap_ok(false, "fork: %s", strerror(errno));
		return;
	}
	in = fdopen(fds[0], "r");
	while (in && fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = '\0';
		tap_ok(line[0] == '1', "%s", line + 2);
	}
	if (in)
		fclose(in);
	tap_ok(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		       WEXITSTATUS(status) == 0,
	       "the child with a narrowed mask ran to the end");
}

static void check_this_machine(void)
{
	static int all[MAX_CPUS];
	struct pin_topology *t;
	unsigned int nr_all = 0;

	if (pin_topology_init(&t)) {
		tap_ok(false, "this machine's topology loads: %s",
		       strerror(errno));
		return;
	}
	tap_ok(pin_parse_cpus(t, "all", all, MAX_CPUS, &nr_all, NULL, 0) == 0 &&
		       nr_all == pin_nr_pus(t) && nr_all > 0,
	       "this machine's topology loads: \"all\" gives the %u allowed "
	       "PUs",
	       pin_nr_pus(t));
	if (nr_all) {
		check_machine_cpus(t, all, nr_all);
		check_machine_cores(t, all, nr_all);
		check_machine_bind(t, all, nr_all);
		check_machine_caches(t, all, nr_all);
		check_narrowed_affinity(t);
	}
	pin_topology_destroy(t);
}

/* hwloc_sysfs: a description refused, so that none is taken for sysfs's */
static void check_descriptions_refused(void)
{
	struct pin_topology *t;
	int rc = pin_topology_init_from(&t, "pack:1 core:2 pu:1");

	tap_ok(rc == -1 && errno == ENOSYS && !t,
	       "hwloc_sysfs: a description is refused (ENOSYS)");
	skip("the topologies from descriptions",
	     "hwloc_sysfs (the i386 build) loads this machine's alone");
}

int main(void)
{
	if (hwloc_sysfs) {
		check_descriptions_refused();
	} else {
		check_bad_descriptions();
		check_parse();
		check_smt();
		check_packages_numa();
		check_intel_hybrid();
		check_amd_hybrid();
		check_offline();
		check_no_cpu0();
	}
	check_this_machine();
	return tap_done();
}
