"""The cold modes' mechanics end to end with the real harness (bench/cold.h):
what the rounds' lines carry and how they relate (each call's figure is the
calls' mean net of the bracket timed in the same round; floor/empty is the
bracket itself), the eviction recorded in the context, `run`'s names and
counters; and the decisions built on them (the recipes' line cost), on
made-up numbers. No timing is asserted: only how the
figures relate, which holds on any machine."""

import argparse
import contextlib
import io
import json
import os
import tempfile
import unittest

from vdsobench_cli import main
from vdsobench_cli.recipes import line_costs
from vdsobench_cli.measure import rounds
from vdsobench_cli.commands import run
from vdsobench_cli.tests.support import vdsobench

GTOD = "x86_gtod+lfence_rdtsc+always"
MULTSHIFT = "x86_gtod_ts_multshift+lfence_rdtsc+always"
COLD_MODES = ("cold", "cold-l2", "warm")


class RoundsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ns = argparse.Namespace(clocks=["monotonic"], modes=list(COLD_MODES))
        cls.context, cls.groups = rounds.measure(
            rounds.binary(), rounds.harness_args([GTOD, "floor/empty"], ns), 3, 0.2,
            quiet=True)

    def test_a_group_per_mode_with_every_round(self):
        keys = sorted("/".join(g.key.row) for g in self.groups)
        self.assertEqual(keys, sorted([f"monotonic/{m}" for m in COLD_MODES]
                                      + [f"none/{m}" for m in COLD_MODES]))
        for g in self.groups:
            self.assertFalse(g.errors, g.key)
            for who, per_round in g.ns.items():
                self.assertEqual(sorted(per_round), [0, 1, 2], (g.key, who))
                self.assertEqual(sorted(g.cold[who]), [0, 1, 2], (g.key, who))

    def test_the_bracket_is_subtracted(self):
        for g in self.groups:
            for (subject, copy), per_round in g.ns.items():
                for r, ns in per_round.items():
                    cold = g.cold[(subject, copy)][r]
                    if subject == "floor/empty":
                        # the bracket itself: its own calls, nothing taken off
                        self.assertAlmostEqual(ns, cold["raw_ns"], places=5)
                    else:
                        self.assertAlmostEqual(ns, cold["raw_ns"] - cold["bracket_ns"],
                                               places=5, msg=(g.key, r))
                    self.assertGreater(cold["bracket_ns"], 0)

    def test_the_bracket_is_the_rounds_own(self):
        """Every subject of a round is net of the same bracket batch."""
        for g in self.groups:
            for r in range(3):
                brackets = {g.cold[who][r]["bracket_ns"] for who in g.cold}
                self.assertEqual(len(brackets), 1, (g.key, r))

    def test_each_call_timed_and_summarized(self):
        for g in self.groups:
            for who, per_round in g.cold.items():
                for cold in per_round.values():
                    self.assertEqual(cold["calls"], g.iterations)
                    self.assertLessEqual(cold["kept"], cold["calls"])
                    self.assertGreater(cold["kept"], 0)
                    self.assertLessEqual(cold["min_ns"], cold["p10_ns"])
                    self.assertLessEqual(cold["p10_ns"], cold["median_ns"])
                    self.assertLessEqual(cold["median_ns"], cold["p90_ns"])

    def test_the_eviction_is_recorded(self):
        cold = self.context["pinning"]["cold"]
        self.assertEqual(cold["loads_per_way"], 2)
        self.assertEqual(cold["span"], self.context["pinning"]["pressure_span"])
        self.assertGreater(cold["stack_offset"], cold["span"])
        for cpu, c in cold["cpus"].items():
            if c["l1d_ways"]:
                self.assertEqual(c["cold_pages"], 2 * c["l1d_ways"], cpu)
            if c["l2_bytes"] and c["l2_ways"]:
                self.assertGreaterEqual(c["cold_l2_pages"] * 4096, 2 * c["l2_bytes"], cpu)


