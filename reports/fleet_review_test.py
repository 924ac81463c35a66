"""The cluster patch review's reduction and text, from synthetic rounds only:
seeded random.Random draws (stats.simulate_rounds), no timing of this machine."""

import dataclasses
import random
import re
import unittest

from reports import fleet_review, fleet_review_text, review
from reports.testsupport import paired_rounds
from vdsobench_cli.core import limits, paired, stats, vocab
from vdsobench_cli.core.errors import UsageError
from vdsobench_cli.core.text import printable

# a reply's rows: seven clocks, which the expectations below count (a clock
# added to the table adds no row to these fixtures)
CLOCKS = vocab.CLOCKS[:7]
ZEN4 = "Zen 4 (AMD EPYC 9654, 25/17/1)"
ZEN3 = "Zen 3 (AMD EPYC 7763, 25/1/1)"
SPR = "Sapphire Rapids (Intel Xeon Platinum 8480+, 6/143/8)"
PASS = (True, "PASS (exact, edges, concurrency)")
TORN = (False, "FAIL: MONOTONIC tore: 1000000000 ns off (concurrency)")
EIGHT = (ZEN4, ZEN3, SPR, "Zen 5 (AMD EPYC 9755, 26/17/0)",
         "Emerald Rapids (Intel Xeon, 6/207/2)", "Granite Rapids (Intel Xeon 6, 6/173/1)",
         "Ice Lake-SP (Intel Xeon Gold 6338, 6/106/6)", "Neoverse V1 (Arm, 8/0xd40/1)")


def record(clock, before_ns, after_ns):
    return paired_rounds((clock, "hot"), before_ns, after_ns)


def node(name, cpu, rng, effect=1.0, n=60, sigma=0.002, counter="rdtscp", clocks=CLOCKS,
         **over):
    """One node's reply; effect is a ratio, or {clock: ratio} (1.0 elsewhere)."""
    rounds = {}
    for clock in clocks:
        e = effect.get(clock, 1.0) if isinstance(effect, dict) else effect
        rounds[(clock, "hot")] = record(clock, *stats.simulate_rounds(rng, n, e, sigma, 0.0))
    out = {"node": name, "cpu": cpu, "counter": counter, "kernel": "6.1.0-13-amd64",
           "hypervisor": None, "verify": {"after": PASS, "before": PASS},
           "rounds": rounds, "failed": None}
    out.update(over)
    return out


def lose(n, clock, lost):
    """n's row of clock (hot) with its first `lost` rounds having lost the CPU."""
    key = (clock, "hot")
    n["rounds"][key] = dataclasses.replace(n["rounds"][key], disturbed=frozenset(range(lost)))


def fleet(spec, seed=1, **kw):
    """[(cpu, count, effect)] -> nodes n1.. in that order."""
    rng, out, i = random.Random(seed), [], 0
    for cpu, count, effect in spec:
        for _ in range(count):
            i += 1
            out.append(node(f"n{i}", cpu, rng, effect, **kw))
    return out


def cells(red, clock, mode="hot"):
    return next(cs for c, m, cs in red["rows"] if (c, m) == (clock, mode))


class ShapeMixin:
    def check_lines(self, lines, width=fleet_review_text.WIDTH, max_lines=fleet_review_text.MAX_LINES):
        self.assertLessEqual(len(lines), max_lines, "\n".join(lines))
        for line in lines:
            self.assertLessEqual(len(line), width, line)
            self.assertEqual(printable(line, None), line)
            self.assertNotIn("\x1b", line)


