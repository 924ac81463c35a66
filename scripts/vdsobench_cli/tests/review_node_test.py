"""What the submit host of `recipe patch-review --fleet` takes from a node's
review file (recipes/patch_review_fleet.py): the paired rounds per clock, the
verify pair and the counter from a recorded file (review-node-6.12-quick.json:
`review-node kernel:rn-before kernel:rn-after --quick` on Rocket Lake,
6.12 with 6.12-max-cycles-last.patch), and every file a hostile or broken
node could leave refused with one line, the node then named as failed.
review-node's own refusals (an unknown layout or counter) through the CLI.
No timing: the rounds are recorded ones."""

import argparse
import contextlib
import copy
import io
import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.core import limits
from vdsobench_cli.recipes import patch_review_fleet as pf
from vdsobench_cli.tests.support import TESTDATA, cli, one_line

RECORDED = TESTDATA / "review-node-6.12-quick.json"
BEFORE, AFTER = "kernel:rn-before", "kernel:rn-after"


class ReadTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-review-node-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.good = json.loads(RECORDED.read_text())

    def write(self, obj, name="n1.json"):
        path = self.tmp / name
        path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
        return str(path)

    def outcome(self, path, rc=0, node="n1"):
        return {"node": node, "state": "ok" if rc == 0 else "failed", "rc": rc,
                "results": path, "cpu": {"vendor": "GenuineIntel", "family": 6, "model": 167},
                "kernel": "6.18.44", "reason": None if rc == 0 else f"exit {rc}: x"}

    def test_recorded_file(self):
        review, comparison = pf.load_review(self.write(self.good), BEFORE, AFTER, 0)
        rounds = pf.node_rounds(review, comparison)
        self.assertEqual(sorted(rounds), [("monotonic", "hot"), ("monotonic_raw", "hot"),
                                          ("realtime", "hot")])
        for row, rec in rounds.items():
            self.assertEqual(rec.key.row, row)
            self.assertEqual(len(rec.before_ns), len(rec.after_ns))
            self.assertEqual(len(rec.before_ns), review["plan"]["rounds"])
        pair = pf.verify_pair(review)
        self.assertEqual(pair["after"][0], True)
        self.assertIn("PASS", pair["after"][1])
        [n] = pf.node_inputs([self.outcome(self.write(self.good))], BEFORE, AFTER)
        self.assertIsNone(n["failed"])
        self.assertEqual(n["counter"], "rdtscp")
        self.assertEqual(n["rounds"], rounds)

    def test_the_images_build_is_read_as_asked(self):
        """A node asked for kbuild's images (review-node --build image) names
        them in its file; the host reads the +image rows and records, and
        refuses a file of the other build."""
        with self.assertRaises(UsageError) as e:
            pf.load_review(self.write(self.good), BEFORE, AFTER, 0, "image")
        self.assertIn("it reviews the always build, not the image one", str(e.exception))
        image = json.loads(json.dumps(self.good).replace("+always", "+image"))
        image["review"]["build"] = "image"
        review, comparison = pf.load_review(self.write(image), BEFORE, AFTER, 0, "image")
        self.assertEqual(sorted(pf.node_rounds(review, comparison)),
                         [("monotonic", "hot"), ("monotonic_raw", "hot"), ("realtime", "hot")])
        with self.assertRaises(UsageError):  # +image records, but a file saying always
            del image["review"]["build"]
            pf.load_review(self.write(image), BEFORE, AFTER, 0)

    def test_a_refused_row_is_left_out(self):
        bad = copy.deepcopy(self.good)
        row = next(r for r in bad["comparison"]["rows"] if r["clock"] == "realtime")
        row["refused"] = f"realtime/hot/cpu{row['cpu']}: lost"
        review, comparison = pf.load_review(self.write(bad), BEFORE, AFTER, 0)
        rounds = pf.node_rounds(review, comparison)
        self.assertNotIn(("realtime", "hot"), rounds)
        self.assertIn(("monotonic", "hot"), rounds)

    def test_a_row_the_lost_rule_refuses_is_the_reductions_to_refuse(self):
        """The rule over the row's rounds (its disturbed rounds, a field),
        whatever the node's own "refused" says: the record is kept, and
        reports/fleet_review.py refuses it and says so."""
        from reports import fleet_review
        bad = copy.deepcopy(self.good)
        row = next(r for r in bad["comparison"]["rows"] if r["clock"] == "monotonic")
        key = f"monotonic/hot/cpu{row['cpu']}"
        measured = bad["comparison"]["rounds"][key][f"{AFTER}+rdtscp+always#0"]
        row["disturbed"] = sorted(map(int, measured))[:5]
        for refused in (None, f"{key}: 5 of 10 rounds lost the CPU"):
            row["lost"], row["refused"] = 5, refused
            review, comparison = pf.load_review(self.write(bad), BEFORE, AFTER, 0)
            rounds = pf.node_rounds(review, comparison)
            self.assertEqual(set(rounds), {("monotonic", "hot"), ("realtime", "hot"),
                                           ("monotonic_raw", "hot")})
            self.assertTrue(rounds[("monotonic", "hot")].refused())
            self.assertIsNone(rounds[("realtime", "hot")].refused())
            [n] = pf.node_inputs([self.outcome(self.write(bad))], BEFORE, AFTER)
            red = fleet_review.reduce([n])
            self.assertEqual(red["notes"], ["lost the CPU too often on 1 row of n1: not pooled"])
            cells = {(c, m): cs for c, m, cs in red["rows"]}
            [cell] = cells[("monotonic", "hot")].values()
            self.assertEqual(cell["reason"], "lost the CPU too often on every node")

    def test_torn_node(self):
        torn = copy.deepcopy(self.good)
        torn["review"]["verify"][0].update(status="CAUGHT", verdict="CAUGHT: edges: torn",
                                           first_failure="edges: max_cycles: torn")
        torn["review"].update(torn="edges: max_cycles: torn", plan=None, seconds=None)
        torn["comparison"] = None
        [n] = pf.node_inputs([self.outcome(self.write(torn), rc=1)], BEFORE, AFTER)
        self.assertIsNone(n["failed"])
        self.assertEqual(n["verify"]["after"], (False, "CAUGHT: edges: torn"))
        self.assertEqual(n["rounds"], {})

    def hostile(self):
        def edit(f):
            obj = copy.deepcopy(self.good)
            f(obj)
            return obj
        yield "not JSON", "{\"review\": ", 0
        yield "a list", [], 0
        yield "other layouts", edit(lambda o: o["review"].update(before="kernel:other")), 0
        yield "an extra key", edit(lambda o: o.update(extra=1)), 0
        yield "exit 1 but not torn", self.good, 1
        yield "torn but timed", edit(lambda o: o["review"].update(torn="x")), 1
        yield "a huge string", edit(lambda o: o["review"].update(counter="x" * 100000)), 0
        yield "a negative ratio", edit(
            lambda o: o["comparison"]["rows"][0].update(ratio=-1.0)), 0
        def negative(o):
            subjects = next(iter(o["comparison"]["rounds"].values()))
            by_round = next(iter(subjects.values()))
            by_round[next(iter(by_round))] = -1
        yield "a negative time", edit(negative), 0
        yield "a bad format", edit(lambda o: o["review"].update(format="other/9")), 0

    def test_hostile_files_fail_their_node(self):
        for what, obj, rc in self.hostile():
            with self.subTest(what):
                path = self.write(obj)
                with self.assertRaises(UsageError) as e:
                    pf.load_review(path, BEFORE, AFTER, rc)
                self.assertNotIn("\n", str(e.exception))
                [n] = pf.node_inputs([self.outcome(path, rc)], BEFORE, AFTER)
                self.assertTrue(n["failed"].startswith("its review file is unusable: "),
                                n["failed"])
                self.assertEqual(n["rounds"], {})

    def test_a_file_past_the_cap_is_not_read(self):
        path = self.tmp / "big.json"
        with open(path, "wb") as f:
            f.truncate(17 << 20)  # sparse: 17 MB of nothing, never parsed
        with self.assertRaises(UsageError) as e:
            pf.load_review(str(path), BEFORE, AFTER, 0)
        self.assertIn("review file", str(e.exception))

    def test_a_link_or_fifo_is_not_read(self):
        target = self.write(self.good, "real.json")
        link = self.tmp / "link.json"
        link.symlink_to(target)
        fifo = self.tmp / "fifo.json"
        os.mkfifo(fifo)
        for path in (link, fifo):
            with self.subTest(path.name):
                with self.assertRaises(UsageError):
                    pf.load_review(str(path), BEFORE, AFTER, 0)

    def test_a_node_that_failed_otherwise(self):
        o = self.outcome(None, rc=3)
        o["reason"] = "exit 3: no vDSO"
        [n] = pf.node_inputs([o], BEFORE, AFTER)
        self.assertEqual(n["failed"], "exit 3: no vDSO")


