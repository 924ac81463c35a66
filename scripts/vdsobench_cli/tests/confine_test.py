"""cli/confine.py and confine_exec.py, for real: a program started confined
runs as the sandbox user with no capability and no new privileges, writes
only its output folders, sees no network, cannot reach a private folder it
was not given, leaves nothing running behind it, gets the caller's signals
once and ends as the program ended. The attacks are shell one-liners run as
the confined program; each checks that nothing outside changed."""

import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

from vdsobench_cli.cli import build, confine, lifecycle
from vdsobench_cli.tests.support import snapshot

ROOT_ONLY = unittest.skipUnless(os.geteuid() == 0, "the sandbox user is switched to as root")


def sh(script, write=(), read=(), **kwargs):
    return subprocess.run(confine.command(["/bin/sh", "-c", script], write=write, read=read),
                          capture_output=True, text=True, timeout=60, **kwargs)


@ROOT_ONLY
class ConfinedProgramTest(unittest.TestCase):
    def setUp(self):
        # a private folder of root's, as tempfile makes them (0700)
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-confine-test-"))
        self.addCleanup(subprocess.run, ["rm", "-rf", str(self.tmp)])
        self.victim = self.tmp / "victim"
        (self.victim / "sub").mkdir(parents=True)
        (self.victim / "f").write_text("keep\n")
        self.out = self.tmp / "out"
        self.out.mkdir()
        confine.own(self.out)
        self.before = snapshot(self.victim)

    def test_runs_as_the_sandbox_user_without_privilege(self):
        r = sh("id -u; id -g; id -G; grep -E '^(CapPrm|CapEff|CapAmb|NoNewPrivs):' "
               "/proc/self/status")
        self.assertEqual(r.returncode, 0, r.stderr)
        uid, gid = confine.sandbox_ids()
        lines = r.stdout.split("\n")
        self.assertEqual(lines[:3], [str(uid), str(gid), str(gid)])
        self.assertNotEqual(uid, 0)
        status = dict(line.split(":\t") for line in lines[3:] if line)
        self.assertEqual(status, {"CapPrm": "0000000000000000", "CapEff": "0000000000000000",
                                  "CapAmb": "0000000000000000", "NoNewPrivs": "1"})

    def test_writes_only_its_output_folder(self):
        outside = self.tmp / "outside-owned"
        r = sh(f"echo x > {self.out}/made && echo made; "
               f"echo x > /tmp/vdsobench-confine-escape-$$ || echo tmp-refused; "
               f"echo x > /dev/shm/vdsobench-confine-escape-$$ || echo shm-refused; "
               f"echo x > {self.victim}/f || echo victim-refused; "
               f"echo x > {outside} || echo outside-refused; "
               f"echo $TMPDIR $HOME",
               write=[self.out], read=[self.victim])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split("\n")[:5], ["made", "tmp-refused", "shm-refused",
                                                     "victim-refused", "outside-refused"])
        self.assertEqual(r.stdout.split("\n")[5], f"{self.out} {self.out}")
        self.assertEqual((self.out / "made").read_text(), "x\n")
        self.assertFalse(outside.exists())
        self.assertEqual(snapshot(self.victim), self.before)
        self.assertEqual(list(Path("/tmp").glob("vdsobench-confine-escape-*")), [])

    def test_a_private_folder_not_given_is_not_there(self):
        r = sh(f"cat {self.victim}/f || echo hidden; ls /root >/dev/null 2>&1 || echo no-root",
               write=[self.out])
        self.assertEqual(r.stdout.split("\n")[:2], ["hidden", "no-root"], r.stderr)
        r = sh(f"cat {self.victim}/f", read=[self.victim])  # given: readable, same path
        self.assertEqual((r.returncode, r.stdout), (0, "keep\n"), r.stderr)

    def test_a_folder_to_read_inside_one_to_write_stays_writable(self):
        # kbuild in the tree: make reads the tree it also writes its objects in
        tree = self.out / "src"
        tree.mkdir()
        confine.own(tree)
        r = sh(f"echo x > {tree}/made && echo made", write=[self.out], read=[tree])
        self.assertEqual((r.returncode, r.stdout), (0, "made\n"), r.stderr)

    def test_a_file_of_a_private_folder_is_read_from_a_copy(self):
        private = self.tmp / "cache"  # as the kbuild cache's entries are, 0700
        private.mkdir(mode=0o700)
        (private / "obj").write_text("object\n")
        with confine.reading(private / "obj") as shown:
            self.assertNotEqual(shown, str(private / "obj"))
            r = subprocess.run(confine.command(["/bin/cat", shown]), capture_output=True,
                               text=True, timeout=60)
            self.assertEqual((r.returncode, r.stdout), (0, "object\n"), r.stderr)
        self.assertFalse(os.path.exists(shown), "the copy outlived the block")
        r = sh(f"cat {private}/obj", read=[private])  # itself: refused
        self.assertNotEqual(r.returncode, 0)
        (self.out / "obj").write_text("object\n")  # a file it may read is itself
        with confine.reading(self.out / "obj") as shown:
            self.assertEqual(shown, str(self.out / "obj"))

    def test_no_network(self):
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen()
        self.addCleanup(server.close)
        port = server.getsockname()[1]
        r = sh(f"cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; "
               f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected || echo refused",
               executable=None)
        self.assertEqual(r.stdout.split("\n")[0], "lo", r.stdout + r.stderr)
        server.settimeout(0.5)
        with self.assertRaises(socket.timeout):
            server.accept()

    def test_no_unix_socket_vsock_io_uring_or_keyring(self):
        """The network namespace holds no Unix socket (a path reaches the
        system's D-Bus, journal or X server past it) nor vsock (the host of a
        VM): a confined program makes neither, nor an io_uring (sockets past the
        filter), nor a key in the uid's keyring (which outlives it)."""
        listening = self.tmp / "public"
        listening.mkdir(mode=0o755)
        os.chmod(self.tmp, 0o755)  # a service's socket, in folders anyone may pass
        server = socket.socket(socket.AF_UNIX)
        self.addCleanup(server.close)
        server.bind(str(listening / "s"))
        os.chmod(listening / "s", 0o777)
        server.listen()
        script = (
            "import ctypes, os, socket\n"
            "def try_(what, f):\n"
            "    try:\n        f(); print(what, 'made')\n"
            "    except OSError as e:\n        print(what, e.errno)\n"
            f"try_('unix', lambda: socket.socket(socket.AF_UNIX).connect({str(listening / 's')!r}))\n"
            "try_('vsock', lambda: socket.socket(40, socket.SOCK_STREAM))\n"
            "try_('pair', lambda: socket.socketpair())\n"
            "try_('inet', lambda: socket.socket())\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "nr = {'x86_64': (425, 248), 'aarch64': (425, 217)}[os.uname().machine]\n"
            "for what, n, args in (('io_uring', nr[0], (8, ctypes.create_string_buffer(120))),\n"
            "                      ('key', nr[1], (b'user', b'k', b'v', 1, -4))):\n"
            "    print(what, libc.syscall(n, *args), ctypes.get_errno())\n")
        r = subprocess.run(confine.command(["/usr/bin/python3", "-I", "-c", script]),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.stdout.splitlines(), [
            "unix 97", "vsock 97", "pair made", "inet made", "io_uring -1 1", "key -1 1"],
            r.stderr)
        server.settimeout(0.2)
        with self.assertRaises(socket.timeout):
            server.accept()

    def test_a_fork_bomb_or_memory_hog_stops_first(self):
        """The sandbox user's tasks are bounded (all its programs together), and
        when memory runs out the kernel kills a confined program first."""
        r = sh("grep '^Max processes' /proc/self/limits; cat /proc/self/oom_score_adj")
        self.assertEqual(r.stdout.split(), ["Max", "processes", str(confine.confine_exec.NPROC),
                                            str(confine.confine_exec.NPROC), "processes",
                                            "1000"], r.stderr)

    def test_what_it_leaves_in_its_folder_no_one_else_reaches(self):
        """Its scratch folder is the sandbox user's: a confined program may open
        it to everyone and leave sh there setuid to the sandbox user, which
        another user would run to become it outside every namespace (and trace
        or write the next confined program). Nobody else reaches it."""
        with confine.scratch() as w:
            r = sh('chmod 0755 "$HOME" && cp /bin/sh "$HOME/sh" && chmod 4755 "$HOME/sh" '
                   '&& echo left', write=[w])
            self.assertEqual(r.stdout, "left\n", r.stderr)
            other = subprocess.run(["/bin/sh", "-c", f"{w}/sh -p -c 'id -u'"], user=65534,
                                   group=65534, extra_groups=[], capture_output=True,
                                   text=True)
            self.assertEqual(other.stdout, "", "another user ran what the sandbox left")
            self.assertIn("Permission denied", other.stderr)

    def test_a_folder_nested_past_pythons_stack_is_still_removed(self):
        """What a confined program leaves in its folder is removed with it, to
        any depth: shutil.rmtree recursed past Python's limit on a tree 1500
        folders deep, and the command ended in a traceback, the folder left."""
        with confine.scratch() as w:
            r = sh('cd "$HOME" && i=0 && while [ $i -lt 1500 ]; do mkdir d && cd d || exit 1; '
                   'i=$((i+1)); done && echo deep', write=[w])
            self.assertEqual(r.stdout, "deep\n", r.stderr)
        self.assertFalse(os.path.lexists(w))
        self.assertFalse(os.path.lexists(os.path.dirname(w)))

    def test_nothing_it_starts_outlives_it(self):
        # dash has no exec -a (the daemon never started): its own argument tells it
        marker = f"sleep 300.{os.getpid()}1"
        r = sh(f"(setsid sh -c 'exec {marker}' </dev/null >/dev/null 2>&1 &); "
               f"sleep 0.2; pgrep -x -f '{marker}' >/dev/null && echo started")
        self.assertEqual((r.returncode, r.stdout), (0, "started\n"), r.stderr)
        time.sleep(0.3)
        left = subprocess.run(["pgrep", "-x", "-f", marker], capture_output=True, text=True)
        self.assertEqual(left.stdout, "", "a process of the confined program outlived it")

    def test_a_program_that_ignores_sigterm_goes_with_the_trampoline(self):
        """A command interrupted stops its children: SIGTERM, then SIGKILL to the
        trampoline. A program that ignores SIGTERM (tree code can) outlived
        that, under a first process whose parent-death signal the change of
        user had cleared: it held the caller's pipes open, forever."""
        marker = f"sleep 300.{os.getpid()}"  # how pgrep tells this one (dash has no exec -a)
        proc = lifecycle.popen(confine.command(
            ["/bin/sh", "-c", f"trap '' TERM INT HUP; echo ready; exec {marker}"]),
            stdout=subprocess.PIPE, text=True)
        with lifecycle.owned(proc):
            self.assertEqual(proc.stdout.readline(), "ready\n")
            lifecycle.stop(proc, grace=0.5)
            for _ in range(50):
                left = subprocess.run(["pgrep", "-f", marker], capture_output=True,
                                      text=True).stdout.split()
                if not left:
                    break
                time.sleep(0.1)
            for pid in left:  # this test's own, should it fail
                os.kill(int(pid), signal.SIGKILL)
            self.assertEqual(left, [], "the program outlived the trampoline")
            self.assertEqual(proc.stdout.read(), "")  # end of file: no one holds it now

    def test_a_file_as_stdout_is_written_through_a_pipe(self):
        log = self.tmp / "log"
        with open(log, "w") as f:
            f.write("the caller's first line\n")
            f.flush()
            r = subprocess.run(confine.command(
                ["/bin/sh", "-c", "readlink /proc/self/fd/1; echo to-err >&2; "
                                  "printf 'overwritten' 1<> /proc/self/fd/1 || echo no-rewrite"]),
                stdout=f, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = log.read_text().splitlines()
        self.assertEqual(lines[0], "the caller's first line")
        self.assertRegex(lines[1], r"^pipe:\[\d+\]$")
        self.assertNotIn("overwritten", log.read_text())
        self.assertEqual(lines[2:], ["no-rewrite"])
        self.assertTrue(r.stderr.startswith("to-err\n"), r.stderr)

    def test_a_file_past_its_cap_is_refused(self):
        # truncate grows the file without writing a byte: the cap holds all the same
        cap = confine.confine_exec.FSIZE
        r = sh(f"ulimit -f; truncate -s {cap} {self.out}/big && echo at-cap; "
               f"truncate -s {cap + 1} {self.out}/big || echo past-cap-refused", write=[self.out])
        self.assertEqual(r.stdout.split(), [str(cap // 512), "at-cap", "past-cap-refused"],
                         r.stderr)
        self.assertEqual((self.out / "big").stat().st_size, cap)

    def test_it_cannot_type_into_a_terminal(self):
        script = ("import fcntl, os, termios\n"
                  "try:\n fcntl.ioctl(2, termios.TIOCSTI, b'x'); print('typed')\n"
                  "except OSError as e: print(e.errno)\n"
                  "print(os.getsid(0) != int(os.environ['VDSOBENCH_CALLER_SID']))\n")
        r = subprocess.run(confine.command(["/usr/bin/python3", "-c", script]),
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, VDSOBENCH_CALLER_SID=str(os.getsid(0))))
        self.assertEqual(r.stdout.split(), ["1", "True"], r.stderr)  # EPERM, a session of its own

    def test_ends_as_the_program_ended(self):
        self.assertEqual(sh("exit 7").returncode, 7)
        self.assertEqual(sh("kill -TERM $$").returncode, -signal.SIGTERM)
        self.assertEqual(sh("kill -KILL $$").returncode, -signal.SIGKILL)

    def test_the_callers_signal_reaches_the_program_once(self):
        proc = lifecycle.popen(confine.command(
            ["/bin/sh", "-c", "n=0; trap 'n=$((n+1))' TERM; echo ready; "
                              "while [ $n -eq 0 ]; do sleep 0.05; done; sleep 0.5; exit $((10+n))"]),
            stdout=subprocess.PIPE, text=True)
        with lifecycle.owned(proc):
            self.assertEqual(proc.stdout.readline(), "ready\n")
            os.killpg(proc.pid, signal.SIGTERM)  # as lifecycle.stop does
            self.assertEqual(proc.wait(30), 11)

    def test_a_program_that_cannot_start_is_one_line(self):
        r = subprocess.run(confine.command(["/nonexistent/program"]), capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 127)
        self.assertEqual(r.stderr, "vdsobench-confine: cannot run /nonexistent/program: "
                                   "No such file or directory\n")

    def test_never_runs_as_root(self):
        cmd = confine.command(["/usr/bin/id", "-u"])
        at = cmd.index("--uid")
        cmd[at + 1] = cmd[at + 3] = "0"
        r = subprocess.run(cmd, capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (126, ""))
        self.assertEqual(r.stderr, "vdsobench-confine: still root after the change of user\n")

    def test_the_callers_secrets_do_not_reach_it(self):
        """Root's environment is the caller's (tokens, credentials, agent
        sockets): the tree's code runs in the confined program and may print
        what it reads into the results a review publishes."""
        r = subprocess.run(confine.command(["/usr/bin/env"], write=[self.out]),
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, GITHUB_TOKEN="vdsobench-attack-token",
                                    AWS_SECRET_ACCESS_KEY="vdsobench-attack-key",
                                    VDSOBENCH_LOCK_DIR="/run/kept", LC_ALL="C"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("vdsobench-attack-", r.stdout)
        got = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
        self.assertEqual((got.get("VDSOBENCH_LOCK_DIR"), got.get("LC_ALL"), got.get("HOME")),
                         ("/run/kept", "C", str(self.out)), "what the programs need is kept")
        self.assertEqual(got.get("PATH"), os.environ.get("PATH"))

    def test_the_record_says_how(self):
        rec = confine.record()
        self.assertEqual(rec["user"], confine.sandbox_ids()[0])
        self.assertTrue(rec["confined"])
        self.assertTrue(rec["no_new_privs"])

    def test_every_program_of_the_build_starts_confined(self):
        cmd = build.program("//verify:vdsobench_verify", write=[self.out])
        self.assertEqual(cmd[3], str(confine.EXEC))
        self.assertIn(str(self.out), cmd[cmd.index("--write") + 1])
        self.assertTrue(cmd[-1].endswith("/verify/vdsobench_verify"))
        more = confine.allow(cmd + ["--json"], write=[self.tmp])
        self.assertEqual(more[-2:], [cmd[-1], "--json"])
        self.assertEqual(more[more.index("--") - 2:more.index("--")], ["--write", str(self.tmp)])
        with self.assertRaises(ValueError):
            confine.allow(["/bin/true"], write=[self.tmp])


class SandboxUserTest(unittest.TestCase):
    def test_a_bad_uid_is_one_line(self):
        from unittest import mock
        from vdsobench_cli.cli.errors import UsageError
        if os.geteuid() != 0:
            self.skipTest("the caller's own ids are used when it is not root")
        for bad in ("0", "-1", "root", "99999999999"):
            with self.subTest(bad), mock.patch.dict(os.environ, {confine.confine_exec.UID_ENV:
                                                                 bad}):
                confine.sandbox_ids.cache_clear()
                with self.assertRaises(UsageError) as e:
                    confine.sandbox_ids()
                self.assertIn("is not a uid (valid: 1 to", str(e.exception))
        confine.sandbox_ids.cache_clear()

    def test_a_uid_or_gid_of_this_system_is_refused(self):
        """$VDSOBENCH_SANDBOX_UID names a uid whose gid is the same number: one
        of this system's (6: the group disk, the raw disks; 65534: nobody, whose
        daemons could then reach the program) would hand its rights to the tree's
        code. Refused in one line, by the CLI (exit 2) and the trampoline (126),
        and nothing runs."""
        import grp
        from unittest import mock
        from vdsobench_cli.tests.support import cli, one_line
        if os.geteuid() != 0:
            self.skipTest("the caller's own ids are used when it is not root")
        taken = grp.getgrall()[-1].gr_gid  # a group of this system
        ran = Path(tempfile.mkdtemp(prefix="vdsobench-uid-test-")) / "ran"
        self.addCleanup(subprocess.run, ["rm", "-rf", str(ran.parent)])
        os.chmod(ran.parent, 0o777)
        for bad in (str(taken), "\u0661\u0662"):  # Arabic-Indic digits: isdigit() says yes
            with self.subTest(bad), mock.patch.dict(os.environ,
                                                    {confine.confine_exec.UID_ENV: bad}):
                r = subprocess.run(["/usr/bin/python3", "-I", "-S", str(confine.EXEC), "--",
                                    "/bin/touch", str(ran)], capture_output=True, text=True)
                self.assertEqual(r.returncode, 126, r.stderr)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                if bad == str(taken):  # the CLI's own line (after its build: once)
                    rc, out, err = cli("verify", "generic_6_10+fake+always")
                    one_line(self, rc, err, f"$VDSOBENCH_SANDBOX_UID: {taken} is a user or "
                                            "group of this system")
                self.assertFalse(ran.exists())
        confine.sandbox_ids.cache_clear()

    def test_the_first_free_dynamic_uid(self):
        from unittest import mock
        ce = confine.confine_exec
        if os.geteuid() != 0:
            self.skipTest("the caller's own ids are used when it is not root")
        taken = {61184, 61185}
        with mock.patch.dict(os.environ, {}, clear=False) as env, \
                mock.patch.object(ce, "free_id", side_effect=lambda n: n not in taken):
            env.pop(ce.UID_ENV, None)
            self.assertEqual(ce.default_ids(), (61186, 61186))


if __name__ == "__main__":
    unittest.main()
