// SPDX-License-Identifier: GPL-2.0
/*
 * pin against the machine it runs on: what it may assert depends on the
 * topology (one PU or many, SMT or not, an L1 hwloc can see or not), so
 * each check asserts what this topology implies and skips, with the
 * reason, what it cannot show here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/pin.h"
#include "testing/tap.h"

#define MAX_CPUS 1024

static struct pin_topology *topo;
static int all[MAX_CPUS];
static unsigned int nr_all;

static void skip(const char *what, const char *why)
{
	tap_ok(true, "%s # SKIP %s", what, why);
}

static bool same_list(const int *a, unsigned int na, const int *b,
		      unsigned int nb)
{
	return na == nb && !memcmp(a, b, na * sizeof(*a));
}

static void expect_cpus(const char *spec, const int *want, unsigned int nwant)
{
	int cpus[MAX_CPUS];
	unsigned int n = 0;
	char err[256];
	int rc = pin_parse_cpus(topo, spec, cpus, MAX_CPUS, &n, err,
				sizeof(err));

	tap_ok(rc == 0 && same_list(cpus, n, want, nwant),
	       "\"%s\" parses to %u CPUs as given%s%s", spec, nwant,
	       rc ? ": " : "", rc ? err : "");
}

static void expect_error(const char *spec, int want_errno, const char *needle)
{
	int cpus[MAX_CPUS];
	unsigned int n = 7;
	char err[256] = "untouched";
	int rc;

	errno = 0;
	rc = pin_parse_cpus(topo, spec, cpus, MAX_CPUS, &n, err, sizeof(err));
	tap_ok(rc == -1 && errno == want_errno && n == 0 &&
		       !strncmp(err, "--cpus: ", 8) && strstr(err, needle) &&
		       strstr(err, "(valid: "),
	       "\"%s\" -> %s: %s", spec,
	       want_errno == EINVAL ? "EINVAL" : "ERANGE", err);
}

static void check_parse(void)
{
	static const int zero_one[] = {0, 1}, one_zero[] = {1, 0};
	char spec[32];
	int cpus[MAX_CPUS], c;
	unsigned int n;

	tap_ok(pin_parse_cpus(topo, "all", all, MAX_CPUS, &nr_all, NULL, 0) ==
			       0 &&
		       nr_all == pin_nr_pus(topo) && nr_all > 0,
	       "\"all\" gives the %u allowed PUs", pin_nr_pus(topo));

	if (pin_pu_allowed(topo, 0) && pin_pu_allowed(topo, 1)) {
		expect_cpus("0", zero_one, 1);
		expect_cpus("0,1", zero_one, 2);
		expect_cpus("0-1", zero_one, 2);
		expect_cpus("1,0", one_zero, 2);
		if (nr_all == 2)
			expect_cpus("all", zero_one, 2);
		expect_error("0,0", EINVAL, "0 is listed twice");
		expect_error("0-1,1", EINVAL, "1 is listed twice");
		tap_ok(pin_parse_cpus(topo, "0,1", cpus, 1, &n, NULL, 0) ==
				       -1 &&
			       errno == E2BIG,
		       "two CPUs into room for one -> E2BIG");
	} else {
		skip("the literal specs 0, 0,1, 0-1, 1,0",
		     "CPUs 0 and 1 are not both allowed here");
	}

	expect_error("", EINVAL, "\"\"");
	expect_error("x", EINVAL, "\"x\"");
	expect_error("0-", EINVAL, "\"0-\"");
	expect_error("3-1", EINVAL, "3-1");
	expect_error("1,,2", EINVAL, "\"1,,2\"");
	expect_error("0,", EINVAL, "\"0,\"");
	expect_error(" 0", EINVAL, "\" 0\"");
	expect_error("all,0", EINVAL, "\"all,0\"");
	expect_error("99999999999", ERANGE, "99999999999 is not a CPU");
	expect_error("-1", ERANGE, "-1 is not a CPU");
	/* saturated, not wrapped to a CPU that exists */
	expect_error("-99999999999", ERANGE, "-99999999999 is not a CPU");
	expect_error("-4294967296", ERANGE, "-4294967296 is not a CPU");

	/* the first CPU number that is not allowed here */
	for (c = 0; pin_pu_allowed(topo, c); c++)
		;
	snprintf(spec, sizeof(spec), "%d", c);
	expect_error(spec, ERANGE, "is not a CPU here");
	snprintf(spec, sizeof(spec), "0-%d", c);
	if (pin_pu_allowed(topo, 0))
		expect_error(spec, ERANGE, "which is not a CPU here");
	if (!pin_pu_allowed(topo, 99))
		expect_error("99", ERANGE, "99 is not a CPU here");
	if (nr_all == 2 && all[0] == 0 && all[1] == 1) {
		char err[128];

		pin_parse_cpus(topo, "7", cpus, MAX_CPUS, &n, err, sizeof(err));
		tap_ok(!strcmp(err, "--cpus: 7 is not a CPU here (valid: 0-1)"),
		       "the message lists the valid CPUs: %s", err);
	}
}

static bool in_list(int cpu, const int *list, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n && i < MAX_CPUS; i++)
		if (list[i] == cpu)
			return true;
	return false;
}

