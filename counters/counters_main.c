// SPDX-License-Identifier: GPL-2.0
/*
 * vdsobench_counters: which counter events libpfm knows here and which of
 * them perf_event_open() will count, with the counting mode and why.
 * `vdsobench counters` drives it with --json.
 *
 * Exit: 0 when listed, even if nothing opens (on a VM without a PMU that is
 * the answer, not a failure); 2 on bad usage or an event name libpfm cannot
 * encode, since that is a typo to fix.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfmon/pfmlib.h>

#include "common/json_writer.h"
#include "counters/perf_counters.h"

static const char *const default_events[] = {
	"cycles",	 "instructions", "L1-dcache-load-misses",
	"branch-misses", "cache-misses", "task-clock",
};

struct list {
	struct pc_event_info *ev;
	size_t nr, cap;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vdsobench_counters [--json] [--all] [EVENT...]\n"
		"Says for each event whether libpfm can encode it and whether\n"
		"perf_event_open() counts it here, and in which mode.\n"
		"  EVENT   a libpfm or perf name: cycles,\n"
		"          L1-dcache-load-misses, branch-misses,\n"
		"          amd64_fam19h_zen3::RETIRED_INSTRUCTIONS\n"
		"          (default: a few generic events and one event\n"
		"          of the hardware PMU libpfm detected)\n"
		"  --all   every event of every PMU libpfm detected\n"
		"  --json  one JSON object instead of the table\n");
}

static int add(struct list *l, const char *name)
{
	if (l->nr == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct pc_event_info *ev = realloc(l->ev, cap * sizeof(*ev));

		if (!ev)
			return -1;
		l->ev = ev;
		l->cap = cap;
	}
	return pc_event_check(name, &l->ev[l->nr++]);
}

/* the PMUs libpfm detected on this CPU */
struct pmus {
	pfm_pmu_info_t info[64];
	int nr;
};

static void find_pmus(struct pmus *pmus)
{
	int p;

	pmus->nr = 0;
	pfm_for_all_pmus(p)
	{
		pfm_pmu_info_t *info = &pmus->info[pmus->nr];

		memset(info, 0, sizeof(*info));
		info->size = sizeof(*info);
		if (pfm_get_pmu_info(p, info) == PFM_SUCCESS &&
		    info->is_present && pmus->nr < 63)
			pmus->nr++;
	}
}

static int add_every_event(struct list *l, const struct pmus *pmus)
{
	for (int p = 0; p < pmus->nr; p++) {
		const pfm_pmu_info_t *pmu = &pmus->info[p];

		for (int e = pmu->first_event; e != -1;
		     e = pfm_get_event_next(e)) {
			pfm_event_info_t ev = {.size = sizeof(ev)};
			char name[128];

			if (pfm_get_event_info(e, PFM_OS_PERF_EVENT_EXT, &ev) !=
			    PFM_SUCCESS)
				continue;
			snprintf(name, sizeof(name), "%s::%s", pmu->name,
				 ev.name);
			if (add(l, name))
				return -1;
		}
	}
	return 0;
}

