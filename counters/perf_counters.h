/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Event counters for the benchmarks: libpfm4 turns an event name into a
 * perf_event_attr, perf_event_open(2) counts it for the calling thread.
 *
 * As in Google Benchmark's perf_counters and libpfm4's perf_examples, a
 * group never fails to be created because of the machine: events that do
 * not open (no PMU in a VM, not permitted, too many for the counters) are
 * dropped with a reason, and an empty group is a valid group, so a run goes
 * on with time alone. Only a name libpfm cannot encode is an error, because
 * that is the user's typo, not the machine.
 *
 * Counts are read with one read() of the group leader and scaled by
 * time_enabled / time_running when the kernel multiplexed the group; the
 * fraction of time counted is returned so that it can be reported.
 *
 * Functions return 0, or -1 with errno set.
 */
#ifndef VDSOBENCH_PERF_COUNTERS_H
#define VDSOBENCH_PERF_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PC_MAX_EVENTS 8

/*
 * Initialises libpfm and decides the counting mode; later calls return the
 * first call's result. Every other function calls it, so calling it first
 * only matters to get its error early: -1 with errno, and the reason in
 * pc_init_error() ("" after success).
 */
int pc_init(void);
const char *pc_init_error(void);

/* "4.13.0" from the loaded library's file name, else libpfm's API version */
const char *pc_libpfm_version(void);

/*
 * The process's counting mode: "user+kernel" when perf_event_paranoid or a
 * capability lets it count the kernel side (so that a syscall fallback's
 * kernel cost shows), "user" otherwise; the reason names the paranoid
 * value and the privilege. pc_paranoid() stores perf_event_paranoid in
 * *value; -1 (ENOENT) when it cannot be read.
 */
const char *pc_mode(void);
const char *pc_mode_reason(void);
int pc_paranoid(int *value);

/*
 * A PMU-specific event of the hardware PMU libpfm detected ("pmu::EVENT",
 * the first of its events that encodes), for listings and tests; -1 with
 * errno ENOENT when libpfm detected no hardware PMU.
 */
int pc_default_pmu_event(char *buf, size_t len);

/*
 * name: as given. fstr: libpfm's event and unit masks without the modifiers,
 * e.g. "perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS". valid: libpfm knows the
 * name (false is a typo; true also for an event of a PMU libpfm knows but
 * the kernel does not expose). opens: perf_event_open() took it here, alone.
 * reason: why not valid or why it does not open, "" when it opens.
 */
struct pc_event_info {
	char name[128];
	char fstr[256];
	bool valid;
	bool opens;
	char reason[256];
};

/* One event's status, without a group: 0; -1 (EINVAL) only on a bad argument */
int pc_event_check(const char *name, struct pc_event_info *info);

struct pc_group;

/*
 * Encodes and opens events as one group, enabled, counting the calling
 * thread; the first event that opens leads. -1 with errno EINVAL if a name
 * is not valid for libpfm or there are more than PC_MAX_EVENTS (err says
 * which and why), nothing opened then. Valid events that do not open are
 * dropped with a reason; a group with no events is fine.
 */
int pc_group_open(struct pc_group **g, const char *const *events,
		  unsigned int n, char *err, size_t errlen);
void pc_group_destroy(struct pc_group *g);

unsigned int pc_group_nr_events(const struct pc_group *g);
const char *pc_group_event_name(const struct pc_group *g, unsigned int i);
unsigned int pc_group_nr_dropped(const struct pc_group *g);
const char *pc_group_dropped_name(const struct pc_group *g, unsigned int i);
const char *pc_group_dropped_reason(const struct pc_group *g, unsigned int i);

/*
 * The group's mode: pc_mode(), or "user" when the kernel refused kernel
 * counting that the process mode expected (a sandbox, a user namespace).
 */
const char *pc_group_mode(const struct pc_group *g);
const char *pc_group_mode_reason(const struct pc_group *g);

/*
 * One line for a benchmark log: what is counted, in which mode, and what was
 * dropped and why ("counting nothing, time alone" when the group is empty).
 */
void pc_group_summary(const struct pc_group *g, char *buf, size_t len);

/* value[i] belongs to pc_group_event_name(g, i) */
struct pc_sample {
	uint64_t value[PC_MAX_EVENTS];
	uint64_t time_enabled, time_running;
};

/*
 * Reads the whole group with one read() on the leader
 * (PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING). An empty
 * group reads as all zeroes.
 */
int pc_group_read(const struct pc_group *g, struct pc_sample *s);

/*
 * counts[i] = the count of event i from a to b, scaled when the group was
 * multiplexed. Returns the fraction of the time counted, running / enabled:
 * 1.0 when not multiplexed, 0 when the group never ran (counts are 0 then).
 */
double pc_sample_delta(const struct pc_group *g, const struct pc_sample *a,
		       const struct pc_sample *b, double *counts);

/* count * enabled / running without overflow; count if running >= enabled, 0 if
 * running is 0 */
double pc_scale(uint64_t count, uint64_t enabled, uint64_t running);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_PERF_COUNTERS_H */
