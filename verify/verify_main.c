// SPDX-License-Identifier: GPL-2.0
/*
 * vdsobench_verify: runs the checks on variants and prints one JSON
 * object per variant as it finishes, then a summary line. The
 * `vdsobench verify` and `vdsobench list` commands drive it.
 *
 * On x86-64 the checks trap a real counter (verify/tsc_trap.h) and are as
 * exact as with the fake one; an RDTSCP variant on a CPU without RDTSCP is
 * run through the trap's emulation, and its line's "note" says so. A
 * variant whose counter this CPU cannot read otherwise (RDTSCP where the
 * trap is refused, CNTVCTSS_EL0: impls/counters/available.h) is SKIP with
 * the reason, never run.
 *
 * --clock-mode pvclock (hvclock: Hyper-V's TSC page, the same way) runs
 * the checks with the clocksource the simulated
 * host's pvclock page gives (kvm-clock, impls/kernel/sim_vclock.h): the
 * x86 layouts and imported trees and images (their own vread_pvclock()) read
 * it; what does not (an arm64 build, an image whose pvclock page is not
 * known) is SKIP with the reason.
 *
 * Exit: 0 every correct variant passed and every known-bad one was
 * caught (a SKIP is neither); 1 otherwise; 2 bad usage.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json_writer.h"
#include "impls/counters/available.h"
#include "impls/kernel/sim_vclock.h"
#include "impls/registry.h"
#include "verify/check.h"
#include "verify/tsc_trap.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vdsobench_verify [--duration-ms N] [--system-ms N]\n"
		"                        [--clock-mode tsc|pvclock|hvclock] [VARIANT...]\n"
		"       vdsobench_verify --list-json\n"
		"Checks each variant (default: all) and prints one JSON object per\n"
		"variant, then {\"summary\": ...}.\n"
		"  --duration-ms N  length of each concurrency phase (default 300)\n"
		"  --system-ms N    length of the real-system comparison (default 2000)\n"
		"  --clock-mode M   the simulated clocksource: tsc (default), pvclock\n"
		"                   (kvm-clock: the host's pvclock page) or hvclock\n"
		"                   (Hyper-V's TSC page); x86 only\n"
		"  --list-json      describe every variant as a JSON array and exit\n");
}

/* the clocks of a BIT(clk) mask by name; the aux clocks are "aux0".."aux7" */
static void json_clock_list(struct json_writer *w, const char *key, u32 mask)
{
	json_key(w, key);
	json_begin_array(w);
	for (clockid_t clk = 0; clk <= CLOCK_AUX_LAST; clk++)
		if (mask & BIT(clk))
			json_string(w, check_clock_name(clk));
	json_end_array(w);
}

