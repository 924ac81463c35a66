"""Corrupt inputs against every reader: each class of bad file (NaN or
Infinity, a time at or below 0, a missing or wrong-typed field, a repeated
entry or key, nesting 100000 deep, hundreds of MB) written to a temp dir and
handed to plot, merge, report, compare --results and gate --baseline: exit 2,
exactly one stderr line naming the file and the problem, no traceback, in
well under the time it would take to read or recurse through it. The
exceptions the loader makes on purpose (Google Benchmark's NaN, compare's
x/0) are accepted, and only there."""

import copy
import json
import math
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.commands import gate
from vdsobench_cli.measure import comparison_io, sim
from vdsobench_cli.cli import inputs
from vdsobench_cli.measure import results, rounds
from vdsobench_cli.tests import support
from vdsobench_cli.cli.build import ROOT

FIXTURE = Path(__file__).resolve().parent / "testdata" / "results_small.json"
COMPARISON = ROOT / "reports" / "testdata" / "compare.json"
BASELINE = ROOT / "results" / "baselines" / "ci.json"
# seconds a refusal may take: reading or recursing through the worst files
# would take far longer; loose enough for a loaded machine
LIMIT_S = 10


def vdsobench(*argv):
    """(exit status, stdout, stderr, seconds) of `scripts/vdsobench ARGV`, in process."""
    start = time.monotonic()
    return (*support.vdsobench(*map(str, argv)), time.monotonic() - start)


def load(path):
    with open(path) as f:
        return json.load(f)


def edited(path, edit):
    """The JSON at path after edit(obj); NaN and Infinity floats become the literals."""
    obj = load(path)
    edit(obj)
    return json.dumps(obj, indent=1)


def setter(*keys_and_value):
    *keys, value = keys_and_value

    def edit(obj):
        for k in keys[:-1]:
            obj = obj[k]
        obj[keys[-1]] = value
    return edit


def deleter(*keys):
    def edit(obj):
        for k in keys[:-1]:
            obj = obj[k]
        del obj[keys[-1]]
    return edit


def repeat(*keys):
    """Append a copy of the element at keys to its list."""
    def edit(obj):
        for k in keys[:-1]:
            obj = obj[k]
        obj.append(copy.deepcopy(obj[keys[-1]]))
    return edit


def deep(_path):
    return "[" * 100_000 + "]" * 100_000


def huge(_path):
    return None  # made sparse by write_case


def repeated_key(path):
    text = Path(path).read_text()
    return text.replace('"real_time":', '"real_time": 1, "real_time":', 1)


# (case, text maker, what the message must say); a text maker takes the good
# file's path and returns the bad file's text
RESULTS_CASES = (
    ("nan", lambda p: edited(p, setter("benchmarks", 1, "real_time", math.nan)),
     "NaN at benchmarks[1].real_time"),
    ("infinity", lambda p: edited(p, setter("benchmarks", 2, "cpu_time", math.inf)),
     "Infinity at benchmarks[2].cpu_time"),
    ("minus-infinity", lambda p: edited(p, setter("benchmarks", 0, "cycles", -math.inf)),
     "-Infinity at benchmarks[0].cycles"),
    ("nan-in-a-cv-time", lambda p: edited(p, setter("benchmarks", 6, "real_time", math.nan)),
     "NaN at benchmarks[6].real_time"),
    ("nan-in-context", lambda p: edited(p, setter("context", "mhz_per_cpu", math.nan)),
     "NaN at context.mhz_per_cpu"),
    ("negative-time", lambda p: edited(p, setter("benchmarks", 1, "real_time", -3.5)),
     "benchmarks[1].real_time: -3.5 is not a"),
    ("zero-time", lambda p: edited(p, setter("benchmarks", 8, "real_time", 0)),
     "benchmarks[8].real_time: 0 is not above 0"),
    ("zero-median", lambda p: edited(p, setter("benchmarks", 4, "real_time", 0.0)),
     "benchmarks[4].real_time: 0.0 is not above 0"),
    ("no-iterations", lambda p: edited(p, setter("benchmarks", 0, "iterations", 0)),
     "benchmarks[0].iterations: 0 is not at least 1"),
    ("missing-field", lambda p: edited(p, deleter("benchmarks", 9, "real_time")),
     "benchmarks[9]: missing 'real_time'"),
    ("wrong-type", lambda p: edited(p, setter("benchmarks", 7, "iterations", "many")),
     "benchmarks[7].iterations: expected a whole number, found a string"),
    ("string-nan", lambda p: edited(p, setter("benchmarks", 7, "real_time", "NaN")),
     "benchmarks[7].real_time: expected a number, found a string"),
    ("repeated-repetition", lambda p: edited(p, repeat("benchmarks", 1)),
     "'sys/vdso/monotonic/hot/cpu0' repetition 1 appears twice"),
    ("repeated-aggregate", lambda p: edited(p, repeat("benchmarks", 3)),
     "'sys/vdso/monotonic/hot/cpu0_mean' aggregate appears twice"),
    ("repetition-out-of-range", lambda p: edited(p, setter("benchmarks", 2, "repetition_index",
                                                           3)),
     "benchmarks[2].repetition_index: 3 of 3 repetitions"),
    ("repeated-key", repeated_key, "the key 'real_time' appears twice"),
    ("deep", deep, "nested 100000 deep"),
    ("huge", huge, "900 MB is larger than the 128 MB a results file"),
)

