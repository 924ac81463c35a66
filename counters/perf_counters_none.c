// SPDX-License-Identifier: GPL-2.0
/*
 * perf_counters.h for a build without libpfm4 (the i386 harness: Debian
 * has no i386 libpfm4 but through multiarch, which this project does not
 * add). The contract's promise holds as it does on a VM without a PMU:
 * every group opens, every event in it is dropped with PC_NONE_REASON, and
 * a run goes on with time alone. No name is refused as a typo, because
 * without libpfm4 no name can be checked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters/perf_counters.h"

#define PC_NONE_REASON                                                         \
	"libpfm4 is not in the i386 build (Debian has no i386 libpfm4 "        \
	"without multiarch)"

struct pc_group {
	unsigned int nr_dropped;
	char *dropped[PC_MAX_EVENTS];
};

int pc_init(void)
{
	return 0;
}

const char *pc_init_error(void)
{
	return "";
}

const char *pc_libpfm_version(void)
{
	return "none";
}

const char *pc_mode(void)
{
	return "none";
}

const char *pc_mode_reason(void)
{
	return PC_NONE_REASON;
}

int pc_paranoid(int *value)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int n;

	if (!f) {
		errno = ENOENT;
		return -1;
	}
	n = fscanf(f, "%d", value);
	fclose(f);
	if (n != 1) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

int pc_default_pmu_event(char *buf, size_t len)
{
	if (buf && len)
		buf[0] = '\0';
	errno = ENOENT;
	return -1;
}

int pc_event_check(const char *name, struct pc_event_info *info)
{
	if (!name || !info) {
		errno = EINVAL;
		return -1;
	}
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", name);
	snprintf(info->reason, sizeof(info->reason), "%s", PC_NONE_REASON);
	return 0;
}

int pc_group_open(struct pc_group **gp, const char *const *events,
		  unsigned int n, char *err, size_t errlen)
{
	struct pc_group *g;

	*gp = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (n > PC_MAX_EVENTS) {
		if (err && errlen)
			snprintf(err, errlen, "more than %d events",
				 PC_MAX_EVENTS);
		errno = EINVAL;
		return -1;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return -1;
	for (; g->nr_dropped < n; g->nr_dropped++) {
		g->dropped[g->nr_dropped] = strdup(events[g->nr_dropped]);
		if (!g->dropped[g->nr_dropped]) {
			pc_group_destroy(g);
			errno = ENOMEM;
			return -1;
		}
	}
	*gp = g;
	return 0;
}

void pc_group_destroy(struct pc_group *g)
{
	if (!g)
		return;
	for (unsigned int i = 0; i < g->nr_dropped; i++)
		free(g->dropped[i]);
	free(g);
}

unsigned int pc_group_nr_events(const struct pc_group *g)
{
	(void)g;
	return 0;
}

const char *pc_group_event_name(const struct pc_group *g, unsigned int i)
{
	(void)g;
	(void)i;
	return NULL;
}

unsigned int pc_group_nr_dropped(const struct pc_group *g)
{
	return g ? g->nr_dropped : 0;
}

const char *pc_group_dropped_name(const struct pc_group *g, unsigned int i)
{
	return g && i < g->nr_dropped ? g->dropped[i] : NULL;
}

const char *pc_group_dropped_reason(const struct pc_group *g, unsigned int i)
{
	return g && i < g->nr_dropped ? PC_NONE_REASON : NULL;
}

const char *pc_group_mode(const struct pc_group *g)
{
	(void)g;
	return pc_mode();
}

const char *pc_group_mode_reason(const struct pc_group *g)
{
	(void)g;
	return PC_NONE_REASON;
}

void pc_group_summary(const struct pc_group *g, char *buf, size_t len)
{
	if (!buf || !len)
		return;
	if (g && g->nr_dropped)
		snprintf(buf, len, "counting nothing, time alone; not "
				   "counted: every event: " PC_NONE_REASON);
	else
		snprintf(buf, len, "counting nothing, time alone");
}

int pc_group_read(const struct pc_group *g, struct pc_sample *s)
{
	if (!g || !s) {
		errno = EINVAL;
		return -1;
	}
	memset(s, 0, sizeof(*s));
	return 0;
}

double pc_sample_delta(const struct pc_group *g, const struct pc_sample *a,
		       const struct pc_sample *b, double *counts)
{
	(void)g;
	(void)a;
	(void)b;
	(void)counts;
	return 0; /* an empty group never ran */
}
