import os
import pwd
import shutil
import subprocess
import unittest
from pathlib import Path

LAUNCHER = Path(__file__).resolve().parents[2] / "vdsobench"


def run(*args):
    return subprocess.run([str(LAUNCHER), *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


class OneLine(unittest.TestCase):
    def assert_one_line_usage_error(self, r, *needles):
        self.assertEqual(r.returncode, 2)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("vdsobench: error: "), r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        for needle in needles:
            self.assertIn(needle, lines[0])


class UsageTest(OneLine):
    def test_bogus_flag(self):
        self.assert_one_line_usage_error(run("--bogus"), "--bogus")

    def test_bogus_subcommand_flag(self):
        self.assert_one_line_usage_error(run("list", "--bogus"), "--bogus")

    def test_unknown_command(self):
        self.assert_one_line_usage_error(run("frobnicate"), "frobnicate", "verify")

    def test_no_command(self):
        self.assert_one_line_usage_error(run(), "setup", "test")

    def test_bad_duration(self):
        self.assert_one_line_usage_error(run("verify", "--duration-ms", "-5"), "-5")

    def test_help_lists_commands(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0)
        for command in ("setup", "list", "verify", "test"):
            self.assertRegex(r.stdout, rf"\n\s+{command}\s+\S")
        for command in ("setup", "list", "verify", "test"):
            self.assertEqual(run(command, "--help").returncode, 0)


def root_can(*probe):
    """None where this root process can run probe (unshare, setpriv), else why not."""
    if os.geteuid() != 0:
        return "needs root"
    if not shutil.which(probe[0]):
        return f"{probe[0]} is not installed"
    r = subprocess.run(list(probe), capture_output=True, text=True)
    return None if r.returncode == 0 else f"{' '.join(probe)}: {r.stderr.strip()}"


class EnvironmentTest(OneLine):
    """A machine Bazel cannot run on: one line saying what is wrong and what to
    do, exit 2, never Bazel's FATAL alone."""

    def test_proc_not_mounted(self):
        why = root_can("unshare", "-m", "sh", "-c", "umount -l /proc")
        if why:
            self.skipTest(why)
        r = subprocess.run(["unshare", "-m", "sh", "-c", f"umount -l /proc && exec {LAUNCHER} "
                            "list"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        self.assert_one_line_usage_error(r, "/proc is not mounted", "mount -t proc")

    def test_a_user_who_cannot_write_bazels_output_root(self):
        """setpriv to nobody, HOME still root's: Bazel's output root is root's."""
        why = root_can("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                       str(LAUNCHER), "--help")
        if why:
            self.skipTest(why)
        home = pwd.getpwuid(0).pw_dir
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            str(LAUNCHER), "list"], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, env=dict(os.environ, HOME=home),
                           cwd="/")
        self.assert_one_line_usage_error(r, f"{home}/.cache/bazel", "cannot write",
                                         "uid 65534", "HOME")


if __name__ == "__main__":
    unittest.main()