COMPARISON_CASES = (
    ("nan", lambda p: edited(p, setter("rows", 0, "ratio", math.nan)),
     "NaN at rows[0].ratio"),
    ("infinity-not-x-over-0", lambda p: edited(p, setter("rows", 1, "ci_high", math.inf)),
     "Infinity at rows[1].ci_high"),
    ("negative-time", lambda p: edited(p, setter("rows", 2, "base", -1)),
     "rows[2].base: -1 is not a"),
    ("zero-time", lambda p: edited(p, setter("rows", 2, "value", 0)),
     "rows[2].value: 0 is not above 0"),
    ("missing-field", lambda p: edited(p, deleter("rows", 1, "variant")),
     "rows[1]: missing 'variant'"),
    ("wrong-type", lambda p: edited(p, setter("rows", 0, "ratio", "1.01")),
     "rows[0].ratio: expected a number or null, found a string"),
    ("repeated-row", lambda p: edited(p, repeat("rows", 1)), "appears twice"),
    ("ratio-outside-interval", lambda p: edited(p, setter("rows", 0, "ratio", 2.0)),
     "ratio 2 is outside its interval"),
    ("deep", deep, "nested 100000 deep; a results file or comparison is at most 64"),
    ("huge", huge, "900 MB is larger than the 128 MB a results file or comparison may be"),
)


def sim_row(key, value):
    return setter("sim", "rows", 0, key, value)


