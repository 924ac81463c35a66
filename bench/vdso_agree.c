// SPDX-License-Identifier: GPL-2.0
/* bench/vdso_agree.h: the system's vDSO entries against their syscalls. */
#define _GNU_SOURCE
#include "bench/vdso_agree.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench/loops.h"
#include "common/clocks.h"

static const struct suite_clock agree_clocks[] = {
	SUITE_CLOCKS(SUITE_CLOCK_ROW) OTHER_CLOCKS(SUITE_CLOCK_ROW)
};

#define NSEC_PER_S 1000000000LL

/*
 * tv_nsec is set out of range first: an entry that writes less than the
 * struct it was given (a 32-bit struct timespec, 8 bytes of 16) leaves it
 */
#define AGREE_READER(fn_name, ts_type, call)                                   \
	int fn_name(clockid_t clk, long long *ns)                              \
	{                                                                      \
		ts_type ts = {.tv_sec = -1, .tv_nsec = -1};                    \
		int ret = (call);                                              \
		if (ret)                                                       \
			return ret == -1 ? -errno : ret;                       \
		if (ts.tv_nsec < 0 || ts.tv_nsec >= NSEC_PER_S)                \
			return -ERANGE;                                        \
		*ns = (long long)ts.tv_sec * NSEC_PER_S + ts.tv_nsec;          \
		return 0;                                                      \
	}

/* the vDSO returns -errno itself; syscall() returns -1 and sets errno */
AGREE_READER(agree_vdso_gettime, struct timespec,
	     bench_vdso_clock_gettime(clk, &ts))
AGREE_READER(agree_syscall_gettime, struct timespec,
	     (int)syscall(SYS_clock_gettime, clk, &ts))
#if BENCH_HAS_GETTIME64
AGREE_READER(agree_vdso_gettime64, struct __kernel_timespec,
	     bench_vdso_clock_gettime64(clk, &ts))
AGREE_READER(agree_syscall_gettime64, struct __kernel_timespec,
	     (int)syscall(__NR_clock_gettime64, clk, &ts))
#endif

static const char *error_text(int ret)
{
	return ret == -ERANGE ? "a tv_nsec out of [0, 1e9)" : strerror(-ret);
}

/* one try on the k-th clock: 0 if the entry agrees, else -1 and why */
static int agree_once(agree_read_fn entry, agree_read_fn sys, unsigned int k,
		      bool *refused, char *why, size_t len)
{
	long long before = 0, got = 0, after = 0;
	int rb = sys(agree_clocks[k].id, &before);
	int re = entry(agree_clocks[k].id, &got);
	int ra = sys(agree_clocks[k].id, &after);
	const char *name = agree_clocks[k].name;

	*refused = rb && ra;
	if (rb && ra && re == rb)
		return 0;
	if (rb && ra) {
		snprintf(why, len,
			 "%s: the syscall refuses it (%s), the entry %s%s",
			 name, error_text(rb), re ? "fails: " : "answers",
			 re ? error_text(re) : "");
		return -1;
	}
	if (rb || ra) {
		snprintf(why, len, "%s: the syscall answered once in two (%s)",
			 name, error_text(rb ? rb : ra));
		return -1;
	}
	if (re)
		snprintf(why, len,
			 "%s: the entry fails (%s), the syscall answers", name,
			 error_text(re));
	else if (got < before)
		snprintf(why, len, "%s: %lld ns before the syscall's reading",
			 name, before - got);
	else if (got > after)
		snprintf(
			why, len,
			"%s: %lld ns after the syscall's reading that followed",
			name, got - after);
	else
		return 0;
	return -1;
}

int vdso_agree(agree_read_fn entry, agree_read_fn syscall, char *why,
	       size_t len)
{
	unsigned int answered = 0, refused = 0;

	for (unsigned int k = 0; k < ARRAY_SIZE(agree_clocks); k++) {
		bool was_refused = false;
		int tries = 0;

		while (agree_once(entry, syscall, k, &was_refused, why, len))
			if (++tries == AGREE_TRIES)
				return -1;
		answered += !was_refused;
		refused += was_refused;
	}
	snprintf(why, len,
		 "agrees with the syscall on %u clocks, and refuses %u as it "
		 "does",
		 answered, refused);
	return 0;
}