class ReduceTest(ShapeMixin, unittest.TestCase):
    def test_one_model(self):
        nodes = fleet([(ZEN4, 3, 0.98)])
        red = fleet_review.reduce(nodes)
        self.assertEqual(len(red["models"]), 1)
        m = red["models"][0]
        self.assertEqual((m["cpu"], m["tag"], m["nodes"]), (ZEN4, "Zen 4", ["n1", "n2", "n3"]))
        self.assertEqual([(c, mode) for c, mode, _ in red["rows"]],
                         [(c, "hot") for c in CLOCKS])
        self.assertEqual(red["comparisons"], 7)
        # the cell is review.row over the three nodes' rounds, concatenated
        key = ("monotonic", "hot")
        b = [x for n in nodes for x in n["rounds"][key].before_ns]
        a = [x for n in nodes for x in n["rounds"][key].after_ns]
        self.assertEqual(cells(red, "monotonic")[ZEN4], review.row(b, a, comparisons=7))
        self.assertTrue(all(cs[ZEN4]["verdict"] == "faster" for _, _, cs in red["rows"]))
        self.assertEqual(red["disagree"], [])
        self.assertIsNone(fleet_review_text.status(red))
        lines = fleet_review_text.lines(red)
        self.check_lines(lines)
        text = "\n".join(lines)
        self.assertIn("Zen 4 (AMD EPYC 9654, 25/17/1): 3 nodes n[1-3]", text)
        self.assertIn("verify, before and after on Zen 4's nodes: PASS (exact, edges,", text)
        # one model: the change, its interval and the verdict in one cell
        # every row hot: the clock alone names the row, the legend the mode
        self.assertIn("Legend: hot calls", text)
        self.assertTrue(any(re.match(r"MONOTONIC +-2\.0% \[-2\.\d,-\d\.\d\] faster$", line)
                            for line in lines), text)
        self.assertFalse(any(line.startswith("95% CI %") for line in lines), text)

    def test_two_models_agreeing(self):
        red = fleet_review.reduce(fleet([(ZEN4, 2, 0.98), (ZEN3, 2, 0.98)]))
        self.assertEqual(red["comparisons"], 14)
        self.assertEqual(red["disagree"], [])
        for _, _, cs in red["rows"]:
            self.assertEqual({r["verdict"] for r in cs.values()}, {"faster"})
        lines = fleet_review_text.lines(red)
        self.check_lines(lines)
        self.assertEqual(sum("verify" in line for line in lines), 1)
        head = next(line for line in lines if line.startswith("change"))
        self.assertIn("Zen 4", head)
        self.assertIn("Zen 3", head)
        # two models fit in one table: each cell the change, its interval, the verdict
        self.assertTrue(any(re.fullmatch(r"MONOTONIC +(-2\.\d% \[-2\.\d,-\d\.\d\] faster *){2}",
                                         line) for line in lines), "\n".join(lines))
        self.assertFalse(any(line.startswith("95% CI %") for line in lines))

    def test_two_models_disagreeing(self):
        red = fleet_review.reduce(fleet([(ZEN4, 2, 0.98), (ZEN3, 2, {"monotonic": 1.03})]))
        self.assertEqual(cells(red, "monotonic")[ZEN4]["verdict"], "faster")
        self.assertEqual(cells(red, "monotonic")[ZEN3]["verdict"], "slower")
        # opposite directions first: a block cut short keeps them
        self.assertEqual(red["disagree"][0],
                         "MONOTONIC hot: 2.0% faster on Zen 4, 3.0% slower on Zen 3")
        # the six other clocks disagree the same way: one sentence for them, with
        # the span of each model's change
        self.assertEqual(len(red["disagree"]), 2, red["disagree"])
        self.assertRegex(red["disagree"][1], r"^REALTIME, MONOTONIC_RAW and 4 more clocks "
                                             r"\(hot\): 2\.0% faster on Zen 4, same on Zen 3 "
                                             r"\([-+]0\.0%(\.\.[-+]0\.[01]%)?\)$")
        lines = fleet_review_text.lines(red, max_lines=40)
        self.check_lines(lines, max_lines=40)
        self.assertIn("MONOTONIC hot: 2.0% faster on Zen 4, 3.0% slower on Zen 3", lines)

    def test_every_clock_the_same_way(self):
        red = fleet_review.reduce(fleet([(ZEN4, 2, 0.98), (ZEN3, 2, 1.03)]))
        self.assertEqual(red["disagree"],
                         ["every clock (hot): 2.0% faster on Zen 4, 3.0% slower on Zen 3"])

    def test_no_disagreement_without_two_complete_verdicts(self):
        # Zen 3's rounds are too noisy for a verdict: nothing to disagree with
        rng = random.Random(5)
        nodes = [node("n1", ZEN4, rng, 0.98), node("n2", ZEN3, rng, 1.0, n=20, sigma=0.05)]
        red = fleet_review.reduce(nodes)
        self.assertFalse(cells(red, "monotonic")[ZEN3]["complete"])
        self.assertEqual(red["disagree"], [])
        self.assertTrue(fleet_review_text.status(red).startswith("INCOMPLETE: 7 of 14 cells"))

    def test_a_model_whose_nodes_disagree(self):
        rng = random.Random(2)
        nodes = [node("n1", ZEN4, rng, {"monotonic": 0.97}), node("n2", ZEN4, rng, 1.0)]
        red = fleet_review.reduce(nodes)
        m = red["models"][0]
        self.assertEqual(m["split"], [("monotonic", "hot",
                                       {"faster": ["n1"], stats.NO_DIFFERENCE: ["n2"]})])
        self.assertIn("nodes of Zen 4 disagree on MONOTONIC hot: n1 faster, n2 same",
                      red["disagree"])
        # a node's own row is corrected over rows x the model's nodes
        self.assertEqual(red["node_rows"]["n1"][1][2]["confidence"],
                         stats.corrected_confidence(0.05, 14))
        lines = fleet_review_text.lines(red)
        self.check_lines(lines)
        self.assertIn("Nodes of Zen 4 disagree on MONOTONIC hot: n1 faster, n2 same", lines)

    def test_failed_nodes_are_listed_and_never_pooled(self):
        nodes = fleet([(ZEN4, 3, 0.98)])
        # a failed node's rounds, if it sent any, would pull the cell to slower
        bad = fleet([(ZEN4, 2, 1.5)], seed=9)
        bad[0].update(node="n8", failed="srun: error: n8: task 0: Exited with exit code 1")
        bad[1].update(node="n9", failed="slurmstepd: error: *** JOB 17 CANCELLED ***\nDUE TO TIME")
        red = fleet_review.reduce(nodes + bad)
        self.assertEqual(red["models"][0]["nodes"], ["n1", "n2", "n3"])
        self.assertEqual([f[:2] for f in red["failed"]], [("n8", ZEN4), ("n9", ZEN4)])
        # the why is one line whatever the node wrote
        self.assertEqual(red["failed"][1][2],
                         "slurmstepd: error: *** JOB 17 CANCELLED *** DUE TO TIME")
        self.assertEqual(cells(red, "tai")[ZEN4]["verdict"], "faster")
        key = ("tai", "hot")
        b = [x for n in nodes for x in n["rounds"][key].before_ns]
        a = [x for n in nodes for x in n["rounds"][key].after_ns]
        self.assertEqual(cells(red, "tai")[ZEN4], review.row(b, a, comparisons=7))
        lines = fleet_review_text.lines(red)
        self.check_lines(lines)
        self.assertIn("Failed, not pooled (2 nodes):", lines)
        self.assertIn("  n8 (Zen 4): srun: error: n8: task 0: Exited with exit code 1", lines)

    def test_twenty_failed_nodes_are_grouped_by_reason(self):
        nodes = fleet([(ZEN4, 2, 0.98), (ZEN3, 2, 0.98)])
        for i in range(20):
            nodes.append({"node": f"c{i + 1:02d}", "cpu": ZEN3 if i % 2 else ZEN4,
                          "failed": "node not responding" if i < 14 else "python3 too old"})
        red = fleet_review.reduce(nodes)
        self.assertEqual(len(red["failed"]), 20)
        lines = fleet_review_text.lines(red)
        self.check_lines(lines)
        self.assertIn("Failed, not pooled (20 nodes):", lines)
        self.assertIn("  14 x node not responding: c[01-14] (Zen 3 and Zen 4)", lines)
        self.assertIn("  6 x python3 too old: c[15-20] (Zen 3 and Zen 4)", lines)
        self.assertFalse(any(line.startswith("  c0") for line in lines))
        # squeezed, the failures still get a line saying how many and where
        small = fleet_review_text.lines(red, max_lines=fleet_review_text.MIN_LINES)
        self.check_lines(small, max_lines=fleet_review_text.MIN_LINES)
        self.assertTrue(any("20 nodes failed" in line or "Failed" in line for line in small),
                        "\n".join(small))

    def test_mixed_counters_line_up_by_clock(self):
        rng = random.Random(4)
        nodes = [node("n1", ZEN4, rng, 0.98, counter="rdtscp"),
                 node("n2", SPR, rng, 0.99, counter="lfence_rdtsc"),
                 node("n3", SPR, rng, 0.99, counter="lfence_rdtsc",
                      clocks=("monotonic", "realtime"))]
        red = fleet_review.reduce(nodes)
        self.assertEqual([c for c, _, _ in red["rows"]], list(CLOCKS))
        for _, _, cs in red["rows"]:
            self.assertIsNotNone(cs[ZEN4])
            self.assertIsNotNone(cs[SPR])
        # n3 adds to the rows it has only
        self.assertEqual(cells(red, "monotonic")[SPR]["n"], 120)
        self.assertEqual(cells(red, "tai")[SPR]["n"], 60)
        models = {m["cpu"]: m for m in red["models"]}
        self.assertEqual(models[ZEN4]["counters"], ["rdtscp"])
        self.assertEqual(models[SPR]["counters"], ["lfence_rdtsc"])
        lines = fleet_review_text.lines(red)
        self.check_lines(lines)
        text = " ".join(lines)
        self.assertIn("counter rdtscp", text)
        self.assertIn("counter lfence_rdtsc", text)
        # one row a clock, a cell a model, whatever each one's counter is called
        [tai] = [line for line in lines if re.match(r"TAI ", line)]
        self.assertEqual(len(re.findall(r"faster|slower|same", tai)), 2, tai)

    def test_a_torn_patch_caught_on_one_model_only(self):
        nodes = fleet([(ZEN4, 3, 0.98), (ZEN3, 2, 0.98)])
        nodes[1]["verify"] = {"after": TORN, "before": PASS}
        red = fleet_review.reduce(nodes)
        models = {m["cpu"]: m for m in red["models"]}
        self.assertTrue(models[ZEN4]["caught"])
        self.assertFalse(models[ZEN3]["caught"])
        self.assertEqual(models[ZEN4]["verify"]["after"], (False, TORN[1] + " (on n2 of 3 nodes)"))
        self.assertTrue(all(cs[ZEN4] is None and cs[ZEN3]["complete"]
                            for _, _, cs in red["rows"]))
        self.assertEqual(red["comparisons"], 7)
        self.assertNotIn("n1", red["node_rows"])
        self.assertEqual(fleet_review_text.status(red),
                         "WRONG: the patched tree fails verify on Zen 4; do not post")
        lines = fleet_review_text.lines(red)
        self.check_lines(lines)
        text = " ".join(lines)
        self.assertIn("verify on Zen 4: after FAIL: MONOTONIC tore", text)
        self.assertIn("verify on Zen 3, before and after: PASS", text)
        self.assertIn("Not timed: Zen 4 (the patched tree fails verify there)", text)
        head = next(line for line in lines if line.startswith("change"))
        self.assertNotIn("Zen 4", head)

    def test_rows_that_lost_the_cpu_are_not_pooled(self):
        nodes = fleet([(ZEN4, 2, 0.98)])
        lose(nodes[1], "monotonic", 7)
        red = fleet_review.reduce(nodes)
        self.assertEqual(cells(red, "monotonic")[ZEN4]["n"], 60)
        self.assertEqual(cells(red, "tai")[ZEN4]["n"], 120)
        self.assertEqual(red["node_rows"]["n2"][1][2]["reason"], "lost the CPU too often")
        self.assertEqual(red["notes"], ["lost the CPU too often on 1 row of n2: not pooled"])
        # 6 of 60 is within MAX_LOST: pooled
        self.assertEqual(limits.MAX_LOST, 0.10)
        lose(nodes[1], "monotonic", 6)
        self.assertEqual(cells(fleet_review.reduce(nodes), "monotonic")[ZEN4]["n"], 120)
        lose(nodes[0], "monotonic", 30)
        lose(nodes[1], "monotonic", 30)
        red = fleet_review.reduce(nodes)
        r = cells(red, "monotonic")[ZEN4]
        self.assertFalse(r["complete"])
        self.assertEqual(fleet_review_text.status(red), "INCOMPLETE: 1 of 7 cells without a verdict "
                         "(the CPU was lost too often)")

    def test_many_models_and_a_thousand_nodes(self):
        rng = random.Random(7)
        nodes = [node(f"n{i + 1:04d}", EIGHT[i % 8], rng, 0.99 + 0.005 * (i % 8 % 3), n=40,
                      sigma=0.01, counter="lfence_rdtsc" if i % 8 == 2 else "rdtscp")
                 for i in range(1000)]
        for i in range(0, 1000, 97):
            nodes[i]["failed"] = "node not responding"
        red = fleet_review.reduce(nodes)
        self.assertEqual(len(red["models"]), 8)
        self.assertEqual(len(red["failed"]), 11)
        self.assertEqual(sum(len(m["nodes"]) for m in red["models"]), 989)
        self.assertEqual(red["comparisons"], 56)
        for max_lines in (fleet_review_text.MAX_LINES, 20, fleet_review_text.MIN_LINES):
            lines = fleet_review_text.lines(red, max_lines=max_lines)
            self.check_lines(lines, max_lines=max_lines)
            self.assertIn(fleet_review_text.JSON, "\n".join(lines))
        lines = fleet_review_text.lines(red)
        text = "\n".join(lines)
        # eight models are too many for columns, and their groups of rows
        # for the budget: a line each, a column per clock
        self.assertFalse(any(line.startswith("change") for line in lines), text)
        head = next(line for line in lines if line.lstrip().startswith("RT "))
        self.assertEqual(head.split(), ["RT", "MONO", "RAW", "BOOT", "TAI", "RT_C", "MONO_C"])
        matrix = {m.group(1): m.group(2).split() for m in
                  (re.fullmatch(r"(\S.*?) +([-+]\d.*)", x) for x in lines) if m}
        self.assertEqual(sorted(matrix), sorted(short for short in map(fleet_review.short, EIGHT)))
        self.assertEqual(matrix["Zen 5"], ["-1.0F"] * 7)
        self.assertEqual(matrix["Sapphire Rapids"][1], "-0.0=")
        self.assertIn("124 nodes n0005, n0013, n0021 and", text)
        # squeezed harder, the groups' fallback names what it left out
        small = "\n".join(fleet_review_text.lines(red, max_lines=12))
        self.assertRegex(small, r"more CPU models? \(\d+ nodes\)|more CPU models' rows")