/* the machine's counters, then an event a line */
static void print_json(const struct list *l, const struct pmus *pmus,
		       int paranoid, bool known)
{
	struct json_writer w;

	json_init_file(&w, stdout);
	json_begin_object(&w);
	json_kv_string(&w, "libpfm", pc_libpfm_version());
	json_key(&w, "pmus");
	json_begin_array(&w);
	for (int p = 0; p < pmus->nr; p++)
		json_string(&w, pmus->info[p].name);
	json_end_array(&w);
	json_key(&w, "paranoid");
	if (known)
		json_int(&w, paranoid);
	else
		json_null(&w);
	json_kv_string(&w, "mode", pc_mode());
	json_kv_string(&w, "mode_reason", pc_mode_reason());
	json_key(&w, "events");
	json_begin_array(&w);
	for (size_t i = 0; i < l->nr; i++) {
		const struct pc_event_info *ev = &l->ev[i];

		json_newline(&w);
		json_begin_object(&w);
		json_kv_string(&w, "name", ev->name);
		json_kv_string(&w, "fstr", ev->fstr);
		json_kv_bool(&w, "valid", ev->valid);
		json_kv_bool(&w, "opens", ev->opens);
		json_kv_string(&w, "reason", ev->reason);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	json_end_line(&w);
}

static void print_table(const struct list *l, const struct pmus *pmus,
			int paranoid, bool known)
{
	int wname = 5, wfstr = 11;
	size_t opened = 0;

	printf("libpfm %s; PMUs:", pc_libpfm_version());
	for (int p = 0; p < pmus->nr; p++)
		printf(" %s", pmus->info[p].name);
	if (known)
		printf("; perf_event_paranoid %d", paranoid);
	else
		printf("; perf_event_paranoid unknown");
	printf("; mode %s: %s\n", pc_mode(), pc_mode_reason());

	for (size_t i = 0; i < l->nr; i++) {
		int n = (int)strlen(l->ev[i].name),
		    f = (int)strlen(l->ev[i].fstr);

		wname = n > wname ? n : wname;
		wfstr = f > wfstr ? f : wfstr;
	}
	printf("%-*s  %-*s  %-5s  %s\n", wname, "EVENT", wfstr, "LIBPFM NAME",
	       "OPENS", "REASON");
	for (size_t i = 0; i < l->nr; i++) {
		const struct pc_event_info *ev = &l->ev[i];

		opened += ev->opens;
		/* an event that opens has no reason: no trailing blanks */
		printf("%-*s  %-*s  %-*s%s\n", wname, ev->name, wfstr,
		       ev->valid ? ev->fstr : "-", ev->reason[0] ? 7 : 0,
		       ev->opens ? "yes" : "no", ev->reason);
	}
	printf("%zu events, %zu open here\n", l->nr, opened);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"all", no_argument, NULL, 'a'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct list l = {0};
	struct pmus pmus;
	bool json = false, all = false, known;
	char pmu_event[256];
	int c, paranoid = 0, ret = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'a':
			all = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			if (optopt)
				fprintf(stderr,
					"vdsobench_counters: unknown option "
					"'-%c' (see --help)\n",
					optopt);
			else
				fprintf(stderr,
					"vdsobench_counters: unknown option "
					"'%s' (see --help)\n",
					argv[optind - 1]);
			return 2;
		}
	}
	if (all && optind < argc) {
		fprintf(stderr,
			"vdsobench_counters: give EVENT names or --all, "
			"not both\n");
		return 2;
	}
	if (pc_init()) {
		fprintf(stderr, "vdsobench_counters: %s\n", pc_init_error());
		return 1;
	}
	known = !pc_paranoid(&paranoid);
	find_pmus(&pmus);

	if (all) {
		ret = add_every_event(&l, &pmus);
	} else if (optind < argc) {
		for (int i = optind; i < argc && !ret; i++)
			ret = add(&l, argv[i]);
	} else {
		for (size_t i = 0;
		     i < sizeof(default_events) / sizeof(default_events[0]) &&
		     !ret;
		     i++)
			ret = add(&l, default_events[i]);
		if (!ret && !pc_default_pmu_event(pmu_event, sizeof(pmu_event)))
			ret = add(&l, pmu_event);
	}
	if (ret) {
		fprintf(stderr, "vdsobench_counters: %s\n", strerror(errno));
		free(l.ev);
		return 1;
	}
	/* a name the user typed that libpfm does not know is a usage error */
	for (size_t i = 0; i < l.nr && !all; i++) {
		if (!l.ev[i].valid) {
			fprintf(stderr,
				"vdsobench_counters: %s; --all lists "
				"the events libpfm knows here\n",
				l.ev[i].reason);
			free(l.ev);
			return 2;
		}
	}
	if (json)
		print_json(&l, &pmus, paranoid, known);
	else
		print_table(&l, &pmus, paranoid, known);
	free(l.ev);
	return 0;
}
