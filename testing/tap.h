/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP output for the C tests: `scripts/vdsobench test` counts the
 * "ok" / "not ok" lines, and a test binary exits 1 if any failed.
 */
#ifndef VDSOBENCH_TAP_H
#define VDSOBENCH_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned int tap_n, tap_failed;

__attribute__((format(printf, 2, 3))) static bool tap_ok(bool ok,
							  const char *fmt, ...)
{
	va_list ap;

	printf("%s %u - ", ok ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		tap_failed++;
	return ok;
}

__attribute__((format(printf, 1, 2), unused)) static void tap_diag(const char *fmt,
							    ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/*
 * The folder a test may write in: Bazel's $TEST_TMPDIR. Tests run confined
 * (toolchains/confined.sh), where nothing else is writable; /tmp only when
 * run by hand outside Bazel.
 */
static __attribute__((unused)) const char *tap_tmpdir(void)
{
	const char *dir = getenv("TEST_TMPDIR");

	return dir && *dir ? dir : "/tmp";
}

static int tap_done(void)
{
	printf("1..%u\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* VDSOBENCH_TAP_H */