class TextTest(ShapeMixin, unittest.TestCase):
    def test_compact_names(self):
        self.assertEqual(fleet_review.compact(["n3", "n1", "n2", "n7"]), "n[1-3,7]")
        self.assertEqual(fleet_review.compact(["n01", "n02", "n10", "login"]),
                         "n[01-02,10], login")
        self.assertEqual(fleet_review.compact(["gpu1"]), "gpu1")
        scattered = [f"node{i}" for i in range(1, 40, 2)]
        self.assertEqual(fleet_review.compact(scattered, 30), "node1, node3 and 18 more")

    def test_three_models_fit_as_columns(self):
        red = fleet_review.reduce(fleet([(ZEN4, 1, 0.98), (ZEN3, 1, 0.98), (SPR, 1, 0.98)]))
        lines = fleet_review_text.lines(red)
        self.check_lines(lines)
        head = next(line for line in lines if line.startswith("change"))
        # as many nodes each: in the labels' order
        self.assertEqual(head.split(), ["change", "Sapphire", "Rapids", "Zen", "3", "Zen", "4"])

    def test_four_models_get_groups_or_a_line_each(self):
        nodes = fleet([(c, 1, 0.98) for c in EIGHT[:4]])
        lose(nodes[3], "tai", 60)
        red = fleet_review.reduce(nodes)
        self.assertIsNone(cells(red, "tai")[EIGHT[3]]["ratio"])
        # four cells of "-2.0% faster" and the clock are 78 columns: a group
        # of rows each, when the budget has room for them (33 lines)
        lines = fleet_review_text.lines(red, max_lines=66)
        self.check_lines(lines, max_lines=66)
        self.assertFalse(any(line.startswith("change") for line in lines), "\n".join(lines))
        self.assertIn("Zen 4 (1 node):", lines)
        self.assertRegex(" ".join(lines), r"before,\s+after:\s+ns/call")
        self.assertTrue(any(re.fullmatch(r"TAI +- +- +- +- +\?", x) for x in lines))
        self.assertTrue(any(re.fullmatch(r"MONOTONIC +30\.0 +29\.4 +-2\.0% +"
                                         r"\[-2\.\d,-1\.\d\] +faster", x) for x in lines))
        # else a line each
        lines = fleet_review_text.lines(red, max_lines=40)
        self.check_lines(lines, max_lines=40)
        self.assertNotIn("Zen 4 (1 node):", lines)
        self.assertIn("Zen 5            -1.9F -2.1F -2.0F -2.0F    -? -2.0F  -2.0F", lines)

    def test_two_steppings_of_one_name_are_told_apart(self):
        other = "Zen 4 (AMD EPYC 9654, 25/17/2)"
        red = fleet_review.reduce(fleet([(ZEN4, 2, 0.98), (other, 1, 0.98)]))
        self.assertEqual([m["tag"] for m in red["models"]], ["Zen 4 25/17/1", "Zen 4 25/17/2"])

    def test_every_budget_and_width_holds(self):
        nodes = fleet([(ZEN4, 3, 0.98), (ZEN3, 2, {"monotonic": 1.03}), (SPR, 2, 1.0),
                       (EIGHT[3], 1, 0.99)])
        nodes[0]["verify"] = {"after": PASS, "before": TORN}
        lose(nodes[3], "tai", 40)
        nodes[7]["verify"] = {"after": TORN, "before": PASS}
        for i in range(12):
            nodes.append({"node": f"x{i}", "cpu": EIGHT[i % 8], "failed": f"reason {i % 7}"})
        red = fleet_review.reduce(nodes)
        for width in (60, 72, 100):
            for max_lines in range(fleet_review_text.MIN_LINES, 60):
                lines = fleet_review_text.lines(red, width=width, max_lines=max_lines)
                self.check_lines(lines, width=width, max_lines=max_lines)
                # never an empty budget unused while something was cut
                text = "\n".join(lines)
                if fleet_review_text.JSON in text:
                    self.assertGreaterEqual(len(lines), max_lines - 8, (width, max_lines, text))

    def test_unknown_and_unnamed_cpus(self):
        unknown = "AuthenticAMD family 25 model 200 stepping 0 (AMD EPYC)"
        rng = random.Random(8)
        red = fleet_review.reduce([node("n1", None, rng, 0.98), node("n2", unknown, rng, 0.98)])
        self.assertEqual(sorted(m["cpu"] for m in red["models"]),
                         [unknown, fleet_review.UNKNOWN])
        # ids too long for a column or a sentence: a letter, said once
        self.assertEqual(sorted(m["tag"] for m in red["models"]), ["CPU A", "unknown CPU"])
        lines = fleet_review_text.lines(red)
        self.check_lines(lines)
        self.assertIn("CPU A = AuthenticAMD family 25 model 200 stepping 0 (AMD EPYC): 1",
                      " ".join(lines))

    def test_a_narrow_block(self):
        red = fleet_review.reduce(fleet([(ZEN4, 2, 0.98), (ZEN3, 2, {"monotonic": 1.03})]))
        lines = fleet_review_text.lines(red, width=60, max_lines=12)
        self.check_lines(lines, width=60, max_lines=12)

    def test_bad_arguments(self):
        for bad in ("n1", None, {"node": "n1"}):
            with self.assertRaisesRegex(ValueError, "nodes: must be a list"):
                fleet_review.reduce(bad)
        for target in (0, 1, -0.1, "0.5", True):
            with self.assertRaisesRegex(ValueError, "target"):
                fleet_review.reduce([], target=target)
        with self.assertRaisesRegex(ValueError, "alpha"):
            fleet_review.reduce([], alpha=2)
        red = fleet_review.reduce([])
        self.assertEqual(fleet_review_text.status(red), "INCOMPLETE: no CPU model was timed")
        self.assertEqual(fleet_review_text.lines(red), ["Fleet: 0 nodes timed or verified on "
                                                   "0 CPU models"])
        for width in (10, 72.0, "72"):
            with self.assertRaisesRegex(ValueError, "width"):
                fleet_review_text.lines(red, width=width)
        with self.assertRaisesRegex(ValueError, "max_lines"):
            fleet_review_text.lines(red, max_lines=3)


