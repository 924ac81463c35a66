"""run --clocksource: the choice and its refusals, the switch and its locks,
the original put back however the block ends, the vDSO's fallback said from
the measured cost (synthetic rows), and `run` itself: a stand-in clocksource
folder ($VDSOBENCH_CLOCKSOURCE_DIR, two plain files), switched, each results
file naming its clocksource, and killed mid-run by SIGINT, SIGTERM and
SIGHUP with the original back. The machine's own setting is only ever
written with the name it already has (a test must not move the clock of
the machine under the other tests)."""

import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import build
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.measure import clocksource, results
from vdsobench_cli.measure.clocksource import Switch
from vdsobench_cli.tests.support import default_dispositions


def stand_in(tmp, listed="tsc kvm-clock hpet", now="kvm-clock"):
    d = Path(tmp, "clocksource0")
    d.mkdir()
    (d / clocksource.AVAILABLE).write_text(listed + " \n")
    (d / clocksource.CURRENT).write_text(now + "\n")
    return str(d)


class ChosenTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.d = stand_in(tmp.name)
        patcher = mock.patch.object(clocksource.os, "geteuid", return_value=0)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_names_in_order_once_or_all(self):
        self.assertEqual(clocksource.chosen("hpet,tsc,hpet", self.d), ["hpet", "tsc"])
        self.assertEqual(clocksource.chosen("all", self.d), ["tsc", "kvm-clock", "hpet"])

    def test_refusals_are_one_line_naming_the_valid(self):
        with self.assertRaisesRegex(UsageError, r"'acpi_pm' is not a clocksource this machine "
                                                r"lists \(valid: all, tsc, kvm-clock, hpet\)"):
            clocksource.chosen("tsc,acpi_pm", self.d)
        with self.assertRaisesRegex(UsageError, "is not a clocksource"):
            clocksource.chosen(",", self.d)
        with mock.patch.object(clocksource.os, "geteuid", return_value=1000), \
                self.assertRaisesRegex(UsageError, "needs root"):
            clocksource.chosen("tsc", self.d)
        with self.assertRaisesRegex(UsageError, "no-such/available_clocksource: No such file"):
            clocksource.chosen("tsc", os.path.join(self.d, "no-such"))
        os.remove(os.path.join(self.d, clocksource.CURRENT))
        with self.assertRaisesRegex(UsageError, "current_clocksource: No such file"):
            clocksource.chosen("tsc", self.d)

    def test_a_fifo_does_not_block(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = stand_in(tmp)
            os.remove(os.path.join(d, clocksource.AVAILABLE))
            os.mkfifo(os.path.join(d, clocksource.AVAILABLE))
            with self.assertRaisesRegex(UsageError, "available_clocksource: is a named pipe"):
                clocksource.chosen("tsc", d)  # refused, not waited on

    def test_a_listed_name_that_would_be_a_path_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = stand_in(tmp, listed="tsc ../../etc/x")
            with self.assertRaisesRegex(UsageError, r"lists '\.\./\.\./etc/x', which is not"):
                clocksource.chosen("tsc", d)

    def test_out_path(self):
        self.assertEqual(clocksource.out_path("results/r.json", "kvm-clock"),
                         "results/r-kvm-clock.json")
        self.assertEqual(clocksource.out_path("r.out", "tsc"), "r.out-tsc")

    def test_an_i386_run_times_its_64_bit_time_entry_too(self):
        self.assertEqual(clocksource.subjects("x86_64"), "sys/vdso,sys/syscall")
        self.assertEqual(clocksource.subjects("i386"),
                         "sys/vdso,sys/syscall,sys/vdso_gettime64")


class SwitchTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.d = stand_in(tmp.name)
        self.locks = os.path.join(tmp.name, "locks")
        os.mkdir(self.locks)

    def now(self):
        return clocksource.current(self.d)

    def held(self, cpu):
        fd = os.open(os.path.join(self.locks, f"cpu{cpu}.lock"), os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return False
        except BlockingIOError:
            return True
        finally:
            os.close(fd)

    def test_switched_locked_and_put_back(self):
        said = []
        with Switch(self.d, [0, 1], locks=self.locks, say=said.append) as s:
            self.assertEqual(s.to("tsc"), "tsc")
            self.assertEqual(self.now(), "tsc")
            self.assertTrue(self.held(0) and self.held(1))
            self.assertRegex(Path(self.locks, "cpu1.lock").read_text(),
                             rf"^{os.getpid()} vdsobench run --clocksource\n$")
        self.assertEqual((self.now(), s.restored), ("kvm-clock", True))
        self.assertFalse(self.held(0) or self.held(1))
        self.assertEqual(said, ["run: clocksource kvm-clock put back"])

    def test_no_lock_folder_no_lock(self):
        with Switch(self.d, [0, 1], locks=None) as s:  # --cpu-lock off
            s.to("tsc")
            self.assertEqual(os.listdir(self.locks), [])  # no lock file even made
        self.assertEqual(self.now(), "kvm-clock")

    def test_put_back_on_an_error_and_on_a_signal(self):
        for exc in (Failure("the harness failed"), KeyboardInterrupt(),
                    clocksource_interrupted()):
            with self.subTest(exc=type(exc).__name__), self.assertRaises(type(exc)):
                with Switch(self.d, [0], locks=self.locks) as s:
                    s.to("hpet")
                    raise exc
            self.assertEqual(self.now(), "kvm-clock")
            self.assertFalse(self.held(0))

    def test_a_clocksource_the_kernel_does_not_take(self):
        with Switch(self.d, [0], locks=self.locks) as s, \
                mock.patch.object(clocksource, "current", side_effect=["kvm-clock", "tsc"]):
            with self.assertRaisesRegex(Failure, "asked for hpet, the kernel uses kvm-clock"):
                s.to("hpet")

    def test_a_held_cpu_is_waited_for_or_refused(self):
        fd = clocksource.open_lock_file(os.path.join(self.locks, "cpu1.lock"))
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b"4242 vdsobench run\n")
        try:
            with self.assertRaisesRegex(Failure, r"CPU 1 is in use: held by 4242 vdsobench run"):
                with Switch(self.d, [0, 1], locks=self.locks, fail=True):
                    pass
            self.assertFalse(self.held(0), "the first CPU's lock let go")
            self.assertEqual(self.now(), "kvm-clock")
        finally:
            os.close(fd)

    def test_a_link_is_never_written_through(self):
        os.remove(os.path.join(self.d, clocksource.CURRENT))
        victim = Path(self.locks, "victim")
        victim.write_text("kvm-clock\n")
        os.symlink(victim, os.path.join(self.d, clocksource.CURRENT))
        with self.assertRaisesRegex(UsageError, "current_clocksource: is a symbolic link"):
            with Switch(self.d, [0], locks=self.locks) as s:
                s.to("tsc")
        self.assertEqual(victim.read_text(), "kvm-clock\n")


def clocksource_interrupted():
    from vdsobench_cli.cli.lifecycle import Interrupted
    return Interrupted(signal.SIGTERM)


class ServedTest(unittest.TestCase):
    """Recorded medians, no timing: the verdict from sys/vdso against sys/syscall."""

    def rows(self, vdso, syscall):
        return [{"key": ("sys/vdso", "monotonic", "hot", 0), "ns": vdso},
                {"key": ("sys/syscall", "monotonic", "hot", 0), "ns": syscall},
                {"key": ("sys/vdso", "realtime", "hot", 0), "ns": vdso},  # no syscall row
                {"key": None, "ns": 3.0}]

    def test_served_in_userspace_or_falling_back(self):
        self.assertEqual(clocksource.served(self.rows(22.6, 251.0), "tsc"),
                         ["tsc: monotonic hot: sys/vdso 22.6 ns, sys/syscall 251.0 ns: "
                          "served in userspace"])
        self.assertEqual(clocksource.served(self.rows(560.0, 540.0), "hpet"),
                         ["hpet: monotonic hot: sys/vdso 560.0 ns, sys/syscall 540.0 ns: "
                          "the vDSO falls back to the syscall (it costs what the syscall "
                          "does)"])
        self.assertEqual(clocksource.served(self.rows(22.6, None), "tsc"), [])


RUN = [sys.executable, str(build.ROOT / "scripts" / "vdsobench"), "run", "--clocks",
       "monotonic", "--repetitions", "2"]


class RunTest(unittest.TestCase):
    """`run --clocksource` as a process, on the stand-in folder."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.d = stand_in(tmp.name)
        self.env = dict(os.environ, VDSOBENCH_CLOCKSOURCE_DIR=self.d,
                        VDSOBENCH_LOCK_DIR=os.path.join(tmp.name, "locks"))
        if os.geteuid() != 0:
            self.skipTest("--clocksource is root's")

    def test_each_clocksource_its_results_file(self):
        out = os.path.join(self.tmp, "r.json")
        r = subprocess.run([*RUN, "--min-time", "0.01", "--clocksource", "tsc,hpet",
                            "--out", out], env=self.env, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        for name in ("tsc", "hpet"):
            data = results.load(clocksource.out_path(out, name))  # the schema's
            rec = data["context"]["vdsobench"]["clocksource"]
            self.assertEqual((rec["clocksource"], rec["original"], rec["available"]),
                             (name, "kvm-clock", ["tsc", "kvm-clock", "hpet"]))
            self.assertEqual(len(rec["served"]), 1, rec)  # monotonic hot, both subjects
            self.assertEqual(sorted(b["run_name"].split("/monotonic")[0]
                                    for b in data["benchmarks"] if b.get("run_type")
                                    == "iteration"),
                             ["sys/syscall"] * 2 + ["sys/vdso"] * 2)
        self.assertFalse(os.path.exists(out))
        self.assertEqual(clocksource.current(self.d), "kvm-clock")
        self.assertIn("run: clocksource kvm-clock put back", r.stderr)

    def test_killed_mid_run_the_original_is_back(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with self.subTest(signal=sig.name):
                out = os.path.join(self.tmp, f"{sig.name}.json")
                # a suite started in the background ignores SIGINT, and the
                # child would inherit that: started as from a terminal
                p = subprocess.Popen([*RUN, "--min-time", "2", "--clocksource", "tsc",
                                      "--out", out], env=self.env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     stdin=subprocess.DEVNULL, start_new_session=True,
                                     preexec_fn=default_dispositions)
                deadline = time.monotonic() + 300
                while clocksource.current(self.d) != "tsc" and p.poll() is None \
                        and time.monotonic() < deadline:
                    time.sleep(0.05)
                self.assertEqual(clocksource.current(self.d), "tsc", "never switched")
                p.send_signal(sig)
                _, err = p.communicate(timeout=120)
                self.assertEqual(p.returncode, 128 + sig, err)
                self.assertEqual(clocksource.current(self.d), "kvm-clock", err)
                self.assertIn("run: clocksource kvm-clock put back", err)
                self.assertFalse(os.path.exists(clocksource.out_path(out, "tsc")))

    def test_cpu_lock_off_takes_no_lock(self):
        # another measurement holds CPU 0: with --cpu-lock off the run neither
        # waits for it nor is refused
        locks = self.env["VDSOBENCH_LOCK_DIR"]
        os.mkdir(locks)
        fd = clocksource.open_lock_file(os.path.join(locks, "cpu0.lock"))
        self.addCleanup(os.close, fd)
        fcntl.flock(fd, fcntl.LOCK_EX)
        out = os.path.join(self.tmp, "off.json")
        r = subprocess.run([*RUN, "--min-time", "0.01", "--clocksource", "tsc", "--cpu-lock",
                            "off", "--out", out], env=self.env, capture_output=True,
                           text=True, stdin=subprocess.DEVNULL, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        self.assertNotIn("waiting for CPU", r.stderr)
        self.assertTrue(os.path.isfile(clocksource.out_path(out, "tsc")))
        self.assertEqual(clocksource.current(self.d), "kvm-clock")

    def test_without_a_lock_folder_it_says_so(self):
        # $VDSOBENCH_LOCK_DIR under a file: no folder for the locks can be made
        Path(self.tmp, "file").write_text("")
        env = dict(self.env, VDSOBENCH_LOCK_DIR=os.path.join(self.tmp, "file", "locks"))
        out = os.path.join(self.tmp, "nolock.json")
        r = subprocess.run([*RUN, "--min-time", "0.01", "--clocksource", "tsc", "--out", out],
                           env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        self.assertIn("run: no folder for the CPU locks could be made: the clocksource is "
                      "switched without them", r.stderr)
        self.assertEqual(clocksource.current(self.d), "kvm-clock")

    def test_an_out_that_is_no_regular_file_is_refused(self):
        # the files are named after --out: a device, FIFO, folder or link given
        # as --out is refused as plain run refuses it, nothing made beside it
        Path(self.tmp, "folder").mkdir()
        os.mkfifo(os.path.join(self.tmp, "fifo"))
        os.symlink(os.path.join(self.tmp, "elsewhere.json"), os.path.join(self.tmp, "link"))
        for name, kind in (("folder", "a directory"), ("fifo", "a FIFO"),
                           ("link", "a symbolic link"), ("/dev/null", "a character device")):
            with self.subTest(out=name):
                out = os.path.join(self.tmp, name)
                before = set(os.listdir(os.path.dirname(out)))
                r = subprocess.run([*RUN, "--clocksource", "tsc", "--out", out],
                                   env=self.env, capture_output=True, text=True,
                                   stdin=subprocess.DEVNULL, timeout=300)
                self.assertEqual((r.returncode, r.stdout), (2, ""), r.stderr)
                lines = r.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertIn(f"cannot write results to {out}: it is {kind}", lines[0])
                self.assertEqual(set(os.listdir(os.path.dirname(out))), before)
                self.assertEqual(clocksource.current(self.d), "kvm-clock")

    def test_an_emulated_run_is_refused(self):
        r = subprocess.run([*RUN, "--arch", "arm64", "--clocksource", "tsc"], env=self.env,
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        self.assertEqual((r.returncode, r.stdout), (2, ""), r.stderr)
        self.assertEqual(r.stderr.strip().splitlines(),
                         ["vdsobench: error: --clocksource with --arch arm64: its times are "
                          "the emulator's, not this kernel's vDSO's (run it natively)"])
        self.assertEqual(clocksource.current(self.d), "kvm-clock")

    def test_the_machines_own_setting_written_with_its_own_name(self):
        real = clocksource.SYSFS
        if not os.path.isfile(os.path.join(real, clocksource.CURRENT)):
            self.skipTest(f"no {real}")
        now = clocksource.current(real)
        env = dict(self.env)
        del env["VDSOBENCH_CLOCKSOURCE_DIR"]
        out = os.path.join(self.tmp, "real.json")
        r = subprocess.run([*RUN, "--min-time", "0.01", "--clocksource", now, "--out", out],
                           env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        self.assertEqual(clocksource.current(real), now)
        data = json.loads(Path(clocksource.out_path(out, now)).read_text())
        self.assertEqual(data["context"]["vdsobench"]["fingerprint"]["clocksource"]["current"],
                         now)


if __name__ == "__main__":
    unittest.main()
