// SPDX-License-Identifier: GPL-2.0
/*
 * vdso_agree on stand-in entries: libc's clock_gettime and the syscall
 * agree, and known-bad entries are caught on every try (a second ahead,
 * 2 ms behind, the wrong clock, a clock refused, the 32-bit struct written
 * where the 64-bit one was passed). Then this kernel's own vDSO where the
 * process has one (none under qemu-i386). Nothing is timed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench/loops.h"
#include "bench/vdso_agree.h"
#include "bench/vdso_entries.h"
#include "bench/vdso_sym.h"
#include "testing/tap.h"

static int libc_ns(clockid_t clk, long long *ns)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return -errno;
	*ns = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	return 0;
}

static int ahead_1s(clockid_t clk, long long *ns)
{
	int ret = libc_ns(clk, ns);

	*ns += 1000000000LL;
	return ret;
}

static int behind_2ms(clockid_t clk, long long *ns)
{
	int ret = libc_ns(clk, ns);

	*ns -= 2000000LL;
	return ret;
}

static int always_realtime(clockid_t clk, long long *ns)
{
	(void)clk;
	return libc_ns(CLOCK_REALTIME, ns);
}

static int refuses_raw(clockid_t clk, long long *ns)
{
	return clk == CLOCK_MONOTONIC_RAW ? -EINVAL : libc_ns(clk, ns);
}

/* answers every clock, those the syscall refuses too */
static int answers_all(clockid_t clk, long long *ns)
{
	if (libc_ns(clk, ns))
		*ns = 0;
	return 0;
}

static void expect(agree_read_fn entry, bool agrees, const char *what,
		   const char *says)
{
	char why[256];
	int ret = vdso_agree(entry, agree_syscall_gettime, why, sizeof(why));

	tap_ok(agrees ? ret == 0 : ret == -1 && strstr(why, says), "%s: %s",
	       what, why);
}

static void test_stand_ins(void)
{
	struct timespec ts;
	bool any_refused = clock_gettime(CLOCK_REALTIME_ALARM, &ts) ||
			   clock_gettime(CLOCK_BOOTTIME_ALARM, &ts);

	expect(libc_ns, true, "libc's clock_gettime agrees", NULL);
	expect(ahead_1s, false, "a second ahead is caught", "ns after");
	expect(behind_2ms, false, "2 ms behind is caught", "ns before");
	expect(always_realtime, false, "REALTIME for every clock is caught",
	       "monotonic:");
	expect(refuses_raw, false,
	       "refusing a clock the syscall answers is "
	       "caught",
	       "monotonic_raw: the entry fails");
	if (any_refused)
		expect(answers_all, false,
		       "answering a clock the syscall "
		       "refuses is caught",
		       "the entry answers");
	else
		tap_ok(true,
		       "# SKIP the system answers both alarm clocks here");
	bench_vdso_clock_gettime = clock_gettime;
	expect(agree_vdso_gettime, true,
	       "the entry reader over libc's clock_gettime agrees", NULL);
	bench_vdso_clock_gettime = NULL;
}

#if BENCH_HAS_GETTIME64
static int syscall_gettime64(clockid_t clk, struct __kernel_timespec *ts)
{
	return (int)syscall(__NR_clock_gettime64, clk, ts);
}

/* __vdso_clock_gettime's 8 bytes where 16 were passed */
static int writes_timespec32(clockid_t clk, struct __kernel_timespec *ts)
{
	return clock_gettime(clk, (struct timespec *)ts);
}

static void test_gettime64(void)
{
	char why[256];
	int ret;

	bench_vdso_clock_gettime64 = syscall_gettime64;
	ret = vdso_agree(agree_vdso_gettime64, agree_syscall_gettime64, why,
			 sizeof(why));
	tap_ok(ret == 0, "the gettime64 reader over syscall 403: %s", why);
	bench_vdso_clock_gettime64 = writes_timespec32;
	ret = vdso_agree(agree_vdso_gettime64, agree_syscall_gettime64, why,
			 sizeof(why));
	tap_ok(ret == -1 && strstr(why, "tv_nsec out of"),
	       "the 32-bit struct written into the 64-bit one is caught: %s",
	       why);
	bench_vdso_clock_gettime64 = NULL;
}
#endif

/* this process's vDSO, where it has one, by its architecture's names */
static void test_this_vdso(void)
{
	const struct vdso_entries *e = vdso_entries_own();
	struct vdso_image *img;
	char why[256];

	if (!e) {
		tap_ok(true, "# SKIP vdso_entries.h has no row for this "
			     "architecture");
		return;
	}
	if (vdso_image_open(&img)) {
		tap_ok(true, "# SKIP no vDSO here: %s", vdso_image_error());
		return;
	}
	bench_vdso_clock_gettime =
		(int (*)(clockid_t, struct timespec *))vdso_image_sym(
			img, e->clock_gettime, e->version);
	if (!bench_vdso_clock_gettime)
		tap_ok(true, "# SKIP no %s@%s in this vDSO", e->clock_gettime,
		       e->version);
	else
		tap_ok(!vdso_agree(agree_vdso_gettime, agree_syscall_gettime,
				   why, sizeof(why)),
		       "this kernel's %s: %s", e->clock_gettime, why);
#if BENCH_HAS_GETTIME64
	bench_vdso_clock_gettime64 =
		(int (*)(clockid_t, struct __kernel_timespec *))vdso_image_sym(
			img, e->clock_gettime64, e->version);
	if (!bench_vdso_clock_gettime64)
		tap_ok(true, "# SKIP no %s@%s in this vDSO", e->clock_gettime64,
		       e->version);
	else
		tap_ok(!vdso_agree(agree_vdso_gettime64,
				   agree_syscall_gettime64, why, sizeof(why)),
		       "this kernel's %s: %s", e->clock_gettime64, why);
#endif
	vdso_image_close(img);
}

int main(void)
{
	test_stand_ins();
#if BENCH_HAS_GETTIME64
	test_gettime64();
#endif
	test_this_vdso();
	return tap_done();
}