class RunTest(unittest.TestCase):
    def test_names_and_counters(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "cold.json")
            rc, out, err = vdsobench("run", "--variants", f"{GTOD},floor/empty", "--clocks",
                                     "monotonic", "--modes", "cold,warm", "--out", path,
                                     "--min-time", "0.002", "--repetitions", "1", "--quiet")
            self.assertEqual(rc, 0, err)
            with open(path) as f:
                data = json.load(f)
        names = {b["name"] for b in data["benchmarks"]}
        cpu = data["context"]["vdsobench"]["pinning"]["cpus"][0]
        self.assertEqual(names, {f"{s}/{c}/{m}/cpu{cpu}" for s, c in
                                 ((GTOD, "monotonic"), ("floor/empty", "none"))
                                 for m in ("cold", "warm")})
        for b in data["benchmarks"]:
            for key in ("cold_raw_ns", "cold_bracket_ns", "cold_median_ns", "cold_kept"):
                self.assertIn(key, b, b["name"])
            if b["name"].startswith("floor/empty"):
                self.assertAlmostEqual(b["real_time"], b["cold_bracket_ns"], places=3)
        self.assertNotIn("cold_raw_ns", out, "the cold counters are not perf events")

    def test_plain_names(self):
        data = {"benchmarks": [{"name": "a/monotonic/cold/cpu1/iterations:1234/manual_time",
                                "run_name": "a/monotonic/cold/cpu1/iterations:1234/manual_time"},
                               {"name": "a/monotonic/hot/cpu1", "run_name": "a/monotonic/hot/cpu1"}]}
        run.plain_names(data)
        self.assertEqual([b["name"] for b in data["benchmarks"]],
                         ["a/monotonic/cold/cpu1", "a/monotonic/hot/cpu1"])
        self.assertEqual(data["benchmarks"][0]["run_name"], "a/monotonic/cold/cpu1")

    def test_help_names_the_modes(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(SystemExit) as done:
            main.main(["run", "--help"])
        self.assertEqual(done.exception.code, 0)
        for mode in COLD_MODES:
            self.assertIn(f"  {mode} ", out.getvalue())


def comparison(cold, warm, rounds_n=12):
    """A comparison's per-round times: cold and warm {(variant, clock): ns}, the
    same in every round but for a small alternating wobble."""
    out = {"rounds": {}}
    for mode, times in (("cold", cold), ("warm", warm)):
        for (variant, clock), ns in times.items():
            per = {r: ns + (0.01 if r % 2 else -0.01) * (variant == MULTSHIFT)
                   for r in range(rounds_n)}
            out["rounds"].setdefault(f"{clock}/{mode}/cpu1", {})[f"{variant}#0"] = per
    return out


class LineCostTest(unittest.TestCase):
    def test_the_lines_own_cost_is_cold_minus_warm(self):
        c = comparison(cold={(GTOD, "monotonic"): 26.0, (MULTSHIFT, "monotonic"): 30.0},
                       warm={(GTOD, "monotonic"): 22.0, (MULTSHIFT, "monotonic"): 22.5})
        m, lo, hi = line_costs.lines_cost(c, "monotonic", GTOD, MULTSHIFT)
        self.assertAlmostEqual(m, 3.5)
        self.assertTrue(lo <= 3.5 <= hi)

    def test_beyond_a_control_clock(self):
        """A cost both clocks share (where the pages landed) cancels; the line's stays."""
        c = comparison(cold={(GTOD, "monotonic"): 26.0, (MULTSHIFT, "monotonic"): 28.5,
                             (GTOD, "realtime"): 26.0, (MULTSHIFT, "realtime"): 27.0},
                       warm={(GTOD, "monotonic"): 22.0, (MULTSHIFT, "monotonic"): 22.5,
                             (GTOD, "realtime"): 22.0, (MULTSHIFT, "realtime"): 22.5})
        self.assertAlmostEqual(line_costs.lines_cost(c, "realtime", GTOD, MULTSHIFT)[0], 0.5)
        m, lo, hi = line_costs.beyond_control(c, "monotonic", "realtime", GTOD, MULTSHIFT)
        self.assertAlmostEqual(m, 1.5)
        self.assertGreater(lo, 0)

    def test_per_line_fit(self):
        cells = [{"misses": 1, "lines_cost": {r: 4.0 + 0.1 * (r % 3) for r in range(12)}},
                 {"misses": 2, "lines_cost": {r: 8.0 for r in range(12)}},
                 {"misses": 0, "lines_cost": {r: 0.7 for r in range(12)}}]
        m, lo, hi, n = line_costs.per_line_fit(cells)
        self.assertEqual(n, 2, "the cells whose misses differ")
        self.assertAlmostEqual(m, (4.1 + 16) / 5)
        self.assertLessEqual(lo, m)
        self.assertGreaterEqual(hi, m)
        self.assertEqual(line_costs.per_line_fit(cells[2:])[3], 0)

    def test_net_of_a_layouts_controls(self):
        cells = [{"variant": "a", "misses": 1, "lines": 1, "lines_cost": {0: 1.2, 1: 1.4}},
                 {"variant": "a", "misses": 0, "lines": 0, "lines_cost": {0: 1.0, 1: 1.0}},
                 {"variant": "a", "misses": 0, "lines": 0, "lines_cost": {0: 1.0, 1: 1.2}},
                 {"variant": "b", "misses": 1, "lines": 1, "lines_cost": {0: 3.0, 1: 3.0}},
                 {"variant": "b", "misses": 0, "lines": 1, "lines_cost": {0: 0.5, 1: 0.5}}]
        line_costs.net_of_controls(cells)
        self.assertAlmostEqual(cells[0]["net"][0], 0.2)
        self.assertAlmostEqual(cells[0]["net"][1], 0.3)
        self.assertEqual(cells[3]["net"], {0: 3.0, 1: 3.0},
                         "b has no cell whose lines and misses agree: its own")

    def test_differences_of_either_sign(self):
        m, lo, hi = line_costs.median_with_ci([-1.0, -0.5, 0.0, 0.5, 1.0, -2.0, 2.0, 0.1, -0.1])
        self.assertEqual(m, 0.0)
        self.assertTrue(lo < 0 < hi)
        self.assertEqual(line_costs.median_with_ci([-1.0, 1.0])[1:], (None, None),
                         "too few for an interval")

    def test_a_free_line(self):
        c = comparison(cold={(GTOD, "monotonic"): 26.0, (MULTSHIFT, "monotonic"): 26.6},
                       warm={(GTOD, "monotonic"): 22.0, (MULTSHIFT, "monotonic"): 22.6})
        m, _, _ = line_costs.lines_cost(c, "monotonic", GTOD, MULTSHIFT)
        self.assertAlmostEqual(m, 0.0)
        self.assertEqual(line_costs.per_round_difference(c, "realtime", "cold", GTOD, MULTSHIFT),
                         {}, "a clock not measured: no rounds")


if __name__ == "__main__":
    unittest.main()
