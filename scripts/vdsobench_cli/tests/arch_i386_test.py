"""--arch i386: the name and its aliases, the cross build's flags and tools,
whether its programs run natively or under qemu-i386 (abi32.probe()'s
answer, stood in for), the runner script's choice, the one emulation line
and record, the package group; then one live verify under the runner: a
correct variant PASS, the known-bad one CAUGHT (the cross build and two
fake-counter variants under qemu, about 15 s; skipped without
gcc-i686-linux-gnu or qemu-i386-static), and the i386 harness's C suites
(natively where the kernel runs 32-bit programs: confined.sh gives the
sandbox i386's system calls)."""

import os
import subprocess
import tempfile
import unittest
from unittest import mock

from vdsobench_cli.cli import abi32, arch, build, confine, packages
from vdsobench_cli.kimport import bazel_sync
from vdsobench_cli.tests.cross_support import cross_run_missing
from vdsobench_cli.tests.support import cli, one_line, run_made_up_elf

NO_IA32 = (False, "the kernel does not run 32-bit programs (execve: Exec format error): "
                  "no IA32 emulation here")


class I386Case(unittest.TestCase):
    def setUp(self):
        self.addCleanup(arch.use, None)


class NamesTest(I386Case):
    def test_names_and_aliases(self):
        for text in ("i386", "i686", "x86_32"):
            self.assertEqual(arch.parse(text), "i386")
        t = arch.Target("i386", "x86_64", abi32_probe=lambda: NO_IA32)
        self.assertEqual((t.machine, arch.TRIPLET["i386"]), ("i686", "i686-linux-gnu"))
        self.assertEqual(arch.DEFAULT_COUNTER["i386"], "rdtscp")


class TargetTest(I386Case):
    def test_cross_built_whatever_the_kernel_runs(self):
        for answer in ((True, ""), NO_IA32):
            t = arch.Target("i386", "x86_64", abi32_probe=lambda a=answer: a)
            self.assertFalse(t.native)
            self.assertEqual(t.bazel_flags(), ["--config=i386"])

    def test_native_where_the_kernel_runs_32_bit_programs(self):
        t = arch.Target("i386", "x86_64", abi32_probe=lambda: (True, ""))
        self.assertEqual((t.runs_natively, t.emulated), ((True, ""), False))

    def test_emulated_without_ia32_emulation_says_why(self):
        t = arch.Target("i386", "x86_64", abi32_probe=lambda: NO_IA32)
        self.assertEqual((t.runs_natively, t.emulated), (NO_IA32, True))

    def test_the_c_and_cxx_compilers_are_needed(self):
        # g++: the harness is built for i386 too
        t = arch.Target("i386", "x86_64", abi32_probe=lambda: NO_IA32)
        with tempfile.TemporaryDirectory() as empty, \
                mock.patch.object(arch, "CROSS_BIN", empty):
            self.assertEqual(t.missing_toolchain(),
                             ["i686-linux-gnu-gcc", "i686-linux-gnu-g++"])

    def test_refused_from_arm64_in_one_line(self):
        with self.assertRaises(arch.UsageError) as cm:
            arch.Target("i386", "arm64").bazel_flags()
        self.assertIn("cross-building from arm64 is not set up", str(cm.exception))

    def test_its_c_suites_are_refused_in_one_line(self):
        rc, out, err = cli("test", "--arch", "i386")
        self.assertEqual(out, "")
        one_line(self, rc, err, "test --arch i386", "verify --arch i386")


def use_i386(answer):
    """arch.use("i386") with abi32.probe() answering `answer`."""
    arch.use("i386")
    arch.current()._abi32 = lambda: answer


class ProgramTest(I386Case):
    def setUp(self):
        super().setUp()
        if arch.host() != "x86_64":
            self.skipTest("i386 is cross-built on x86-64 hosts only")
        patch = mock.patch.object(build, "bin_dir", return_value=build.ROOT / "out")
        patch.start()
        self.addCleanup(patch.stop)

    def started(self):
        cmd = build.program("//verify:vdsobench_verify")
        self.assertEqual(cmd[3], str(confine.EXEC))
        return cmd[cmd.index("--") + 1:]

    def test_natively_the_binary_itself(self):
        use_i386((True, ""))
        with mock.patch.dict(os.environ):
            os.environ.pop(abi32.ENV, None)
            self.assertEqual(self.started(), [str(build.ROOT / "out/verify/vdsobench_verify")])
            self.assertNotIn(abi32.ENV, os.environ)
        self.assertIsNone(arch.emulation())
        self.assertIsNone(arch.emulation_line())

    def test_under_the_runner_with_the_reason(self):
        use_i386(NO_IA32)
        runner = str(build.ROOT / arch.RUNNERS["i386"])
        with mock.patch.dict(os.environ):
            os.environ.pop(abi32.ENV, None)
            self.assertEqual(self.started(),
                             [runner, str(build.ROOT / "out/verify/vdsobench_verify")])
            # the runner is told the answer the CLI got, and does not ask again
            self.assertEqual(os.environ[abi32.ENV], "qemu")
        self.assertTrue(os.access(runner, os.X_OK))
        with mock.patch.object(arch, "emulator_version", return_value="7.2.22"), \
                mock.patch.object(arch.shutil, "which", return_value="/usr/bin/qemu-i386-static"):
            emu = arch.emulation()
            line = arch.emulation_line()
        self.assertEqual((emu["guest"], emu["program"], emu["why"]),
                         ("i686", "qemu-i386-static", NO_IA32[1]))
        self.assertEqual(line, "i386 runs under qemu-i386-static 7.2.22, emulated (qemu-user): "
                               + NO_IA32[1])
        self.assertNotIn("\n", line)

    def test_package_group(self):
        use_i386((True, ""))  # natively or not, the cross compiler is needed
        self.assertIn("gcc-i686-linux-gnu", packages.wanted())
        self.assertIn("g++-i686-linux-gnu", packages.wanted())
        self.assertNotIn("gcc-multilib", packages.wanted())


