"""The series walk's bookkeeping (recipes/patch_series.py) without building
anything: an import's error as a result and why; the simulated counts that
changed; the walk itself with the imports, verify and the simulation
replaced by stand-ins (the order of the imports, each tree after a patch
out before the next comes in, the last one held for the end points, the
first failure stopping it, the exit status); and what the review says of
it. patch_series_review_test runs real reviews."""

import contextlib
import unittest
from unittest import mock

from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.kimport import probe
from vdsobench_cli.recipes import patch_series as ps, review_image as ri
from vdsobench_cli.tests.support import KERNEL_TESTDATA

PATCHES = [str(KERNEL_TESTDATA / n) for n in ("6.12-nfc-reorder.patch",
                                              "6.12-offs-boot.patch",
                                              "6.12-max-cycles-last.patch")]
NAMES = ("patch-review-before", "patch-review-after")
TORN = {"status": "FAIL", "first_failure": "concurrency: torn read: monotonic off"}
PASS = {"status": "PASS", "checks": [{"name": "exact"}]}


def record(clock, mode, instructions, misses):
    return {"clock": clock, "mode": mode, "net_instructions_per_call": instructions,
            "net_l1d_misses_per_call": misses}


class PureTest(unittest.TestCase):
    def test_an_import_error_as_a_result(self):
        cases = [
            (UsageError("import: /tmp/x/0002-ab.patch does not apply: "
                        "lib/vdso/gettimeofday.c hunk #1 (@@ -131,7 +131,9 @@)"),
             (ps.APPLY, "lib/vdso/gettimeofday.c hunk #1 (@@ -131,7 +131,9 @@)")),
            (UsageError("import: /tmp/p.patch: git apply took over 120 s; nothing imported"),
             (ps.APPLY, "git apply took over 120 s")),
            (probe.ShimError("linux-source-6.12", "lib/vdso/gettimeofday.c",
                             "gettimeofday.c:140:5: error: expected ';'"),
             (ps.BUILD, "lib/vdso/gettimeofday.c: gettimeofday.c:140:5: error: "
                        "expected ';'")),
            (probe.ShimError("linux-source-6.12", "lib/vdso/gettimeofday.c",
                             "lib/vdso/gettimeofday.c:135:9: error: unknown type name"),
             (ps.BUILD, "lib/vdso/gettimeofday.c:135:9: error: unknown type name")),
            (Failure("bazel build //verify:vdsobench_verify failed (exit 1)"),
             (ps.BUILD, "bazel build //verify:vdsobench_verify failed (exit 1)")),
        ]
        for error, want in cases:
            with self.subTest(str(error)[:40]):
                self.assertEqual(ps.failure(error), want)

    def test_sim_changes(self):
        a = [record("monotonic", "hot", 57, 0), record("realtime", "hot", 60, 1)]
        b = [record("monotonic", "hot", 58, 0), record("realtime", "hot", 60, 1)]
        self.assertEqual(ps.sim_changes(a, b), [("monotonic", "hot", 57, 58, 0, 0)])
        self.assertEqual(ps.sim_changes(a, a), [])

    def test_status_and_what_the_review_says(self):
        def steps(*results):
            return [dict(n=k, subject=f"s{k}", result=r, why="why")
                    for k, r in enumerate(results, 1)]
        ok = steps(ps.VERIFIED, ps.VERIFIED)
        self.assertEqual((ps.status(ok), ps.stopped(ok)), (0, None))
        rv = {}
        self.assertTrue(ps.into_review(rv, ok))
        self.assertEqual(rv["series"]["stopped"], None)
        for results, code, goes_on, said in (
                ((ps.VERIFIED, ps.BUILD, ps.NOT_TRIED), 2, False, {}),
                ((ps.APPLY, ps.NOT_TRIED), 2, False, {}),
                ((ps.VERIFIED, ps.WRONG, ps.NOT_TRIED), 1, False, {"torn": "patch 2: why"}),
                ((ps.NO_VERDICT, ps.NOT_TRIED), 1, False,
                 {"unverified": "verify gave no verdict on the tree after patch 1 (why)"}),
                # the last patch: the end points were imported and verified, and
                # their own checks say so as for one patch
                ((ps.VERIFIED, ps.WRONG), 1, True, {}),
                ((ps.VERIFIED, ps.BUILD), 2, False, {})):
            with self.subTest(results):
                st, rv = steps(*results), {}
                self.assertEqual(ps.status(st), code)
                self.assertEqual(ps.into_review(rv, st), goes_on)
                self.assertEqual({k: v for k, v in rv.items() if k != "series"}, said)
                self.assertEqual(rv["series"]["stopped"], ps.stopped(st)["n"])


