// SPDX-License-Identifier: GPL-2.0
/*
 * Pinning and topology over hwloc. hwloc rather than sched_setaffinity and
 * /sys parsing because it already knows which PUs share a core and which
 * caches sit above them on every machine the harness meets (SMT or not,
 * containers with a cgroup cpuset, VMs that report odd topologies).
 */
#define _GNU_SOURCE /* sched_getaffinity(), CPU_ALLOC() */
#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/pin.h"

struct pin_topology {
	hwloc_topology_t topo;
	/* hwloc's allowed cpuset (the cgroup's), owned by topo */
	hwloc_const_cpuset_t cgroup;
	/* what this process may use: cgroup, or cgroup & affinity (owned) */
	hwloc_const_cpuset_t allowed;
	hwloc_bitmap_t narrowed;
	/* loaded from a description: not this machine, never bound to */
	bool described;
};

static __thread char bind_err[256];

/* point hwloc at a description: XML if it starts with '<', else synthetic */
static int set_source(hwloc_topology_t topo, const char *desc)
{
	size_t len;

	desc += strspn(desc, " \t\r\n");
	if (*desc != '<')
		return hwloc_topology_set_synthetic(topo, desc);
	/* hwloc's size counts the terminating NUL */
	len = strlen(desc) + 1;
	if (len > INT_MAX) {
		errno = E2BIG;
		return -1;
	}
	return hwloc_topology_set_xmlbuffer(topo, desc, (int)len);
}

/*
 * The calling thread's affinity mask as an hwloc bitmap: NULL (errno) if the
 * kernel does not say. The mask is sized up until the kernel's fits, so a
 * machine with more than CPU_SETSIZE CPUs is read whole.
 */
static hwloc_bitmap_t affinity_mask(void)
{
	hwloc_bitmap_t set;
	unsigned int n;
	int cpu;

	for (n = CPU_SETSIZE; n <= (1U << 22); n *= 2) {
		size_t size = CPU_ALLOC_SIZE(n);
		cpu_set_t *mask = CPU_ALLOC(n);

		if (!mask)
			return NULL;
		if (sched_getaffinity(0, size, mask)) {
			int err = errno;

			CPU_FREE(mask);
			if (err == EINVAL)
				continue; /* the kernel's mask is bigger */
			errno = err;
			return NULL;
		}
		set = hwloc_bitmap_alloc();
		for (cpu = 0; set && cpu < (int)n; cpu++)
			if (CPU_ISSET_S(cpu, size, mask))
				hwloc_bitmap_set(set, (unsigned int)cpu);
		CPU_FREE(mask);
		if (!set)
			errno = ENOMEM;
		return set;
	}
	errno = EINVAL;
	return NULL;
}

/*
 * This machine's allowed PUs: the cgroup's (hwloc's allowed cpuset) that are
 * also in the process's affinity mask, so that a run under `taskset -c 0`
 * stays on CPU 0. Where the mask cannot be read, the cgroup's alone.
 */
static int narrow_to_affinity(struct pin_topology *p)
{
	hwloc_bitmap_t mask = affinity_mask();

	if (!mask)
		return errno == ENOMEM ? -1 : 0;
	if (hwloc_bitmap_and(mask, mask, p->cgroup)) {
		hwloc_bitmap_free(mask);
		errno = ENOMEM;
		return -1;
	}
	p->narrowed = mask;
	p->allowed = mask;
	return 0;
}

/* this machine's topology if desc is NULL, else the one desc describes */
static int topology_load(struct pin_topology **t, const char *desc)
{
	struct pin_topology *p;
	int err;

	*t = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -1;
	if (hwloc_topology_init(&p->topo)) {
		err = errno;
		free(p);
		errno = err;
		return -1;
	}
	errno = 0;
	if (desc && set_source(p->topo, desc)) {
		err = errno ? errno : EINVAL;
		goto fail;
	}
	if (hwloc_topology_load(p->topo)) {
		err = errno ? errno : desc ? EINVAL : EIO;
		goto fail;
	}
	p->cgroup = hwloc_topology_get_allowed_cpuset(p->topo);
	p->allowed = p->cgroup;
	p->described = desc != NULL;
	/* a description keeps its own allowed set: it is not this process */
	if (!desc && narrow_to_affinity(p)) {
		err = errno;
		goto fail;
	}
	*t = p;
	return 0;
fail:
	hwloc_topology_destroy(p->topo);
	free(p);
	errno = err;
	return -1;
}

