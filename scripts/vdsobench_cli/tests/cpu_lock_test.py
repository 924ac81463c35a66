"""--cpu-lock against a lock this test holds (fcntl.flock on the harness's lock
file, in a lock directory of the test's own): fail refuses in one line naming
the holder; wait says so once, and `run` records the wait in the results'
warnings. The holder lets go only once the waiting line was read, so nothing
depends on timing."""

import contextlib
import fcntl
import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

from vdsobench_cli.measure import cpu_lock, rounds
from vdsobench_cli.cli.build import ROOT

LAUNCHER = ROOT / "scripts" / "vdsobench"

HOLDER = "cpu_lock_test holder"
QUICK = ["--variants", "floor/empty", "--min-time", "0.01",
         "--repetitions", "1", "--events", "none", "--quiet"]


@contextlib.contextmanager
def held(directory, cpu):
    """Hold CPU cpu's lock as the harness would, saying who holds it."""
    with open(os.path.join(directory, f"cpu{cpu}.lock"), "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.truncate(0)
        f.write(f"{os.getpid()} {HOLDER}\n")
        f.flush()
        yield f


class WarningsTest(unittest.TestCase):
    def test_from_the_harness_context(self):
        harness = {"cpu_lock": {"policy": "wait", "dir": "/run/lock/vdsobench", "error": None,
                                "cpus": [1, 3],
                                "waited": [{"cpu": 3, "seconds": 2.25,
                                            "holder": "pid 42 (vdsobench run)"}]}}
        self.assertEqual(cpu_lock.warnings(harness), [
            {"id": "cpu_lock_waited", "cpu": 3, "seconds": 2.25,
             "holder": "pid 42 (vdsobench run)",
             "message": "waited 2.2 s for CPU 3, held by pid 42 (vdsobench run): another "
                        "vdsobench measurement was pinned there"}])
        harness["cpu_lock"].update(waited=[], error="/run/lock/vdsobench: Permission denied")
        self.assertEqual([w["id"] for w in cpu_lock.warnings(harness)],
                         ["cpu_lock_unavailable"])
        self.assertEqual(cpu_lock.warnings({}), [])


class HeldLockTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.harness = rounds.binary()  # its command line
        cls.cpu = max(os.sched_getaffinity(0))

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-locks-")
        self.env = dict(os.environ, VDSOBENCH_LOCK_DIR=self.tmp.name)
        patcher = mock.patch.dict(os.environ, VDSOBENCH_LOCK_DIR=self.tmp.name)
        patcher.start()
        self.addCleanup(patcher.stop)

    def harness_cmd(self, *args):
        """The confined harness with its lock folder (the test's) writable."""
        cmd, env = cpu_lock.confined([*self.harness, *args])
        self.assertIsNone(env)  # $VDSOBENCH_LOCK_DIR names it
        return cmd

    def tearDown(self):
        self.tmp.cleanup()

    def test_fail_refuses_naming_the_holder(self):
        out = os.path.join(self.tmp.name, "out.json")
        with held(self.tmp.name, self.cpu):
            r = subprocess.run(self.harness_cmd(*QUICK, "--cpus", str(self.cpu), "--cpu-lock",
                                                "fail", "--out", out),
                               env=self.env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stderr.strip().splitlines()[-1],
                         f"vdsobench_bench: CPU {self.cpu} is in use: held by pid "
                         f"{os.getpid()} ({HOLDER}), another measurement pinned there "
                         "(--cpu-lock=wait waits for it)")
        self.assertFalse(os.path.exists(out), "nothing measured")

    def test_run_fail_is_the_harness_line_alone(self):
        out = os.path.join(self.tmp.name, "out.json")
        with held(self.tmp.name, self.cpu):
            r = subprocess.run([str(LAUNCHER), "run", "--variants", "floor/empty",
                                "--repetitions", "1", "--min-time", "0.01", "--cpus",
                                str(self.cpu), "--cpu-lock", "fail", "--out", out],
                               env=self.env, capture_output=True, text=True, timeout=300,
                               stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 1, r.stderr)
        refusal = [line for line in r.stderr.splitlines() if "is in use" in line]
        self.assertEqual(len(refusal), 1, r.stderr)
        self.assertNotIn("no usable results", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_off_ignores_it(self):
        out = os.path.join(self.tmp.name, "out.json")
        with held(self.tmp.name, self.cpu):
            r = subprocess.run(self.harness_cmd(*QUICK, "--cpus", str(self.cpu), "--cpu-lock",
                                                "off", "--out", out),
                               env=self.env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            lock = json.loads(json.load(f)["context"]["vdsobench_harness"])["cpu_lock"]
        self.assertEqual((lock["policy"], lock["cpus"], lock["waited"]), ("off", [], []))

    def test_run_waits_and_records_it(self):
        out = os.path.join(self.tmp.name, "run.json")
        cmd = [str(ROOT / "scripts" / "vdsobench"), "run", *QUICK, "--cpus", str(self.cpu),
               "--out", out]
        seen = []
        with held(self.tmp.name, self.cpu) as lock:
            p = subprocess.Popen(cmd, env=self.env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                # until the harness says it waits (or ends without waiting)
                for line in p.stderr:
                    seen.append(line)
                    if line.startswith("waiting for CPU"):
                        break
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
            _, rest = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 0, "".join(seen) + rest)
        self.assertEqual(seen[-1].strip(), f"waiting for CPU {self.cpu}, held by pid "
                                           f"{os.getpid()} ({HOLDER})")
        self.assertEqual(sum(line.startswith("waiting for CPU") for line in seen + [rest]), 1,
                         "said once")
        with open(out) as f:
            warnings = json.load(f)["context"]["vdsobench"]["warnings"]
        waited = [w for w in warnings if w["id"] == "cpu_lock_waited"]
        self.assertEqual(len(waited), 1, warnings)
        self.assertEqual((waited[0]["cpu"], waited[0]["holder"]),
                         (self.cpu, f"pid {os.getpid()} ({HOLDER})"))
        self.assertGreaterEqual(waited[0]["seconds"], 0)
        self.assertIn(f"warning: {waited[0]['message']}", rest)


@unittest.skipUnless(os.geteuid() == 0, "the sandbox user is another user as root")
class FallbackFolderTest(unittest.TestCase):
    def test_a_link_at_the_fallback_name_is_not_followed(self):
        """Where /run/lock/vdsobench cannot be made (anyone may put a file there
        first), the harness's locks go to $TMPDIR/vdsobench-locks-confined-UID, a
        name anyone may take first: a link there made the folder it leads to
        (here one of the sandbox user's, another run's) writable to the
        confined harness, and so to the tree's code in it, which writes where
        it likes (the harness itself refuses a link). No lock folder instead."""
        from vdsobench_cli.cli import confine
        tmp = tempfile.mkdtemp(prefix="vdsobench-lock-link-")
        self.addCleanup(subprocess.run, ["rm", "-rf", tmp])
        os.chmod(tmp, 0o1777)
        victim = os.path.join(tmp, "victim")
        os.mkdir(victim)
        os.chown(victim, *confine.sandbox_ids())
        not_a_folder = os.path.join(tmp, "file")
        open(not_a_folder, "w").close()
        uid, _ = confine.sandbox_ids()
        link = os.path.join(tmp, f"vdsobench-locks-confined-{uid}")
        os.symlink(victim, link)
        hostile = confine.command(["/bin/sh", "-c", f"echo x > {link}/planted; "
                                                    f"echo x > {victim}/planted2; true"])
        with mock.patch.object(cpu_lock, "SHARED_DIR", not_a_folder), \
                mock.patch.object(tempfile, "tempdir", tmp), \
                mock.patch.dict(os.environ, {"VDSOBENCH_LOCK_DIR": ""}):
            cmd, env = cpu_lock.confined(hostile)
        self.assertEqual(subprocess.run(cmd, env=env, capture_output=True).returncode, 0)
        self.assertEqual(os.listdir(victim), [], "the confined program wrote where the link led")
        self.assertTrue(os.path.islink(link))

    def test_a_lock_folder_of_roots_holding_other_files_is_not_given_away(self):
        """$VDSOBENCH_LOCK_DIR names the folder the confined harness (the trees'
        code in it) may write, and root's own folder there was given to the
        sandbox user: /root, /tmp or /etc named by mistake became the tree's.
        One that holds anything but locks is refused in one line, kept root's."""
        d = tempfile.mkdtemp(prefix="vdsobench-lock-home-")
        self.addCleanup(subprocess.run, ["rm", "-rf", d])
        os.chmod(d, 0o755)
        with open(os.path.join(d, ".bashrc"), "w") as f:
            f.write("keep\n")
        out = os.path.join(d, "out.json")
        r = subprocess.run([str(LAUNCHER), "run", *QUICK, "--out", out],
                           env=dict(os.environ, VDSOBENCH_LOCK_DIR=d), capture_output=True,
                           text=True, timeout=600, stdin=subprocess.DEVNULL)
        self.assertEqual(os.stat(d).st_uid, 0, "root's folder was given to the sandbox user")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.strip().splitlines()[-1],
                         f"vdsobench: error: $VDSOBENCH_LOCK_DIR: {d} holds other files than "
                         "CPU locks, and the confined harness would be given it "
                         "(valid: an empty folder, or one of locks alone)")
        self.assertEqual(sorted(os.listdir(d)), [".bashrc"])


if __name__ == "__main__":
    unittest.main()
