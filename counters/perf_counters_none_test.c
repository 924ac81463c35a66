// SPDX-License-Identifier: GPL-2.0
/*
 * perf_counters_none.c, the i386 build's counters: a group always opens,
 * every event is dropped with the one reason, reads are zeroes, and the
 * summary and the mode say why nothing is counted.
 */
#include <string.h>

#include "counters/perf_counters.h"
#include "testing/tap.h"

#define WHY "libpfm4 is not in the i386 build"

static bool has(const char *s, const char *needle)
{
	return s && strstr(s, needle);
}

int main(void)
{
	static const char *const events[] = {"cycles", "instructions",
					     "L1-dcache-load-misses"};
	static const char *const nine[9] = {"a", "b", "c", "d", "e",
					    "f", "g", "h", "i"};
	struct pc_sample a, b;
	struct pc_group *g;
	char err[128], line[512];
	double counts[PC_MAX_EVENTS] = {0};

	tap_ok(!pc_init() && !strcmp(pc_init_error(), ""),
	       "pc_init succeeds: a build without libpfm4 is not an error");
	tap_ok(!pc_group_open(&g, events, 3, err, sizeof(err)) && g,
	       "a group of three events opens");
	tap_ok(pc_group_nr_events(g) == 0 && pc_group_nr_dropped(g) == 3,
	       "no event counted, all three dropped (got %u, %u)",
	       pc_group_nr_events(g), pc_group_nr_dropped(g));
	for (unsigned int i = 0; i < 3; i++)
		tap_ok(!strcmp(pc_group_dropped_name(g, i), events[i]) &&
			       has(pc_group_dropped_reason(g, i), WHY),
		       "dropped %u is %s, because %s", i, events[i],
		       pc_group_dropped_reason(g, i));
	tap_ok(!pc_group_dropped_name(g, 3) && !pc_group_event_name(g, 0),
	       "nothing past the ends");
	pc_group_summary(g, line, sizeof(line));
	tap_ok(has(line, "time alone") && has(line, WHY), "summary: %s", line);
	tap_ok(!strcmp(pc_group_mode(g), "none") &&
		       has(pc_group_mode_reason(g), WHY),
	       "mode none: %s", pc_group_mode_reason(g));
	memset(&a, 0xff, sizeof(a));
	tap_ok(!pc_group_read(g, &a) && !a.value[0] && !a.time_enabled &&
		       !a.time_running,
	       "a read is zeroes");
	tap_ok(!pc_group_read(g, &b) &&
		       pc_sample_delta(g, &a, &b, counts) == 0,
	       "a delta counts no time");
	pc_group_destroy(g);
	tap_ok(pc_group_open(&g, nine, 9, err, sizeof(err)) == -1 && !g &&
		       has(err, "more than"),
	       "more than PC_MAX_EVENTS is still a usage error: %s", err);
	tap_ok(pc_scale(10, 4, 2) == 20 && pc_scale(10, 2, 2) == 10 &&
		       pc_scale(10, 2, 0) == 0,
	       "pc_scale as the contract says");
	return tap_done();
}
