// SPDX-License-Identifier: GPL-2.0
/*
 * vdsobench_verify: runs the checks on variants and prints one JSON
 * object per variant as it finishes, then a summary line. The
 * `vdsobench verify` and `vdsobench list` commands drive it.
 *
 * A variant whose counter this CPU cannot read (RDTSCP, CNTVCTSS_EL0:
 * impls/counters/available.h) is SKIP with the reason, never run.
 *
 * Exit: 0 every correct variant passed and every known-bad one was
 * caught (a SKIP is neither); 1 otherwise; 2 bad usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "impls/counters/available.h"
#include "impls/registry.h"
#include "verify/check.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vdsobench_verify [--duration-ms N] [--system-ms N] [VARIANT...]\n"
		"       vdsobench_verify --list-json\n"
		"Checks each variant (default: all) and prints one JSON object per\n"
		"variant, then {\"summary\": ...}.\n"
		"  --duration-ms N  length of each concurrency phase (default 300)\n"
		"  --system-ms N    length of the real-system comparison (default 2000)\n"
		"  --list-json      describe every variant as a JSON array and exit\n");
}

static void json_string(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* the clocks of a BIT(clk) mask by name; the aux clocks are "aux0".."aux7" */
static void json_clock_list(u32 mask)
{
	bool first = true;

	putchar('[');
	for (clockid_t clk = 0; clk <= CLOCK_AUX_LAST; clk++) {
		if (!(mask & BIT(clk)))
			continue;
		if (!first)
			putchar(',');
		json_string(check_clock_name(clk));
		first = false;
	}
	putchar(']');
}