class Session:
    def __init__(self):
        self.said = []

    def say(self, text=""):
        self.said.append(text)

    heading = say


class WalkTest(unittest.TestCase):
    """walk() with stand-ins: import k raises `broken[k]`, verify of the tree
    after patch k fails when k is in `torn`."""

    def walk(self, patches, broken=None, torn=(), session=None, images=False):
        events, current = [], []
        self.asked = []
        self.chosen = []

        def chosen(table, before, after):
            self.chosen.append((before, after))
            return (ri.IMAGE, None) if images else (ri.REBUILT, "no kbuild image: ...")

        @contextlib.contextmanager
        def temporary(wanted, **how):
            self.asked.append(how)
            (name, (_, given)), = wanted.items()
            k = len(given)
            if k in (broken or {}):
                raise broken[k]
            events.append(("in", name, k))
            current.append(k)
            try:
                yield {name: {"kernel": "6.12.1", "k": k}}
            finally:
                current.pop()
                events.append(("out", name, k))

        def verify_one(s, variant, clock_mode="tsc"):
            return TORN if current[-1] in torn else PASS

        def facts(name, counter, clocks, progress):
            k = current[-1]
            code = {"do_hres": ["nop"] * (10 + (k == 2))}
            return code, [record("monotonic", "hot", 57 + (k == 2), 0)]

        with mock.patch.object(ps.txn, "temporary", temporary), \
                mock.patch.object(ps, "verify_one", verify_one), \
                mock.patch.object(ps, "facts", facts), \
                mock.patch.object(ps.review_image, "chosen", chosen), \
                mock.patch.object(ps.store, "read_table", dict), contextlib.ExitStack() as held:
            w = ps.walk(session or Session(), held, "linux-source-6.12", patches, NAMES, "rdtscp",
                        ["monotonic"], lambda _: None)
            open_at_end = list(current)
        return w, events, open_at_end

    def test_every_patch_in_turn_the_last_held(self):
        w, events, held = self.walk(PATCHES)
        self.assertEqual(w.status, 0)
        self.assertEqual([st["result"] for st in w.steps], [ps.VERIFIED] * 3)
        # each tree between out before the next in; the end points held to the end
        self.assertEqual(events, [("in", NAMES[0], 0), ("in", ps.STEP, 1), ("out", ps.STEP, 1),
                                  ("in", ps.STEP, 2), ("out", ps.STEP, 2),
                                  ("in", NAMES[1], 3), ("out", NAMES[1], 3),
                                  ("out", NAMES[0], 0)])
        self.assertEqual(held, [0, 3])
        self.assertEqual(set(w.metas), set(NAMES))
        self.assertEqual({label for label, _ in w.checked}, {"before", "after"})
        self.assertEqual([st["code"] for st in w.steps],
                         ["identical", ["do_hres: 10 -> 11 instructions (+1)"],
                          ["do_hres: 11 -> 10 instructions (-1)"]])
        self.assertEqual([st["sim"] for st in w.steps],
                         [[], [("monotonic", "hot", 57, 58, 0, 0)],
                          [("monotonic", "hot", 58, 57, 0, 0)]])
        self.assertEqual([st["timed"] for st in w.steps], [False, False, True])
        self.assertEqual(set(w.sims), {"before", "after"})
        self.assertEqual([st["subject"][:5] for st in w.steps], ["vdso:"] * 3)

    def test_every_tree_is_built_with_the_reviews_kbuild_and_config(self):
        session = Session()
        session.kbuild, session.config = True, "/home/u/my.config"
        self.walk(PATCHES, session=session)
        how = {"kbuild": True, "config": "/home/u/my.config"}
        # the last tree's image is made with it (for the end points)
        self.assertEqual(self.asked, [how, dict(how, images=False), dict(how, images=False),
                                      dict(how, images=True)])
        session.fleet = ["--nodes", "all"]  # a cluster's nodes time the images too
        w, _, _ = self.walk(PATCHES, session=session, images=True)
        self.assertEqual(self.asked[-1], dict(how, images=True))
        self.assertEqual((w.inline, w.why, self.chosen), (ri.IMAGE, None, [NAMES]))

    def test_the_end_points_are_measured_on_their_images(self):
        w, _, _ = self.walk(PATCHES)
        self.assertEqual((w.inline, w.why), (ri.REBUILT, "no kbuild image: ..."))
        # each build also in the paravirtual modes (verify --clock-mode)
        self.assertEqual({v.rsplit("+", 1)[1] for _, v in w.checked},
                         {"always", "always@pvclock", "always@hvclock"})
        w, _, _ = self.walk(PATCHES, images=True)
        self.assertEqual((w.inline, self.chosen), (ri.IMAGE, [NAMES]))
        self.assertEqual({(label, v.rsplit("+", 1)[1].split("@")[0]) for label, v in w.checked},
                         {(label, inline) for label in ("before", "after")
                          for inline in ("always", "image")})
        # a walk stopped by a patch has no end points to choose a build for
        w, _, _ = self.walk(PATCHES, torn={2}, images=True)
        self.assertEqual((w.inline, self.chosen), (ri.REBUILT, []))

    def test_the_middle_patch_does_not_build(self):
        shim = probe.ShimError("linux-source-6.12", "lib/vdso/gettimeofday.c",
                               "gettimeofday.c:1: error: expected ';'")
        w, events, _ = self.walk(PATCHES, broken={2: shim})
        self.assertEqual(w.status, 2)
        self.assertEqual([st["result"] for st in w.steps],
                         [ps.VERIFIED, ps.BUILD, ps.NOT_TRIED])
        self.assertIn("error: expected ';'", w.steps[1]["why"])
        self.assertNotIn(("in", NAMES[1], 3), events)  # never tried
        self.assertEqual(events[-1], ("out", NAMES[0], 0))
        self.assertEqual(set(w.metas), {NAMES[0]})
        self.assertNotIn("after", w.sims)

    def test_the_last_patch_does_not_apply(self):
        refused = UsageError("import: /p/0003.patch does not apply: lib/vdso/gettimeofday.c "
                             "hunk #1 (@@ -1,3 +1,4 @@)")
        w, events, held = self.walk(PATCHES, broken={3: refused})
        self.assertEqual((w.status, [st["result"] for st in w.steps]),
                         (2, [ps.VERIFIED, ps.VERIFIED, ps.APPLY]))
        self.assertEqual(w.steps[2]["why"], "lib/vdso/gettimeofday.c hunk #1 (@@ -1,3 +1,4 @@)")
        self.assertEqual(held, [0])
        self.assertFalse(ps.into_review({}, w.steps))

    def test_the_second_of_two_tears(self):
        w, events, _ = self.walk(PATCHES[:2], torn={2})
        self.assertEqual(w.status, 1)
        self.assertEqual([st["result"] for st in w.steps], [ps.VERIFIED, ps.WRONG])
        self.assertEqual(w.steps[1]["why"], TORN["first_failure"])
        # the end points were reached: their records are the review's own
        self.assertIn(("after", "kernel:patch-review-after+fake+always"), w.checked)
        rv = {}
        self.assertTrue(ps.into_review(rv, w.steps))

    def test_the_middle_of_three_tears(self):
        w, events, _ = self.walk(PATCHES, torn={2})
        self.assertEqual((w.status, [st["result"] for st in w.steps]),
                         (1, [ps.VERIFIED, ps.WRONG, ps.NOT_TRIED]))
        self.assertEqual(events[-2:], [("out", ps.STEP, 2), ("out", NAMES[0], 0)])
        rv = {}
        self.assertFalse(ps.into_review(rv, w.steps))
        self.assertEqual(rv["torn"], f"patch 2: {TORN['first_failure']}")


if __name__ == "__main__":
    unittest.main()
