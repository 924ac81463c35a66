"""verify/trap_vm.sh's arguments, without a boot: a bad --arch or CPU model is
one line and exit 2 before anything is installed, built or downloaded; --help
says the usage. The boot itself (minutes of TCG) is never a step of `test`:
docs/verify.md names the runs and what they printed."""

import subprocess
import tempfile
import unittest

from vdsobench_cli.cli import build
from vdsobench_cli.tests.support import one_line

SCRIPT = str(build.ROOT / "verify" / "trap_vm.sh")


def trap_vm(*argv, path=None):
    """(exit status, stdout, stderr); with path, PATH is that folder alone."""
    env = {"PATH": path} if path else None
    r = subprocess.run(["/bin/bash", SCRIPT, *argv], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, env=env, timeout=30)
    return r.returncode, r.stdout, r.stderr


class ArgumentsTest(unittest.TestCase):
    def setUp(self):
        # nothing on PATH: a check that let a value through would go on to
        # setup, bazel and apt-get, and fail otherwise than with 2
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.empty = tmp.name

    def bad(self, argv, *needles):
        rc, out, err = trap_vm(*argv, path=self.empty)
        one_line(self, rc, err, "trap_vm.sh:", *needles)
        self.assertEqual(out, "")

    def test_bad_arch_names_it_and_the_valid_ones(self):
        for value in ("arm64", "", "x86_64; reboot", "i386\nsecond line", "-" * 500):
            self.bad(["--arch", value], "--arch", "x86_64, i386")
        self.bad(["--arch=riscv64"], "'riscv64'", "x86_64, i386")

    def test_arch_without_a_value(self):
        self.bad(["--arch"], "--arch needs a value: x86_64 or i386")

    def test_bad_cpu_names_it(self):
        for value in ("", "max -rdtscp", "max;id", "$(id)", "max\n-rdtscp"):
            self.bad([value], "CPU '", "not a qemu CPU model")
            self.bad(["--arch", "i386", value], "not a qemu CPU model")

    def test_one_cpu_model_and_known_options_only(self):
        self.bad(["max", "max,-rdtscp"], "one CPU model", "usage:")
        self.bad(["--cpu", "max"], "unknown option '--cpu'", "usage:")

    def test_help(self):
        rc, out, err = trap_vm("--help")
        self.assertEqual((rc, err), (0, ""))
        self.assertTrue(out.startswith("usage: verify/trap_vm.sh [--arch x86_64|i386] [CPU]\n"),
                        out)
        self.assertIn("IA32 emulation", out)

    def test_good_arguments_get_past_the_checks(self):
        # the same empty PATH: accepted, it stops at the first tool it needs
        for argv in ([], ["--arch", "i386"], ["--arch=x86-64", "max,-rdtscp"],
                     ["max,+rdtscp,-invtsc", "--arch", "i686"]):
            rc, _, err = trap_vm(*argv, path=self.empty)
            self.assertNotIn(rc, (0, 2), err)
            self.assertFalse([line for line in err.splitlines()
                              if line.startswith("trap_vm.sh:")], err)


if __name__ == "__main__":
    unittest.main()
