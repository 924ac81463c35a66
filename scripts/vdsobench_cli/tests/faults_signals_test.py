"""Signals: SIGTERM, SIGHUP and SIGINT end every command the same way (lifecycle):
its child processes stopped with everything they started, its temporary files
and directories removed, nothing in the output directory, one line on stderr
and exit 128 + the signal.

Each case starts the command in a new session with TMPDIR (and XDG_STATE_HOME)
pointed at fresh directories, waits until the child it is to interrupt exists
(polling /proc, never a sleep of a guessed length), sends the signal to the
command's own process only, and then checks /proc for anything left in the
session. Nothing here measures or asserts a time."""

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
from pathlib import Path

from vdsobench_cli.cli import lifecycle
from vdsobench_cli.tests.support import default_dispositions

SCRIPTS = Path(__file__).resolve().parents[2]
LAUNCHER = SCRIPTS / "vdsobench"
HARNESS = "vdsobench_bench"
WAIT_LIMIT_S = 120  # a generous bound on waiting for a state, not a measurement


def processes():
    """[(pid, comm, state, parent, session)] of every process /proc shows."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            text = Path("/proc", d, "stat").read_text()
        except OSError:
            continue
        comm = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        out.append((int(d), comm, fields[0], int(fields[1]), int(fields[3])))
    return out


def alive_in_session(sid):
    """Processes of session sid, and every descendant of its leader (a confined
    program starts a session of its own), that are not zombies: (pid, comm)."""
    procs = processes()
    family = {pid for pid, _, _, _, session in procs if session == sid} | {sid}
    grew = True
    while grew:
        more = {pid for pid, _, _, parent, _ in procs if parent in family} - family
        family |= more
        grew = bool(more)
    return [(pid, comm) for pid, comm, state, _, _ in procs
            if pid in family and state not in ("Z", "X")]


def still_alive(pids):
    """Those of pids (pid, comm) that still run as the same program."""
    now = {(pid, comm) for pid, comm, state, _, _ in processes() if state not in ("Z", "X")}
    return [p for p in pids if p in now]


def cmdline(pid):
    try:
        return Path("/proc", str(pid), "cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def wait_for(predicate, what):
    deadline = time.monotonic() + WAIT_LIMIT_S
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


class SignalCase(unittest.TestCase):
    """Start a command in its own session with fresh TMPDIR, XDG_STATE_HOME and
    output directory; interrupt it; check what is left."""

    def setUp(self):
        self.dirs = {}
        for name in ("tmp", "state", "out", "aux"):
            d = tempfile.TemporaryDirectory(prefix=f"vdsobench-signals-{name}-")
            self.addCleanup(d.cleanup)
            self.dirs[name] = d.name

    # in the child: the signals as a command started from a terminal finds them
    default_dispositions = staticmethod(default_dispositions)

    def start(self, argv):
        env = dict(os.environ, TMPDIR=self.dirs["tmp"], XDG_STATE_HOME=self.dirs["state"])
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, cwd=self.dirs["out"],
                                preexec_fn=self.default_dispositions)
        self.addCleanup(self.kill_session, proc)
        return proc

    def kill_session(self, proc):
        """Whatever the test found, leave nothing running."""
        for pid, _ in alive_in_session(proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if proc.poll() is None:
            proc.wait()
        for f in (proc.stdout, proc.stderr):
            f.close()

    def interrupt(self, proc, sig, expect_target):
        family = alive_in_session(proc.pid)  # a child left behind is reparented
        os.kill(proc.pid, sig)  # the command alone, not its group: it must pass it on
        out, err = proc.communicate(timeout=WAIT_LIMIT_S)
        self.assertEqual(proc.returncode, 128 + sig, err)
        self.assertNotIn("Traceback", err)
        said = [line for line in err.splitlines() if "interrupted" in line]
        self.assertEqual(len(said), 1, err)
        self.assertEqual(err.splitlines()[-1], said[0], err)
        name = signal.Signals(sig).name
        self.assertEqual(said[0], f"vdsobench: interrupted by {name}; nothing written to "
                                  f"{expect_target}", err)
        wait_for(lambda: not still_alive(family),
                 f"the command's processes to end: {still_alive(family)}")
        self.assertEqual(os.listdir(self.dirs["tmp"]), [], "temporary files left")
        self.assertEqual(os.listdir(self.dirs["out"]), [], "something left in the output "
                                                           "directory")
        self.assertEqual(os.listdir(self.dirs["state"]), [], "a recovery file for nothing")
        return out, err


class LifecycleSignalTest(SignalCase):
    """The mechanism alone, with sh and sleep as the children (no build needed)."""

    BODY = textwrap.dedent("""
        import os, sys
        sys.path[:0] = [{scripts!r}, {root!r}]  # as scripts/vdsobench does
        from vdsobench_cli.cli import errors, lifecycle

        def body():
            with lifecycle.temp_dir(prefix="held-") as d:
                with open(os.path.join(d, "partial.json"), "w") as f:
                    f.write("{{")
                lifecycle.target("r.json")
                {work}
            return 0

        sys.exit(errors.guard(body))
        """)

    def run_body(self, work):
        code = self.BODY.format(scripts=str(SCRIPTS), root=str(SCRIPTS.parent), work=work)
        return self.start([sys.executable, "-c", code])

    def sleeping(self, proc, n):
        def ready():
            if proc.poll() is not None:  # not two minutes of waiting for nothing
                raise AssertionError(f"the command ended (exit {proc.returncode}) before "
                                     f"its children started:\n{proc.stderr.read()[-3000:]}")
            return len([c for _, c in alive_in_session(proc.pid) if c == "sleep"]) >= n
        return wait_for(ready, f"{n} sleep children")

    def test_sighup_stops_a_child_and_its_children(self):
        proc = self.run_body('lifecycle.run(["sh", "-c", "sleep 300 & sleep 300 & wait"])')
        self.sleeping(proc, 2)
        self.interrupt(proc, signal.SIGHUP, "r.json")

    def test_sigterm_a_child_ignoring_sigterm_is_killed(self):
        proc = self.run_body("""lifecycle.run(["sh", "-c", "trap '' TERM; sleep 300 & wait"])""")
        self.sleeping(proc, 1)
        self.interrupt(proc, signal.SIGTERM, "r.json")

    # The race CI met: a signal landing just before the main thread blocks in a
    # read of its child's pipe (or a wait for it) leaves Python's handler
    # pending until the call returns. With the signal blocked in the main
    # thread every delivery is that one: the kernel gives it to the watcher
    # thread (cli/wakeup.py), which must stop the children for the main
    # thread to return and raise.
    BLOCKED = "import signal; signal.pthread_sigmask(signal.SIG_BLOCK, [signal.{sig}]); "

    def test_sighup_with_the_main_thread_blocked_in_a_read(self):
        proc = self.run_body(self.BLOCKED.format(sig="SIGHUP") + 'lifecycle.run(["sh", "-c", '
                             '"sleep 300 & sleep 300 & wait"], capture_output=True)')
        self.sleeping(proc, 2)
        self.interrupt(proc, signal.SIGHUP, "r.json")

    def test_sigterm_with_the_main_thread_blocked_in_a_wait_on_a_deaf_child(self):
        proc = self.run_body(self.BLOCKED.format(sig="SIGTERM") + 'lifecycle.run(["sh", "-c", '
                             '"trap \'\' TERM; sleep 300 & wait"])')
        self.sleeping(proc, 1)
        self.interrupt(proc, signal.SIGTERM, "r.json")

    def test_sigint_in_parallel_work_starts_nothing_new(self):
        count = os.path.join(self.dirs["aux"], "starts")
        proc = self.run_body(
            f'lifecycle.parallel(lambda i: lifecycle.run(["sh", "-c", '
            f'"echo $$ >> {count}; exec sleep 300"]), list(range(40)), 3)')
        self.sleeping(proc, 3)
        self.interrupt(proc, signal.SIGINT, "r.json")
        with open(count) as f:
            self.assertEqual(len(f.read().split()), 3, "a child started after the signal")

    def test_sigtstp_stops_the_children_with_it_and_sigcont_continues_them(self):
        # not a new session: a stop signal is ignored by an orphaned process group
        code = self.BODY.format(scripts=str(SCRIPTS), root=str(SCRIPTS.parent),
                                work='lifecycle.run(["sleep", "300"])')
        env = dict(os.environ, TMPDIR=self.dirs["tmp"], XDG_STATE_HOME=self.dirs["state"])
        proc = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=self.dirs["out"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, process_group=0,
                                preexec_fn=self.default_dispositions)
        self.addCleanup(lambda: proc.poll() is None and proc.kill())

        def state(pid):
            try:
                text = Path("/proc", str(pid), "stat").read_text()
            except OSError:
                return None
            return text[text.rindex(")") + 2:].split()[0]

        sleeper = wait_for(lambda: next((pid for pid, comm, _, parent, _ in processes()
                                         if comm == "sleep" and parent == proc.pid), None),
                           "the sleep child")
        os.kill(proc.pid, signal.SIGTSTP)
        wait_for(lambda: state(proc.pid) == "T" and state(sleeper) == "T", "both stopped")
        os.kill(proc.pid, signal.SIGCONT)
        wait_for(lambda: state(proc.pid) not in ("T", None)
                 and state(sleeper) not in ("T", None), "both continued")
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=WAIT_LIMIT_S)
        self.assertEqual(proc.returncode, 128 + signal.SIGTERM, err)
        wait_for(lambda: state(sleeper) in (None, "Z"), "the sleep child to end")
        self.assertEqual(os.listdir(self.dirs["tmp"]), [])

    def test_a_signal_outside_a_session_is_python_s_own(self):
        # the handlers live only as long as the command: afterwards, defaults again
        with lifecycle.session():
            self.assertIs(signal.getsignal(signal.SIGTERM), lifecycle._on_signal)
        self.assertIsNot(signal.getsignal(signal.SIGTERM), lifecycle._on_signal)


class CommandSignalTest(SignalCase):
    """The commands, with the real harness (built once by the first)."""

    def harness_measuring(self, proc, flag):
        """The harness child once it measures (its cmdline has flag), and the
        command's temporary directory exists."""
        def found():
            if proc.poll() is not None:
                self.fail(f"the command ended first: {proc.communicate()}")
            for pid, comm in alive_in_session(proc.pid):
                if comm == HARNESS and flag.encode() in cmdline(pid):
                    return pid
            return None
        pid = wait_for(found, f"{HARNESS} {flag}")
        self.assertTrue(os.listdir(self.dirs["tmp"]), "no temporary directory while measuring")
        return pid

    def run_command(self, sig, out):
        proc = self.start([str(LAUNCHER), "run", "--variants", "floor/empty", "--min-time",
                           "600", "--repetitions", "1", "--quiet", "--out", out])
        self.harness_measuring(proc, "--out")
        self.interrupt(proc, sig, out)

    def test_run_sigterm(self):
        # into a directory run would make: it must be gone again
        self.run_command(signal.SIGTERM, os.path.join("new", "dir", "r.json"))

    def test_run_sigint(self):
        self.run_command(signal.SIGINT, "r.json")

    def test_compare_sighup(self):
        proc = self.start([str(LAUNCHER), "compare", "generic_5_3+lfence_rdtsc+always",
                           "generic_6_10+lfence_rdtsc+always", "--clocks", "monotonic",
                           "--rounds", "100000", "--batch-ms", "100",
                           "--quiet", "--out", "c.json", "--plot", "charts"])
        self.harness_measuring(proc, "--rounds")
        self.interrupt(proc, signal.SIGHUP, "c.json")


if __name__ == "__main__":
    unittest.main()
