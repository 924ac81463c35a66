import contextlib
import io
import subprocess
import unittest
from unittest import mock

from vdsobench_cli.cli import packages
from vdsobench_cli.cli.errors import Failure, UsageError


def dpkg(absent):
    """A fake subprocess.run for dpkg-query -W: `absent` packages are not installed."""
    def run(cmd, **kwargs):
        name = cmd[-1]
        if name in absent:
            return subprocess.CompletedProcess(cmd, 1, "",
                                               f"dpkg-query: no packages found matching {name}\n")
        return subprocess.CompletedProcess(cmd, 0, "install ok installed\n", "")
    return run


class TestGroupsTest(unittest.TestCase):
    """What `test` installs beyond the first group, or says it skips."""

    def groups(self, absent, euid):
        out, installs = io.StringIO(), []
        with mock.patch.object(packages.subprocess, "run", side_effect=dpkg(absent)), \
                mock.patch.object(packages.os, "geteuid", return_value=euid), \
                mock.patch.object(packages, "install",
                                  side_effect=lambda todo, why="": installs.append(todo)):
            packages.ensure_test_groups(out)
        return out.getvalue(), installs

    def test_root_installs_what_is_missing(self):
        out, installs = self.groups({"linux-config-6.12", "qemu-user-static"}, 0)
        self.assertEqual((out, installs), ("", [["linux-config-6.12"], ["qemu-user-static"]]))
        self.assertEqual(self.groups(set(), 0), ("", []))

    def test_not_root_says_what_skips_once_a_group(self):
        out, installs = self.groups({"linux-source-6.1", "linux-config-6.1"}, 1000)
        self.assertEqual(installs, [])
        self.assertEqual(out.splitlines(), [
            "test: Debian's kernel sources and kbuild's tools missing (linux-source-6.1 "
            "linux-config-6.1), and only root installs them: the tests that import Debian's "
            "trees skip or build without kbuild (as root: scripts/vdsobench setup "
            "--kernel-sources)"])


class SetupTest(unittest.TestCase):
    def setup(self, absent, **kwargs):
        out = io.StringIO()
        with mock.patch.object(packages.subprocess, "run", side_effect=dpkg(absent)), \
                contextlib.redirect_stdout(out):
            status = packages.setup(**kwargs)
        return status, out.getvalue()

    def test_missing(self):
        with mock.patch.object(packages.subprocess, "run",
                               side_effect=dpkg({"hyperfine", "valgrind"})):
            self.assertEqual(packages.missing(), ["valgrind", "hyperfine"])

    def test_removed_but_configured_counts_as_missing(self):
        def run(cmd, **kwargs):
            return subprocess.CompletedProcess(cmd, 0, "deinstall ok config-files\n", "")
        with mock.patch.object(packages.subprocess, "run", side_effect=run):
            self.assertFalse(packages.installed("valgrind"))

    def test_all_present(self):
        status, out = self.setup(set())
        self.assertEqual(status, 0)
        self.assertEqual(out, f"setup: all {len(packages.PACKAGES)} packages present\n")

    def test_all_present_quiet(self):
        self.assertEqual(self.setup(set(), quiet=True), (0, ""))

    def test_check_reports_missing(self):
        status, out = self.setup({"dwarves"}, check=True)
        self.assertEqual(status, 1)
        self.assertIn("dwarves", out)

    def test_not_root(self):
        with mock.patch.object(packages.os, "geteuid", return_value=1000), \
                self.assertRaises(UsageError) as cm:
            self.setup({"dwarves"})
        self.assertIn("root", str(cm.exception))
        self.assertIn("dwarves", str(cm.exception))

    def test_apt_failure_names_what_is_still_missing(self):
        apt = mock.Mock(return_value=(100, "E: Unable to locate package hyperfine\n"))
        with mock.patch.object(packages.os, "geteuid", return_value=0), \
                mock.patch.object(packages, "apt", apt), \
                self.assertRaises(Failure) as cm:
            self.setup({"hyperfine"})
        self.assertIn("could not install hyperfine", str(cm.exception))
        self.assertEqual([c.args[0][0] for c in apt.call_args_list], ["update", "install"])
        self.assertEqual(apt.call_args_list[1].args[0][-1], "hyperfine")

    def test_fuzz_group_is_asked_for_only(self):
        """setup --fuzz: clang's group, which plain setup leaves out."""
        self.assertFalse(set(packages.FUZZ_PACKAGES) & set(packages.PACKAGES))
        out = io.StringIO()
        with mock.patch.object(packages.subprocess, "run",
                               side_effect=dpkg({"libclang-rt-14-dev"})), \
                contextlib.redirect_stdout(out):
            self.assertEqual(packages.setup_fuzz(check=True), 1)
        self.assertEqual(out.getvalue(), "setup: missing fuzzing tools: libclang-rt-14-dev\n")

    def test_test_installs_the_cross_groups_its_live_verifies_need(self):
        """test (not only .ci/run) installs what arch_i386_test and
        arch_arm_test build and run with, as it does arm64's."""
        tested = {p for _, names, _, _ in packages.TEST_GROUPS for p in names}
        for arch_name in ("arm64", "i386", "arm"):
            self.assertLessEqual(set(packages.CROSS_PACKAGES[arch_name]), tested, arch_name)

    def test_trap_vm_group_is_asked_for_only(self):
        """setup --trap-vm: qemu's system emulator, which neither setup nor
        test installs (verify/trap_vm.sh asks for it)."""
        self.assertFalse(set(packages.TRAP_VM_PACKAGES) & set(packages.PACKAGES))
        self.assertFalse(set(packages.TRAP_VM_PACKAGES)
                         & {p for _, names, _, _ in packages.TEST_GROUPS for p in names})
        out = io.StringIO()
        with mock.patch.object(packages.subprocess, "run",
                               side_effect=dpkg({"busybox-static"})), \
                contextlib.redirect_stdout(out):
            self.assertEqual(packages.setup_trap_vm(check=True), 1)
        self.assertEqual(out.getvalue(),
                         "setup: missing the trap's emulator: busybox-static\n")


if __name__ == "__main__":
    unittest.main()