BASELINE_CASES = (
    ("nan", lambda p: edited(p, sim_row("instructions_per_call", math.nan)),
     "NaN at sim.rows[0].instructions_per_call"),
    ("infinity", lambda p: edited(p, setter("sim", "tolerance", "instructions", math.inf)),
     "Infinity at sim.tolerance.instructions"),
    ("string-nan", lambda p: edited(p, sim_row("l1d_misses_per_call", "NaN")),
     "sim.rows[0].l1d_misses_per_call: expected a number, found a string"),
    ("negative-value", lambda p: edited(p, sim_row("l1d_misses_per_call", -1.0)),
     "sim.rows[0].l1d_misses_per_call: -1.0 is not at least 0"),
    ("zero-instructions", lambda p: edited(p, sim_row("instructions_per_call", 0)),
     "sim.rows[0].instructions_per_call: 0 is not above 0"),
    ("negative-tolerance", lambda p: edited(p, setter("sim", "tolerance", "instructions", -5)),
     "sim.tolerance.instructions: -5 is not at least 0"),
    ("missing-field", lambda p: edited(p, deleter("sim", "rows", 3, "l1d_misses_per_call")),
     "sim.rows[3]: missing 'l1d_misses_per_call'"),
    ("wrong-type", lambda p: edited(p, sim_row("variant", 7)),
     "sim.rows[0].variant: expected a string, found a whole number"),
    ("repeated-row", lambda p: edited(p, repeat("sim", "rows", 0)), "appears twice"),
    ("negative-timing-ratio", lambda p: edited(p, setter("timing", {
        "reference": "x86_gtod+rdtscp+always", "threshold": 0.05, "rounds": 8,
        "rows": [{"variant": "x86_gtod+rdtscp+always", "clock": "monotonic", "mode": "hot",
                  "ratio_to_reference": -1.0}]})),
     "timing.rows[0].ratio_to_reference: -1.0 is not above 0"),
    ("negative-threshold", lambda p: edited(p, setter("timing", {
        "reference": "x86_gtod+rdtscp+always", "threshold": -0.5, "rounds": 8,
        "rows": [{"variant": "x86_gtod+rdtscp+always", "clock": "monotonic", "mode": "hot",
                  "ratio_to_reference": 1.0}]})),
     "timing.threshold: -0.5 is not at least 0"),
    ("deep", deep, "nested 100000 deep"),
    ("huge", huge, "900 MB is larger than the 16 MB a baseline may be"),
)

# (reader, argv with {bad}, {good} and {out} to fill in, the good file)
RESULTS_READERS = (
    ("plot", ["plot", "{bad}", "--out", "{out}"]),
    ("merge", ["merge", "{good}", "{bad}"]),
    ("report", ["report", "{bad}", "--out", "{out}"]),
    ("compare-new", ["compare", "--results", "{good}", "{bad}"]),
    ("compare-old", ["compare", "--results", "{bad}", "{good}"]),
)


class CorruptInputTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="vdsobench-faults-")
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def write_case(self, name, make, good):
        path = self.dir / f"{name}.json"
        text = make(good)
        if text is None:
            with open(path, "wb") as f:
                f.truncate(900 * inputs.MB)  # sparse: no disk, no time
        else:
            path.write_text(text)
        return path

    def assert_refused(self, argv, bad, needle):
        rc, out, err, seconds = vdsobench(*argv)
        self.assertEqual(rc, 2, err)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertNotIn("Traceback", err)
        self.assertIn(str(bad), err)
        self.assertIn(needle, err)
        self.assertLess(seconds, LIMIT_S, err)
        self.assertEqual(out, "")
        return err

    def test_results_readers(self):
        for case, make, needle in RESULTS_CASES:
            bad = self.write_case(case, make, FIXTURE)
            for reader, argv in RESULTS_READERS:
                with self.subTest(case=case, reader=reader):
                    out = self.dir / f"out-{case}-{reader}"
                    self.assert_refused([a.format(bad=bad, good=FIXTURE, out=out)
                                         for a in argv], bad, needle)
                    self.assertFalse(out.exists(), "nothing written")

    def test_comparison_reader(self):
        for case, make, needle in COMPARISON_CASES:
            bad = self.write_case(case, make, COMPARISON)
            with self.subTest(case=case):
                self.assert_refused(["plot", bad, "--out", self.dir / "out"], bad, needle)

    def test_baseline_reader_refuses_before_measuring(self):
        measured = mock.Mock(side_effect=AssertionError("measured"))
        for case, make, needle in BASELINE_CASES:
            bad = self.write_case(case, make, BASELINE)
            for extra in ([], ["--update-baseline"]):
                with self.subTest(case=case, update=bool(extra)), \
                        mock.patch.object(sim, "measure", measured), \
                        mock.patch.object(rounds, "measure", measured), \
                        mock.patch.object(rounds, "binary", measured):
                    before = bad.stat().st_mtime_ns
                    self.assert_refused(["gate", "--baseline", bad, *extra], bad, needle)
                    self.assertEqual(bad.stat().st_mtime_ns, before, "the baseline untouched")
        measured.assert_not_called()

    def test_unreadable_kinds(self):
        empty = self.dir / "empty.json"
        empty.write_text(" \n")
        latin = self.dir / "latin.json"
        latin.write_bytes(b'{"context":\n "caf\xe9"}')
        for path, needle in ((empty, "empty file"), (latin, "line 2: not UTF-8"),
                             (self.dir, "is a directory")):
            for reader, argv in RESULTS_READERS + (("gate", ["gate", "--baseline", "{bad}"]),):
                with self.subTest(path=path.name, reader=reader):
                    self.assert_refused([a.format(bad=path, good=FIXTURE, out=self.dir / "o")
                                         for a in argv], path, needle)

    def test_a_file_longer_than_its_size_is_capped_while_reading(self):
        # /proc files say they are empty; the read itself stops past the cap
        status = "/proc/self/status"
        with mock.patch.dict(inputs.LIMITS, {"baseline": 64}):
            self.assert_refused(["gate", "--baseline", status], status,
                                "more than the 64 bytes a baseline may be")


