// SPDX-License-Identifier: GPL-2.0
/*
 * Event counters on libpfm4 and perf_event_open(2); see perf_counters.h for
 * the contract. The shape follows Google Benchmark's src/perf_counters.cc
 * (encode with pfm_get_os_event_encoding(), one group, one read) and
 * libpfm4's perf_examples (time_enabled/time_running scaling), with one
 * difference: an event that will not open is dropped with a reason instead
 * of losing every counter, because on the VMs this project runs on no
 * hardware event opens at all and the benchmarks must still run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strerrorname_np(), dl_iterate_phdr() */
#endif
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>
#include <perfmon/pfmlib_perf_event.h>

#include "counters/perf_counters.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38 /* Linux 5.8; older kernels only know CAP_SYS_ADMIN */
#endif

#define PC_REASON_LEN 256
#define PC_READ_FORMAT                                                         \
	(PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |                  \
	 PERF_FORMAT_TOTAL_TIME_RUNNING)

struct pc_group {
	int leader;
	unsigned int nr, nr_dropped;
	int fd[PC_MAX_EVENTS];
	char *name[PC_MAX_EVENTS];
	char *dropped[PC_MAX_EVENTS];
	int dropped_errno[PC_MAX_EVENTS];
	char dropped_reason[PC_MAX_EVENTS][PC_REASON_LEN];
	bool kernel;
	char mode_reason[2 * PC_REASON_LEN];
};

/* what PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING reads */
struct pc_read_buf {
	uint64_t nr, time_enabled, time_running;
	uint64_t value[PC_MAX_EVENTS];
};

static pthread_once_t pc_once = PTHREAD_ONCE_INIT;
static int pc_init_errno;
static char pc_init_err[PC_REASON_LEN];
static bool pc_kernel;
static char pc_reason[PC_REASON_LEN];
static bool pc_paranoid_known;
static int pc_paranoid_value;
/* CAP_PERFMON or CAP_SYS_ADMIN in the initial user namespace */
static bool pc_capable;
/* /proc/self/status's Seccomp: 0 none, 1 strict, 2 a filter; -1 unknown */
static int pc_seccomp = -1;
/* 1: the kernel registered a CPU PMU, 0: it did not, -1: cannot tell */
static int pc_cpu_pmu = -1;
static char pc_version[64];

static void set_str(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_str(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* appends, keeping what fits: summaries are best effort, never an error */
static void append(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static bool has_cap(const struct __user_cap_data_struct *d, unsigned int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

/*
 * The kernel asks for the capability in the initial user namespace; in a
 * child one (Bazel's sandbox, a rootless container) root's capabilities do
 * not count, and uid_map is then something other than the identity map.
 */
static bool initial_user_ns(void)
{
	unsigned long inner, outer, count;
	FILE *f = fopen("/proc/self/uid_map", "r");
	bool init;

	if (!f)
		return true;
	/* an unmapped namespace has an empty map */
	init = fscanf(f, "%lu %lu %lu", &inner, &outer, &count) == 3 &&
	       !inner && !outer && count == 4294967295UL;
	fclose(f);
	return init;
}

/*
 * The kernel lets a process count kernel mode when perf_event_paranoid <= 1
 * or it has CAP_PERFMON (CAP_SYS_ADMIN before 5.8); euid 0 alone is not
 * enough (a container's root may lack both), so ask for the capabilities.
 */
static void decide_mode(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct caps[2] = {{0}};
	const char *cap = NULL;
	FILE *f;

	f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f) {
		pc_paranoid_known = fscanf(f, "%d", &pc_paranoid_value) == 1;
		fclose(f);
	}
	if (!syscall(SYS_capget, &hdr, caps)) {
		if (has_cap(caps, CAP_PERFMON))
			cap = "CAP_PERFMON";
		else if (has_cap(caps, CAP_SYS_ADMIN))
			cap = "CAP_SYS_ADMIN";
	}
	if (cap && !initial_user_ns()) {
		set_str(pc_reason, sizeof(pc_reason),
			"%s only inside a user namespace, which perf_event "
			"ignores; perf_event_paranoid=%d: %s",
			cap, pc_paranoid_known ? pc_paranoid_value : 2,
			pc_paranoid_known && pc_paranoid_value <= 1
				? "kernel counted too"
				: "user mode only");
		pc_kernel = pc_paranoid_known && pc_paranoid_value <= 1;
		return;
	}

	if (cap) {
		pc_kernel = pc_capable = true;
		set_str(pc_reason, sizeof(pc_reason),
			"%s%s counts the kernel whatever perf_event_paranoid "
			"(%d) says",
			geteuid() ? "" : "euid 0 with ", cap,
			pc_paranoid_known ? pc_paranoid_value : 2);
	} else if (!pc_paranoid_known) {
		set_str(pc_reason, sizeof(pc_reason),
			"/proc/sys/kernel/perf_event_paranoid unreadable, "
			"assuming the kernel default 2: user mode only");
	} else if (pc_paranoid_value <= 1) {
		pc_kernel = true;
		set_str(pc_reason, sizeof(pc_reason),
			"perf_event_paranoid=%d lets any process count the "
			"kernel",
			pc_paranoid_value);
	} else if (pc_paranoid_value == 2) {
		set_str(pc_reason, sizeof(pc_reason),
			"perf_event_paranoid=2 and no CAP_PERFMON: user mode "
			"only, a syscall's kernel side is not counted");
	} else {
		set_str(pc_reason, sizeof(pc_reason),
			"perf_event_paranoid=%d and no CAP_PERFMON: no perf "
			"events at all for this process (Debian's extra level)",
			pc_paranoid_value);
	}
}

/* a seccomp filter can refuse perf_event_open with any errno it chooses */
static void find_seccomp(void)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &pc_seccomp) == 1)
			break;
	fclose(f);
}

