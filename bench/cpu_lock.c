// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU advisory locks: flock(2) on <dir>/cpu<N>.lock. flock rather than
 * fcntl record locks because a flock belongs to the open file, so two locks
 * of one process conflict as two processes' do, and closing some other
 * descriptor of the file never drops it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/cpu_lock.h"

struct cpu_lock {
	int fd;
	int cpu;
	bool contended;
	double waited_s;
	char holder[160];
};

static __thread char lock_err[512];

__attribute__((format(printf, 2, 3))) static int fail(int errnum,
						      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(lock_err, sizeof(lock_err), fmt, ap);
	va_end(ap);
	errno = errnum;
	return -1;
}

const char *cpu_lock_error(void)
{
	return lock_err;
}

static const char *const policy_names[] = {
	[CPU_LOCK_WAIT] = "wait",
	[CPU_LOCK_FAIL] = "fail",
	[CPU_LOCK_OFF] = "off",
};

int cpu_lock_parse_policy(const char *s, enum cpu_lock_policy *policy)
{
	for (unsigned int i = 0;
	     s && i < sizeof(policy_names) / sizeof(policy_names[0]); i++)
		if (!strcmp(s, policy_names[i])) {
			*policy = (enum cpu_lock_policy)i;
			return 0;
		}
	return fail(EINVAL,
		    "--cpu-lock: '%s' is not a policy (valid: wait, fail, off)",
		    s ? s : "");
}

const char *cpu_lock_policy_name(enum cpu_lock_policy policy)
{
	return (unsigned int)policy < 3 ? policy_names[policy] : "?";
}

/* ---- the directory ---- */

int cpu_lock_make_dir(const char *path, bool shared)
{
	mode_t mode = shared ? 01777 : 0700;
	struct stat st;

	if (!mkdir(path, mode)) {
		/* mkdir's mode went through the umask */
		if (chmod(path, mode))
			return fail(errno, "%s: chmod: %s", path,
				    strerror(errno));
	} else if (errno != EEXIST) {
		return fail(errno, "%s: %s", path, strerror(errno));
	}
	if (lstat(path, &st))
		return fail(errno, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail(ENOTDIR, "%s: not a directory%s", path,
			    S_ISLNK(st.st_mode) ? " (a symbolic link)" : "");
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return fail(EPERM,
			    "%s: owned by uid %u, not by this user or "
			    "root",
			    path, (unsigned int)st.st_uid);
	/* anyone who may write there could replace another's lock file */
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return fail(EPERM,
			    "%s: others may write to it and it is not sticky "
			    "(mode %04o)",
			    path, (unsigned int)(st.st_mode & 07777));
	if (!shared &&
	    (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))))
		return fail(EPERM,
			    "%s: a private lock directory must be this "
			    "user's alone (mode %04o, uid %u)",
			    path, (unsigned int)(st.st_mode & 07777),
			    (unsigned int)st.st_uid);
	if (access(path, W_OK | X_OK))
		return fail(errno, "%s: %s", path, strerror(errno));
	return 0;
}

/* path into dir if it fits and works: 0, or -1 */
static int try_dir(char *dir, size_t len, const char *path, bool shared)
{
	if (snprintf(dir, len, "%s", path) >= (int)len)
		return fail(E2BIG, "%s: too long a path", path);
	return cpu_lock_make_dir(dir, shared);
}

int cpu_lock_dir(char *dir, size_t len)
{
	const char *own = getenv("VDSOBENCH_LOCK_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char path[4096];

	if (own && *own)
		/* asked for: the only one tried */
		return try_dir(dir, len, own, false);
	if (!try_dir(dir, len, "/run/lock/vdsobench", true))
		return 0;
	if (xdg && *xdg) {
		snprintf(path, sizeof(path), "%s/vdsobench", xdg);
		if (!try_dir(dir, len, path, false))
			return 0;
	}
	snprintf(path, sizeof(path), "/tmp/vdsobench-locks-%u",
		 (unsigned int)geteuid());
	return try_dir(dir, len, path, false);
}

/* ---- the locks ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The lock file, opened without following a link and without O_CREAT on
 * an existing file (in a shared sticky directory, fs.protected_regular
 * refuses O_CREAT on another user's file): read-write where it may, else
 * read-only, which flock accepts.
 */
static int open_lock_file(const char *path)
{
	const int flags = O_NOFOLLOW | O_CLOEXEC;

	for (int tries = 0; tries < 100; tries++) {
		int fd = open(path, O_RDWR | flags);

		if (fd < 0 && errno == EACCES)
			fd = open(path, O_RDONLY | flags);
		if (fd >= 0 || errno != ENOENT)
			return fd;
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | flags, 0666);
		if (fd >= 0) {
			/* others must be able to say they hold it */
			fchmod(fd, 0666);
			return fd;
		}
		if (errno != EEXIST)
			return -1;
		/* made by another process meanwhile: open that one */
	}
	errno = EAGAIN;
	return -1;
}

