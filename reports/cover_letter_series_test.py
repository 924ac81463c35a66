"""The block's lines on a series (cover_letter_series.py), from synthetic
walk records: what was timed, each patch's result, the one that stopped the
walk named with its subject and why, the room kept. No machine."""

import unittest

from reports import cover_letter, cover_letter_series as series_mod
from vdsobench_cli.core import clocks, stats

BUILD_ERROR = ("lib/vdso/gettimeofday.c: lib/vdso/gettimeofday.c:140:5: error: expected "
               "expression before '}' token")
TORN = ("concurrency: torn read: monotonic = 12346235606055 ns matches no snapshot of "
        "generations 6034..6036 (nearest is -1 ns off) after 5492 good reads")


def patch(n, result="verified", code="identical", sim=(), why=None):
    return {"n": n, "subject": f"vdso: Change number {n}", "result": result, "why": why,
            "code": code if result == "verified" else None,
            "sim": list(sim) if result == "verified" else None}


def series(patches, stopped=None):
    return {"patches": patches, "stopped": stopped}


def review(patches, **over):
    rv = {"subject": patches[0]["subject"], "patches": len(patches),
          "series": series(patches, next((p["n"] for p in patches
                                          if p["result"] in series_mod.FAILED), None)),
          "measured": "the tree's lib/vdso read path", "tree": "Linux 6.12.117",
          "commit": None, "compiler": "gcc 12.2.0", "line": "the project's line",
          "machine": {"cpu": "Zen 4", "counter": "rdtscp"},
          "verify": {"before": (True, "PASS (exact, edges, concurrency)")},
          "code": None, "sim": [], "rows": [], "page": [], "why": [], "notes": [],
          "target": 0.005}
    rv.update(over)
    return rv


def joined(lines):
    return " ".join(x.strip() for x in lines)


