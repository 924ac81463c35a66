"""patch-review's plumbing on recorded shapes: chunks of rounds, the block
agreeing with comparison.json, the object code comparison, the git commit, verify's verdicts, the names it holds;
nothing timed."""

import copy
import itertools
import json
import random
import tempfile
import types
import unittest
from pathlib import Path
from unittest import mock

import jsonschema

from vdsobench_cli.cli import build
from vdsobench_cli.cli.errors import Failure
from vdsobench_cli.core import paired, stats, vocab
from vdsobench_cli.kimport import git_dir
from vdsobench_cli.measure import compare, rounds
from vdsobench_cli.recipes import (patch_review, patch_review_arm64, patch_series,
                                   review_provenance)
from vdsobench_cli.recipes import patch_review_rounds as rounds_mod

from reports import review, tables

SCHEMA = build.ROOT / "results" / "schema" / "comparison-v1.schema.json"


KEY = vocab.GroupKey("monotonic", "hot", 1)


def chunk(values_a, values_b, lost=(), key=KEY):
    """One run's rounds as compare.measure() returns them: subjects a and b
    of one group, rounds numbered from 0, b's batch lost in rounds `lost`."""
    return chunks({key: (values_a, values_b, lost)})


def chunks(groups):
    """A Measured of several groups {GroupKey: (a's ns, b's ns, lost rounds)}."""
    series = []
    for key, (values_a, values_b, lost) in groups.items():
        g = rounds.Series(key, 100)
        g.ns[("a", 0)] = dict(enumerate(values_a))
        g.ns[("b", 0)] = dict(enumerate(values_b))
        g.disturbed[("b", 0)] = set(lost)
        series.append(g)
    n = len(next(iter(groups.values()))[0])
    return compare.Measured({}, series, "a", ["b"], n, 1)


def staged(p, made, deadline=float("inf"), count=4):
    """patch_review_rounds.staged_rounds with compare.measure replaced by
    made(n) (each chunk's rounds), nothing timed; (calls, (first, records))."""
    calls = []

    def fake(variants, options, n, batch_ms):
        calls.append(n)
        # the harness's options as rounds.measure would pass them
        hargs = rounds.harness_args(variants, options)
        assert hargs[hargs.index("--clocks") + 1] == "monotonic", hargs
        assert hargs[hargs.index("--modes") + 1] == "hot", hargs
        return made(n)
    s = type("S", (), {"batch_ms": 1})()
    with mock.patch.object(rounds_mod.compare, "measure", fake):
        out = rounds_mod.staged_rounds(s, ["a", "b"], ["monotonic"], p, deadline,
                                       lambda _: None, chunks=count)
    return calls, out


class MergeRoundsTest(unittest.TestCase):
    def test_chunks_append_and_renumber(self):
        parts = iter([chunk([1, 2, 5], [3, 4, 8], lost=[0]),
                      chunk([6, 7], [9, 10], lost=[0, 1])])
        calls, (_, records) = staged({"rounds": 5}, lambda n: next(parts), count=2)
        self.assertEqual(calls, [3, 2])
        r = records[KEY].comparison_part()[str(KEY)]
        self.assertEqual(r["a#0"], {0: 1, 1: 2, 2: 5, 3: 6, 4: 7})
        self.assertEqual(r["b#0"], {0: 3, 1: 4, 2: 8, 3: 9, 4: 10})
        self.assertEqual(records[KEY].lost, 3)
        # the lost rule over the rounds the verdict uses: 3 of 5
        self.assertTrue(records[KEY].refused().startswith("monotonic/hot/cpu1: 3 of 5 rounds"))
        rows = rounds_mod.judged(records, 0.005)
        self.assertEqual(rows[KEY]["n"], 5)

    def test_deadline_stops_between_chunks(self):
        p = {"rounds": 40}
        calls, (_, records) = staged(p, lambda n: chunk([10.0] * n, [10.0] * n), deadline=0)
        self.assertEqual(calls, [10])
        self.assertEqual(p["rounds"], 10)
        self.assertTrue(p["capped"])
        self.assertIn("after 10 of 40 rounds", p["stopped"])
        self.assertEqual(len(records[KEY].rounds), 10)


