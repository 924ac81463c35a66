// SPDX-License-Identifier: GPL-2.0
/*
 * cpu_lock in a directory of its own: the policies, the directories it
 * accepts and refuses, a free lock, a refused one naming its holder, and a
 * waiter that says so once and gets the lock when the holder lets go. The
 * order is forced through pipes (the waiter's line is read before the
 * holder lets go), so nothing depends on timing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/cpu_lock.h"
#include "testing/tap.h"

static char base[256];

/* base/name into buf */
static const char *under(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", base, name);
	return buf;
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) ? 0 : st.st_mode & 07777;
}

static void check_policies(void)
{
	enum cpu_lock_policy p = CPU_LOCK_OFF;

	tap_ok(!cpu_lock_parse_policy("wait", &p) && p == CPU_LOCK_WAIT &&
		       !cpu_lock_parse_policy("fail", &p) &&
		       p == CPU_LOCK_FAIL &&
		       !cpu_lock_parse_policy("off", &p) && p == CPU_LOCK_OFF,
	       "wait, fail and off parse");
	errno = 0;
	tap_ok(cpu_lock_parse_policy("sometimes", &p) == -1 &&
		       errno == EINVAL &&
		       !strcmp(cpu_lock_error(),
			       "--cpu-lock: 'sometimes' is not a policy "
			       "(valid: wait, fail, off)"),
	       "an unknown policy: EINVAL, \"%s\"", cpu_lock_error());
	tap_ok(!strcmp(cpu_lock_policy_name(CPU_LOCK_FAIL), "fail"),
	       "a policy has its name");
}

static void check_dirs(void)
{
	char priv[300], shared[300], link[300], open_dir[300], dir[300];
	int rc;

	under(priv, sizeof(priv), "private");
	under(shared, sizeof(shared), "shared");
	under(link, sizeof(link), "link");
	under(open_dir, sizeof(open_dir), "open");

	rc = cpu_lock_make_dir(priv, false);
	tap_ok(!rc && mode_of(priv) == 0700,
	       "a private directory is made 0700 (%04o)", mode_of(priv));
	tap_ok(!cpu_lock_make_dir(priv, false), "and accepted once it exists");
	rc = cpu_lock_make_dir(shared, true);
	tap_ok(!rc && mode_of(shared) == 01777,
	       "a shared directory is made 01777 (%04o)", mode_of(shared));
	tap_ok(!symlink(priv, link) && cpu_lock_make_dir(link, false) == -1 &&
		       errno == ENOTDIR,
	       "a symbolic link is refused: %s", cpu_lock_error());
	tap_ok(!mkdir(open_dir, 0700) && !chmod(open_dir, 0777) &&
		       cpu_lock_make_dir(open_dir, true) == -1 &&
		       errno == EPERM,
	       "a world-writable directory that is not sticky is refused: %s",
	       cpu_lock_error());
	tap_ok(cpu_lock_make_dir(shared, false) == -1 && errno == EPERM,
	       "a directory others may write to is not private: %s",
	       cpu_lock_error());

	setenv("VDSOBENCH_LOCK_DIR", priv, 1);
	tap_ok(!cpu_lock_dir(dir, sizeof(dir)) && !strcmp(dir, priv),
	       "$VDSOBENCH_LOCK_DIR is the directory when set");
	setenv("VDSOBENCH_LOCK_DIR", link, 1);
	tap_ok(cpu_lock_dir(dir, sizeof(dir)) == -1 && errno == ENOTDIR,
	       "and only it: an unusable one is an error, not a fallback");
	unsetenv("VDSOBENCH_LOCK_DIR");
}