static void list_json(void)
{
	putchar('[');
	for (unsigned int i = 0; i < vdso_variants_nr; i++) {
		const struct vdso_variant *v = vdso_variants[i];

		printf(i ? ",\n{" : "{");
		printf("\"name\":");
		json_string(v->name);
		printf(",\"layout\":");
		json_string(v->layout);
		printf(",\"counter\":");
		json_string(v->counter);
		printf(",\"inline\":");
		json_string(v->inline_mode);
		printf(",\"source\":");
		json_string(v->source);
		printf(",\"kernel_version\":\"%u.%u\"", v->kernel_version >> 16,
		       (v->kernel_version >> 8) & 0xff);
		printf(",\"summary\":");
		json_string(v->summary);
		printf(",\"known_bad\":");
		if (v->known_bad)
			json_string(v->known_bad);
		else
			printf("null");
		printf(",\"hres_clocks\":");
		json_clock_list(v->hres_clocks);
		printf(",\"coarse_clocks\":");
		json_clock_list(v->coarse_clocks);
		printf(",\"raw_clocks\":");
		json_clock_list(v->raw_clocks);
		printf(",\"aux_clocks\":");
		json_clock_list(v->aux_clocks);
		printf(",\"has_getres\":%s,\"has_timens\":%s,"
		       "\"has_max_cycles\":%s,\"real_counter\":%s",
		       v->has_getres ? "true" : "false",
		       v->has_timens ? "true" : "false",
		       v->has_max_cycles ? "true" : "false",
		       v->real_counter ? "true" : "false");
		printf(",\"data_size\":%zu,\"vvar_size\":%zu,\"fields\":[",
		       v->data_size, v->vvar_size);
		for (u32 f = 0; f < v->nr_fields; f++) {
			printf(f ? ",{\"name\":" : "{\"name\":");
			json_string(v->fields[f].name);
			printf(",\"offset\":%u,\"size\":%u}", v->fields[f].offset,
			       v->fields[f].size);
		}
		printf("]}");
	}
	printf("]\n");
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void print_check(const struct check_report *r, bool first)
{
	printf(first ? "{\"name\":" : ",{\"name\":");
	json_string(r->name);
	printf(",\"ok\":%s,\"skipped\":%s,\"detail\":", r->ok ? "true" : "false",
	       r->skipped ? "true" : "false");
	json_string(r->detail);
	putchar('}');
}

static int parse_ms(const char *opt, const char *s, unsigned int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < 1 || v > 600000) {
		fprintf(stderr,
			"vdsobench_verify: %s: '%s' is not a whole number of "
			"milliseconds from 1 to 600000\n", opt, s);
		return -1;
	}
	*out = (unsigned int)v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration-ms", required_argument, NULL, 'd' },
		{ "system-ms", required_argument, NULL, 's' },
		{ "list-json", no_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct vdso_variant **chosen, **runnable;
	struct check_report *system;
	unsigned int duration_ms = 300, system_ms = 2000, n = 0;
	unsigned int nr_run = 0, next_sys = 0;
	unsigned int passed = 0, failed = 0, caught = 0, missed = 0, skipped = 0;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_ms("--duration-ms", optarg, &duration_ms))
				return 2;
			break;
		case 's':
			if (parse_ms("--system-ms", optarg, &system_ms))
				return 2;
			break;
		case 'l':
			list_json();
			return 0;
		case 'j':
			break; /* JSON is the only output */
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}

	chosen = calloc(vdso_variants_nr + (unsigned int)argc, sizeof(*chosen));
	runnable = calloc(vdso_variants_nr + (unsigned int)argc, sizeof(*runnable));
	system = calloc(vdso_variants_nr + (unsigned int)argc, sizeof(*system));
	if (!chosen || !runnable || !system)
		return 1;
	if (optind == argc) {
		for (unsigned int i = 0; i < vdso_variants_nr; i++)
			chosen[n++] = vdso_variants[i];
	}
	for (int i = optind; i < argc; i++) {
		const struct vdso_variant *v = vdso_variant_find(argv[i]);

		if (!v) {
			fprintf(stderr,
				"vdsobench_verify: unknown variant '%s'; "
				"--list-json lists the %u valid ones\n",
				argv[i], vdso_variants_nr);
			free(chosen);
			free(runnable);
			free(system);
			return 2;
		}
		chosen[n++] = v;
	}

	/* only the variants whose counter this CPU reads run at all */
	for (unsigned int i = 0; i < n; i++)
		if (!vdso_counter_unavailable(chosen[i]->counter))
			runnable[nr_run++] = chosen[i];
	/* one shared calibration and run for every real-counter variant */
	check_system_all(runnable, nr_run, system_ms, system);

	for (unsigned int i = 0; i < n; i++) {
		const struct vdso_variant *v = chosen[i];
		const char *why = vdso_counter_unavailable(v->counter);
		struct check_report r[4] = { { 0 } };
		const struct check_report *first_bad = NULL;
		struct timespec t0;
		const char *status;

		if (why) {
			printf("{\"variant\":");
			json_string(v->name);
			printf(",\"known_bad\":%s,\"status\":\"SKIP\",\"checks\":[],"
			       "\"first_failure\":null,\"reason\":",
			       v->known_bad ? "true" : "false");
			json_string(why);
			printf(",\"seconds\":0}\n");
			fflush(stdout);
			skipped++;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		check_exact(v, &r[0]);
		check_edges(v, &r[1]);
		check_concurrency(v,
				  v->known_bad && duration_ms < CHECK_KNOWN_BAD_BOUND_MS ?
					  CHECK_KNOWN_BAD_BOUND_MS :
					  duration_ms,
				  &r[2]);
		/* runnable[] keeps the order of chosen[]: the next report is v's */
		r[3] = system[next_sys++];

		for (int k = 0; k < 4 && !first_bad; k++)
			if (!r[k].ok)
				first_bad = &r[k];
		if (v->known_bad) {
			/* the negative control: only the concurrency check may flag it */
			bool only_torn = !r[2].ok && r[0].ok && r[1].ok && r[3].ok;

			status = only_torn ? "CAUGHT" : (r[2].ok ? "MISSED" : "FAIL");
		} else {
			status = first_bad ? "FAIL" : "PASS";
		}
		if (!strcmp(status, "PASS"))
			passed++;
		else if (!strcmp(status, "CAUGHT"))
			caught++;
		else if (!strcmp(status, "MISSED"))
			missed++;
		else
			failed++;

		printf("{\"variant\":");
		json_string(v->name);
		printf(",\"known_bad\":%s,\"status\":\"%s\",\"checks\":[",
		       v->known_bad ? "true" : "false", status);
		for (int k = 0; k < 4; k++)
			print_check(&r[k], k == 0);
		printf("],\"first_failure\":");
		if (first_bad) {
			char buf[600];

			snprintf(buf, sizeof(buf), "%s: %s", first_bad->name,
				 first_bad->detail);
			json_string(buf);
		} else if (v->known_bad) {
			json_string("concurrency: no torn read found");
		} else {
			printf("null");
		}
		printf(",\"seconds\":%.3f}\n", seconds_since(&t0));
		fflush(stdout);
	}
	printf("{\"summary\":{\"passed\":%u,\"failed\":%u,\"caught\":%u,"
	       "\"missed\":%u,\"skipped\":%u}}\n",
	       passed, failed, caught, missed, skipped);
	free(chosen);
	free(runnable);
	free(system);
	return failed || missed ? 1 : 0;
}