int pin_topology_init(struct pin_topology **t)
{
	return topology_load(t, NULL);
}

int pin_topology_init_from(struct pin_topology **t,
			   const char *synthetic_or_xml)
{
	if (!synthetic_or_xml) {
		*t = NULL;
		errno = EINVAL;
		return -1;
	}
	return topology_load(t, synthetic_or_xml);
}

void pin_topology_destroy(struct pin_topology *t)
{
	if (!t)
		return;
	hwloc_bitmap_free(t->narrowed);
	hwloc_topology_destroy(t->topo);
	free(t);
}

unsigned int pin_nr_pus(const struct pin_topology *t)
{
	int w = hwloc_bitmap_weight(t->allowed);

	return w > 0 ? (unsigned int)w : 0;
}

bool pin_pu_allowed(const struct pin_topology *t, int cpu)
{
	return cpu >= 0 && hwloc_bitmap_isset(t->allowed, (unsigned int)cpu);
}

int pin_default_cpu(const struct pin_topology *t)
{
	int cpu = hwloc_bitmap_last(t->allowed);

	if (cpu < 0)
		errno = ENODEV;
	return cpu < 0 ? -1 : cpu;
}

static hwloc_obj_t pu_obj(const struct pin_topology *t, int cpu)
{
	if (!pin_pu_allowed(t, cpu))
		return NULL;
	return hwloc_get_pu_obj_by_os_index(t->topo, (unsigned int)cpu);
}

static hwloc_obj_t ancestor(const struct pin_topology *t, hwloc_obj_t pu,
			    hwloc_obj_type_t type)
{
	return hwloc_get_ancestor_obj_by_type(t->topo, type, pu);
}

/* the one line every error ends with, so that the user can retype */
static void valid_cpus(const struct pin_topology *t, char *buf, size_t len)
{
	if (hwloc_bitmap_list_snprintf(buf, len, t->allowed) < 0)
		snprintf(buf, len, "?");
}

int pin_allowed_list(const struct pin_topology *t, char *buf, size_t len)
{
	int n = hwloc_bitmap_list_snprintf(buf, len, t->allowed);

	if (n < 0 && len)
		buf[0] = '\0';
	return n;
}

/*
 * A CPU the machine (or the cgroup) has but this process's affinity mask
 * leaves out: the user ran under taskset or similar, and is told so.
 */
static bool outside_affinity(const struct pin_topology *t, long cpu)
{
	return cpu >= 0 && cpu <= INT_MAX && t->allowed != t->cgroup &&
	       hwloc_bitmap_isset(t->cgroup, (unsigned int)cpu) &&
	       !hwloc_bitmap_isset(t->allowed, (unsigned int)cpu);
}

/* "--cpus: <what> (<listed>: <the allowed CPUs>)": -1 with errno errnum */
static int fail_line(const struct pin_topology *t, char *err, size_t errlen,
		     int errnum, const char *listed, const char *what)
{
	char valid[128];

	if (err && errlen) {
		valid_cpus(t, valid, sizeof(valid));
		snprintf(err, errlen, "--cpus: %s (%s: %s)", what, listed,
			 valid);
	}
	errno = errnum;
	return -1;
}