static void check_topology(void)
{
	unsigned int i, bad = 0, other_core = 0;
	cpu_set_t mine;
	int sib[MAX_CPUS], c;

	tap_ok(!pin_pu_allowed(topo, -1) && !pin_pu_allowed(topo, 1 << 30),
	       "-1 and 2^30 are not allowed PUs");

	if (!sched_getaffinity(0, sizeof(mine), &mine)) {
		for (c = 0; c < CPU_SETSIZE; c++)
			bad += CPU_ISSET(c, &mine) && !pin_pu_allowed(topo, c);
		tap_ok(!bad,
		       "every CPU in this process's affinity mask is allowed");
	}

	for (i = 0, bad = 0; i < nr_all; i++) {
		unsigned int ns = pin_siblings(topo, all[i], sib, MAX_CPUS), j;

		bad += pin_core_of(topo, all[i]) < 0 || !ns ||
		       !in_list(all[i], sib, ns);
		for (j = 0; j < ns && j < MAX_CPUS; j++)
			bad += pin_core_of(topo, sib[j]) !=
			       pin_core_of(topo, all[i]);
		other_core += ns < nr_all;
	}
	tap_ok(!bad, "every PU's siblings include it and share its core");
	tap_ok(pin_core_of(topo, -1) == -1 && errno == EINVAL &&
		       !pin_siblings(topo, -1, sib, MAX_CPUS),
	       "an invalid PU has no core and no siblings");

	for (i = 0, bad = 0; i < nr_all; i++) {
		int cpu = all[i], w = pin_default_writer_cpu(topo, cpu);
		unsigned int ns = pin_siblings(topo, cpu, sib, MAX_CPUS);

		if (nr_all == 1)
			bad += w != -1;
		else if (ns < nr_all)
			/* the topology has another core: the writer is on it */
			bad += w == cpu || !pin_pu_allowed(topo, w) ||
			       in_list(w, sib, ns);
		else
			bad += w == cpu || !pin_pu_allowed(topo, w);
		if (i == 0)
			tap_diag("default writer for a reader on %d: %d", cpu,
				 w);
	}
	tap_ok(!bad, "the default writer is %s",
	       nr_all == 1  ? "-1 on a single PU"
	       : other_core ? "another PU on another core"
			    : "another PU of the only core");
	tap_ok(pin_default_writer_cpu(topo, -1) == -1 && errno == EINVAL,
	       "no default writer for an invalid PU");
}

static void check_bind(void)
{
	unsigned int i, bad = 0;
	cpu_set_t saved, now;

	if (sched_getaffinity(0, sizeof(saved), &saved))
		CPU_ZERO(&saved);
	for (i = 0; i < nr_all && i < 64; i++) {
		int rc = pin_bind_thread(topo, all[i]);

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
	tap_ok(pin_bind_thread(topo, -1) == -1 && errno == ERANGE &&
		       strstr(pin_bind_error(), "valid: "),
	       "binding to -1 -> ERANGE: %s", pin_bind_error());
	if (CPU_COUNT(&saved))
		sched_setaffinity(0, sizeof(saved), &saved);
}

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

/* sysfs's own L1 data cache size for cpu, in bytes; 0 if it has none */
static size_t sysfs_l1d(int cpu)
{
	char level[32], type[32], size[32];
	unsigned int idx;

	for (idx = 0; cache_attr(cpu, idx, "level", level); idx++)
		if (!strcmp(level, "1") && cache_attr(cpu, idx, "type", type) &&
		    strcmp(type, "Instruction") &&
		    cache_attr(cpu, idx, "size", size))
			return strtoul(size, NULL, 10) *
			       (strchr(size, 'K') ? 1024 : 1);
	return 0;
}

static void check_cache_and_describe(void)
{
	int cpu = all[0];
	size_t l1 = pin_l1d_size(topo, cpu), sys = sysfs_l1d(cpu);
	char buf[128], pu[32];
	int len;

	if (l1) {
		tap_ok(l1 % 1024 == 0 && !(l1 & (l1 - 1)),
		       "L1d of PU %d is %zu bytes, a power of two KiB", cpu,
		       l1);
		if (sys)
			tap_ok(l1 == sys, "hwloc's L1d agrees with sysfs (%zu)",
			       sys);
		else
			skip("L1d against sysfs",
			     "sysfs lists no L1 data cache");
	} else {
		skip("L1d size", "hwloc reports no L1 data cache here");
	}
	tap_ok(pin_l1d_size(topo, -1) == 0, "an invalid PU has no L1d");

	len = pin_describe(topo, cpu, buf, sizeof(buf));
	snprintf(pu, sizeof(pu), "pu %d", cpu);
	tap_ok(len > 0 && (size_t)len == strlen(buf) && strstr(buf, pu) &&
		       strstr(buf, "core "),
	       "PU %d is \"%s\"", cpu, buf);
	tap_ok(pin_describe(topo, -1, buf, sizeof(buf)) == -1 &&
		       errno == EINVAL,
	       "an invalid PU has no description");
}

int main(void)
{
	if (pin_topology_init(&topo)) {
		tap_ok(false, "hwloc topology loads: %s", strerror(errno));
		return tap_done();
	}
	tap_ok(true, "hwloc topology loads: %u PUs allowed", pin_nr_pus(topo));
	check_parse();
	check_topology();
	check_bind();
	check_cache_and_describe();
	pin_topology_destroy(topo);
	return tap_done();
}