class MixedCountersTest(unittest.TestCase):
    """Two recorded node files of one CPU, one read with its own counter
    (rdtscp), one forced to the other (review-node --counter lfence_rdtsc,
    review-node-6.12-quick-lfence.json, the same tree and machine): the rows
    line up by clock, the model names both counters, and each cell pools
    both nodes' rounds (a row that lost the CPU too often aside)."""

    def test_rows_line_up(self):
        from reports import fleet_review, fleet_review_text
        tmp = Path(tempfile.mkdtemp(prefix="vdsobench-review-mixed-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        cpu = {"vendor": "GenuineIntel", "family": 6, "model": 167}
        outcomes = []
        for node, name in (("n1", "review-node-6.12-quick.json"),
                           ("n2", "review-node-6.12-quick-lfence.json")):
            path = tmp / f"{node}.json"
            path.write_text((TESTDATA / name).read_text())
            outcomes.append({"node": node, "state": "ok", "rc": 0, "results": str(path),
                             "cpu": cpu, "kernel": "6.18.44", "reason": None})
        nodes = pf.node_inputs(outcomes, BEFORE, AFTER)
        self.assertEqual([n["counter"] for n in nodes], ["rdtscp", "lfence_rdtsc"])
        red = fleet_review.reduce(nodes)
        [model] = red["models"]
        self.assertEqual(model["counters"], ["lfence_rdtsc", "rdtscp"])
        self.assertEqual([(c, m) for c, m, _ in red["rows"]],
                         [("realtime", "hot"), ("monotonic", "hot"), ("monotonic_raw", "hot")])
        for clock, mode, cells in red["rows"]:
            recs = [x["rounds"][(clock, mode)] for x in nodes]
            pooled = [r for r in recs if r.lost <= limits.MAX_LOST * len(r.rounds)]
            n = sum(len(r.before_ns) for r in pooled)
            self.assertEqual(cells[model["cpu"]]["n"], n, clock)
            self.assertGreater(n, 10, clock)
        text = "\n".join(fleet_review_text.lines(red))
        self.assertIn("lfence_rdtsc", text)
        self.assertEqual(sum(x.startswith("MONOTONIC ") for x in text.splitlines()), 1, text)


class ScaleTest(unittest.TestCase):
    """The host's side at fleet size: 1000 nodes' files (the recorded one, its
    rounds scaled per model so the models differ; 3% of the nodes failed or
    hostile) read, pooled and rendered within the block's limits."""

    def test_a_thousand_nodes(self):
        from reports import fleet_review, fleet_review_text
        good = json.loads(RECORDED.read_text())
        models = [{"vendor": "AuthenticAMD", "family": 25, "model": m}
                  for m in (1, 17, 97, 68)] + [{"vendor": "GenuineIntel", "family": 6,
                                                "model": 143}]
        tmp = Path(tempfile.mkdtemp(prefix="vdsobench-review-scale-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        outcomes = []
        for i in range(1000):
            obj = copy.deepcopy(good)
            scale = 1 + 0.01 * (i % len(models))
            for subjects in obj["comparison"]["rounds"].values():
                for subject, by_round in subjects.items():
                    if "after" in subject:
                        for k in by_round:
                            by_round[k] *= scale
            path = tmp / f"n{i}.json"
            path.write_text("{" if i % 50 == 7 else json.dumps(obj))
            rc = 0 if i % 97 != 3 else 5
            outcomes.append({"node": f"n{i}", "state": "ok" if rc == 0 else "failed", "rc": rc,
                             "results": str(path), "cpu": models[i % len(models)],
                             "kernel": "6.1.0-13-amd64",
                             "reason": None if rc == 0 else "exit 5: no vDSO"})
        nodes = pf.node_inputs(outcomes, BEFORE, AFTER)
        reduced = fleet_review.reduce(nodes)
        text = fleet_review_text.lines(reduced, 72, 32)
        failed = [n for n in nodes if n["failed"]]
        self.assertEqual(len(failed), len([i for i in range(1000)
                                           if i % 50 == 7 or i % 97 == 3]))
        self.assertEqual(len(reduced["models"]), len(models))
        self.assertEqual(sum(len(m["nodes"]) for m in reduced["models"]), 1000 - len(failed))
        self.assertLessEqual(len(text), 32)
        self.assertTrue(all(len(x) <= 72 for x in text), text)


class NoVerdictTest(unittest.TestCase):
    def test_a_verify_that_did_not_run_writes_no_review(self):
        """No tear and nothing timed: the node fails (the host names it as
        failed), where it once wrote a file saying the patch tore."""
        from vdsobench_cli.commands import review_node
        known = [{"name": f"{layout}+{c}+always", "layout": layout, "counter": c}
                 for layout in (BEFORE, AFTER) for c in ("fake", "rdtscp")]
        recs = {f"{AFTER}+fake+always": {"status": "PASS", "checks": []},
                f"{AFTER}+rdtscp+always": {"status": "no result (exit 2)"}}
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "n1.json")
            args = argparse.Namespace(
                before=BEFORE, after=AFTER, out=out, force=False, counter="rdtscp",
                quick=True, clocks=None, budget=None, build="always")
            with mock.patch.object(review_node.variants_mod, "load", return_value=known), \
                    mock.patch.object(review_node, "progress"), \
                    mock.patch.object(review_node, "verify_one",
                                      side_effect=lambda s, v: recs.get(v, {"status": "PASS"})):
                with self.assertRaises(Failure) as caught:
                    review_node.run(args)
            self.assertFalse(os.path.exists(out))
        self.assertIn(f"verify gave no verdict on {AFTER}+rdtscp+always: no result (exit 2)",
                      str(caught.exception))


class BuildTest(unittest.TestCase):
    """review-node --build image verifies and times the +image variants, and
    refuses in one line where the import holds no image."""

    def run_node(self, known, build_kind):
        from vdsobench_cli.commands import review_node
        asked = []
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "n1.json")
            args = argparse.Namespace(
                before=BEFORE, after=AFTER, out=out, force=False, counter="rdtscp",
                quick=True, clocks=None, budget=None, build=build_kind)
            fail = {"status": "FAIL", "first_failure": "concurrency: torn", "checks": []}
            with mock.patch.object(review_node.variants_mod, "load", return_value=known), \
                    mock.patch.object(review_node, "progress"), \
                    mock.patch.object(review_node, "verify_one",
                                      side_effect=lambda s, v: asked.append(v) or fail), \
                    contextlib.redirect_stdout(io.StringIO()):
                review_node.run(args)  # the patched tree tears: written, nothing timed
            with open(out) as f:
                return asked, json.load(f)["review"]

    def known(self, inlines):
        return [{"name": f"{layout}+{c}+{i}", "layout": layout, "counter": c}
                for layout in (BEFORE, AFTER) for c in ("fake", "rdtscp") for i in inlines]

    def test_the_images_are_verified(self):
        asked, review = self.run_node(self.known(("always", "image")), "image")
        self.assertEqual(asked, [f"{AFTER}+fake+image", f"{AFTER}+rdtscp+image",
                                 f"{BEFORE}+fake+image", f"{BEFORE}+rdtscp+image"])
        self.assertEqual(review["build"], "image")
        pf.check_verify(review, "n1.json")  # what the host checks of it holds
        asked, review = self.run_node(self.known(("always", "image")), "always")
        self.assertEqual({v.rsplit("+", 1)[1] for v in asked}, {"always"})

    def test_no_image_is_one_line(self):
        with self.assertRaises(UsageError) as e:
            self.run_node(self.known(("always",)), "image")
        self.assertIn(f"--build image: {BEFORE}+fake+image is not built here", str(e.exception))


class CommandTest(unittest.TestCase):
    def test_unknown_layout(self):
        rc, _, err = cli("review-node", "kernel:nope", "kernel:nope2", "--out",
                         os.devnull + ".x")
        one_line(self, rc, err, "'kernel:nope' is not an imported layout", "valid:")

    def test_out_required(self):
        rc, _, err = cli("review-node", "kernel:a", "kernel:b")
        one_line(self, rc, err, "--out")

    def test_not_on_every_machine_without_fleet(self):
        rc, _, err = cli("recipe", "patch-review", "--nodes", "2")
        one_line(self, rc, err, "--nodes is for --fleet")
        rc, _, err = cli("recipe", "inline", "--fleet")
        one_line(self, rc, err, "--fleet is for patch-review")


if __name__ == "__main__":
    unittest.main()
