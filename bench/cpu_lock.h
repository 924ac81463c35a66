/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One measurement per CPU at a time: an advisory lock (flock(2)) on a file
 * per CPU, held for as long as a benchmark is pinned there. Two runs pinned
 * to one CPU slow each other and neither would know; with the lock the
 * second waits for the first (saying so once), or refuses, and what it
 * waited is recorded with the results.
 *
 * Advisory: it orders vdsobench runs (of every user, where the directory
 * is shared) and nothing else; another process busy on the CPU is the
 * rounds' disturbed-batch check's business (bench/lost_cpu.h). The kernel
 * drops a lock when its holder exits, however it exits, so a lock is never
 * stale. Each lock file holds its holder's pid and what it is ("4242
 * vdsobench run"), for the waiting line.
 *
 * Functions return 0, or -1 with errno and a line in cpu_lock_error().
 */
#ifndef VDSOBENCH_CPU_LOCK_H
#define VDSOBENCH_CPU_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum cpu_lock_policy {
	CPU_LOCK_WAIT, /* wait for the holder to finish (the default) */
	CPU_LOCK_FAIL, /* refuse: -1, EBUSY */
	CPU_LOCK_OFF,  /* take no lock */
};

/* "wait", "fail" or "off": 0, or -1 with errno EINVAL */
int cpu_lock_parse_policy(const char *s, enum cpu_lock_policy *policy);
/* "wait", "fail", "off" */
const char *cpu_lock_policy_name(enum cpu_lock_policy policy);

/*
 * Make (or accept) the directory path for lock files: shared (mode 01777:
 * every user's runs see each other's locks, and nobody can remove another's
 * files) or private (0700). An existing one must be a directory, not a
 * link, owned by this user or root, and, if others may write to it,
 * sticky; a private one must be this user's and writable by it alone.
 * 0, or -1 with errno (ENOTDIR, EPERM for an unsafe one, mkdir's).
 */
int cpu_lock_make_dir(const char *path, bool shared);

/*
 * The directory lock files go in, made if missing, into dir: the first that
 * works of $VDSOBENCH_LOCK_DIR (private: for tests and for users who want
 * their own), /run/lock/vdsobench (shared: a CPU is shared by every user of
 * the machine), $XDG_RUNTIME_DIR/vdsobench (private) and
 * /tmp/vdsobench-locks-$UID (private). 0, or -1 with errno from the last
 * one tried (E2BIG if dir is too small).
 */
int cpu_lock_dir(char *dir, size_t len);

struct cpu_lock;

/*
 * Take cpu's lock in dir for who ("vdsobench run"). Free: 0. Held by another
 * process (or another lock of this one): with CPU_LOCK_FAIL, -1 with errno
 * EBUSY and cpu_lock_error() naming the holder; with CPU_LOCK_WAIT, one line
 * to say (if not NULL), "waiting for CPU 1, held by pid 4242 (vdsobench
 * run)", then 0 once it is ours. CPU_LOCK_OFF: 0 and *l NULL, a lock that
 * is no lock (every accessor takes it). Otherwise -1 with errno (the lock
 * file cannot be made or opened).
 */
int cpu_lock_take(struct cpu_lock **l, const char *dir, int cpu,
		  enum cpu_lock_policy policy, const char *who, FILE *say);
/* release it (NULL is fine) */
void cpu_lock_release(struct cpu_lock *l);

/* the CPU it locks (-1 for NULL) */
int cpu_lock_cpu(const struct cpu_lock *l);
/* whether another process held it when asked, and for how long we waited */
bool cpu_lock_contended(const struct cpu_lock *l);
double cpu_lock_waited_s(const struct cpu_lock *l);
/* "pid 4242 (vdsobench run)" as the file said when it was held, or "" */
const char *cpu_lock_holder(const struct cpu_lock *l);

/* why the last call of this thread failed */
const char *cpu_lock_error(void);

#ifdef __cplusplus
}
#endif

#endif /* VDSOBENCH_CPU_LOCK_H */