class BlockAgreesTest(unittest.TestCase):
    """The block's rows and comparison.json's ns/call rows come from the same
    records and the same judgement: fed synthetic rounds (a slower row, one
    that lost the CPU in most rounds, one too noisy for a verdict), each says
    what the other says, and the file's rounds read back as the records."""

    KEYS = {"slower": vocab.GroupKey("monotonic", "hot", 1),
            "lost": vocab.GroupKey("realtime", "hot", 1),
            "noisy": vocab.GroupKey("monotonic_raw", "hot", 1)}

    def made(self, n):
        rng = self.rng
        slower = stats.simulate_rounds(rng, n, 1.03, sigma=0.002, outlier_rate=0)
        same = stats.simulate_rounds(rng, n, 1.0, sigma=0.002, outlier_rate=0)
        noisy = stats.simulate_rounds(rng, n, 1.0, sigma=0.2, outlier_rate=0)
        return chunks({self.KEYS["slower"]: (*slower, ()),
                       self.KEYS["lost"]: (*same, range(n // 2)),
                       self.KEYS["noisy"]: (*noisy, ())})

    def test_the_build_is_outside_the_budget(self):
        # a fake clock: a look costs 1 s, the harness's build 150 s; the
        # pilot and the budget must see the rounds alone, as with no build
        s = type("S", (), {"batch_ms": 1, "quick": True, "rounds": 12,
                               "budget_s": None})()
        plans = []
        for build_s in (0, 150):
            self.rng = random.Random(29)
            now = [0]

            def monotonic():
                now[0] += 1
                return now[0]

            def prepare(build_s=build_s):
                now[0] += build_s

            with mock.patch.object(rounds_mod.compare, "measure",
                                   lambda variants, options, n, batch_ms: self.made(n)), \
                    mock.patch.object(rounds_mod.compare, "prepare", prepare), \
                    mock.patch.object(rounds_mod, "time",
                                      types.SimpleNamespace(monotonic=monotonic)):
                _, plan, _ = rounds_mod.timed_rounds(s, "a", "b", ["monotonic"],
                                                     lambda _: None)
            plans.append(plan)
        self.assertEqual(plans[0]["rounds"], plans[1]["rounds"])
        self.assertGreater(plans[1]["rounds"], 100)  # not the 1 round of a counted build

    def timed(self, budget_s):
        """(Timed, plan) of --quick's timed rounds on made-up rounds, the clock
        a second a look, with --budget budget_s (None: --quick's own)."""
        self.rng = random.Random(29)
        s = type("S", (), {"batch_ms": 1, "quick": True, "rounds": 12,
                           "budget_s": budget_s})()
        clock = itertools.count()
        with mock.patch.object(rounds_mod.compare, "measure",
                               lambda variants, options, n, batch_ms: self.made(n)), \
                mock.patch.object(rounds_mod.compare, "prepare", lambda: None), \
                mock.patch.object(rounds_mod, "time",
                                  types.SimpleNamespace(monotonic=lambda: next(clock))):
            t, plan, _ = rounds_mod.timed_rounds(s, "a", "b", ["monotonic"], lambda _: None)
        return t, plan

    def test_a_budget_given_is_the_one_spent(self):
        # a clock a second a look: the pilot takes 1 s, and each round about
        # 1/12 s; --budget 10 leaves room for about a sixth of --quick's 60
        plans = {budget: self.timed(budget)[1] for budget in (None, 10)}
        self.assertEqual(plans[None]["budget_s"], rounds_mod.QUICK_BUDGET_S)
        self.assertEqual(plans[10]["budget_s"], 10)
        self.assertLess(plans[10]["rounds"], plans[None]["rounds"] / 4)

    def test_the_block_and_the_file_agree(self):
        # the pilot takes 1 s, the budget holds 708 rounds, too few for the
        # noisy row's +-0.5%
        t, plan = self.timed(None)
        self.assertTrue(plan["capped"])
        c = json.loads(json.dumps(t.comparison()))
        jsonschema.validate(c, json.loads(SCHEMA.read_text()))
        block = {(clock, mode): r for clock, mode, r in t.block_rows()}
        rows = {(r["clock"], r["mode"]): r for r in c["rows"] if r["metric"] == "ns/call"}
        self.assertEqual(set(block), set(rows))
        self.assertEqual(c["meta"]["rounds"], plan["rounds"])
        for what, key in self.KEYS.items():
            with self.subTest(what):
                b, f = block[key.row], rows[key.row]
                self.assertEqual((f["base"], f["value"], f["ratio"], f["ci_low"],
                                  f["ci_high"], f["n"]),
                                 (b["before"], b["after"], b["ratio"], b["ci_low"],
                                  b["ci_high"], b["n"]))
                self.assertEqual(f["n"], plan["rounds"])
                back = paired.PairedRounds.from_comparison(c, f)
                self.assertEqual(back.rounds, t.records[key].rounds)
                self.assertEqual(back.after_ns, t.records[key].after_ns)
                self.assertEqual(review.paired_row(back, 0.005, 0.05, 3), b)
        self.assertEqual(rows[self.KEYS["slower"].row]["verdict"], "slower")
        self.assertTrue(block[self.KEYS["slower"].row]["complete"])
        lost = rows[self.KEYS["lost"].row]
        self.assertEqual(lost["verdict"], tables.NO_VERDICT)
        self.assertTrue(lost["refused"].startswith("realtime/hot/cpu1: "))
        self.assertEqual(c["meta"]["refused"], [lost["refused"]])
        self.assertFalse(block[self.KEYS["lost"].row]["complete"])
        self.assertEqual(rows[self.KEYS["noisy"].row]["verdict"], review.INCOMPLETE)
        self.assertIsNone(rows[self.KEYS["noisy"].row]["refused"])
        self.assertEqual(block[self.KEYS["noisy"].row]["verdict"], review.INCOMPLETE)


class CodeTest(unittest.TestCase):
    def test_identical_and_differences(self):
        a = {"clock_gettime": ["push %rbp", "mov 0x10(%rip),%rax", "ret"], "time": ["ret"]}
        self.assertEqual(patch_review.code_comparison(a, copy.deepcopy(a)), "identical")
        b = copy.deepcopy(a)
        b["clock_gettime"].insert(1, "nop")
        b["time"] = ["xor %eax,%eax"]
        self.assertEqual(patch_review.code_comparison(a, b),
                         ["clock_gettime: 3 -> 4 instructions (+1)",
                          "time: 1 of 1 instructions differ"])


class GitHeadTest(unittest.TestCase):
    """The commit comes from kimport/git_dir.py (git_dir_test: its attacks);
    a tarball has none and no reason to say."""

    def test_tree_and_tarball(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / ".git" / "refs" / "heads").mkdir(parents=True)
            (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
            (root / ".git" / "refs" / "heads" / "main").write_text("b" * 40 + "\n")
            self.assertEqual(review_provenance.git_head(str(root)).commit, "b" * 40)
            tarball = root / "linux.tar.xz"
            tarball.write_bytes(b"")
            self.assertEqual(review_provenance.git_head(str(tarball)), git_dir.Head())


class VerdictTest(unittest.TestCase):
    """A verify that did not run a variant is no tear: the review says it gave
    no verdict (INCOMPLETE), never that the patch is WRONG."""

    def test_unjudged(self):
        ok = {"status": "PASS", "checks": [{"name": "exact"}]}
        fail = {"status": "FAIL", "first_failure": "concurrency: torn"}
        checked = {("after", "kernel:a+fake+always"): ok,
                   ("after", "kernel:a+rdtscp+always"): fail,
                   ("before", "kernel:b+fake+always"): ok}
        self.assertIsNone(patch_review.unjudged(checked))
        for status in ("no result (exit 2)", "SKIP"):
            checked[("before", "kernel:b+rdtscp+always")] = {"status": status}
            self.assertEqual(patch_review.unjudged(checked),
                             f"verify gave no verdict on the tree (rdtscp counter): {status}")
        self.assertFalse(patch_review.tore({"status": "no result (exit 2)"}))
        self.assertTrue(patch_review.tore(fail))

    def test_a_checker_that_did_not_run_is_no_tear(self):
        # verify's own words (verify/check_concurrency.c), from a review of a
        # correct patch on a loaded machine: no verdict, never WRONG
        starved = {"status": "FAIL", "first_failure": "concurrency: only 0 reads could "
                   "be checked (0 inconclusive): the checker did not run",
                   "checks": [{"name": "concurrency", "ok": False, "starved": True}]}
        checked = {("after", "kernel:a+fake+always"): starved,
                   ("after", "kernel:a+rdtscp+always"): {"status": "PASS", "checks": []}}
        self.assertFalse(patch_review.tore(starved))
        self.assertEqual(patch_review.unjudged(checked),
                         "verify gave no verdict on the patched tree (fake counter): FAIL: "
                         "concurrency: only 0 reads could be checked (0 inconclusive): the "
                         "checker did not run")


class NamesTest(unittest.TestCase):
    def test_a_review_holds_every_name_it_imports(self):
        """The x86-64 side's, a series' trees between, and the arm64 side's,
        held for the whole run."""
        self.assertEqual(set(patch_review.RESERVED),
                         {patch_review.BEFORE, patch_review.AFTER, patch_series.STEP,
                          patch_review_arm64.BEFORE, patch_review_arm64.AFTER})
        self.assertEqual(len(set(patch_review.RESERVED)), 5)


if __name__ == "__main__":
    unittest.main()


def timed_row(verdict):
    return {"verdict": verdict, "complete": verdict != "incomplete"}


class UnsimulatedTest(unittest.TestCase):
    """A tree whose code valgrind cannot run here (RDTSCP on a CPU that does not
    list it): the review goes on without the simulated rows and says why; a
    series' walk compares no counts rather than stopping."""

    def test_the_review_notes_it_and_goes_on(self):
        gone = patch_review.sim_mod.Unsimulated("sim", "valgrind cannot run kernel:a here: "
                                                "RDTSCP (SIGILL; ...)")
        notes = []
        with mock.patch.object(patch_review, "end_sims", side_effect=gone):
            self.assertEqual(patch_review.simulated("kernel:b", "kernel:a", ["monotonic"],
                                                    None, notes), [])
        self.assertEqual(notes, ["not simulated: valgrind cannot run kernel:a here: RDTSCP "
                                 "(SIGILL; ...)"])
        with mock.patch.object(patch_review, "end_sims", side_effect=Failure("sim: broke")):
            with self.assertRaises(Failure):  # any other failure still stops it
                patch_review.simulated("kernel:b", "kernel:a", ["monotonic"], None, [])

    def test_a_series_compares_no_counts_it_lacks(self):
        records = [{"clock": "monotonic", "mode": "hot", "net_instructions_per_call": 50,
                    "net_l1d_misses_per_call": 1}]
        self.assertEqual(patch_series.sim_changes(None, records), [])
        self.assertEqual(patch_series.sim_changes(records, None), [])


class PatchReviewSummaryTest(unittest.TestCase):
    """The cover letter's data-page lines, from a layout --diff object."""

    def test_moved_fields_and_paths(self):
        def line(n, page=0, role="data page"):
            return {"page": page, "role": role, "line": n}
        d = {"fields": [
            {"name": "max_cycles", "a": {"offset": 16, "size": 8, "lines": [0]},
             "b": {"offset": 240, "size": 8, "lines": [3]}, "moved": True,
             "lines_changed": True},
            {"name": "mask", "a": {"offset": 24, "size": 8, "lines": [0]},
             "b": {"offset": 16, "size": 8, "lines": [0]}, "moved": True,
             "lines_changed": False},
            {"name": "seq", "a": {"offset": 0, "size": 4, "lines": [0]},
             "b": {"offset": 0, "size": 4, "lines": [0]}, "moved": False,
             "lines_changed": False}],
            "only_a": [], "only_b": [{"name": "new_field"}],
            "paths": [{"label": "realtime", "a": {"lines": [line(0)], "line_count": 1},
                       "b": {"lines": [line(0), line(3)], "line_count": 2}},
                      {"label": "tai", "a": {"lines": [line(0)], "line_count": 1},
                       "b": {"lines": [line(0)], "line_count": 1}}]}
        self.assertEqual(patch_review.layout_summary(d), [
            "  max_cycles: 16..23 -> 240..247 (line 0 -> 3)",
            "  1 more field moved within the same lines",
            "  new_field: added",
            "  realtime: 1 -> 2 lines per call (line 0 -> lines 0, 3)"])
        same = dict(d, fields=d["fields"][2:], only_b=[], paths=d["paths"][1:])
        self.assertEqual(patch_review.layout_summary(same),
                         ["  no field moved, every read path loads the same lines"])


class WhyTest(unittest.TestCase):
    """The sentence where the simulation and the time disagree, on synthetic
    rows: only where misses rise and the hot row does not say slower."""

    SIM = [("monotonic", "hot", 57, 57, 0, 0), ("monotonic", "pressure", 57, 57, 1, 2),
           ("realtime", "hot", 57, 57, 0, 0), ("realtime", "pressure", 57, 57, 1, 1)]

    def test_a_line_more_with_the_time_the_same(self):
        rows = [("monotonic", "hot", timed_row("no significant difference")),
                ("realtime", "hot", timed_row("no significant difference"))]
        why = patch_review.why_lines(rows, self.SIM)
        self.assertEqual(len(why), 1, why)
        self.assertTrue(why[0].startswith("Simulated misses rise on MONOTONIC (+1 line), "
                                          "not the time"), why)
        self.assertNotIn("REALTIME", why[0])
        self.assertIn("~0 ns", why[0])   # the call's own second miss (cold modes)
        self.assertIn("~4 ns a line displaced", why[0])  # the caller's (footprint)
        self.assertLessEqual(len(patch_review.letter_mod.wrap(why[0])), 2)

    def test_lines_counted_per_clock(self):
        sim = self.SIM + [("boottime", "pressure", 60, 60, 1, 3)]
        rows = [(c, "hot", timed_row("faster")) for c in ("monotonic", "boottime")]
        why = patch_review.why_lines(rows, sim)
        self.assertIn("MONOTONIC (+1 line), BOOTTIME (+2 lines)", why[0])

    def test_nothing_where_it_does_not_apply(self):
        same = [("monotonic", "hot", timed_row("no significant difference"))]
        for what, rows, sim in (
                ("the time says slower", [("monotonic", "hot", timed_row("slower"))],
                 self.SIM),
                ("no verdict", [("monotonic", "hot", timed_row("incomplete"))], self.SIM),
                ("no rise", same, [("monotonic", "pressure", 57, 57, 2, 2)]),
                ("fewer misses", same, [("monotonic", "pressure", 57, 57, 2, 1)]),
                ("a rise of a fraction", same, [("monotonic", "pressure", 57, 57, 1, 1.2)]),
                ("no timed row for the clock", same, [("realtime", "pressure", 57, 57, 1, 2)])):
            with self.subTest(what):
                self.assertEqual(patch_review.why_lines(rows, sim), [])
