"""--arch arm (32-bit arm, for arm64's compat vDSO): the name and its
aliases, the cross build's flags and tools, the runner (always qemu-arm on
x86-64), the one emulation line, the package group, qemu_arm.sh's refusal
without qemu and the aarch64 runner handing an EM_ARM file over; then one
live verify under qemu-arm: a correct variant on the real counter read
(isb_mrrc_isb, answered by verify's CNTVCT trap) PASS, the known-bad one
CAUGHT (the cross build and two variants under qemu, about 15 s with the
build cached; skipped without gcc-arm-linux-gnueabihf or qemu-arm-static)."""

import os
import tempfile
import unittest
from unittest import mock

from vdsobench_cli.cli import arch, build, confine, packages
from vdsobench_cli.tests.cross_support import cross_run_missing
from vdsobench_cli.tests.support import cli, one_line, run_made_up_elf


class ArmCase(unittest.TestCase):
    def setUp(self):
        self.addCleanup(arch.use, None)


class NamesTest(ArmCase):
    def test_names_and_aliases(self):
        for text in ("arm", "armhf", "armv7l", "armv8l", "aarch32"):
            self.assertEqual(arch.parse(text), "arm")
        self.assertEqual(arch.TRIPLET["arm"], "arm-linux-gnueabihf")
        self.assertEqual(arch.DEFAULT_COUNTER["arm"], "isb_mrrc_isb")

    def test_a_bad_name_lists_arm(self):
        rc, out, err = cli("verify", "--arch", "arm32bogus")
        one_line(self, rc, err, "arm32bogus", "arm")


class TargetTest(ArmCase):
    def test_cross_built_and_emulated(self):
        t = arch.Target("arm", "x86_64")
        self.assertEqual((t.native, t.emulated), (False, True))
        self.assertEqual(t.bazel_flags(), ["--config=arm"])

    def test_only_the_c_compiler_is_needed(self):
        t = arch.Target("arm", "x86_64")
        with tempfile.TemporaryDirectory() as empty, \
                mock.patch.object(arch, "CROSS_BIN", empty):
            self.assertEqual(t.missing_toolchain(), ["arm-linux-gnueabihf-gcc"])

    def test_refused_from_arm64_in_one_line(self):
        with self.assertRaises(arch.UsageError) as cm:
            arch.Target("arm", "arm64").bazel_flags()
        self.assertIn("cross-building from arm64 is not set up", str(cm.exception))

    def test_its_c_suites_are_refused_in_one_line(self):
        rc, out, err = cli("test", "--arch", "arm")
        self.assertEqual(out, "")
        one_line(self, rc, err, "test --arch arm", "verify --arch arm")


class ProgramTest(ArmCase):
    def setUp(self):
        super().setUp()
        if arch.host() != "x86_64":
            self.skipTest("arm is cross-built on x86-64 hosts only")
        patch = mock.patch.object(build, "bin_dir", return_value=build.ROOT / "out")
        patch.start()
        self.addCleanup(patch.stop)
        arch.use("arm")

    def test_under_qemu_arm(self):
        cmd = build.program("//verify:vdsobench_verify")
        self.assertEqual(cmd[3], str(confine.EXEC))
        runner = str(build.ROOT / arch.RUNNERS["arm"])
        self.assertEqual(cmd[cmd.index("--") + 1:],
                         [runner, str(build.ROOT / "out/verify/vdsobench_verify")])
        self.assertTrue(os.access(runner, os.X_OK))
        with mock.patch.object(arch, "emulator_version", return_value="7.2.22"), \
                mock.patch.object(arch.shutil, "which", return_value="/usr/bin/qemu-arm-static"):
            emu = arch.emulation()
            line = arch.emulation_line()
        self.assertEqual((emu["guest"], emu["program"]), ("armv8l", "qemu-arm-static"))
        self.assertEqual(line, "arm runs under qemu-arm-static 7.2.22, emulated (qemu-user)")

    def test_package_group(self):
        wanted = packages.wanted()
        for name in ("gcc-arm-linux-gnueabihf", "libc6-dev-armhf-cross", "qemu-user-static"):
            self.assertIn(name, wanted)
        self.assertNotIn("gcc-multilib", wanted)


class RunnerTest(unittest.TestCase):
    def test_without_qemu_says_which_package(self):
        # on a PATH without qemu (run_made_up_elf's)
        r = run_made_up_elf(self, str(build.ROOT / arch.RUNNERS["arm"]), b"\x7fELF")
        self.assertEqual(r.returncode, 127)
        self.assertIn("setup --arch arm", r.stderr)

    def test_aarch64_runner_hands_an_arm_elf_over(self):
        # a made-up ELF header, e_machine 40 (EM_ARM) at byte 18, no qemu:
        # the message is qemu_arm.sh's
        r = run_made_up_elf(self, str(build.ROOT / arch.RUNNER),
                            b"\x7fELF\x01\x01\x01" + bytes(11) + b"\x28\x00")
        self.assertEqual(r.returncode, 127)
        self.assertIn("qemu_arm.sh:", r.stderr)


@unittest.skipIf(cross_run_missing("arm"), cross_run_missing("arm"))
class LiveVerifyTest(unittest.TestCase):
    def test_good_passes_and_known_bad_is_caught(self):
        rc, out, err = cli("verify", "--arch", "arm", "generic_6_17+isb_mrrc_isb+always",
                           "x86_gtod_raw_branch+fake+always")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("verify: arm runs under qemu-arm", out)
        self.assertIn("PASS   generic_6_17+isb_mrrc_isb+always", out)
        self.assertIn("answered by the trap", out)
        self.assertIn("CAUGHT x86_gtod_raw_branch+fake+always", out)
        self.assertIn("verify: 1 PASS, 0 FAIL, 1 CAUGHT (known bad), 0 MISSED", out)
