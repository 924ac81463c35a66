"""cli/limited_run.py: the limits reach the child, input goes in, and a
program past its wall-clock time is stopped (None), not waited for."""

import sys
import unittest

from vdsobench_cli.cli.limited_run import limited_run

LIMITS = {"as": 2 << 30, "cpu": 60, "fsize": 4096}


class LimitedRunTest(unittest.TestCase):
    def test_output_and_input(self):
        r = limited_run([sys.executable, "-c", "import sys; print(sys.stdin.read()[::-1])"],
                        LIMITS, 60, input=b"abc")
        self.assertEqual((r.returncode, r.stdout), (0, b"cba\n"))

    def test_stdin_is_empty_without_input(self):
        r = limited_run([sys.executable, "-c", "import sys; print(len(sys.stdin.read()))"],
                        LIMITS, 60)
        self.assertEqual(r.stdout, b"0\n")

    def test_the_limits_are_the_childs(self):
        r = limited_run([sys.executable, "-c", "import resource; print("
                         "resource.getrlimit(resource.RLIMIT_FSIZE)[0], "
                         "resource.getrlimit(resource.RLIMIT_CPU)[0])"], LIMITS, 60)
        self.assertEqual(r.stdout.split(), [b"4096", b"60"])

    def test_past_its_time_it_is_stopped(self):
        self.assertIsNone(limited_run(["sleep", "30"], LIMITS, 0.2))


if __name__ == "__main__":
    unittest.main()
