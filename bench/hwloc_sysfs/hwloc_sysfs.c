// SPDX-License-Identifier: GPL-2.0
/*
 * hwloc.h's subset over sysfs and sched_setaffinity(); see hwloc.h for
 * what it knows and what it leaves unknown.
 */
#define _GNU_SOURCE /* sched_setaffinity(), CPU_ALLOC() */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwloc.h"

#define SYSFS_CPU "/sys/devices/system/cpu"

/* one PU's chain: pu -> core -> l1d -> l2 -> package, the unknown left out */
struct pu_chain {
	struct hwloc_obj obj[5];
	union hwloc_obj_attr_u attr[5];
	struct hwloc_bitmap_s set[5];
};

struct hwloc_topology {
	struct hwloc_bitmap_s online;
	struct pu_chain *pu[HWLOC_SYSFS_MAX_CPUS];
	int described;
};

/* a sysfs file's first line into buf: 0, or -1 where it cannot be read */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* sysfs's CPU list ("0-3,8") into set: 0, or -1 where it cannot be read */
static int read_list(const char *path, hwloc_bitmap_t set)
{
	char buf[4096], *p = buf, *end;

	if (read_line(path, buf, sizeof(buf)))
		return -1;
	while (*p) {
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p)
			return -1;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		for (; lo <= hi && lo < HWLOC_SYSFS_MAX_CPUS; lo++)
			hwloc_bitmap_set(set, (unsigned int)lo);
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return 0;
}

static long read_num(const char *path)
{
	char buf[64], *end;
	long v;

	if (read_line(path, buf, sizeof(buf)))
		return -1;
	v = strtol(buf, &end, 10);
	/* cache sizes: "32K" */
	if (*end == 'K')
		v *= 1024;
	else if (*end == 'M')
		v *= 1024 * 1024;
	return end == buf ? -1 : v;
}

/* cache/indexN of cpu at level, data or unified: its index, or -1 */
static int find_cache(unsigned int cpu, long level)
{
	char path[256], type[32];

	for (int i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), SYSFS_CPU "/cpu%u/cache/index%d/level",
			 cpu, i);
		if (read_num(path) != level)
			continue;
		snprintf(path, sizeof(path), SYSFS_CPU "/cpu%u/cache/index%d/type",
			 cpu, i);
		if (!read_line(path, type, sizeof(type)) &&
		    strcmp(type, "Instruction"))
			return i;
	}
	return -1;
}

/* the next object of cpu's chain from sysfs: 0, or -1 where it has none */
static int fill(struct pu_chain *c, int k, unsigned int cpu,
		hwloc_obj_type_t type)
{
	struct hwloc_obj *o = &c->obj[k];
	char path[256], dir[128];
	long v;
	int idx;

	o->type = type;
	o->attr = &c->attr[k];
	o->cpuset = &c->set[k];
	o->os_index = HWLOC_UNKNOWN_INDEX;
	o->logical_index = cpu;
	if (type == HWLOC_OBJ_CORE || type == HWLOC_OBJ_PACKAGE) {
		bool core = type == HWLOC_OBJ_CORE;

		snprintf(path, sizeof(path), SYSFS_CPU "/cpu%u/topology/%s",
			 cpu, core ? "core_id" : "physical_package_id");
		v = read_num(path);
		snprintf(path, sizeof(path), SYSFS_CPU "/cpu%u/topology/%s",
			 cpu, core ? "thread_siblings_list" : "core_siblings_list");
		if (v < 0 || read_list(path, o->cpuset))
			return -1;
		o->os_index = (unsigned int)v;
		return 0;
	}
	idx = find_cache(cpu, type == HWLOC_OBJ_L1CACHE ? 1 : 2);
	if (idx < 0)
		return -1;
	snprintf(dir, sizeof(dir), SYSFS_CPU "/cpu%u/cache/index%d", cpu, idx);
	snprintf(path, sizeof(path), "%s/size", dir);
	v = read_num(path);
	if (v <= 0)
		return -1;
	o->attr->cache.size = (unsigned long long)v;
	o->attr->cache.type = HWLOC_OBJ_CACHE_DATA;
	snprintf(path, sizeof(path), "%s/ways_of_associativity", dir);
	v = read_num(path);
	o->attr->cache.associativity = v > 0 ? (int)v : 0;
	snprintf(path, sizeof(path), "%s/coherency_line_size", dir);
	v = read_num(path);
	o->attr->cache.linesize = v > 0 ? (unsigned int)v : 0;
	snprintf(path, sizeof(path), "%s/shared_cpu_list", dir);
	if (read_list(path, o->cpuset))
		hwloc_bitmap_only(o->cpuset, cpu);
	return 0;
}

static struct pu_chain *chain_of(unsigned int cpu)
{
	static const hwloc_obj_type_t above[] = {
		HWLOC_OBJ_CORE, HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE,
		HWLOC_OBJ_PACKAGE};
	struct pu_chain *c = calloc(1, sizeof(*c));
	struct hwloc_obj *last;

	if (!c)
		return NULL;
	last = &c->obj[0];
	last->type = HWLOC_OBJ_PU;
	last->os_index = cpu;
	last->logical_index = cpu;
	last->attr = &c->attr[0];
	last->cpuset = &c->set[0];
	hwloc_bitmap_only(last->cpuset, cpu);
	for (int k = 0; k < 4; k++) {
		if (fill(c, k + 1, cpu, above[k]))
			continue;
		last->parent = &c->obj[k + 1];
		last = last->parent;
	}
	return c;
}

