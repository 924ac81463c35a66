"""patch-review's plumbing on recorded shapes: chunks of rounds, the object
code comparison, the git commit, verify's verdicts, the names it holds;
nothing timed."""

import copy
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.kimport import git_dir
from vdsobench_cli.recipes import patch_review, patch_review_arm64


def chunk(values_a, values_b, refused=(), lost=0):
    key = "monotonic/hot/cpu1"
    return {"meta": {"refused": list(refused), "alpha": 0.05, "comparisons": 1},
            "rows": [{"clock": "monotonic", "mode": "hot", "metric": "ns/call", "cpu": 1,
                      "lost": lost}],
            "rounds": {key: {"a#0": dict(enumerate(values_a)),
                             "b#0": dict(enumerate(values_b))}}}


class MergeRoundsTest(unittest.TestCase):
    def test_chunks_append_and_renumber(self):
        c = patch_review.merge_rounds(chunk([1, 2], [3, 4], lost=1),
                                      chunk([5, 6, 7], [8, 9, 10], ["x: refused"], lost=2))
        r = c["rounds"]["monotonic/hot/cpu1"]
        self.assertEqual(r["a#0"], {0: 1, 1: 2, 2: 5, 3: 6, 4: 7})
        self.assertEqual(r["b#0"], {0: 3, 1: 4, 2: 8, 3: 9, 4: 10})
        self.assertEqual(c["rows"][0]["lost"], 3)
        self.assertEqual(c["meta"]["refused"], ["x: refused"])
        rows, lost = patch_review.measured_rows(c, "a", "b", 0.005)
        self.assertEqual(rows[0][2]["n"], 5)

    def test_deadline_stops_between_chunks(self):
        calls = []

        def fake(variants, options, n, batch_ms):
            calls.append(n)
            return chunk([10.0] * n, [10.0] * n)
        real = patch_review.compare.paired_comparison
        patch_review.compare.paired_comparison = fake
        try:
            s = type("S", (), {"batch_ms": 1})()
            p = {"rounds": 40}
            c = patch_review.staged_rounds(s, ["a", "b"], ["monotonic"], p, deadline=0,
                                           progress_fn=lambda _: None)
        finally:
            patch_review.compare.paired_comparison = real
        self.assertEqual(calls, [10])
        self.assertEqual(p["rounds"], 10)
        self.assertTrue(p["capped"])
        self.assertIn("after 10 of 40 rounds", p["stopped"])
        self.assertEqual(len(c["rounds"]["monotonic/hot/cpu1"]["a#0"]), 10)


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
            self.assertEqual(patch_review.git_head(str(root)).commit, "b" * 40)
            tarball = root / "linux.tar.xz"
            tarball.write_bytes(b"")
            self.assertEqual(patch_review.git_head(str(tarball)), git_dir.Head())


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


class NamesTest(unittest.TestCase):
    def test_a_review_holds_every_name_it_imports(self):
        """The x86-64 side's and the arm64 side's, held for the whole run."""
        self.assertEqual(set(patch_review.RESERVED),
                         {patch_review.BEFORE, patch_review.AFTER,
                          patch_review_arm64.BEFORE, patch_review_arm64.AFTER})
        self.assertEqual(len(set(patch_review.RESERVED)), 4)


if __name__ == "__main__":
    unittest.main()


def timed_row(verdict):
    return {"verdict": verdict, "complete": verdict != "incomplete"}


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