class HostileTest(ShapeMixin, unittest.TestCase):
    def reply(self, **over):
        n = fleet([(ZEN4, 1, 0.98)], seed=3)[0]
        n.update(node="evil")
        n.update(over)
        return n

    def failed_why(self, **over):
        red = fleet_review.reduce(fleet([(ZEN4, 2, 0.98)]) + [self.reply(**over)])
        self.assertEqual(red["models"][0]["nodes"], ["n1", "n2"])
        self.assertEqual(len(red["failed"]), 1)
        self.check_lines(fleet_review_text.lines(red))
        return red["failed"][0][2]

    def test_bad_rounds_fail_the_node_alone(self):
        key = ("monotonic", "hot")
        rec = record("monotonic", [1.0] * 10, [1.0] * 10)
        self.assertEqual(self.failed_why(rounds={key: dataclasses.replace(
            rec, after_ns=(1.0,) * 9)}), "rounds monotonic hot: 10 before but 9 after, not paired")
        for plain in (([1.0], [1.0]), [1.0, 2.0, 3.0], rec.to_json(), None,
                      dataclasses.replace(rec, before_ns=[1.0] * 10)):
            self.assertEqual(self.failed_why(rounds={key: plain}),
                             "rounds monotonic hot: not a record of paired rounds")
        self.assertEqual(self.failed_why(rounds={("realtime", "hot"): rec}),
                         "rounds realtime hot: the record of another row (monotonic/hot/cpu1)")
        # ("MONOTONIC", "hot") is no second name of monotonic's row
        for bad_key in ("monotonic/hot", ("monotonic", "hot", 1), ("MONOTONIC", "hot"),
                        ("monotonic", "\x1b[2J"), (b"monotonic", "hot")):
            self.assertEqual(self.failed_why(rounds={bad_key: rec}),
                             "rounds: a key that is not (clock, mode)")
        too_many = {(f"c{i}", "hot"): record(f"c{i}", [1.0], [1.0])
                    for i in range(fleet_review.MAX_KEYS + 1)}
        self.assertIn("more than", self.failed_why(rounds=too_many))
        self.assertEqual(self.failed_why(rounds=[(key, rec)]), "rounds: not a mapping")
        self.assertEqual(self.failed_why(verify=None), "no verify result for both trees")
        self.assertEqual(self.failed_why(verify={"after": ("yes", "PASS"), "before": PASS}),
                         "verify (after): not (ok, text)")
        self.assertEqual(self.failed_why(node="n1"), "a second reply under this node name")

    def test_a_hostile_files_rounds_never_become_a_record(self):
        # a node's file is read by the record's one validator before any
        # reduction: a time no call takes, more rounds than a reader sorts,
        # a lost round it did not measure are refused there, one line
        good = record("monotonic", [1.0] * 10, [1.0] * 10).to_json()
        edits = [{"before_ns": [1.0] * 9 + [v]}
                 for v in (-1.0, float("nan"), float("inf"), "12", True, None)]
        edits += [{"rounds": list(range(limits.MAX_ROUNDS + 1))}, {"disturbed": [-3]},
                  {"disturbed": [10]}, {"after_ns": [1.0] * 9}]
        for edit in edits:
            with self.subTest(edit=str(edit)[:40]), self.assertRaises(UsageError) as e:
                paired.PairedRounds.from_json(dict(good, **edit), "n9.json")
            self.assertNotIn("\n", str(e.exception))

    def test_not_a_dict(self):
        red = fleet_review.reduce(fleet([(ZEN4, 1, 0.98)]) + ["junk", 7])
        self.assertEqual(red["failed"], [("#2", None, "not a node result"),
                                         ("#3", None, "not a node result")])

    def test_escapes_in_names_and_labels_are_shown_not_obeyed(self):
        rng = random.Random(6)
        nasty = "Zen 4 \x1b[2J\u202e(AMD\n EPYC, 25/17/1)"
        nodes = [node("n1\x1b]0;owned\x07", nasty, rng, 0.98,
                      kernel="6.1\u2028evil", hypervisor="KVM\x00", counter="rdtscp\x1b[31m"),
                 node("n2", ZEN3, rng, 0.98, failed="boom\x1b[2J\u202e" + "x" * 500,
                      verify={"after": (True, "PASS\x1b[0m"), "before": PASS})]
        red = fleet_review.reduce(nodes)
        for lines in (fleet_review_text.lines(red), fleet_review_text.lines(red, max_lines=10)):
            self.check_lines(lines)
            text = "\n".join(lines)
            self.assertNotIn("\u202e", text)
            self.assertNotIn("\u2028", text)
        self.assertIn("\\x1b[2J\\u202e", "\n".join(fleet_review_text.lines(red)))
        self.assertLessEqual(len(red["failed"][0][2]), 120)


if __name__ == "__main__":
    unittest.main()