/*
 * Generic hardware events go to the CPU's PMU, which the kernel registers
 * under one of these names; a VM without a virtual PMU has none of them.
 */
static void find_cpu_pmu(void)
{
	static const char *const names[] = {"cpu",	   "cpu_core",
					    "cpu_atom",	   "cpum_cf",
					    "armv8_pmuv3", "armv8_pmuv3_0"};
	const char *dir = "/sys/bus/event_source/devices";
	char path[256];
	struct stat st;

	if (stat(dir, &st))
		return;
	pc_cpu_pmu = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!stat(path, &st))
			pc_cpu_pmu = 1;
	}
}

static int find_libpfm(struct dl_phdr_info *info, size_t size, void *data)
{
	char *real, *base;

	(void)size;
	(void)data;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libpfm.so"))
		return 0;
	real = realpath(info->dlpi_name, NULL);
	if (!real)
		return 0;
	/* Debian's libpfm.so.4 links to libpfm.so.4.13.0 */
	base = strstr(real, "libpfm.so.");
	if (base && base[10] >= '0' && base[10] <= '9')
		set_str(pc_version, sizeof(pc_version), "%s", base + 10);
	free(real);
	return 1;
}

static void init_once(void)
{
	int ret;

	decide_mode();
	find_seccomp();
	find_cpu_pmu();
	/* pfm_get_version() is the API version (4.0), not the release */
	dl_iterate_phdr(find_libpfm, NULL);
	if (!pc_version[0])
		set_str(pc_version, sizeof(pc_version), "%d.%d (API)",
			PFM_MAJ_VERSION(pfm_get_version()),
			PFM_MIN_VERSION(pfm_get_version()));

	ret = pfm_initialize();
	if (ret != PFM_SUCCESS) {
		pc_init_errno = ret == PFM_ERR_NOMEM ? ENOMEM : ENOTSUP;
		set_str(pc_init_err, sizeof(pc_init_err),
			"libpfm: pfm_initialize: %s", pfm_strerror(ret));
	}
}

int pc_init(void)
{
	pthread_once(&pc_once, init_once);
	if (pc_init_errno) {
		errno = pc_init_errno;
		return -1;
	}
	return 0;
}

const char *pc_init_error(void)
{
	pc_init();
	return pc_init_err;
}

const char *pc_libpfm_version(void)
{
	pc_init();
	return pc_version;
}

