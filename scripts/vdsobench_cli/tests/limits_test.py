"""core/limits.py: the lost-CPU rule's edge, and the commands' defaults taken
from it (a default typed again elsewhere would drift from the rule)."""

import unittest

from vdsobench_cli.core import limits
from vdsobench_cli.tests.support import cli


class LostTooOftenTest(unittest.TestCase):
    def test_the_edge_is_more_than_max_lost(self):
        self.assertFalse(limits.lost_too_often(4, 40))
        self.assertTrue(limits.lost_too_often(5, 40))
        self.assertFalse(limits.lost_too_often(0, 0))
        self.assertTrue(limits.lost_too_often(1, 9, max_lost=0.1))
        self.assertFalse(limits.lost_too_often(1, 10, max_lost=0.1))


class DefaultsTest(unittest.TestCase):
    def test_compare_and_gate_say_the_limits_in_their_help(self):
        for command in ("compare", "gate", "selftest-stats"):
            code, out, _ = cli(command, "--help")
            self.assertEqual(code, 0, command)
            self.assertIn(f"(default {limits.ALPHA};", " ".join(out.split()), command)
        code, out, _ = cli("compare", "--help")
        self.assertIn(f"(default {limits.ROUNDS};", " ".join(out.split()))


if __name__ == "__main__":
    unittest.main()
