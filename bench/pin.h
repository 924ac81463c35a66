/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU pinning and the bit of topology the harness reports, over hwloc: which
 * PUs this process may use, which of them share a core, the L1 data cache
 * size a working set is compared with, and binding the calling thread.
 *
 * CPUs are OS indexes (what taskset, sched_getcpu() and /sys call them).
 * "Allowed", for this machine's topology, is hwloc's allowed cpuset (the
 * PUs the cgroup lets this process run on) that are also in the process's
 * affinity mask (sched_getaffinity() when pin_topology_init() runs): a run
 * started under `taskset -c 0` may use CPU 0 only, though binding could
 * widen the mask, because whoever ran taskset keeps the other CPUs for
 * something else. Offline CPUs are never allowed. Every user of the set
 * follows it: --cpus and "all", the default CPU, the default writer CPU.
 *
 * Every function but pin_bind_thread() reads the topology only, so the
 * tests run them on topologies this machine does not have
 * (pin_topology_init_from()).
 */
#ifndef VDSOBENCH_PIN_H
#define VDSOBENCH_PIN_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pin_topology;

/*
 * hwloc_topology_init + load, allowed PUs narrowed to the calling thread's
 * affinity mask (call it before binding any thread): 0, or -1 with errno
 * (ENOMEM, or hwloc's). Where the mask cannot be read, the cgroup's set.
 */
int pin_topology_init(struct pin_topology **t);

/*
 * A topology that is not this machine's, for tests: hwloc XML (text that
 * starts with '<', as lstopo's .xml or hwloc_topology_export_xmlbuffer()
 * write it, cpukinds included) or a synthetic description such as
 * "pack:2 numa:2 l2:2 l1d:1(size=48KiB) core:1 pu:2" (in hwloc 2.9 the
 * attributes follow the count; KiB is 1024 and kB 1000; there is no
 * associativity attribute, so use XML for that). "Allowed" is the loaded
 * topology's allowed cpuset, and pin_bind_thread() refuses every CPU of it
 * (EXDEV): the calling thread is never bound to a CPU described, not seen.
 * 0, or -1 with errno (EINVAL: hwloc rejects the description; ENOMEM).
 */
int pin_topology_init_from(struct pin_topology **t,
			   const char *synthetic_or_xml);
void pin_topology_destroy(struct pin_topology *t);

/* PUs this process may run on (allowed cpuset) */
unsigned int pin_nr_pus(const struct pin_topology *t);
bool pin_pu_allowed(const struct pin_topology *t, int cpu);
/*
 * The allowed PUs as a list ("0,2-3"), for messages; returns the length
 * snprintf would have written, or -1 (an empty string) if hwloc cannot.
 */
int pin_allowed_list(const struct pin_topology *t, char *buf, size_t len);

/*
 * The CPU a run uses when none is given: the highest-numbered allowed PU,
 * away from CPU 0, which takes most interrupts and housekeeping; -1 with
 * errno ENODEV if no PU is allowed.
 */
int pin_default_cpu(const struct pin_topology *t);

/*
 * Parse a CPU list: "0,2", "1-3", "0,2-3", or "all" (every allowed PU, in
 * ascending order) into *n OS indexes in cpus[], in the order given ("1,0"
 * stays 1,0). A CPU listed twice ("0,0", "0-1,1") is rejected rather than
 * collapsed: two readers on one CPU is a typo, not a request.
 *
 * -1 with errno EINVAL (syntax, or a duplicate), ERANGE (a CPU that does not
 * exist or is not allowed, including negative ones) or E2BIG (more than max);
 * err (if errlen) gets one line naming the bad value and the valid CPUs, e.g.
 * "--cpus: 7 is not a CPU here (valid: 0-1)", or for a CPU the affinity
 * mask leaves out "--cpus: 1 is not a CPU this process may use (allowed:
 * 0)". The first error from the left is the one reported.
 */
int pin_parse_cpus(const struct pin_topology *t, const char *spec, int *cpus,
		   unsigned int max, unsigned int *n, char *err, size_t errlen);

/*
 * Default writer CPU for a reader on cpu: an allowed PU on another physical
 * core if there is one (the same package first), else another PU of the
 * same core, else -1 (also -1, errno EINVAL, for a cpu that is not allowed).
 */
int pin_default_writer_cpu(const struct pin_topology *t, int cpu);

/*
 * Bind the calling thread to one PU (HWLOC_CPUBIND_THREAD, strict, falling
 * back to non-strict): 0, or -1 with errno (ERANGE for a cpu that is not
 * allowed, EXDEV for a topology from pin_topology_init_from(), ENOSYS if
 * hwloc cannot bind a thread here, or hwloc's); then pin_bind_error() gives
 * a line saying why.
 */
int pin_bind_thread(const struct pin_topology *t, int cpu);
const char *pin_bind_error(void);

/* L1 data cache size in bytes for that PU (L1d or a unified L1); 0 if unknown
 */
size_t pin_l1d_size(const struct pin_topology *t, int cpu);

/*
 * Ways of associativity of that L1 data cache (hwloc's
 * attr->cache.associativity); 0 if unknown. A fully associative cache is
 * one set: size / line size ways (0 if the line size is unknown).
 */
unsigned int pin_l1d_ways(const struct pin_topology *t, int cpu);

/* the same for that PU's L2 (data or unified): the cold-l2 mode's eviction */
size_t pin_l2_size(const struct pin_topology *t, int cpu);
unsigned int pin_l2_ways(const struct pin_topology *t, int cpu);

/*
 * The kind of core a PU is, on a machine with more than one (hwloc's
 * cpukinds): its "CoreType" info ("IntelCore", "IntelAtom"), else
 * "kind N", N its efficiency rank (0 the most efficient, the least
 * performant), or its kind index where hwloc does not know the ranks.
 * Returns the length snprintf would have written: 0, with an empty string,
 * when hwloc reports one kind or none (or none for this PU); -1 with errno
 * EINVAL for a cpu that is not allowed.
 */
int pin_cpu_kind(const struct pin_topology *t, int cpu, char *buf, size_t len);

/*
 * The core a PU is on: the CORE object's OS index, its logical index if it
 * has none, or the PU's own OS index if hwloc reports no cores (a PU is then
 * its own core); -1 with errno EINVAL for a cpu that is not allowed.
 */
int pin_core_of(const struct pin_topology *t, int cpu);

/*
 * The allowed PUs of cpu's core, cpu included, ascending, into out[] (at most
 * max of them); returns how many there are, which may be more than max, or 0
 * for a cpu that is not allowed.
 */
unsigned int pin_siblings(const struct pin_topology *t, int cpu, int *out,
			  unsigned int max);

/*
 * "package 0 core 1 pu 1 (L1d 32 KiB)" for the results and --help; returns
 * the length snprintf would have written, or -1 with errno EINVAL for a cpu
 * that is not allowed.
 */
int pin_describe(const struct pin_topology *t, int cpu, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_PIN_H */