__attribute__((format(printf, 5, 6))) static int
parse_fail(const struct pin_topology *t, char *err, size_t errlen, int errnum,
	   const char *fmt, ...)
{
	char what[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return fail_line(t, err, errlen, errnum, "valid", what);
}

/*
 * cpu, of the list item item (len bytes, lo-hi), is not allowed: "not a CPU
 * here", or where the affinity mask leaves it out, "not a CPU this process
 * may use (allowed: ...)"
 */
static int not_allowed(const struct pin_topology *t, char *err, size_t errlen,
		       const char *item, int len, long lo, long hi, long cpu)
{
	bool masked = outside_affinity(t, cpu);
	const char *why =
		masked ? "not a CPU this process may use" : "not a CPU here";
	char what[192];

	if (hi == lo)
		snprintf(what, sizeof(what), "%.*s is %s", len, item, why);
	else
		snprintf(what, sizeof(what), "%.*s includes %ld, which is %s",
			 len, item, cpu, why);
	return fail_line(t, err, errlen, ERANGE, masked ? "allowed" : "valid",
			 what);
}

/*
 * A CPU number: digits, or a '-' and digits where a list item starts (so
 * that "-1" is reported as a CPU that does not exist, not as bad syntax).
 * Values past INT_MAX saturate: they are no CPU either way.
 */
static bool parse_num(const char **p, bool sign, long *v)
{
	const char *s = *p;
	bool neg = sign && *s == '-';

	if (neg)
		s++;
	if (*s < '0' || *s > '9')
		return false;
	for (*v = 0; *s >= '0' && *s <= '9'; s++)
		if (*v <= INT_MAX)
			*v = *v * 10 + (*s - '0');
	if (neg)
		*v = -*v;
	*p = s;
	return true;
}

static int add_cpu(const struct pin_topology *t, int *cpus, unsigned int max,
		   unsigned int *n, long cpu, char *err, size_t errlen)
{
	unsigned int i;

	for (i = 0; i < *n; i++)
		if (cpus[i] == cpu)
			return parse_fail(
				t, err, errlen, EINVAL,
				"%ld is listed twice (give each CPU once)",
				cpu);
	if (*n == max)
		return parse_fail(t, err, errlen, E2BIG,
				  "more than %u CPUs listed", max);
	cpus[(*n)++] = (int)cpu;
	return 0;
}

static int parse_all(const struct pin_topology *t, int *cpus, unsigned int max,
		     unsigned int *n, char *err, size_t errlen)
{
	int cpu;

	for (cpu = hwloc_bitmap_first(t->allowed); cpu != -1;
	     cpu = hwloc_bitmap_next(t->allowed, cpu))
		if (add_cpu(t, cpus, max, n, cpu, err, errlen))
			return -1;
	return 0;
}

static int syntax_fail(const struct pin_topology *t, char *err, size_t errlen,
		       const char *spec, const char *at)
{
	return parse_fail(
		t, err, errlen, EINVAL,
		"\"%s\" is not a CPU list: expected a CPU number %s%s%s "
		"(e.g. 0,2-3 or all)",
		spec, *at ? "at \"" : "at the end", at, *at ? "\"" : "");
}

static int parse_list(const struct pin_topology *t, const char *spec, int *cpus,
		      unsigned int max, unsigned int *n, char *err,
		      size_t errlen)
{
	const char *p = spec;

	for (;;) {
		const char *item = p;
		long lo, hi, cpu;

		if (!parse_num(&p, true, &lo))
			return syntax_fail(t, err, errlen, spec, p);
		hi = lo;
		if (*p == '-') {
			p++;
			if (!parse_num(&p, false, &hi))
				return syntax_fail(t, err, errlen, spec, p);
			if (hi < lo)
				return parse_fail(t, err, errlen, EINVAL,
						  "%.*s is a reversed range",
						  (int)(p - item), item);
		}
		for (cpu = lo; cpu <= hi; cpu++) {
			if (cpu < 0 || cpu > INT_MAX ||
			    !pin_pu_allowed(t, (int)cpu))
				return not_allowed(t, err, errlen, item,
						   (int)(p - item), lo, hi,
						   cpu);
			if (add_cpu(t, cpus, max, n, cpu, err, errlen))
				return -1;
		}
		if (!*p)
			return 0;
		if (*p != ',')
			return syntax_fail(t, err, errlen, spec, p);
		p++;
	}
}

int pin_parse_cpus(const struct pin_topology *t, const char *spec, int *cpus,
		   unsigned int max, unsigned int *n, char *err, size_t errlen)
{
	int rc;

	*n = 0;
	if (err && errlen)
		err[0] = '\0';
	if (!spec)
		return parse_fail(t, err, errlen, EINVAL, "no CPU list");
	if (!strcmp(spec, "all"))
		rc = parse_all(t, cpus, max, n, err, errlen);
	else
		rc = parse_list(t, spec, cpus, max, n, err, errlen);
	/* no half-parsed list for a caller that ignores the return value */
	if (rc)
		*n = 0;
	return rc;
}

int pin_default_writer_cpu(const struct pin_topology *t, int cpu)
{
	hwloc_obj_t pu = pu_obj(t, cpu), core, pkg;
	int c, best = -1, best_rank = 3;

	if (!pu) {
		errno = EINVAL;
		return -1;
	}
	core = ancestor(t, pu, HWLOC_OBJ_CORE);
	pkg = ancestor(t, pu, HWLOC_OBJ_PACKAGE);
	/*
	 * An SMT sibling shares the reader's L1 and pipeline, which is not
	 * the case being measured (the kernel's timekeeping CPU is rarely the
	 * reader's sibling): it is the last choice. Another core of the same
	 * package shares the LLC, as on most machines the harness runs on.
	 */
	for (c = hwloc_bitmap_first(t->allowed); c != -1;
	     c = hwloc_bitmap_next(t->allowed, c)) {
		int rank;

		if (c == cpu)
			continue;
		if (core && hwloc_bitmap_isset(core->cpuset, c))
			rank = 2;
		else
			rank = pkg && hwloc_bitmap_isset(pkg->cpuset, c) ? 0
									 : 1;
		if (rank < best_rank) {
			best_rank = rank;
			best = c;
		}
	}
	return best;
}

const char *pin_bind_error(void)
{
	return bind_err;
}

__attribute__((format(printf, 2, 3))) static int bind_fail(int errnum,
							   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(bind_err, sizeof(bind_err), fmt, ap);
	va_end(ap);
	errno = errnum;
	return -1;
}

int pin_bind_thread(const struct pin_topology *t, int cpu)
{
	const struct hwloc_topology_support *s =
		hwloc_topology_get_support(t->topo);
	hwloc_bitmap_t set;
	char valid[128];
	int rc, err;

	if (!pin_pu_allowed(t, cpu)) {
		valid_cpus(t, valid, sizeof(valid));
		return bind_fail(ERANGE,
				 "cannot bind to CPU %d: not a CPU this "
				 "process may use (valid: %s)",
				 cpu, valid);
	}
	/* hwloc's hooks for a description succeed and do nothing */
	if (t->described)
		return bind_fail(EXDEV,
				 "cannot bind to CPU %d: the topology was "
				 "loaded from a description, not from this "
				 "system",
				 cpu);
	if (!s->cpubind->set_thisthread_cpubind)
		return bind_fail(ENOSYS,
				 "cannot bind to CPU %d: hwloc cannot bind a "
				 "thread on this system",
				 cpu);
	set = hwloc_bitmap_alloc();
	if (!set)
		return bind_fail(ENOMEM, "cannot bind to CPU %d: out of memory",
				 cpu);
	hwloc_bitmap_only(set, (unsigned int)cpu);
	/* strict: fail rather than let the OS widen the set; some refuse it */
	rc = hwloc_set_cpubind(t->topo, set,
			       HWLOC_CPUBIND_THREAD | HWLOC_CPUBIND_STRICT);
	if (rc)
		rc = hwloc_set_cpubind(t->topo, set, HWLOC_CPUBIND_THREAD);
	err = errno;
	hwloc_bitmap_free(set);
	if (rc)
		return bind_fail(err, "cannot bind to CPU %d: %s", cpu,
				 strerror(err));
	bind_err[0] = '\0';
	return 0;
}

/* the PU's data (or unified) cache of that level, NULL if unknown */
static hwloc_obj_t dcache_obj(const struct pin_topology *t, int cpu,
			      hwloc_obj_type_t level)
{
	hwloc_obj_t o = pu_obj(t, cpu);

	for (o = o ? o->parent : NULL; o; o = o->parent)
		if (o->type == level &&
		    o->attr->cache.type != HWLOC_OBJ_CACHE_INSTRUCTION)
			return o;
	return NULL;
}

static size_t cache_size(hwloc_obj_t o)
{
	return o ? o->attr->cache.size : 0;
}

static unsigned int cache_ways(hwloc_obj_t o)
{
	if (!o)
		return 0;
	if (o->attr->cache.associativity > 0)
		return (unsigned int)o->attr->cache.associativity;
	/* -1: fully associative, one set of every line */
	if (o->attr->cache.associativity < 0 && o->attr->cache.linesize)
		return (unsigned int)(o->attr->cache.size /
				      o->attr->cache.linesize);
	return 0;
}

size_t pin_l1d_size(const struct pin_topology *t, int cpu)
{
	return cache_size(dcache_obj(t, cpu, HWLOC_OBJ_L1CACHE));
}

unsigned int pin_l1d_ways(const struct pin_topology *t, int cpu)
{
	return cache_ways(dcache_obj(t, cpu, HWLOC_OBJ_L1CACHE));
}

size_t pin_l2_size(const struct pin_topology *t, int cpu)
{
	return cache_size(dcache_obj(t, cpu, HWLOC_OBJ_L2CACHE));
}

unsigned int pin_l2_ways(const struct pin_topology *t, int cpu)
{
	return cache_ways(dcache_obj(t, cpu, HWLOC_OBJ_L2CACHE));
}

int pin_cpu_kind(const struct pin_topology *t, int cpu, char *buf, size_t len)
{
	struct hwloc_info_s *infos;
	unsigned int nr_infos, i;
	hwloc_bitmap_t set;
	int kind, efficiency;

	if (len)
		buf[0] = '\0';
	if (!pu_obj(t, cpu)) {
		errno = EINVAL;
		return -1;
	}
	if (hwloc_cpukinds_get_nr(t->topo, 0) < 2)
		return 0;
	set = hwloc_bitmap_alloc();
	if (!set) {
		errno = ENOMEM;
		return -1;
	}
	hwloc_bitmap_only(set, (unsigned int)cpu);
	kind = hwloc_cpukinds_get_by_cpuset(t->topo, set, 0);
	hwloc_bitmap_free(set);
	if (kind < 0 ||
	    hwloc_cpukinds_get_info(t->topo, (unsigned int)kind, NULL,
				    &efficiency, &nr_infos, &infos, 0))
		return 0;
	for (i = 0; i < nr_infos; i++)
		if (!strcmp(infos[i].name, "CoreType") && infos[i].value[0])
			return snprintf(buf, len, "%s", infos[i].value);
	return snprintf(buf, len, "kind %d",
			efficiency >= 0 ? efficiency : kind);
}

int pin_core_of(const struct pin_topology *t, int cpu)
{
	hwloc_obj_t pu = pu_obj(t, cpu), core;

	if (!pu) {
		errno = EINVAL;
		return -1;
	}
	core = ancestor(t, pu, HWLOC_OBJ_CORE);
	if (!core)
		return cpu;
	if (core->os_index != HWLOC_UNKNOWN_INDEX)
		return (int)core->os_index;
	return (int)core->logical_index;
}

unsigned int pin_siblings(const struct pin_topology *t, int cpu, int *out,
			  unsigned int max)
{
	hwloc_obj_t pu = pu_obj(t, cpu), core;
	unsigned int n = 0;
	int c;

	if (!pu)
		return 0;
	core = ancestor(t, pu, HWLOC_OBJ_CORE);
	if (!core) {
		if (max)
			out[0] = cpu;
		return 1;
	}
	for (c = hwloc_bitmap_first(core->cpuset); c != -1;
	     c = hwloc_bitmap_next(core->cpuset, c)) {
		if (!pin_pu_allowed(t, c))
			continue;
		if (n < max)
			out[n] = c;
		n++;
	}
	return n;
}

int pin_describe(const struct pin_topology *t, int cpu, char *buf, size_t len)
{
	hwloc_obj_t pu = pu_obj(t, cpu), pkg;
	char pkgs[32] = "", l1s[32] = "";
	size_t l1;

	if (!pu) {
		errno = EINVAL;
		return -1;
	}
	pkg = ancestor(t, pu, HWLOC_OBJ_PACKAGE);
	if (pkg)
		snprintf(pkgs, sizeof(pkgs), "package %u ",
			 pkg->os_index != HWLOC_UNKNOWN_INDEX
				 ? pkg->os_index
				 : pkg->logical_index);
	l1 = pin_l1d_size(t, cpu);
	if (l1)
		snprintf(l1s, sizeof(l1s), " (L1d %zu KiB)", l1 / 1024);
	return snprintf(buf, len, "%score %d pu %d%s", pkgs,
			pin_core_of(t, cpu), cpu, l1s);
}