const char *pc_mode(void)
{
	pc_init();
	return pc_kernel ? "user+kernel" : "user";
}

const char *pc_mode_reason(void)
{
	pc_init();
	return pc_reason;
}

int pc_paranoid(int *value)
{
	pc_init();
	if (!value || !pc_paranoid_known) {
		errno = value ? ENOENT : EINVAL;
		return -1;
	}
	*value = pc_paranoid_value;
	return 0;
}

static int plm(bool kernel)
{
	return kernel ? PFM_PLM0 | PFM_PLM3 : PFM_PLM3;
}

/*
 * libpfm's fully-qualified string carries every modifier
 * ("perf::PERF_COUNT_HW_CPU_CYCLES:u=1:k=1:h=0:..."); keep the event and its
 * unit masks, which name what is counted; the mode is reported apart.
 */
static void short_fstr(const char *fstr, const char *name, char *buf,
		       size_t len)
{
	const char *p = fstr, *sep = strstr(fstr, "::");
	bool first = true;

	buf[0] = '\0';
	if (sep) {
		append(buf, len, "%.*s::", (int)(sep - fstr), fstr);
		p = sep + 2;
	}
	while (*p) {
		size_t n = strcspn(p, ":");

		if (n && !memchr(p, '=', n)) {
			append(buf, len, "%s%.*s", first ? "" : ":", (int)n, p);
			first = false;
		}
		p += n;
		if (*p)
			p++;
	}
	/* raw events (perf_raw::r0c0) keep their code only in the name */
	if (first) {
		sep = strstr(name, "::");
		append(buf, len, "%s", sep ? sep + 2 : name);
	}
}

/* For an attribute error, the unit masks the event does have */
static void append_umasks(const char *name, char *reason, size_t len)
{
	char ev[128];
	pfm_event_info_t info = {.size = sizeof(info)};
	int idx, shown = 0;

	/* pfm_find_event() rejects the attributes that caused the error */
	snprintf(ev, sizeof(ev), "%s", name);
	for (char *c = strstr(ev, "::") ? strstr(ev, "::") + 2 : ev; *c; c++) {
		if (*c == ':') {
			*c = '\0';
			break;
		}
	}
	idx = pfm_find_event(ev);
	if (idx < 0 || pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) !=
			       PFM_SUCCESS)
		return;
	for (int a = 0; a < info.nattrs; a++) {
		pfm_event_attr_info_t ai = {.size = sizeof(ai)};

		if (pfm_get_event_attr_info(idx, a, PFM_OS_PERF_EVENT_EXT,
					    &ai) != PFM_SUCCESS ||
		    ai.type != PFM_ATTR_UMASK)
			continue;
		append(reason, len, "%s%s",
		       shown++ ? ", " : " (unit masks: ", ai.name);
	}
	if (shown)
		append(reason, len, ")");
	else
		append(reason, len, " (%s has no unit masks)", ev);
}

/* "pmu::EVENT" of libpfm's event index, for one it cannot encode */
static void event_name(int idx, char *buf, size_t len)
{
	pfm_event_info_t ev = {.size = sizeof(ev)};
	pfm_pmu_info_t pmu = {.size = sizeof(pmu)};

	if (pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &ev) !=
		    PFM_SUCCESS ||
	    pfm_get_pmu_info(ev.pmu, &pmu) != PFM_SUCCESS)
		return;
	snprintf(buf, len, "%s::%s", pmu.name, ev.name);
}

/*
 * 0: encoded. 1: libpfm knows the event but cannot encode it for this
 * kernel (a PMU the kernel does not expose), so the name is right and the
 * machine is not. -1: the name is wrong. reason says why when not 0.
 */