static void json_variant(struct json_writer *w, const struct vdso_variant *v)
{
	char version[16];

	snprintf(version, sizeof(version), "%u.%u", v->kernel_version >> 16,
		 (v->kernel_version >> 8) & 0xff);
	json_begin_object(w);
	json_kv_string(w, "name", v->name);
	json_kv_string(w, "layout", v->layout);
	json_kv_string(w, "counter", v->counter);
	json_kv_string(w, "inline", v->inline_mode);
	json_kv_string(w, "source", v->source);
	json_kv_string(w, "kernel_version", version);
	json_kv_string(w, "summary", v->summary);
	json_kv_string(w, "known_bad", v->known_bad);
	json_kv_string(w, "known_bad_clock_mode", v->known_bad_clock_mode);
	json_clock_list(w, "hres_clocks", v->hres_clocks);
	json_clock_list(w, "coarse_clocks", v->coarse_clocks);
	json_clock_list(w, "raw_clocks", v->raw_clocks);
	json_clock_list(w, "aux_clocks", v->aux_clocks);
	json_kv_bool(w, "has_getres", v->has_getres);
	json_kv_bool(w, "has_timens", v->has_timens);
	json_kv_bool(w, "has_max_cycles", v->has_max_cycles);
	json_kv_bool(w, "real_counter", v->real_counter);
	json_kv_uint(w, "data_size", v->data_size);
	json_kv_uint(w, "vvar_size", v->vvar_size);
	json_key(w, "fields");
	json_begin_array(w);
	for (u32 f = 0; f < v->nr_fields; f++) {
		json_begin_object(w);
		json_kv_string(w, "name", v->fields[f].name);
		json_kv_uint(w, "offset", v->fields[f].offset);
		json_kv_uint(w, "size", v->fields[f].size);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

/* every variant, one a line */
static int list_json(void)
{
	struct json_writer w;

	json_init_file(&w, stdout);
	json_begin_array(&w);
	for (unsigned int i = 0; i < vdso_variants_nr; i++) {
		json_newline(&w);
		json_variant(&w, vdso_variants[i]);
	}
	json_end_array(&w);
	return json_end_line(&w) ? 1 : 0;
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void print_check(struct json_writer *w, const struct check_report *r)
{
	json_begin_object(w);
	json_kv_string(w, "name", r->name);
	json_kv_bool(w, "ok", r->ok);
	json_kv_bool(w, "skipped", r->skipped);
	json_kv_string(w, "detail", r->detail);
	json_kv_string(w, "counter", r->counter);
	json_kv_bool(w, "starved", r->starved);
	json_end_object(w);
}

/* a variant's line, and stdout flushed: `vdsobench verify` shows each */
static void print_variant(const struct vdso_variant *v, const char *status,
			  const struct check_report *r, unsigned int nr_checks,
			  const char *first_failure, const char *reason,
			  const char *note, double seconds)
{
	struct json_writer w;

	json_init_file(&w, stdout);
	json_begin_object(&w);
	json_kv_string(&w, "variant", v->name);
	json_kv_bool(&w, "known_bad", check_known_bad(v));
	json_kv_string(&w, "clock_mode", sim_vclock_name(sim_vclock_mode()));
	/* a fake-counter variant whose code reads the hardware's (check.h) */
	json_kv_bool(&w, "reads_counter_itself", !reason && check_reads_counter_itself(v));
	json_kv_string(&w, "status", status);
	json_key(&w, "checks");
	json_begin_array(&w);
	for (unsigned int k = 0; k < nr_checks; k++)
		print_check(&w, &r[k]);
	json_end_array(&w);
	json_kv_string(&w, "first_failure", first_failure);
	json_kv_string(&w, "note", note);
	if (reason) {
		/* a SKIP ran nothing: a whole 0 */
		json_kv_string(&w, "reason", reason);
		json_kv_uint(&w, "seconds", 0);
	} else {
		/* as "%.3f" */
		json_key(&w, "seconds");
		json_decimal(&w, (long long)(seconds * 1000 + 0.5), 3);
	}
	json_end_object(&w);
	json_end_line(&w);
	fflush(stdout);
}

static void print_summary(unsigned int passed, unsigned int failed,
			  unsigned int caught, unsigned int missed,
			  unsigned int skipped)
{
	struct json_writer w;

	json_init_file(&w, stdout);
	json_begin_object(&w);
	json_key(&w, "summary");
	json_begin_object(&w);
	json_kv_uint(&w, "passed", passed);
	json_kv_uint(&w, "failed", failed);
	json_kv_uint(&w, "caught", caught);
	json_kv_uint(&w, "missed", missed);
	json_kv_uint(&w, "skipped", skipped);
	json_end_object(&w);
	json_end_object(&w);
	json_end_line(&w);
}

/* where the trap is refused, once: the real counters are checked as before */
static void say_no_trap(const struct vdso_variant **chosen, unsigned int n)
{
	const char *why;

	if (!IS_ENABLED(__x86_64__) && !IS_ENABLED(__i386__))
		return; /* no TSC there: nothing lost */
	for (unsigned int i = 0; i < n; i++) {
		if (!check_real_read(chosen[i]))
			continue;
		why = tsc_trap_unavailable();
		if (why)
			fprintf(stderr, "vdsobench_verify: no counter trap (%s): "
				"real counters are bracketed, their edge cases "
				"skipped\n", why);
		return;
	}
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
		{ "clock-mode", required_argument, NULL, 'm' },
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
	int c, mode = SIM_VCLOCK_TSC;

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
		case 'm':
			mode = sim_vclock_parse(optarg);
			if (mode < 0) {
				fprintf(stderr, "vdsobench_verify: --clock-mode: '%s' "
					"is not a clock mode; valid: tsc, pvclock, "
					"hvclock\n",
					optarg);
				return 2;
			}
			break;
		case 'l':
			return list_json();
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

	sim_vclock_select((enum sim_vclock)mode);
	say_no_trap(chosen, n);
	/* only the variants whose counter this CPU reads run at all */
	for (unsigned int i = 0; i < n; i++)
		if (!vdso_counter_unavailable(chosen[i]->counter) &&
		    !check_clock_mode_unavailable(chosen[i]))
			runnable[nr_run++] = chosen[i];
	/*
	 * one shared calibration and run for every real-counter variant; the
	 * simulated host's pvclock page is not this machine's clock
	 */
	if (mode == SIM_VCLOCK_TSC)
		check_system_all(runnable, nr_run, system_ms, system);

	for (unsigned int i = 0; i < n; i++) {
		const struct vdso_variant *v = chosen[i];
		const char *emulated = check_counter_emulated(v);
		const char *why = emulated ? NULL :
					     vdso_counter_unavailable(v->counter);
		const bool bad = check_known_bad(v);
		struct check_report r[4] = { { 0 } };
		const struct check_report *first_bad = NULL;
		char first_failure[600];
		const char *upstream;
		char note[400];
		struct timespec t0;
		const char *status;

		if (!why)
			why = check_clock_mode_unavailable(v);
		if (why) {
			print_variant(v, "SKIP", r, 0, NULL, why, NULL, 0);
			skipped++;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (v->trap_fallbacks && v->trap_fallbacks())
			fprintf(stderr, "verify: %s: its fallback syscalls cannot be trapped (%m): "
				"they reach the real kernel\n", v->name);
		check_exact(v, &r[0]);
		check_edges(v, &r[1]);
		check_concurrency(v,
				  bad && duration_ms < CHECK_KNOWN_BAD_BOUND_MS ?
					  CHECK_KNOWN_BAD_BOUND_MS :
					  duration_ms,
				  &r[2]);
		/* runnable[] keeps the order of chosen[]: the next report is v's */
		if (emulated) {
			r[3] = (struct check_report){ .name = "system", .ok = true,
						      .skipped = true };
			check_note(&r[3], "needs the real counter: %s", emulated);
		} else if (mode != SIM_VCLOCK_TSC) {
			r[3] = (struct check_report){ .name = "system", .ok = true,
						      .skipped = true };
			check_note(&r[3], "the simulated host's page is not this "
				   "machine's clock: checked in tsc mode");
		} else {
			r[3] = system[next_sys++];
		}

		for (int k = 0; k < 4 && !first_bad; k++)
			if (!r[k].ok)
				first_bad = &r[k];
		if (bad) {
			/*
			 * the negative control: only the concurrency check may
			 * flag it, and a check starved of reads caught nothing
			 */
			bool only_torn = !r[2].ok && !r[2].starved && r[0].ok && r[1].ok &&
					 r[3].ok;

			status = only_torn ? "CAUGHT" :
				 r[2].skipped ? "SKIP" :
				 r[2].ok || r[2].starved ? "MISSED" : "FAIL";
		} else {
			status = first_bad ? "FAIL" : "PASS";
		}
		if (!strcmp(status, "PASS"))
			passed++;
		else if (!strcmp(status, "CAUGHT"))
			caught++;
		else if (!strcmp(status, "SKIP"))
			skipped++;
		else if (!strcmp(status, "MISSED"))
			missed++;
		else
			failed++;

		if (first_bad)
			snprintf(first_failure, sizeof(first_failure), "%s: %s",
				 first_bad->name, first_bad->detail);
		else if (bad && r[2].skipped)
			snprintf(first_failure, sizeof(first_failure),
				 "concurrency: %s", r[2].detail);
		else if (bad)
			snprintf(first_failure, sizeof(first_failure), "%s",
				 "concurrency: no torn read found");
		upstream = check_exact_upstream_note(v);
		snprintf(note, sizeof(note), "%s%s%s", emulated ? emulated : "",
			 emulated && upstream ? "; " : "", upstream ? upstream : "");
		print_variant(v, status, r, 4,
			      first_bad || bad ? first_failure : NULL,
			      NULL, note[0] ? note : NULL, seconds_since(&t0));
	}
	print_summary(passed, failed, caught, missed, skipped);
	free(chosen);
	free(runnable);
	free(system);
	return failed || missed ? 1 : 0;
}