/* the lock file's text */
static void file_text(const char *dir, int cpu, char *buf, size_t len)
{
	char path[640];
	FILE *f;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/cpu%d.lock", dir, cpu);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

static void check_free_and_refused(const char *dir)
{
	struct cpu_lock *a = (struct cpu_lock *)1, *b = (struct cpu_lock *)1;
	char text[256], want[256], path[640];

	tap_ok(!cpu_lock_take(&a, dir, 3, CPU_LOCK_OFF, "x", stderr) && !a &&
		       !cpu_lock_contended(a) && !cpu_lock_waited_s(a),
	       "off: no lock, and none needed");
	tap_ok(!cpu_lock_take(&a, dir, 3, CPU_LOCK_FAIL, "cpu_lock_test",
			      NULL) &&
		       a && cpu_lock_cpu(a) == 3 && !cpu_lock_contended(a) &&
		       !cpu_lock_holder(a)[0],
	       "a free CPU's lock is taken at once");
	file_text(dir, 3, text, sizeof(text));
	snprintf(want, sizeof(want), "%ld cpu_lock_test\n", (long)getpid());
	tap_ok(!strcmp(text, want), "its file names the holder: \"%.*s\"",
	       (int)strcspn(text, "\n"), text);
	snprintf(path, sizeof(path), "%s/cpu3.lock", dir);
	tap_ok(mode_of(path) == 0666, "and others may write it (mode %04o)",
	       mode_of(path));

	snprintf(want, sizeof(want),
		 "CPU 3 is in use: held by pid %ld (cpu_lock_test), another "
		 "measurement pinned there (--cpu-lock=wait waits for it)",
		 (long)getpid());
	errno = 0;
	tap_ok(cpu_lock_take(&b, dir, 3, CPU_LOCK_FAIL, "second", NULL) == -1 &&
		       errno == EBUSY && !b && !strcmp(cpu_lock_error(), want),
	       "fail: a held CPU is refused, naming the holder: %s",
	       cpu_lock_error());
	tap_ok(!cpu_lock_take(&b, dir, 4, CPU_LOCK_FAIL, "second", NULL) && b,
	       "another CPU's lock is another lock");
	cpu_lock_release(b);
	cpu_lock_release(a);
	tap_ok(!cpu_lock_take(&b, dir, 3, CPU_LOCK_FAIL, "third", NULL) &&
		       !cpu_lock_contended(b),
	       "released: free again");
	cpu_lock_release(b);
	cpu_lock_release(NULL);
	errno = 0;
	tap_ok(cpu_lock_take(&b, under(path, sizeof(path), "no/such/dir"), 0,
			     CPU_LOCK_WAIT, "x", NULL) == -1 &&
		       errno == ENOENT &&
		       strstr(cpu_lock_error(), "cannot open"),
	       "no directory: an error, not a wait: %s", cpu_lock_error());
}

/*
 * A child waits for the lock this process holds: its waiting line comes
 * over a pipe, then the lock is let go, then the child reports what it
 * recorded. The child is forked before the lock is opened, so it inherits
 * no descriptor of it.
 */
static void check_wait(const char *dir)
{
	int go[2], said[2], result[2], status;
	char line[512] = "", want[256], got[512] = "";
	struct cpu_lock *held = NULL;
	FILE *in;
	pid_t pid;

	if (pipe(go) || pipe(said) || pipe(result)) {
		tap_ok(false, "pipes: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct cpu_lock *l;
		FILE *say = fdopen(said[1], "w"), *out = fdopen(result[1], "w");
		char c;

		if (!say || !out || read(go[0], &c, 1) != 1)
			_exit(3);
		if (cpu_lock_take(&l, dir, 5, CPU_LOCK_WAIT, "waiter", say))
			fprintf(out, "error %s\n", cpu_lock_error());
		else
			fprintf(out, "%d %s\n",
				cpu_lock_contended(l) &&
					cpu_lock_waited_s(l) >= 0,
				cpu_lock_holder(l));
		fclose(out);
		_exit(0);
	}
	close(go[0]);
	close(said[1]);
	close(result[1]);
	if (pid < 0) {
		tap_ok(false, "fork: %s", strerror(errno));
		return;
	}
	tap_ok(!cpu_lock_take(&held, dir, 5, CPU_LOCK_WAIT, "holder", stderr) &&
		       !cpu_lock_contended(held),
	       "this process holds CPU 5");
	tap_ok(write(go[1], "g", 1) == 1, "the child is told to take it");
	in = fdopen(said[0], "r");
	if (!in || !fgets(line, sizeof(line), in))
		line[0] = '\0';
	snprintf(want, sizeof(want),
		 "waiting for CPU 5, held by pid %ld (holder)\n",
		 (long)getpid());
	tap_ok(!strcmp(line, want), "wait: the child says \"%.*s\"",
	       (int)strcspn(line, "\n"), line);
	cpu_lock_release(held);
	if (in)
		fclose(in);
	in = fdopen(result[0], "r");
	if (!in || !fgets(got, sizeof(got), in))
		got[0] = '\0';
	if (in)
		fclose(in);
	snprintf(want, sizeof(want), "1 pid %ld (holder)\n", (long)getpid());
	tap_ok(!strcmp(got, want),
	       "then gets it, recording that it waited and for whom: \"%.*s\"",
	       (int)strcspn(got, "\n"), got);
	tap_ok(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		       !WEXITSTATUS(status),
	       "the child ran to the end");
	close(go[1]);
}

int main(void)
{
	char dir[300];

	snprintf(base, sizeof(base), "%s/cpu_lock_test.XXXXXX", tap_tmpdir());
	if (!mkdtemp(base)) {
		tap_ok(false, "mkdtemp %s: %s", base, strerror(errno));
		return tap_done();
	}
	check_policies();
	check_dirs();
	snprintf(dir, sizeof(dir), "%s/private", base);
	check_free_and_refused(dir);
	check_wait(dir);
	return tap_done();
}