static int encode(const char *name, bool kernel, struct perf_event_attr *attr,
		  char *fstr, size_t fstrlen, char *reason, size_t len)
{
	pfm_perf_encode_arg_t arg;
	char *full = NULL;
	int ret;

	memset(attr, 0, sizeof(*attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = attr;
	arg.fstr = &full;
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(name, plm(kernel),
					PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret == PFM_SUCCESS) {
		attr->size = sizeof(*attr);
		if (fstr)
			short_fstr(full, name, fstr, fstrlen);
		free(full);
		return 0;
	}
	free(full);
	if (ret == PFM_ERR_NOTSUPP && pfm_find_event(name) >= 0) {
		if (fstr)
			event_name(pfm_find_event(name), fstr, fstrlen);
		set_str(reason, len,
			"libpfm knows '%s' but cannot encode it for "
			"perf_event: %s (the kernel exposes no such PMU)",
			name, pfm_strerror(ret));
		return 1;
	}
	set_str(reason, len, "libpfm cannot encode '%s': %s", name,
		pfm_strerror(ret));
	if (ret == PFM_ERR_ATTR || ret == PFM_ERR_UMASK)
		append_umasks(name, reason, len);
	return -1;
}

static bool hardware_type(const struct perf_event_attr *attr)
{
	return attr->type == PERF_TYPE_HARDWARE ||
	       attr->type == PERF_TYPE_HW_CACHE || attr->type == PERF_TYPE_RAW;
}

/* whether perf_event_paranoid and the capabilities let this attr open */
static bool policy_allows(const struct perf_event_attr *attr)
{
	if (pc_capable)
		return true;
	if (!pc_paranoid_known)
		return false;
	return pc_paranoid_value <= 1 ||
	       (pc_paranoid_value == 2 && attr->exclude_kernel);
}

/*
 * Refused (EACCES, EPERM, ENOSYS): which of the causes. The kernel's own
 * perf policy says EACCES (ENOSYS: no perf events built in); a seccomp
 * filter says what it was written to (Docker's EPERM, others ENOSYS), so
 * with one installed any refusal the policy does not explain is its.
 */
static void denied_hint(char *buf, size_t len, int err,
			const struct perf_event_attr *attr)
{
	bool allowed = policy_allows(attr);

	if (pc_seccomp == 2 && (allowed || err != EACCES))
		set_str(buf, len, "refused by this process's seccomp filter "
				  "(Seccomp: 2 in /proc/self/status)");
	else if (err == ENOSYS)
		set_str(buf, len, "this kernel has no perf events "
				  "(CONFIG_PERF_EVENTS is off)");
	else if (allowed)
		set_str(buf, len,
			"refused though perf_event_paranoid and the "
			"capabilities allow it: a security module (SELinux, "
			"AppArmor, lockdown)%s",
			pc_seccomp == 2 ? " or this process's seccomp filter"
					: "");
	else if (attr->exclude_kernel)
		set_str(buf, len,
			"not permitted at perf_event_paranoid=%d without "
			"CAP_PERFMON",
			pc_paranoid_known ? pc_paranoid_value : 2);
	else
		set_str(buf, len,
			"kernel-mode counting not permitted without "
			"CAP_PERFMON at perf_event_paranoid=%d",
			pc_paranoid_known ? pc_paranoid_value : 2);
}

static const char *open_hint(int err, const struct perf_event_attr *attr,
			     bool alone_opens)
{
	switch (err) {
	case ENOENT:
		if (!hardware_type(attr))
			return "the kernel has no PMU for this event type";
		if (pc_cpu_pmu == 0)
			return "no hardware PMU visible, as in a VM without a "
			       "virtual PMU";
		return "the CPU's PMU does not support this event";
	case EINVAL:
		if (alone_opens)
			return "opens alone but not in this group: the PMU "
			       "cannot schedule it with the others";
		return "the kernel rejected this encoding";
	case EOPNOTSUPP:
		return "the PMU lacks a feature this event needs";
	case ENODEV:
		return "no such PMU on this CPU";
	case EMFILE:
		return "out of file descriptors";
	case EBUSY:
		return "another user holds the PMU exclusively";
	default:
		return "";
	}
}

static void open_reason(char *buf, size_t len, int err,
			const struct perf_event_attr *attr, bool alone_opens)
{
	char denied[PC_REASON_LEN];
	const char *hint = open_hint(err, attr, alone_opens);
	const char *ename = strerrorname_np(err);

	if (err == EACCES || err == EPERM || err == ENOSYS) {
		denied_hint(denied, sizeof(denied), err, attr);
		hint = denied;
	}
	set_str(buf, len, "perf_event_open: %s (%s)%s%s", strerror(err),
		ename ? ename : "?", *hint ? ": " : "", hint);
}

static int sys_perf_event_open(struct perf_event_attr *attr, int group_fd)
{
	int fd;

	/* Google Benchmark retries too: the call is interrupted often */
	for (int tries = 0; tries < 5; tries++) {
		fd = perf_event_open(attr, 0, -1, group_fd,
				     PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0 || errno != EINTR)
			break;
	}
	return fd;
}

/* the calling thread, read as a group, started by the caller */
static int open_one(struct perf_event_attr *attr, int group_fd)
{
	attr->disabled = group_fd < 0;
	attr->inherit = 0;
	attr->read_format = PC_READ_FORMAT;
	return sys_perf_event_open(attr, group_fd);
}

/*
 * Opens alone to tell "cannot open here" from "cannot join this group";
 * falls back to user mode when the kernel refuses kernel counting that
 * the process mode expected. Returns the errno, 0 if it opened (*user_only
 * then says whether it took the fallback).
 */
static int try_alone(struct perf_event_attr *attr, bool *user_only)
{
	int fd = open_one(attr, -1), err = errno;

	*user_only = false;
	if (fd < 0 && (err == EACCES || err == EPERM) &&
	    !attr->exclude_kernel) {
		attr->exclude_kernel = 1;
		fd = open_one(attr, -1);
		if (fd >= 0)
			*user_only = true;
		else
			err = errno;
		attr->exclude_kernel = 0;
	}
	if (fd < 0)
		return err;
	close(fd);
	return 0;
}

int pc_event_check(const char *name, struct pc_event_info *info)
{
	struct perf_event_attr attr;
	bool user_only;
	int err, ret;

	if (!name || !info) {
		errno = EINVAL;
		return -1;
	}
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", name);
	if (pc_init()) {
		set_str(info->reason, sizeof(info->reason), "%s", pc_init_err);
		return 0;
	}
	ret = encode(name, pc_kernel, &attr, info->fstr, sizeof(info->fstr),
		     info->reason, sizeof(info->reason));
	if (ret < 0)
		return 0;
	info->valid = true;
	if (ret > 0)
		return 0;

	err = try_alone(&attr, &user_only);
	if (err) {
		open_reason(info->reason, sizeof(info->reason), err, &attr,
			    false);
		return 0;
	}
	info->opens = true;
	if (user_only)
		set_str(info->reason, sizeof(info->reason),
			"user mode only: the kernel refused kernel-mode "
			"counting (EACCES)");
	return 0;
}

static int drop(struct pc_group *g, const char *name, int err,
		const char *reason)
{
	unsigned int i = g->nr_dropped;

	g->dropped[i] = strdup(name);
	if (!g->dropped[i])
		return -1;
	g->dropped_errno[i] = err;
	set_str(g->dropped_reason[i], PC_REASON_LEN, "%s", reason);
	g->nr_dropped++;
	return 0;
}

static void close_all(struct pc_group *g)
{
	for (unsigned int i = 0; i < g->nr; i++) {
		close(g->fd[i]);
		free(g->name[i]);
	}
	for (unsigned int i = 0; i < g->nr_dropped; i++)
		free(g->dropped[i]);
	g->nr = g->nr_dropped = 0;
	g->leader = -1;
}

/*
 * Opens every event in order; those the kernel refuses are dropped with a
 * reason. 0, or -1 (ENOMEM).
 */
static int open_all(struct pc_group *g, const char *const *events,
		    unsigned int n)
{
	char reason[PC_REASON_LEN];

	g->leader = -1;
	for (unsigned int i = 0; i < n; i++) {
		struct perf_event_attr attr;
		bool user_only, alone;
		int fd, err;

		if (encode(events[i], g->kernel, &attr, NULL, 0, reason,
			   sizeof(reason))) {
			/* only a PMU the kernel lacks gets here: see the caller
			 */
			if (drop(g, events[i], ENOENT, reason))
				return -1;
			continue;
		}
		fd = open_one(&attr, g->leader);
		if (fd < 0) {
			err = errno;
			/* EINVAL: a bad encoding, or no room in this group */
			alone = err == EINVAL && g->leader >= 0 &&
				!try_alone(&attr, &user_only);
			open_reason(reason, sizeof(reason), err, &attr, alone);
			if (drop(g, events[i], err, reason))
				return -1;
			continue;
		}
		g->name[g->nr] = strdup(events[i]);
		if (!g->name[g->nr]) {
			close(fd);
			return -1;
		}
		g->fd[g->nr++] = fd;
		if (g->leader < 0)
			g->leader = fd;
	}
	return 0;
}

static bool kernel_refused(const struct pc_group *g)
{
	for (unsigned int i = 0; i < g->nr_dropped; i++)
		if (g->dropped_errno[i] == EACCES ||
		    g->dropped_errno[i] == EPERM)
			return true;
	return false;
}

int pc_group_open(struct pc_group **gp, const char *const *events,
		  unsigned int n, char *err, size_t errlen)
{
	char reason[PC_REASON_LEN];
	struct perf_event_attr attr;
	struct pc_group *g;

	set_str(err, errlen, "%s", "");
	if (!gp || (n && !events)) {
		set_str(err, errlen, "pc_group_open: no group or no events");
		errno = EINVAL;
		return -1;
	}
	*gp = NULL;
	if (n > PC_MAX_EVENTS) {
		set_str(err, errlen,
			"%u events asked for; one group holds at most %d", n,
			PC_MAX_EVENTS);
		errno = EINVAL;
		return -1;
	}
	if (pc_init()) {
		set_str(err, errlen, "%s", pc_init_err);
		return -1;
	}
	/* every name first, so that a typo opens nothing */
	for (unsigned int i = 0; i < n; i++) {
		if (!events[i] || !events[i][0]) {
			set_str(err, errlen, "event %u has no name", i + 1);
			errno = EINVAL;
			return -1;
		}
		if (encode(events[i], pc_kernel, &attr, NULL, 0, reason,
			   sizeof(reason)) < 0) {
			set_str(err, errlen, "%s", reason);
			errno = EINVAL;
			return -1;
		}
	}

	g = calloc(1, sizeof(*g));
	if (!g)
		return -1;
	g->kernel = pc_kernel;
	set_str(g->mode_reason, sizeof(g->mode_reason), "%s", pc_reason);
	if (open_all(g, events, n))
		goto fail;
	if (g->kernel && kernel_refused(g)) {
		/* capabilities the kernel did not honour after all */
		close_all(g);
		g->kernel = false;
		set_str(g->mode_reason, sizeof(g->mode_reason),
			"the kernel refused kernel-mode counting (EACCES) "
			"although %s; user mode only",
			pc_reason);
		if (open_all(g, events, n))
			goto fail;
	}
	if (g->leader >= 0 &&
	    (ioctl(g->leader, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP) ||
	     ioctl(g->leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP)))
		goto fail;
	*gp = g;
	return 0;
fail:
	set_str(err, errlen, "pc_group_open: %s", strerror(errno));
	pc_group_destroy(g);
	return -1;
}

void pc_group_destroy(struct pc_group *g)
{
	int saved = errno;

	if (!g)
		return;
	if (g->leader >= 0)
		ioctl(g->leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	close_all(g);
	free(g);
	errno = saved;
}

unsigned int pc_group_nr_events(const struct pc_group *g)
{
	return g ? g->nr : 0;
}

const char *pc_group_event_name(const struct pc_group *g, unsigned int i)
{
	return g && i < g->nr ? g->name[i] : NULL;
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
	return g && i < g->nr_dropped ? g->dropped_reason[i] : NULL;
}

const char *pc_group_mode(const struct pc_group *g)
{
	if (!g)
		return pc_mode();
	return g->kernel ? "user+kernel" : "user";
}

const char *pc_group_mode_reason(const struct pc_group *g)
{
	return g ? g->mode_reason : pc_mode_reason();
}

void pc_group_summary(const struct pc_group *g, char *buf, size_t len)
{
	bool done[PC_MAX_EVENTS] = {false};

	if (!buf || !len)
		return;
	buf[0] = '\0';
	if (!g || !g->nr) {
		append(buf, len, "counting nothing, time alone");
	} else {
		append(buf, len, "counting");
		for (unsigned int i = 0; i < g->nr; i++)
			append(buf, len, "%s %s", i ? "," : "", g->name[i]);
		append(buf, len, " (%s)", pc_group_mode(g));
	}
	if (!g || !g->nr_dropped)
		return;
	append(buf, len, "; not counted:");
	/* one reason once: a VM without a PMU drops every hardware event alike
	 */
	for (unsigned int i = 0; i < g->nr_dropped; i++) {
		if (done[i])
			continue;
		append(buf, len, "%s %s", i ? ";" : "", g->dropped[i]);
		for (unsigned int j = i + 1; j < g->nr_dropped; j++) {
			if (!done[j] && !strcmp(g->dropped_reason[i],
						g->dropped_reason[j])) {
				append(buf, len, ", %s", g->dropped[j]);
				done[j] = true;
			}
		}
		append(buf, len, ": %s", g->dropped_reason[i]);
	}
}

int pc_group_read(const struct pc_group *g, struct pc_sample *s)
{
	struct pc_read_buf buf;
	ssize_t n;

	if (!g || !s) {
		errno = EINVAL;
		return -1;
	}
	memset(s, 0, sizeof(*s));
	if (g->leader < 0)
		return 0;
	n = read(g->leader, &buf, sizeof(buf));
	if (n < 0)
		return -1;
	if ((size_t)n != (3 + g->nr) * sizeof(uint64_t) || buf.nr != g->nr) {
		/* a group the kernel put in error state reads short */
		errno = EIO;
		return -1;
	}
	memcpy(s->value, buf.value, g->nr * sizeof(uint64_t));
	s->time_enabled = buf.time_enabled;
	s->time_running = buf.time_running;
	return 0;
}

double pc_sample_delta(const struct pc_group *g, const struct pc_sample *a,
		       const struct pc_sample *b, double *counts)
{
	uint64_t enabled, running;

	if (!g || !a || !b || !counts || !g->nr)
		return 0;
	enabled = b->time_enabled - a->time_enabled;
	running = b->time_running - a->time_running;
	for (unsigned int i = 0; i < g->nr; i++)
		counts[i] =
			pc_scale(b->value[i] - a->value[i], enabled, running);
	if (!running)
		return 0;
	return running >= enabled ? 1.0 : (double)running / (double)enabled;
}

int pc_default_pmu_event(char *buf, size_t len)
{
	pfm_pmu_info_t pick = {.size = sizeof(pick)};
	char reason[PC_REASON_LEN];
	bool found = false;
	int p;

	if (!buf || !len) {
		errno = EINVAL;
		return -1;
	}
	buf[0] = '\0';
	if (pc_init())
		return -1;
	/* the architecture's default PMU, else the first core PMU */
	pfm_for_all_pmus(p)
	{
		pfm_pmu_info_t info = {.size = sizeof(info)};

		if (pfm_get_pmu_info(p, &info) != PFM_SUCCESS ||
		    !info.is_present)
			continue;
		if (info.is_dfl || (info.type == PFM_PMU_TYPE_CORE && !found)) {
			pick = info;
			found = true;
		}
		if (info.is_dfl)
			break;
	}
	if (!found) {
		errno = ENOENT;
		return -1;
	}
	for (int e = pick.first_event; e != -1; e = pfm_get_event_next(e)) {
		pfm_event_info_t ev = {.size = sizeof(ev)};
		struct perf_event_attr attr;

		if (pfm_get_event_info(e, PFM_OS_PERF_EVENT_EXT, &ev) !=
		    PFM_SUCCESS)
			continue;
		snprintf(buf, len, "%s::%s", pick.name, ev.name);
		if (!encode(buf, false, &attr, NULL, 0, reason, sizeof(reason)))
			return 0;
	}
	buf[0] = '\0';
	errno = ENOENT;
	return -1;
}