class SeriesLinesTest(unittest.TestCase):
    def check(self, lines):
        self.assertLessEqual(len(lines), cover_letter.MAX_LINES, "\n".join(lines))
        for line in lines:
            self.assertLessEqual(len(line), cover_letter.WIDTH, line)

    def test_one_patch_has_none(self):
        self.assertEqual(series_mod.lines(review([patch(1)]), 72), [])
        self.assertIsNone(series_mod.status(review([patch(1)])))

    def test_every_patch_verified_the_end_points_timed(self):
        sim = [("monotonic", "hot", 57, 58, 0, 0)]
        lines = series_mod.lines(review([patch(1), patch(2, code=["do_hres: 57 -> 58 "
                                                                  "instructions (+1)"],
                                                         sim=sim), patch(3)]), 72)
        self.check(lines)
        text = joined(lines)
        self.assertIn("Series: 3 patches, each applied, built and verified in turn; timed: "
                      "the end points (the trees after patches 1 and 2 were not timed)", text)
        self.assertIn("1/3 vdso: Change number 1: same code and counts", text)
        self.assertIn("2/3 vdso: Change number 2 code: do_hres: 57 -> 58 instructions (+1); "
                      "simulated: MONOTONIC hot instructions 57 -> 58 3/3", text)
        misses = series_mod.sim_words([("realtime", "pressure", 60, 60, 1, 2),
                                       ("monotonic", "pressure", 60, 60, 1, 2)])
        self.assertEqual(misses, "simulated: REALTIME pressure L1D misses 1 -> 2, and 1 more")
        self.assertIsNone(series_mod.status(review([patch(1), patch(2)])))

    def test_the_patch_that_does_not_build_is_named(self):
        rv = review([patch(1), patch(2, "does not build", why=BUILD_ERROR),
                     patch(3, "not tried")])
        self.assertEqual(series_mod.status(rv), "FAILS: patch 2 of 3 does not build; "
                                                "do not post")
        lines = cover_letter.render(rv)
        self.check(lines)
        self.assertEqual(lines[0], "FAILS: patch 2 of 3 does not build; do not post")
        text = joined(lines)
        self.assertIn("to patch 2: nothing timed", text)
        self.assertIn("2/3 vdso: Change number 2 does not build: lib/vdso/gettimeofday.c:",
                      text)
        self.assertIn("error: expected", text)
        self.assertIn("not tried: patch 3", text)
        self.assertNotIn("ns/call", text)
        self.assertNotIn("Legend", text)

    def test_the_patch_that_fails_verify_is_named(self):
        rv = review([patch(1), patch(2, "fails verify", why=TORN)], torn=f"patch 2: {TORN}")
        lines = cover_letter.render(rv)
        self.check(lines)
        self.assertEqual(lines[0], "WRONG: patch 2 of 2 fails verify; do not post")
        text = joined(lines)
        self.assertIn("2/2 vdso: Change number 2 fails verify: concurrency: torn read", text)
        self.assertNotIn("Where it tore", text)  # the patch's own lines say it once
        for result, first in (("does not apply", "FAILS: patch 1 of 2 does not apply"),
                              ("no verdict", "INCOMPLETE: verify gave no verdict on the tree "
                                             "after patch 1 of 2")):
            rv = review([patch(1, result, why="why"), patch(2, "not tried")])
            self.assertTrue(series_mod.status(rv).startswith(first), series_mod.status(rv))

    def test_a_range_names_itself_and_each_commit(self):
        commits = ["0123456789abcdef" * 2 + "01234567", "fedcba9876543210" * 2 + "01234567"]
        rv = review([patch(1), patch(2)], range="v6.12..HEAD", commits=commits)
        text = joined(series_mod.lines(rv, 72))
        self.assertIn("Series: 2 commits of v6.12..HEAD, each applied", text)
        self.assertIn("1/2 0123456789ab vdso: Change number 1", text)
        self.assertIn("2/2 fedcba987654 vdso: Change number 2", text)
        # the same block as the patch files', but for the range and the commits
        files = joined(series_mod.lines(review([patch(1), patch(2)]), 72))
        self.assertEqual(text.replace("2 commits of v6.12..HEAD", "2 patches")
                         .replace("0123456789ab ", "").replace("fedcba987654 ", ""), files)
        one = review([patch(1)], range="v6.12..HEAD", commits=commits[:1], series=None)
        self.assertEqual(series_mod.lines(one, 72),
                         ["Range: v6.12..HEAD, one commit: 0123456789ab"])

    def test_room_is_kept_and_the_failure_always_shown(self):
        """A long series in little room: details go first, then patches,
        counted; the one that stopped the walk stays with its why."""
        many = [patch(k, code=[f"f{k}: 1 -> 2 instructions (+1)"]) for k in range(1, 60)]
        many.append(patch(60, "does not build", why=BUILD_ERROR))
        many += [patch(k, "not tried") for k in range(61, 101)]
        rv = review(many)
        for room in (4, 8, 16, None):
            with self.subTest(room=room):
                lines = series_mod.lines(rv, 72, room)
                self.check(lines)
                if room is not None:
                    # the fewest: the heading, the failure with its why, the counts
                    self.assertLessEqual(len(lines), max(room, 7), lines)
                text = joined(lines)
                self.assertIn("60/100 vdso: Change number 60 does not build", text)
                self.assertIn("not tried: patches 61 to 100", text)
                self.assertRegex(text, r"and \d+ more patches \(patch-review.json\)")
        self.check(cover_letter.render(rv))

    def test_a_long_subject_is_cut_to_its_line(self):
        long = patch(1)
        long["subject"] = "vdso: " + "a very long subject " * 8
        lines = series_mod.lines(review([long, patch(2)]), 72)
        self.check(lines)
        self.assertTrue(any(x.startswith("  1/2 vdso: a very long") and "...: same" in x
                            for x in lines), lines)

    def test_the_timed_block_keeps_its_table(self):
        """Seven timed rows and a series of five that each changed code: the
        table, the legend and the data page all stay."""
        from reports import review as review_rows
        import random
        rng = random.Random(3)
        rows = [(clock, "hot", review_rows.row(*stats.simulate_rounds(rng, 60, 1.0, 0.002, 0.0),
                                               comparisons=7)) for clock in clocks.NAMES]
        steps = [patch(k, code=[f"f{k}: 1 -> 2 instructions (+1)"],
                       sim=[("monotonic", "hot", 57, 58, 0, 0)]) for k in range(1, 6)]
        rv = review(steps, rows=rows, page=["every clock's read path loads the same lines"],
                    notes=["pressure is simulated, not timed"],
                    verify={"after": (True, "PASS"), "before": (True, "PASS")})
        lines = cover_letter.render(rv)
        self.check(lines)
        for kept in ("MONOTONIC_COARSE hot", "Legend:", "Data page:", "Series: 5 patches"):
            self.assertIn(kept, "\n".join(lines))


if __name__ == "__main__":
    unittest.main()
