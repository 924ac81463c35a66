"""The footprint mode end to end with the real harness (bench/footprint.h):
what each batch's "footprint" object carries and how its figures relate (the
lines probed, their sets, the chain, the subtraction, the division), and the
known difference selftest-stats checks, on made-up rounds. No timing is
asserted: only how the figures relate, which holds on any machine."""

import argparse
import os
import platform
import unittest

from vdsobench_cli.measure import footprint, rounds
from vdsobench_cli.tests import support

from vdsobench_cli.core import vocab

GTOD = "x86_gtod+lfence_rdtsc+always"
MULTSHIFT = "x86_gtod_ts_multshift+lfence_rdtsc+always"
NOISE = "cost the walk nothing measurable"


class RoundsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ns = argparse.Namespace(clocks=["monotonic", "realtime"], modes=["footprint"])
        cls.context, cls.groups = rounds.measure(
            rounds.binary(), rounds.harness_args([GTOD, MULTSHIFT], ns), 2, 3, quiet=True)

    def records(self):
        for g in self.groups:
            for (subject, _), per_round in g.footprint.items():
                for r, rec in per_round.items():
                    yield g, subject, r, rec

    def test_every_batch_has_its_object(self):
        self.assertEqual(sorted(g.clock for g in self.groups), ["monotonic", "realtime"])
        for g in self.groups:
            # the one error timing may cause: controls flattened by noise (a
            # loaded machine); any other is a fault
            for who, err in g.errors.items():
                self.assertIn(NOISE, err, (g.key, who))
            self.assertTrue(g.ns, g.key)
            for who, per_round in g.ns.items():
                self.assertEqual(sorted(g.footprint[who]), sorted(per_round), (g.key, who))

    @unittest.skipUnless(platform.machine() == "x86_64", "the probe single-steps on x86-64")
    def test_the_probe_finds_layouts_lines(self):
        # vdsobench layout x86_gtod x86_gtod_ts_multshift: MONOTONIC's base at
        # 48..71 in the second, REALTIME's in line 0 in both
        want = {("monotonic", GTOD): [0], ("monotonic", MULTSHIFT): [0, 64],
                ("realtime", GTOD): [0], ("realtime", MULTSHIFT): [0]}
        for g, subject, r, rec in self.records():
            self.assertEqual(rec["probe"], "fault")
            self.assertEqual(rec["data_lines"], want[(g.clock, subject)], (g.key, subject))

    def test_the_chain_covers_the_sets_ways_deep(self):
        for g, subject, r, rec in self.records():
            sets = sorted({off // 64 % rec["l1d_sets"] for off in rec["data_lines"]})
            self.assertEqual(rec["sets"], sets)
            self.assertEqual(rec["chain_lines"], len(sets) * rec["l1d_ways"])

    def test_the_figures_relate(self):
        for g, subject, r, rec in self.records():
            self.assertAlmostEqual(g.ns[(subject, 0)][r], rec["net_ns"], places=5)
            self.assertAlmostEqual(rec["walk_net_ns"], rec["walk_ns"] - rec["walk_alone_ns"],
                                   places=4)
            self.assertEqual(rec["walk_alone_ns"], rec["controls_walk_ns"][0])
            self.assertEqual(len(rec["controls_walk_ns"]), 4)
            self.assertGreater(rec["line_ns"], 0)
            self.assertAlmostEqual(rec["lines_displaced"], rec["walk_net_ns"] / rec["line_ns"],
                                   delta=1e-3 + 1e-5 * abs(rec["lines_displaced"]))
            self.assertGreater(rec["kept"], 0)


def series(clock, per_subject):
    """A footprint group: per_subject {subject: (ns, walk_net, lines)} in every
    round, with a wobble that alternates."""
    g = rounds.Series(vocab.GroupKey(clock, "footprint", 1), 320)
    for subject, (ns, walk, lines) in per_subject.items():
        for r in range(12):
            w = 0.05 if r % 2 else -0.05
            g.ns.setdefault((subject, 0), {})[r] = ns + w
            g.footprint.setdefault((subject, 0), {})[r] = {
                "walk_net_ns": walk + w, "line_ns": 4.0, "lines_displaced": lines}
    return g


PAIR = footprint.PAIR


class KnownDifferenceTest(unittest.TestCase):
    def test_median_ci_of_either_sign(self):
        values = [-3.0, -1.0, 2.0, 0.5, -0.5, 1.5, 4.0, -2.0, 3.0, 1.0]
        shifted = footprint.stats.median_ci([v + 10 for v in values])
        lo, hi = footprint.median_ci(values)
        self.assertAlmostEqual(lo, shifted[0] - 10)
        self.assertAlmostEqual(hi, shifted[1] - 10)
        self.assertLess(lo, 0)

    def test_negative_differences_have_an_interval(self):
        groups = [series("monotonic", {PAIR[0]: (30, 8, 2), PAIR[1]: (26, 4, 1)}),
                  series("realtime", {PAIR[0]: (30, 4, 1), PAIR[1]: (30, 4, 1)})]
        r = footprint.extra(groups)
        self.assertLess(r["ci"][1], 0)
        self.assertFalse(footprint.verdict(r)[0], "one line fewer is not one more")

    def test_one_line_more_on_monotonic_passes(self):
        groups = [series("monotonic", {PAIR[0]: (30, 4, 1), PAIR[1]: (35, 8, 2)}),
                  series("realtime", {PAIR[0]: (29, 4, 1), PAIR[1]: (30, 4.2, 1)})]
        r = footprint.extra(groups)
        self.assertAlmostEqual(r["ns"], 3.8)
        self.assertAlmostEqual(r["total_ns"], 4.0)
        self.assertEqual(r["extra_lines"], {"monotonic": 1, "realtime": 0})
        ok, lines = footprint.verdict(r)
        self.assertTrue(ok, lines)
        self.assertIn("0.95 lines of 4.00 ns", lines[0])

    def test_the_code_alone_cancels_and_is_missed(self):
        # B costs the walk 2 ns more on both clocks: no line, only code
        groups = [series("monotonic", {PAIR[0]: (30, 4, 1), PAIR[1]: (32, 6, 1)}),
                  series("realtime", {PAIR[0]: (30, 4, 1), PAIR[1]: (32, 6, 1)})]
        ok, lines = footprint.verdict(footprint.extra(groups))
        self.assertFalse(ok)
        self.assertIn("includes 0: MISSED", lines[0])

    def test_two_lines_do_not_match_one(self):
        groups = [series("monotonic", {PAIR[0]: (30, 4, 1), PAIR[1]: (40, 12, 3)}),
                  series("realtime", {PAIR[0]: (30, 4, 1), PAIR[1]: (30, 4, 1)})]
        ok, lines = footprint.verdict(footprint.extra(groups))
        self.assertFalse(ok)
        self.assertIn("not one line", lines[0])

    def test_realtime_displacing_a_line_is_missed(self):
        groups = [series("monotonic", {PAIR[0]: (30, 4, 1), PAIR[1]: (40, 12, 3)}),
                  series("realtime", {PAIR[0]: (30, 4, 1), PAIR[1]: (34, 8, 2)})]
        ok, lines = footprint.verdict(footprint.extra(groups))
        self.assertFalse(ok)
        self.assertIn("REALTIME's extra lines", lines[-1])

    def test_a_missing_clock_or_too_few_rounds_fail(self):
        ok, lines = footprint.verdict(footprint.extra(
            [series("monotonic", {PAIR[0]: (30, 4, 1), PAIR[1]: (35, 8, 2)})]))
        self.assertFalse(ok)
        self.assertIn("not both measured", lines[0])
        few = [series("monotonic", {PAIR[0]: (30, 4, 1), PAIR[1]: (35, 8, 2)}),
               series("realtime", {PAIR[0]: (30, 4, 1), PAIR[1]: (30, 4, 1)})]
        for g in few:
            for per in list(g.ns.values()) + list(g.footprint.values()):
                for r in range(3, 12):
                    del per[r]
        ok, lines = footprint.verdict(footprint.extra(few))
        self.assertFalse(ok)
        self.assertIn("too few", lines[0])


class ComparisonTest(unittest.TestCase):
    """What compare keeps of the batches, and the recipes' verdict from it."""

    def comparison(self, extra_walk):
        groups = [series("monotonic", {PAIR[0]: (30, 4, 1), PAIR[1]: (35, 4 + extra_walk, 2)}),
                  series("realtime", {PAIR[0]: (29, 4, 1), PAIR[1]: (30, 4.2, 1)})]
        for g in groups:
            for per in g.footprint.values():
                for rec in per.values():
                    rec["data_lines"] = [0]
                    rec["probe"] = "fault"
                    rec["kept_out"] = 1
        return footprint.comparison_part(groups)

    def test_kept_fields_with_string_rounds(self):
        c = self.comparison(4)
        rec = c["footprint"]["monotonic/footprint/cpu1"][f"{PAIR[1]}#0"]["3"]
        self.assertEqual(sorted(rec), sorted(footprint.KEPT))
        self.assertEqual(footprint.comparison_part([rounds.Series(vocab.GroupKey("x", "hot", 1), 1)]), {})

    def test_recipe_sees_the_line(self):
        lines = footprint.recipe_lines(self.comparison(4), *PAIR)
        self.assertIn("4.00 ns here", lines[0])
        mono = next(x for x in lines if x.startswith("  MONOTONIC"))
        self.assertIn("1.00 -> 2.00", mono)
        self.assertIn("+3.80 ns", mono)
        self.assertIn("the caller pays for it", mono)

    def test_recipe_without_the_line(self):
        lines = footprint.recipe_lines(self.comparison(0.2), *PAIR)
        mono = next(x for x in lines if x.startswith("  MONOTONIC"))
        self.assertIn("not seen", mono)
        self.assertEqual(footprint.recipe_lines({}, *PAIR), ["footprint: not measured"])


def path(clock, loads, kind="coarse"):
    """One of layout's traced paths, as its JSON has it."""
    return {"path": clock, "clock": clock, "mode": "hot", "kind": kind,
            "loads": [{"offset": o, "size": n, "count": 1} for o, n in loads]}


BASE = [{"name": "seq", "offset": 0, "size": 4},
        {"name": "basetime[CLOCK_REALTIME_COARSE]", "offset": 120, "size": 16}]


class ProbeTest(unittest.TestCase):
    """What the probe records against layout's lines, from loads alone."""

    def test_a_load_that_straddles(self):
        p = footprint.predicted_probe(path("realtime_coarse", [(0, 4), (120, 16)]), BASE)
        self.assertEqual((p["probe"], p["lines"], p["layout"]), ("fault", [0, 64], [0, 64, 128]))
        self.assertEqual(p["why"], [
            "REALTIME_COARSE: basetime[CLOCK_REALTIME_COARSE]'s 16-byte load at 120..135 "
            "straddles lines 1 and 2: a fault gives its first byte, so the probe records "
            "line 1 only, not 2"])

    def test_a_field_that_straddles_read_in_two_loads(self):
        """ts_multshift's MONOTONIC base at 48..71, sec and nsec loaded apart:
        each load's first byte is on its own line, and the probe sees both."""
        p = footprint.predicted_probe(path("monotonic", [(0, 4), (48, 8), (64, 8)], "hres"))
        self.assertEqual((p["lines"], p["layout"], p["why"]), ([0, 64], [0, 64], []))

    def test_a_straddle_whose_second_line_another_load_reads(self):
        p = footprint.predicted_probe(path("realtime_coarse", [(120, 16), (128, 8)]))
        self.assertEqual((p["lines"], p["why"]), ([64, 128], []))

    def test_a_syscall_loads_nothing(self):
        p = footprint.predicted_probe(path("boottime", [], "syscall"))
        self.assertEqual((p["probe"], p["lines"], p["layout"]),
                         ("span", list(range(0, 1024, 64)), []))
        self.assertIn("BOOTTIME: a syscall that loads none of its data", p["why"][0])

    def test_a_measured_probe_checked(self):
        strad = path("realtime_coarse", [(0, 4), (120, 16)])
        self.assertEqual(footprint.check_probe(path("realtime", [(0, 4), (40, 16)], "hres"),
                                               {"probe": "fault", "data_lines": [0]}),
                         (True, None))
        agrees, why = footprint.check_probe(strad, {"probe": "fault", "data_lines": [0, 64]},
                                            BASE)
        self.assertTrue(agrees)
        self.assertIn("basetime[CLOCK_REALTIME_COARSE]'s 16-byte load", why)
        agrees, why = footprint.check_probe(strad, {"probe": "fault", "data_lines": [64]})
        self.assertFalse(agrees)
        self.assertIn("unexplained", why)
        agrees, _ = footprint.check_probe(strad, {"probe": "span: the probe failed: EPERM",
                                                  "data_lines": list(range(0, 1024, 64))})
        self.assertFalse(agrees)

    def test_the_recipe_names_each_difference(self):
        c = ComparisonTest().comparison(4)
        paths = {(PAIR[0], "monotonic"): (path("monotonic", [(0, 4), (56, 8)], "hres"), []),
                 (PAIR[1], "monotonic"): (path("monotonic", [(0, 4), (56, 16)], "hres"), []),
                 (PAIR[0], "realtime"): (path("realtime", [(64, 8)], "hres"), [])}
        lines = footprint.recipe_lines(c, *PAIR, paths=paths)
        said = [x.strip() for x in lines if x.startswith("    ")]
        # PAIR[1]'s 16-byte load at 56 straddles: the probe's [0] is explained;
        # PAIR[0]'s REALTIME loads line 1 only, and a probe of line 0 is not
        self.assertEqual(len(said), 2, lines)
        self.assertTrue(said[0].startswith(f"{PAIR[1]}: MONOTONIC: 16-byte load at 56..71 "
                                           "straddles lines 0 and 1"), said)
        self.assertTrue(said[1].startswith(f"{PAIR[0]}: MISMATCH: REALTIME: the probe found"),
                        said)
        self.assertFalse(any("on all" in x for x in lines), lines)
        agree = {k: (path(k[1], [(0, 4)], "hres"), []) for k in
                 [(v, c) for v in PAIR for c in ("monotonic", "realtime")]}
        self.assertEqual(footprint.recipe_lines(c, *PAIR, paths=agree)[-1],
                         "  the probes found the lines layout traces, on all 4 paths")


@unittest.skipIf(os.environ.get(support.NESTED), "names the committed layouts; the new-variant "
                 "copy has one more")
class CommittedLayoutsTest(unittest.TestCase):
    """Every committed layout's clock_gettime() paths traced under lackey (about
    20 s): the probe's lines differ from layout's on exactly the paths measured
    on Emerald Rapids (docs/measurements.md), each explained: the syscalls, and
    with the plain line the straddling loads."""

    def test_every_difference_is_predicted(self):
        import shutil
        from vdsobench_cli.cli import build, labels, variants
        from vdsobench_cli.measure import layouts
        if shutil.which("valgrind") is None:
            self.skipTest("no valgrind (scripts/vdsobench setup installs it)")
        build.build([labels.VERIFY, labels.LAYOUT_DRIVER])
        registry = variants.load()
        chosen = layouts.resolve([x for x in variants.axis_values(registry, "layout")
                                 if not x.startswith("kernel:")], registry)
        traced = layouts.measure(chosen, build.binary_path(labels.LAYOUT_DRIVER), 2,
                                clocks=vocab.CLOCKS)
        maps = [{"variant": v["name"], "fields": v["fields"], "paths": traced[v["name"]]}
                for v in chosen]
        # from the table, not a count: a layout added the documented way is one
        # more map, traced on every clock, and adds no difference of its own
        # unless its code differs from those named below
        names = {x for x in variants.axis_values(registry, "layout")
                 if not x.startswith("kernel:")}
        self.assertEqual({m["variant"].split("+")[0] for m in maps}, names)
        for m in maps:
            self.assertEqual(len(m["paths"]), len(vocab.CLOCKS), m["variant"])
        got = {(v.split("+")[0], clock): why for v, clock, why in
               footprint.probe_differences(maps)}
        # a clock a layout's masks leave to the kernel loads none of its data
        # (today x86_gtod's BOOTTIME and MONOTONIC_RAW, and BOOTTIME of the
        # three x86_gtod_* proposals): from the registry, so a clock added as
        # one row that no layout serves is one more syscall on each
        syscalls = [(v["name"].split("+")[0], c) for v in chosen for c in vocab.CLOCKS
                    if layouts.expected_kind(v, c) == "syscall"]
        self.assertIn(("x86_gtod", "monotonic_raw"), syscalls)
        # the plain line copies REALTIME_COARSE's timestamp with one 16-byte SSE
        # load; the kernel's line (-mno-sse) with two 8-byte ones, which the
        # probe sees as layout does
        from vdsobench_cli.cli import arch
        straddles = [(x, "realtime_coarse") for x in (
            "generic_6_10", "generic_6_15", "generic_6_17", "x86_gtod_raw_branch",
            "x86_gtod_raw_copy")] if arch.layouts_line() == "plain" else []
        self.assertEqual(sorted(got), sorted(syscalls + straddles))
        for key in syscalls:
            self.assertIn("a syscall that loads none of its data", got[key])
        for key in straddles:
            # 6.15 nests the bases: clock_data[CS_HRES_COARSE].basetime[...]
            self.assertRegex(got[key], r"^REALTIME_COARSE: (\S+\.)?basetime\[CLOCK_REALTIME_"
                             r"COARSE\]'s 16-byte load at 120\.\.135 straddles lines 1 and 2")


if __name__ == "__main__":
    unittest.main()
