/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of hwloc's API that bench/pin.c calls, over the kernel's own
 * interfaces, for the i386 harness: Debian has no i386 hwloc but through
 * multiarch, which this project never adds. pin.c compiles against this
 * header unchanged, so --cpus, the default CPU and the writer's choice are
 * the x86-64 build's to the line.
 *
 * What it knows, from sysfs: the online CPUs (the "cgroup" set; pin.c
 * narrows it to the affinity mask as with hwloc), each CPU's core
 * (topology/core_id, thread_siblings_list) and package
 * (physical_package_id, core_siblings_list), and its L1 data and L2 caches
 * (cache/index*: size, ways, line size). What sysfs does not say is
 * unknown (0), never guessed: hwloc reads CPUID on x86 where sysfs has no
 * caches (some VMs); this does not. No descriptions (synthetic or XML:
 * ENOSYS), one kind of core. Binding is sched_setaffinity() of the calling
 * thread. Objects are per PU, not shared: a core's or a cache's cpuset is
 * sysfs's list of the CPUs that share it.
 */
#ifndef VDSOBENCH_HWLOC_SYSFS_H
#define VDSOBENCH_HWLOC_SYSFS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HWLOC_SYSFS_MAX_CPUS 4096
#define HWLOC_UNKNOWN_INDEX ((unsigned int)-1)

struct hwloc_bitmap_s {
	unsigned long bits[HWLOC_SYSFS_MAX_CPUS / (8 * sizeof(unsigned long))];
};
typedef struct hwloc_bitmap_s *hwloc_bitmap_t;
typedef const struct hwloc_bitmap_s *hwloc_const_bitmap_t;
typedef hwloc_const_bitmap_t hwloc_const_cpuset_t;

typedef enum {
	HWLOC_OBJ_PU,
	HWLOC_OBJ_CORE,
	HWLOC_OBJ_L1CACHE,
	HWLOC_OBJ_L2CACHE,
	HWLOC_OBJ_PACKAGE,
} hwloc_obj_type_t;

typedef enum {
	HWLOC_OBJ_CACHE_UNIFIED,
	HWLOC_OBJ_CACHE_DATA,
	HWLOC_OBJ_CACHE_INSTRUCTION,
} hwloc_obj_cache_type_t;

union hwloc_obj_attr_u {
	struct {
		unsigned long long size;
		unsigned int linesize;
		int associativity;
		hwloc_obj_cache_type_t type;
	} cache;
};

typedef struct hwloc_obj {
	hwloc_obj_type_t type;
	unsigned int os_index, logical_index;
	struct hwloc_obj *parent;
	union hwloc_obj_attr_u *attr;
	hwloc_bitmap_t cpuset;
} *hwloc_obj_t;

struct hwloc_info_s {
	char *name, *value;
};

struct hwloc_topology_cpubind_support {
	unsigned char set_thisthread_cpubind;
};

struct hwloc_topology_support {
	struct hwloc_topology_cpubind_support *cpubind;
};

typedef struct hwloc_topology *hwloc_topology_t;

#define HWLOC_CPUBIND_THREAD (1 << 1)
#define HWLOC_CPUBIND_STRICT (1 << 2)

hwloc_bitmap_t hwloc_bitmap_alloc(void);
void hwloc_bitmap_free(hwloc_bitmap_t set);
int hwloc_bitmap_set(hwloc_bitmap_t set, unsigned int cpu);
int hwloc_bitmap_only(hwloc_bitmap_t set, unsigned int cpu);
int hwloc_bitmap_isset(hwloc_const_bitmap_t set, unsigned int cpu);
int hwloc_bitmap_and(hwloc_bitmap_t res, hwloc_const_bitmap_t a,
		     hwloc_const_bitmap_t b);
int hwloc_bitmap_weight(hwloc_const_bitmap_t set);
int hwloc_bitmap_first(hwloc_const_bitmap_t set);
int hwloc_bitmap_last(hwloc_const_bitmap_t set);
int hwloc_bitmap_next(hwloc_const_bitmap_t set, int prev);
int hwloc_bitmap_list_snprintf(char *buf, size_t len, hwloc_const_bitmap_t set);

int hwloc_topology_init(hwloc_topology_t *topo);
int hwloc_topology_load(hwloc_topology_t topo);
void hwloc_topology_destroy(hwloc_topology_t topo);
int hwloc_topology_set_synthetic(hwloc_topology_t topo, const char *desc);
int hwloc_topology_set_xmlbuffer(hwloc_topology_t topo, const char *buf,
				 int len);
hwloc_const_cpuset_t hwloc_topology_get_allowed_cpuset(hwloc_topology_t topo);
const struct hwloc_topology_support *
hwloc_topology_get_support(hwloc_topology_t topo);

hwloc_obj_t hwloc_get_pu_obj_by_os_index(hwloc_topology_t topo,
					 unsigned int cpu);
hwloc_obj_t hwloc_get_ancestor_obj_by_type(hwloc_topology_t topo,
					   hwloc_obj_type_t type,
					   hwloc_obj_t obj);
int hwloc_set_cpubind(hwloc_topology_t topo, hwloc_const_bitmap_t set,
		      int flags);

int hwloc_cpukinds_get_nr(hwloc_topology_t topo, unsigned long flags);
int hwloc_cpukinds_get_by_cpuset(hwloc_topology_t topo,
				 hwloc_const_bitmap_t set, unsigned long flags);
int hwloc_cpukinds_get_info(hwloc_topology_t topo, unsigned int kind,
			    hwloc_bitmap_t cpuset, int *efficiency,
			    unsigned int *nr_infos, struct hwloc_info_s **infos,
			    unsigned long flags);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_HWLOC_SYSFS_H */