int hwloc_topology_init(hwloc_topology_t *topo)
{
	*topo = calloc(1, sizeof(**topo));
	return *topo ? 0 : -1;
}

/* online CPUs: sysfs's list, else the affinity mask of the calling thread */
static int load_online(hwloc_topology_t topo)
{
	cpu_set_t *mask;
	size_t size = CPU_ALLOC_SIZE(HWLOC_SYSFS_MAX_CPUS);

	if (!read_list(SYSFS_CPU "/online", &topo->online))
		return 0;
	mask = CPU_ALLOC(HWLOC_SYSFS_MAX_CPUS);
	if (!mask)
		return -1;
	if (sched_getaffinity(0, size, mask)) {
		CPU_FREE(mask);
		return -1;
	}
	for (unsigned int cpu = 0; cpu < HWLOC_SYSFS_MAX_CPUS; cpu++)
		if (CPU_ISSET_S(cpu, size, mask))
			hwloc_bitmap_set(&topo->online, cpu);
	CPU_FREE(mask);
	return 0;
}

int hwloc_topology_load(hwloc_topology_t topo)
{
	int cpu;

	if (topo->described) {
		errno = ENOSYS;
		return -1;
	}
	if (load_online(topo))
		return -1;
	for (cpu = hwloc_bitmap_first(&topo->online); cpu >= 0;
	     cpu = hwloc_bitmap_next(&topo->online, cpu)) {
		topo->pu[cpu] = chain_of((unsigned int)cpu);
		if (!topo->pu[cpu]) {
			errno = ENOMEM;
			return -1;
		}
	}
	return 0;
}

void hwloc_topology_destroy(hwloc_topology_t topo)
{
	if (!topo)
		return;
	for (int cpu = 0; cpu < HWLOC_SYSFS_MAX_CPUS; cpu++)
		free(topo->pu[cpu]);
	free(topo);
}

/* descriptions are hwloc's alone: refused, and load refuses too */
int hwloc_topology_set_synthetic(hwloc_topology_t topo, const char *desc)
{
	(void)desc;
	topo->described = 1;
	errno = ENOSYS;
	return -1;
}

int hwloc_topology_set_xmlbuffer(hwloc_topology_t topo, const char *buf,
				 int len)
{
	(void)buf;
	(void)len;
	return hwloc_topology_set_synthetic(topo, NULL);
}

hwloc_const_cpuset_t hwloc_topology_get_allowed_cpuset(hwloc_topology_t topo)
{
	return &topo->online;
}

const struct hwloc_topology_support *
hwloc_topology_get_support(hwloc_topology_t topo)
{
	static struct hwloc_topology_cpubind_support cpubind = {
		.set_thisthread_cpubind = 1};
	static const struct hwloc_topology_support support = {.cpubind =
								      &cpubind};

	(void)topo;
	return &support;
}

hwloc_obj_t hwloc_get_pu_obj_by_os_index(hwloc_topology_t topo,
					 unsigned int cpu)
{
	return cpu < HWLOC_SYSFS_MAX_CPUS && topo->pu[cpu] ? &topo->pu[cpu]->obj[0]
							     : NULL;
}

hwloc_obj_t hwloc_get_ancestor_obj_by_type(hwloc_topology_t topo,
					   hwloc_obj_type_t type,
					   hwloc_obj_t obj)
{
	(void)topo;
	for (obj = obj ? obj->parent : NULL; obj; obj = obj->parent)
		if (obj->type == type)
			return obj;
	return NULL;
}

/* the calling thread (HWLOC_CPUBIND_THREAD); strict is what the kernel does */
int hwloc_set_cpubind(hwloc_topology_t topo, hwloc_const_bitmap_t set,
		      int flags)
{
	size_t size = CPU_ALLOC_SIZE(HWLOC_SYSFS_MAX_CPUS);
	cpu_set_t *mask = CPU_ALLOC(HWLOC_SYSFS_MAX_CPUS);
	int rc, err;

	(void)topo;
	(void)flags;
	if (!mask)
		return -1;
	CPU_ZERO_S(size, mask);
	for (int cpu = hwloc_bitmap_first(set); cpu >= 0;
	     cpu = hwloc_bitmap_next(set, cpu))
		CPU_SET_S((unsigned int)cpu, size, mask);
	rc = sched_setaffinity(0, size, mask);
	err = errno;
	CPU_FREE(mask);
	errno = err;
	return rc;
}

/* one kind of core: sysfs says nothing of kinds that pin.c would use */
int hwloc_cpukinds_get_nr(hwloc_topology_t topo, unsigned long flags)
{
	(void)topo;
	(void)flags;
	return 0;
}

int hwloc_cpukinds_get_by_cpuset(hwloc_topology_t topo,
				 hwloc_const_bitmap_t set, unsigned long flags)
{
	(void)topo;
	(void)set;
	(void)flags;
	errno = ENOENT;
	return -1;
}

int hwloc_cpukinds_get_info(hwloc_topology_t topo, unsigned int kind,
			    hwloc_bitmap_t cpuset, int *efficiency,
			    unsigned int *nr_infos, struct hwloc_info_s **infos,
			    unsigned long flags)
{
	(void)topo;
	(void)kind;
	(void)cpuset;
	(void)efficiency;
	(void)nr_infos;
	(void)infos;
	(void)flags;
	errno = ENOENT;
	return -1;
}
