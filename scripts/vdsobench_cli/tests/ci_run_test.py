"""`.ci/run` itself, with every step a stand-in: the steps' exit statuses
make its own, and stopping it stops the step it is in with all that step
started (a Bazel build, the suite's copies), never leaving one running."""

import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

from vdsobench_cli.cli import build
from vdsobench_cli.tests.support import default_dispositions

# the stand-in for scripts/vdsobench: records each call, fails the step named
# in $FAIL, and in the step named in $HANG starts a child and waits on it
STAND_IN = """#!/usr/bin/env bash
echo "$*" >>"$CALLS"
if [ "$*" = "$HANG" ]; then
	sleep 300 &
	# whole or not there: the test reads it as soon as it appears
	echo "$$ $!" >"$PIDS.part" && mv "$PIDS.part" "$PIDS"
	wait
fi
[ "$*" = "$FAIL" ] && exit 1
[ "$*" = test ] && echo "3 passed, 0 failed"
exit 0
"""


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone but for its parent's wait
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


class CiRunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp, True)
        (self.tmp / ".ci").mkdir()
        shutil.copy(build.ROOT / ".ci" / "run", self.tmp / ".ci" / "run")
        (self.tmp / "scripts").mkdir()
        vdsobench = self.tmp / "scripts" / "vdsobench"
        vdsobench.write_text(STAND_IN)
        vdsobench.chmod(0o755)
        bin_dir = self.tmp / "bin"
        bin_dir.mkdir()
        (bin_dir / "bazel").write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / "bazel").chmod(0o755)
        self.env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}",
                        CALLS=str(self.tmp / "calls"), PIDS=str(self.tmp / "pids"),
                        FAIL="", HANG="")

    def ci(self, **env):
        # as CI starts it: a suite run in the background ignores SIGINT, which
        # bash, inheriting it, could then not trap
        p = subprocess.Popen(["bash", str(self.tmp / ".ci" / "run")], env=dict(
            self.env, **env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=default_dispositions, start_new_session=True)
        self.addCleanup(self.stop, p)
        return p

    def stop(self, p):
        """A run a failed test left: it and its hanging step killed, its pipes
        read."""
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pids = self.tmp / "pids"
        for pid in map(int, pids.read_text().split() if pids.exists() else ()):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)

    def test_every_step_runs_and_a_failed_one_is_the_exit_status(self):
        p = self.ci(FAIL="gate --baseline results/baselines/ci.json --only sim")
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 1, err)
        self.assertEqual(out.splitlines()[-1], "3 passed, 0 failed")
        calls = (self.tmp / "calls").read_text().splitlines()
        self.assertEqual(calls[0], "setup")
        self.assertEqual(calls[-1], "test")
        self.assertIn("test --asan", calls)
        self.assertIn("ci: gate --only sim:", err)

    def test_a_failed_setup_stops_it(self):
        p = self.ci(FAIL="setup")
        p.communicate(timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertEqual((self.tmp / "calls").read_text().splitlines(), ["setup"])

    def test_a_signal_stops_the_step_and_what_it_started(self):
        for sig, rc in ((signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)):
            with self.subTest(sig=sig.name):
                pids = self.tmp / "pids"
                pids.unlink(missing_ok=True)
                p = self.ci(HANG="test --asan")
                deadline = time.monotonic() + 30
                while not pids.exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
                step, child = map(int, pids.read_text().split())
                self.assertTrue(alive(step) and alive(child))
                p.send_signal(sig)
                _, err = p.communicate(timeout=30)
                self.assertEqual(p.returncode, rc, err)
                self.assertIn(f"ci: stopped by {sig.name}", err)
                deadline = time.monotonic() + 10
                while (alive(step) or alive(child)) and time.monotonic() < deadline:
                    time.sleep(0.05)
                self.assertFalse(alive(step), "the step ran on")
                self.assertFalse(alive(child), "what the step started ran on")
                # nothing after the step it was stopped in
                self.assertEqual((self.tmp / "calls").read_text().splitlines()[-1],
                                 "test --asan")


if __name__ == "__main__":
    unittest.main()
