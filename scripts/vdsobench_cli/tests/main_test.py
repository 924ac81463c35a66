import subprocess
import unittest
from pathlib import Path

LAUNCHER = Path(__file__).resolve().parents[2] / "vdsobench"


def run(*args):
    return subprocess.run([str(LAUNCHER), *args], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


class UsageTest(unittest.TestCase):
    def assert_one_line_usage_error(self, r, *needles):
        self.assertEqual(r.returncode, 2)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("vdsobench: error: "), r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        for needle in needles:
            self.assertIn(needle, lines[0])

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


if __name__ == "__main__":
    unittest.main()