/* "pid 4242 (vdsobench run)" from the file's "4242 vdsobench run" */
static void read_holder(int fd, char *buf, size_t len)
{
	char text[160];
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
	long pid;
	char *who;

	text[n > 0 ? n : 0] = '\0';
	text[strcspn(text, "\n")] = '\0';
	pid = strtol(text, &who, 10);
	while (*who == ' ')
		who++;
	for (char *p = who; *p; p++)
		if (!isprint((unsigned char)*p))
			*p = '?';
	if (pid > 0 && *who)
		snprintf(buf, len, "pid %ld (%s)", pid, who);
	else if (pid > 0)
		snprintf(buf, len, "pid %ld", pid);
	else
		snprintf(buf, len, "a process that has not said which");
}

static void write_holder(int fd, const char *who)
{
	char text[160];
	int n = snprintf(text, sizeof(text), "%ld %s\n", (long)getpid(),
			 who ? who : "");

	/*
	 * A read-only descriptor cannot say: waiters then see the last
	 * holder that could, or a torn text, which only names it wrongly.
	 */
	if (n > 0 && !ftruncate(fd, 0) && pwrite(fd, text, (size_t)n, 0) == n)
		return;
}

int cpu_lock_take(struct cpu_lock **l, const char *dir, int cpu,
		  enum cpu_lock_policy policy, const char *who, FILE *say)
{
	struct cpu_lock *p;
	char path[4200];
	double t0;
	int err;

	*l = NULL;
	if (policy == CPU_LOCK_OFF)
		return 0;
	if (cpu < 0)
		return fail(EINVAL, "no lock for CPU %d", cpu);
	snprintf(path, sizeof(path), "%s/cpu%d.lock", dir, cpu);
	p = calloc(1, sizeof(*p));
	if (!p)
		return fail(ENOMEM, "CPU %d's lock: out of memory", cpu);
	p->cpu = cpu;
	p->fd = open_lock_file(path);
	if (p->fd < 0) {
		err = errno;
		free(p);
		return fail(err, "cannot open CPU %d's lock %s: %s", cpu, path,
			    strerror(err));
	}
	if (flock(p->fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK)
			goto out_err;
		p->contended = true;
		read_holder(p->fd, p->holder, sizeof(p->holder));
		if (policy == CPU_LOCK_FAIL) {
			fail(EBUSY,
			     "CPU %d is in use: held by %s, another "
			     "measurement pinned there (--cpu-lock=wait waits "
			     "for it)",
			     cpu, p->holder);
			close(p->fd);
			free(p);
			errno = EBUSY;
			return -1;
		}
		if (say) {
			fprintf(say, "waiting for CPU %d, held by %s\n", cpu,
				p->holder);
			fflush(say);
		}
		t0 = now_s();
		while (flock(p->fd, LOCK_EX))
			if (errno != EINTR)
				goto out_err;
		p->waited_s = now_s() - t0;
	}
	write_holder(p->fd, who);
	*l = p;
	return 0;
out_err:
	err = errno;
	close(p->fd);
	free(p);
	return fail(err, "cannot lock CPU %d (%s): %s", cpu, path,
		    strerror(err));
}

void cpu_lock_release(struct cpu_lock *l)
{
	if (!l)
		return;
	/* closing the only descriptor of the open file drops the flock */
	close(l->fd);
	free(l);
}

int cpu_lock_cpu(const struct cpu_lock *l)
{
	return l ? l->cpu : -1;
}

bool cpu_lock_contended(const struct cpu_lock *l)
{
	return l && l->contended;
}

double cpu_lock_waited_s(const struct cpu_lock *l)
{
	return l ? l->waited_s : 0;
}

const char *cpu_lock_holder(const struct cpu_lock *l)
{
	return l ? l->holder : "";
}
