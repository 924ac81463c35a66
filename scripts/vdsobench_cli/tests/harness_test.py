"""measure/harness.py: a Selection is a frozen value that spells the harness's
options as `run`'s own parsed options do, so a library asks for rounds without
building another command's namespace."""

import dataclasses
import unittest

from vdsobench_cli import main
from vdsobench_cli.measure import harness, rounds


class SelectionTest(unittest.TestCase):
    def test_lists_become_tuples_and_it_is_frozen(self):
        s = harness.Selection(clocks=["monotonic", "realtime"], modes=["hot"])
        self.assertEqual((s.clocks, s.modes, s.cpus), (("monotonic", "realtime"), ("hot",), None))
        with self.assertRaises(dataclasses.FrozenInstanceError):
            s.clocks = ("tai",)
        self.assertEqual(s, harness.Selection(clocks=("monotonic", "realtime"), modes=("hot",)))

    def test_spelled_as_the_harness_takes_it(self):
        s = harness.Selection(clocks=("monotonic", "tai"), modes=("hot",), cpus="3",
                              no_pin=True)
        self.assertEqual(rounds.harness_args(["a+b+c", "floor/empty"], s),
                         ["--variants", "a+b+c,floor/empty", "--clocks", "monotonic,tai",
                          "--modes", "hot", "--cpus", "3", "--no-pin"])
        # None and an empty list alike are left to the harness's defaults
        self.assertEqual(rounds.harness_args(["x"], harness.Selection(clocks=[], modes=None)),
                         ["--variants", "x"])

    def test_the_same_options_as_compare_parses(self):
        args = main.parser().parse_args(["compare", "a+b+c", "d+e+f", "--clocks", "monotonic",
                                         "--modes", "hot,pressure", "--cpus", "1"])
        chosen = harness.Selection(clocks=("monotonic",), modes=("hot,pressure",), cpus="1")
        self.assertEqual(rounds.harness_args(["a+b+c"], chosen),
                         rounds.harness_args(["a+b+c"], args))


if __name__ == "__main__":
    unittest.main()