class RunnerTest(unittest.TestCase):
    """toolchains/qemu_i386.sh: $VDSOBENCH_ABI32 (or abi32.py) picks natively or qemu."""

    RUNNER = str(build.ROOT / arch.RUNNERS["i386"])

    def run_it(self, how, path=None):
        env = {"PATH": path or os.environ["PATH"], "VDSOBENCH_ABI32": how}
        return subprocess.run([self.RUNNER, "/bin/echo", "hi"], capture_output=True,
                              text=True, env=env)

    def test_native_runs_it_itself(self):
        r = self.run_it("native")
        self.assertEqual((r.returncode, r.stdout), (0, "hi\n"))

    def test_qemu_without_qemu_says_which_package(self):
        with tempfile.TemporaryDirectory() as empty:
            r = self.run_it("qemu", empty)
        self.assertEqual(r.returncode, 127)
        self.assertIn("setup --arch i386", r.stderr)

    def test_aarch64_runner_hands_an_i386_elf_over(self):
        # a made-up i386 ELF header (e_machine 3 at byte 18), no qemu: the
        # message is qemu_i386.sh's
        r = run_made_up_elf(self, str(build.ROOT / arch.RUNNER),
                            b"\x7fELF\x01\x01\x01" + bytes(11) + b"\x03\x00",
                            {"VDSOBENCH_ABI32": "qemu"})
        self.assertEqual(r.returncode, 127)
        self.assertIn("qemu_i386.sh:", r.stderr)


@unittest.skipIf(cross_run_missing("i386"), cross_run_missing("i386"))
class LiveVerifyTest(unittest.TestCase):
    def test_good_passes_and_known_bad_is_caught(self):
        rc, out, err = cli("verify", "--arch", "i386", "x86_gtod+fake+always",
                           "x86_gtod_raw_branch+fake+always")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("PASS   x86_gtod+fake+always", out)
        self.assertIn("CAUGHT x86_gtod_raw_branch+fake+always", out)
        self.assertIn("verify: 1 PASS, 0 FAIL, 1 CAUGHT (known bad), 0 MISSED", out)
        if arch.Target("i386").emulated:
            self.assertIn("verify: i386 runs under qemu-i386", out)


# the i386 harness's C suites, and the simulated kernel's way into the real one:
# named, not //bench:all, which also builds the harness and the sim driver
# with every variant (sim_driver_list_test: valgrind's, never i386's), twice
# the actions of these
C_SUITES = [*(f"//bench:{t}_test" for t in ("cold", "cpu_lock", "footprint", "lost_cpu", "pin",
                                            "records", "subjects", "sys_snapshot",
                                            "vdso_agree", "vdso_entries", "vdso_sym")),
            "//counters:perf_counters_none_test", "//impls:sim_fallback_test",
            # a kbuild vdso32's gate entered as this kernel's own (gate32.c)
            "//impls/image:loader_test"]


class CSuitesListTest(unittest.TestCase):
    def test_every_harness_suite_is_named(self):
        # a suite added to bench/ is run for i386 too, or this says so
        on_disk = {f"//bench:{p.name.split('.')[0]}"
                   for p in (build.ROOT / "bench").glob("*_test.c*")}
        self.assertEqual(on_disk, {t for t in C_SUITES if t.startswith("//bench:")})


@unittest.skipIf(cross_run_missing("i386"), cross_run_missing("i386"))
class LiveCSuitesTest(unittest.TestCase):
    def test_the_harness_suites_pass_natively_or_under_qemu(self):
        bazel_sync.sync_env()
        # run again every time: whether they run natively is this kernel's answer
        rc, out = build.bazel("test", ["--config=i386", "--test_output=errors",
                                       "--nocache_test_results", *C_SUITES])
        self.assertEqual(rc, 0, out[-3000:])
        self.assertRegex(out, r"//bench:subjects_test +PASSED")
        self.assertRegex(out, r"//impls:sim_fallback_test +PASSED")
        self.assertRegex(out, r"//impls/image:loader_test +PASSED")
        self.assertNotRegex(out, r"FAILED|NO STATUS")


if __name__ == "__main__":
    unittest.main()
