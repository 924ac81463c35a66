"""`compare`: paired rounds end to end with the real harness (the plumbing:
rows, names, shapes), the verdicts on recorded and synthetic rounds (never on
a live timing), every output format, two saved runs (unpaired), and each bad
input (one line, exit 2)."""

import json
import os
import tempfile
import unittest
from unittest import mock

from vdsobench_cli.core import stats
from vdsobench_cli.tests import support as fixtures
from vdsobench_cli.measure import rounds
from vdsobench_cli.tests.support import BASE, OTHER, recorded_rounds, vdsobench

TESTDATA = os.path.join(os.path.dirname(__file__), "testdata")
FIXTURE = os.path.join(TESTDATA, "results_small.json")
QUICK = ["--rounds", "8", "--batch-ms", "1", "--quiet"]
class PairedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-compare-")
        cls.out = os.path.join(cls.tmp.name, "cmp.json")
        cls.plots = os.path.join(cls.tmp.name, "plots")
        cls.rc, cls.stdout, cls.err = vdsobench(
            "compare", BASE, OTHER, "--clocks", "monotonic_raw,monotonic", "--format", "json",
            "--out", cls.out, "--plot", cls.plots, *QUICK)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_rows_per_clock_against_the_baseline(self):
        self.assertIn(self.rc, fixtures.LIVE_COMPARE_EXITS, self.err)
        data = json.loads(self.stdout)
        rows = {r["clock"]: r for r in data["rows"] if r["metric"] == "ns/call"}
        self.assertEqual(set(rows), {"monotonic", "monotonic_raw"})
        for r in rows.values():
            self.assertEqual((r["baseline"], r["variant"], r["n"]), (BASE, OTHER, 8))
            self.assertLessEqual(r["ci_low"], r["ratio"])
            self.assertLessEqual(r["ratio"], r["ci_high"])
            # which verdict is a timing (RecordedRoundsTest asserts them)
            self.assertIn(r["verdict"], fixtures.LIVE_VERDICTS)
        self.assertEqual(data["meta"]["comparisons"], 2)
        self.assertTrue(data["meta"]["paired"])

    def test_plot(self):
        self.assertEqual(sorted(os.listdir(self.plots)), ["ratios.png", "ratios.svg"])
        with open(os.path.join(self.plots, "ratios.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_out_keeps_the_rounds_and_is_never_overwritten(self):
        with open(self.out) as f:
            saved = json.load(f)
        self.assertEqual(len(saved["rounds"]["monotonic_raw/hot/cpu" + str(
            saved["rows"][0]["cpu"])][f"{OTHER}#0"]), 8)
        before = os.stat(self.out).st_mtime_ns
        rc, _, err = vdsobench("compare", BASE, OTHER, "--clocks", "time", "--out", self.out,
                               *QUICK)
        self.assertEqual(rc, 2)
        self.assertIn("exists", err)
        self.assertEqual(os.stat(self.out).st_mtime_ns, before)


class RecordedRoundsTest(unittest.TestCase):
    """The whole command on recorded rounds: the harness's measurement replaced,
    everything after it (pairing, statistics, verdicts, formats) real."""

    def compare(self, measure, *argv):
        with mock.patch.object(rounds, "measure", measure):
            rc, out, err = vdsobench("compare", BASE, OTHER, "--clocks",
                                     "monotonic_raw,monotonic", "--rounds", "16", "--quiet",
                                     *argv)
        self.assertEqual(rc, 0, err)
        measure.assert_called_once()
        hargs = measure.call_args.args[1]
        self.assertEqual(hargs[:2], ["--variants", f"{BASE},{OTHER}"])
        return out

    def rows(self, measure):
        data = json.loads(self.compare(measure, "--format", "json"))
        return {r["clock"]: r for r in data["rows"] if r["metric"] == "ns/call"}

    def test_recorded_verdicts(self):
        rows = self.rows(recorded_rounds())
        self.assertEqual(rows["monotonic_raw"]["verdict"], "faster")
        self.assertLess(rows["monotonic_raw"]["ci_high"], 0.1, "a syscall against a read")
        self.assertEqual(rows["monotonic"]["verdict"], "no significant difference")
        self.assertEqual({r["n"] for r in rows.values()}, {16})
        self.assertLess(rows["monotonic_raw"]["p_adjusted"], 0.05)

    def test_synthetic_slowdown_and_a_a(self):
        slower = self.rows(recorded_rounds(scale={"monotonic": 1.5}))
        recorded = self.rows(recorded_rounds())
        self.assertEqual(slower["monotonic"]["verdict"], "slower")
        self.assertAlmostEqual(slower["monotonic"]["ratio"],
                               1.5 * recorded["monotonic"]["ratio"], delta=0.05)
        same = self.rows(recorded_rounds(same=True))
        for clock, r in same.items():
            self.assertEqual((r["ratio"], r["verdict"]), (1.0, "no significant difference"),
                             clock)

    def test_lkml_format_on_recorded_rounds(self):
        out = self.compare(recorded_rounds(), "--format", "lkml", "--calls-per", "10s")
        self.assertTrue(all(len(line) <= 72 for line in out.splitlines()), out)
        lines = {line.split()[0]: line for line in out.splitlines()[:4]}
        self.assertNotIn("~", lines["CLOCK_MONOTONIC_RAW"], "significant: not marked ~")
        self.assertIn("~", lines["CLOCK_MONOTONIC"], "no significant difference: marked ~")
        self.assertIn("Medians of 16 interleaved rounds", out)


class UnpairedTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-compare-")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, obj_or_text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text))
        return path

    def fixture(self):
        with open(FIXTURE) as f:
            return json.load(f)

    def test_same_file_every_format(self):
        for fmt in ("table", "lkml", "markdown", "csv", "json"):
            rc, out, err = vdsobench("compare", "--results", FIXTURE, FIXTURE, "--format", fmt)
            self.assertEqual(rc, 0, err)
            self.assertIn("unpaired", out.lower() if fmt != "csv" else "unpaired")
            if fmt == "lkml":
                self.assertTrue(all(len(line) <= 72 for line in out.splitlines()), out)
        rc, out, _ = vdsobench("compare", "--results", FIXTURE, FIXTURE, "--format", "json")
        rows = json.loads(out)["rows"]
        self.assertEqual(len(rows), 3)
        self.assertTrue(all(r["verdict"] == "no significant difference" for r in rows))
        self.assertFalse(json.loads(out)["meta"]["paired"])

    def test_slower_new_run(self):
        new = self.fixture()
        for b in new["benchmarks"]:
            if b["run_type"] == "iteration" and b["name"].startswith("sys/vdso"):
                b["real_time"] *= 3
        rc, out, err = vdsobench("compare", "--results", FIXTURE, self.write("new.json", new),
                                 "--format", "json")
        self.assertEqual(rc, 0, err)
        verdicts = {r["variant"]: r["verdict"] for r in json.loads(out)["rows"]}
        # three repetitions each cannot be significant at 95%: unpaired is cautious
        self.assertEqual(verdicts["sys/vdso (new)"], "no significant difference")

    def test_a_32_bit_run_against_a_64_bit_one_is_said(self):
        # the fixture predates the ABI record: a 64-bit run of its machine's
        new = self.fixture()
        new["context"]["vdsobench"]["abi"] = {"name": "i386", "bits": 32, "left_out": []}
        path = self.write("i386.json", new)
        rc, out, err = vdsobench("compare", "--results", FIXTURE, path, "--format", "json")
        self.assertEqual(rc, 0, err)
        meta = json.loads(out)["meta"]
        self.assertEqual(meta["abi"], "i386 (32-bit)")
        self.assertIn("different ABIs: x86_64 (64-bit) vs i386 (32-bit): each run timed its "
                      "own process's vDSO (a 32-bit process maps vdso32)", meta["notes"])
        rc, out, err = vdsobench("compare", "--results", FIXTURE, path, "--format", "lkml")
        self.assertEqual(rc, 0, err)
        self.assertIn("an i386 (32-bit) process.", " ".join(out.split()))
        rc, out, err = vdsobench("compare", "--results", FIXTURE, FIXTURE, "--format", "json")
        self.assertEqual(json.loads(out)["meta"]["abi"], "x86_64 (64-bit)")
        self.assertFalse([n for n in json.loads(out)["meta"]["notes"] if "ABI" in n])

    def test_many_rows_cost_a_few_ratios_each(self):
        """The unpaired interval weighs each distinct resampled ratio once: a
        file of 120 rows of 3 repetitions computes a handful of ratios a row,
        never one per bootstrap resample (9999 a row made 128 MB take 14
        minutes)."""
        path = self.write("many.json", fixtures.many_results(40))
        with mock.patch.object(stats, "_ratio", wraps=stats._ratio) as ratio:
            rc, out, err = vdsobench("compare", "--results", path, path, "--format", "json")
        self.assertEqual(rc, 0, err)
        rows = json.loads(out)["rows"]
        self.assertEqual(len(rows), 120)
        self.assertLessEqual(ratio.call_count, 20 * len(rows))

    def assert_bad(self, needle, *argv):
        rc, _, err = vdsobench("compare", *argv)
        self.assertEqual(rc, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(needle, err)

    def test_bad_files(self):
        with open(FIXTURE) as f:
            text = f.read()
        self.assert_bad("not valid JSON", "--results", FIXTURE, self.write("t.json", text[:200]))
        self.assert_bad("empty file", "--results", self.write("e.json", ""), FIXTURE)
        other = self.fixture()
        other["context"]["vdsobench"]["schema"] = "vdsobench-results/0"
        self.assert_bad("vdsobench-results/1", "--results", FIXTURE, self.write("s.json", other))
        none = self.fixture()
        for b in none["benchmarks"]:
            for key in ("name", "run_name"):
                b[key] = b[key].replace("cpu0", "cpu7").replace("cpu1", "cpu8")
        self.assert_bad("no benchmark in common", "--results", FIXTURE,
                        self.write("n.json", none))
        self.assert_bad("No such file", "--results", FIXTURE,
                        os.path.join(self.tmp.name, "missing.json"))

    def test_bad_usage(self):
        self.assert_bad("at least two", BASE)
        self.assert_bad("--format", "--results", FIXTURE, FIXTURE, "--format", "html")
        self.assert_bad("--alpha", "--results", FIXTURE, FIXTURE, "--alpha", "2")
        self.assert_bad("must name one subject", "x86_gtod*", OTHER, *QUICK)
        self.assert_bad("'nope'", BASE, "nope", *QUICK)
        self.assert_bad("--calls-per", "--results", FIXTURE, FIXTURE, "--calls-per", "soon")


if __name__ == "__main__":
    unittest.main()