class WhatTheLoaderAllowsTest(unittest.TestCase):
    """The two places where non-numbers are written on purpose, and nowhere else."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="vdsobench-faults-")
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def test_google_benchmarks_nan_in_a_cv_counter(self):
        path = self.dir / "cv.json"
        path.write_text(edited(FIXTURE, setter("benchmarks", 6, "cycles", math.nan)))
        obj = results.load(path)
        self.assertTrue(math.isnan(obj["benchmarks"][6]["cycles"]))
        # the same NaN in a median is not Google Benchmark's
        path.write_text(edited(FIXTURE, setter("benchmarks", 4, "cycles", math.nan)))
        with self.assertRaisesRegex(Exception, r"line \d+: NaN at benchmarks\[4\]\.cycles"):
            results.load(path)

    def test_the_reference_runs_load(self):
        for path in sorted((ROOT / "results" / "runs").glob("*.json")):
            with self.subTest(path=path.name):
                self.assertTrue(results.load(path)["benchmarks"])

    def test_x_over_0_in_a_comparison(self):
        def zero_base(obj):
            row = obj["rows"][2]
            row.update(metric="sim:l1d_misses", base=0, value=1, ratio=math.inf,
                       ci_low=math.inf, ci_high=math.inf)
        path = self.dir / "x0.json"
        path.write_text(edited(COMPARISON, zero_base))
        kind, obj = comparison_io.load_input(path)
        self.assertEqual(kind, "comparison")
        self.assertEqual(obj["rows"][2]["ratio"], math.inf)

    def test_the_line_is_the_tokens_own(self):
        path = self.dir / "lines.json"
        path.write_text('{"a": "NaN [[[",\n "b": [1,\n  NaN]}')
        with self.assertRaisesRegex(Exception, r"line 3: NaN at b\[1\]"):
            inputs.read(path, "baseline")

    def test_depth_ignores_brackets_in_strings(self):
        path = self.dir / "strings.json"
        path.write_text(json.dumps({"s": "[" * 1000, "t": "\\\"[" * 100}))
        self.assertEqual(inputs.read(path, "baseline")["s"], "[" * 1000)
        path.write_text("[" * (inputs.MAX_DEPTH + 1) + "]" * (inputs.MAX_DEPTH + 1))
        with self.assertRaisesRegex(Exception, f"nested {inputs.MAX_DEPTH + 1} deep"):
            inputs.read(path, "baseline")
        path.write_text("[" * inputs.MAX_DEPTH + "]" * inputs.MAX_DEPTH)
        self.assertEqual(len(inputs.read(path, "baseline")), 1)

    def test_the_committed_baseline_is_valid(self):
        self.assertTrue(gate.load_baseline(str(BASELINE))["sim"]["rows"])

    def test_caps_are_above_real_files(self):
        biggest = max(p.stat().st_size for p in (ROOT / "results" / "runs").glob("*.json"))
        self.assertGreater(inputs.LIMITS["results file"], 50 * biggest)
        self.assertGreater(inputs.LIMITS["baseline"], 50 * BASELINE.stat().st_size)


if __name__ == "__main__":
    unittest.main()
