"""`gate`: a recorded baseline passes, an increase beyond tolerance fails with
the table, the timing gate's verdicts on recorded rounds (a live run checks
only the plumbing), the timing gate refuses another CPU, --update-baseline
writes what gate reads back, and every bad baseline or option is one line and
exit 2 with nothing written or measured (faults_inputs_test has every class
of corrupt baseline)."""

import json
import os
import tempfile
import unittest
from unittest import mock

from vdsobench_cli.cli import arch
from vdsobench_cli.measure import fingerprint, rounds
from vdsobench_cli.commands import gate
from vdsobench_cli.tests import support
from vdsobench_cli.tests.support import BASE, OTHER, recorded_rounds, vdsobench

VARIANT = BASE  # x86_gtod with lfence; rdtsc, which every x86-64 CPU reads


class RecordedBaselineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-gate-")
        cls.path = os.path.join(cls.tmp.name, "base.json")
        cls.rc, cls.out, cls.err = vdsobench(
            "gate", "--baseline", cls.path, "--update-baseline", "--variants", VARIANT,
            "--clocks", "monotonic", "--modes", "hot")
        with open(cls.path) as f:
            cls.baseline = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def variant_file(self, name, edit):
        data = json.loads(json.dumps(self.baseline))
        edit(data)
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            json.dump(data, f)
        return path

    def test_recorded(self):
        self.assertEqual(self.rc, 0, self.err)
        gate.check_baseline(self.baseline, self.path)  # what --update-baseline wrote validates
        rows = self.baseline["sim"]["rows"]
        self.assertEqual([(r["variant"], r["clock"], r["mode"]) for r in rows],
                         [(VARIANT, "monotonic", "hot")])
        self.assertEqual(self.baseline["sim"]["tolerance"], {"instructions": 0, "l1d_misses": 0})
        self.assertEqual(self.baseline["line"], arch.layouts_line())

    def test_unchanged_build_passes(self):
        rc, out, err = vdsobench("gate", "--baseline", self.path)
        self.assertEqual(rc, 0, err)
        self.assertIn("0 regressed", out)

    def test_an_instruction_more_than_recorded_fails(self):
        def fewer(d):
            d["sim"]["rows"][0]["instructions_per_call"] -= 1
        path = self.variant_file("fewer.json", fewer)
        before = os.stat(path).st_mtime_ns
        rc, out, err = vdsobench("gate", "--baseline", path)
        self.assertEqual(rc, 1, err)
        self.assertIn("REGRESSION", out)
        self.assertIn("instructions", out)
        self.assertIn("1 regressed", out)
        self.assertEqual(os.stat(path).st_mtime_ns, before, "a failing gate writes nothing")

    def test_tolerance(self):
        def tolerant(d):
            d["sim"]["rows"][0]["instructions_per_call"] -= 1
            d["sim"]["tolerance"]["instructions"] = 1
        rc, _, err = vdsobench("gate", "--baseline", self.variant_file("tol.json", tolerant))
        self.assertEqual(rc, 0, err)

    def test_fewer_than_recorded_is_an_improvement(self):
        def more(d):
            d["sim"]["rows"][0]["instructions_per_call"] += 5
        rc, out, err = vdsobench("gate", "--baseline", self.variant_file("more.json", more))
        self.assertEqual(rc, 0, err)
        self.assertIn("1 improved", out)

    def test_timing_refused_on_another_cpu(self):
        def other_cpu(d):
            d["machine"]["model_name"] = "Intel(R) Xeon(R) Platinum 8480+"
            d["timing"] = {"reference": VARIANT, "threshold": 0.05, "rounds": 10,
                           "rows": [{"variant": VARIANT, "clock": "monotonic", "mode": "hot",
                                     "ratio_to_reference": 1.0}]}
        path = self.variant_file("other.json", other_cpu)
        rc, _, err = vdsobench("gate", "--baseline", path, "--only", "timing")
        self.assertEqual(rc, 2)
        self.assertIn("refused", err)
        self.assertIn("--allow-other-machine", err)
        rc, out, err = vdsobench("gate", "--baseline", path)
        self.assertEqual(rc, 0, err)
        self.assertIn("warning: timing gate refused", err)
        self.assertIn("0 regressed", out)

    def test_timing_plumbing_live(self):
        """The real harness end to end: one check row with the right names. Its
        status is a timing, so it is not asserted (TimingRecordedTest does that)."""
        here = gate.machine_of(fingerprint.collect([]))

        def timing(d):
            d["machine"] = here
            d.pop("sim")
            d["timing"] = {"reference": VARIANT, "threshold": 0.05, "rounds": 8,
                           "rows": [{"variant": OTHER, "clock": "monotonic_raw",
                                     "mode": "hot", "ratio_to_reference": 1.0}]}
        rc, out, err = vdsobench("gate", "--baseline", self.variant_file("t.json", timing),
                                 "--batch-ms", "1", "--quiet", "--verbose")
        self.assertIn(rc, (0, 1), err)
        row = next(line for line in out.splitlines() if OTHER in line)
        self.assertIn("monotonic_raw", row)
        # a row the lost-CPU rule disturbed (a loaded machine) has no ratio
        # to name its reference by; any other names it
        if not row.startswith("disturbed"):
            self.assertIn(f"time / {VARIANT}", row)
        self.assertIn("gate: 1 checks against", out)

    def test_selection_must_be_in_the_baseline(self):
        rc, _, err = vdsobench("gate", "--baseline", self.path, "--variants",
                               "generic_5_3+rdtscp+always")
        self.assertEqual(rc, 2)
        self.assertIn("'generic_5_3+rdtscp+always' is not in the baseline", err)

    def test_the_selection_is_recorded(self):
        self.assertEqual(self.baseline["selection"], {"variants": [VARIANT],
                                                      "clocks": ["monotonic"],
                                                      "modes": ["hot"]})

    def test_a_variant_the_selection_names_without_rows_fails(self):
        # as after a layout is added to the table: its pattern now matches a
        # variant the rows do not have, which must not pass in silence
        def widened(d):
            d["selection"]["variants"] = ["x86_gtod+lfence_rdtsc+*"]
        rc, out, err = vdsobench("gate", "--baseline", self.variant_file("wide.json", widened))
        self.assertEqual(rc, 1, err)
        self.assertIn("unrecorded  x86_gtod+lfence_rdtsc+auto", out)
        self.assertIn("0 regressed", out)
        self.assertIn("1 variants the baseline's selection names have no rows", out)

    def test_update_re_expands_the_selection(self):
        def widened(d):
            d["selection"]["variants"] = ["x86_gtod+lfence_rdtsc+*"]
        path = self.variant_file("rerecord.json", widened)
        rc, _, err = vdsobench("gate", "--baseline", path, "--update-baseline")
        self.assertEqual(rc, 0, err)
        with open(path) as f:
            rows = json.load(f)["sim"]["rows"]
        self.assertEqual(sorted(r["variant"] for r in rows),
                         ["x86_gtod+lfence_rdtsc+always", "x86_gtod+lfence_rdtsc+auto"])
        rc, out, err = vdsobench("gate", "--baseline", path)
        self.assertEqual(rc, 0, out + err)

    def test_variant_gone_from_the_build(self):
        def renamed(d):
            d["sim"]["rows"][0]["variant"] = "x86_gtod_gone+rdtscp+always"
        rc, _, err = vdsobench("gate", "--baseline", self.variant_file("gone.json", renamed))
        self.assertEqual(rc, 2)
        self.assertIn("not in this build", err)

    def test_valgrind_missing(self):
        with support.missing_tool("valgrind"):
            rc, _, err = vdsobench("gate", "--baseline", self.path)
        self.assertEqual(rc, 2)
        self.assertIn("valgrind", err)
        self.assertEqual(len(err.strip().splitlines()), 1)


class TimingRecordedTest(unittest.TestCase):
    """The timing gate's verdicts on recorded rounds (compare_test.RECORDED:
    x86_gtod_raw_copy's MONOTONIC_RAW about 0.075 of x86_gtod's), the baseline
    ratio set around the recorded median so each outcome is known."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-gate-timing-")
        cls.here = gate.machine_of(fingerprint.collect([]))
        _, groups = recorded_rounds()(None, None, None, None)
        raw = next(g for g in groups if g.clock == "monotonic_raw")
        ref, var = raw.paired((VARIANT, 0), (OTHER, 0))
        cls.median = sorted(v / r for r, v in zip(ref, var))[len(ref) // 2 - 1:
                                                            len(ref) // 2 + 1]
        cls.median = sum(cls.median) / 2

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def gate(self, ratio, *argv):
        path = os.path.join(self.tmp.name, "timing.json")
        with open(path, "w") as f:
            json.dump({"schema": gate.SCHEMA, "machine": self.here, "line": arch.layouts_line(),
                       "timing": {"reference": VARIANT, "threshold": 0.05, "rounds": 16,
                                  "rows": [{"variant": OTHER, "clock": "monotonic_raw",
                                            "mode": "hot", "ratio_to_reference": ratio}]}}, f)
        measure = recorded_rounds()
        with mock.patch.object(rounds, "measure", measure):
            rc, out, err = vdsobench("gate", "--baseline", path, "--quiet", *argv)
        measure.assert_called_once()
        self.assertEqual(measure.call_args.args[1][:2], ["--variants", f"{VARIANT},{OTHER}"])
        return rc, out, err

    def test_at_the_recorded_ratio(self):
        rc, out, err = self.gate(self.median)
        self.assertEqual(rc, 0, err)
        self.assertIn("0 regressed, 0 improved", out)

    def test_slowdown_beyond_the_threshold(self):
        rc, out, err = self.gate(self.median / 1.10)
        self.assertEqual(rc, 1, err)
        self.assertIn("REGRESSION", out)
        self.assertIn(f"time / {VARIANT}", out)
        self.assertIn("1 regressed", out)

    def test_slowdown_within_the_threshold(self):
        rc, out, err = self.gate(self.median / 1.03)
        self.assertEqual(rc, 0, err)
        self.assertIn("0 regressed", out)
        rc, out, err = self.gate(self.median / 1.03, "--threshold", "0.005")
        self.assertEqual(rc, 1, err)
        self.assertIn("1 regressed", out)

    def test_much_faster_is_an_improvement(self):
        rc, out, err = self.gate(1.0)
        self.assertEqual(rc, 0, err)
        self.assertIn("0 regressed, 1 improved", out)

    def test_update_baseline_timing_writes_what_gate_reads(self):
        path = os.path.join(self.tmp.name, "new.json")
        measure = recorded_rounds()
        with mock.patch.object(rounds, "measure", measure):
            rc, out, err = vdsobench("gate", "--baseline", path, "--update-baseline", "--only",
                                     "timing", "--variants", f"{VARIANT},{OTHER}", "--clocks",
                                     "monotonic_raw,monotonic", "--modes", "hot", "--quiet")
        self.assertEqual(rc, 0, err)
        written = gate.load_baseline(path)  # the schema and the rows, as gate reads it
        rows = {(r["variant"], r["clock"]): r for r in written["timing"]["rows"]}
        self.assertAlmostEqual(rows[(OTHER, "monotonic_raw")]["ratio_to_reference"],
                               self.median)
        self.assertEqual(rows[(VARIANT, "monotonic")]["ratio_to_reference"], 1.0)
        with mock.patch.object(rounds, "measure", recorded_rounds()):
            rc, out, err = vdsobench("gate", "--baseline", path, "--quiet")
        self.assertEqual(rc, 0, err)
        self.assertIn("0 regressed", out)


class BadBaselineTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-gate-bad-")

    def tearDown(self):
        self.tmp.cleanup()

    def assert_bad(self, text, needle):
        path = os.path.join(self.tmp.name, "b.json")
        with open(path, "w") as f:
            f.write(text)
        rc, _, err = vdsobench("gate", "--baseline", path)
        self.assertEqual(rc, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(needle, err)
        with open(path) as f:
            self.assertEqual(f.read(), text, "the baseline is untouched")

    def test_malformed(self):
        self.assert_bad("{\"schema\": \"vdsobench-baseline/1\", \"sim\": {", "not valid JSON")
        self.assert_bad("[]", "not a baseline")
        self.assert_bad(json.dumps({"schema": "vdsobench-results/1"}), "schema")
        self.assert_bad(json.dumps({"schema": "vdsobench-baseline/1"}), "neither sim nor timing")
        self.assert_bad(json.dumps({"schema": "vdsobench-baseline/1",
                                    "sim": {"rows": [{"variant": "x"}]}}), "sim.rows[0]: missing")

    def test_another_compile_line(self):
        here = arch.layouts_line()
        other = "plain" if here == "kernel" else "kernel"
        rows = {"rows": [{"variant": VARIANT, "clock": "monotonic", "mode": "hot",
                          "instructions_per_call": 50.0, "l1d_misses_per_call": 0.0}]}
        self.assert_bad(json.dumps({"schema": "vdsobench-baseline/1", "line": other,
                                    "sim": rows}),
                        f"recorded with the {other} compile line, this build uses the {here}")
        if here != "plain":  # one from before lines were recorded is the plain line's
            self.assert_bad(json.dumps({"schema": "vdsobench-baseline/1", "sim": rows}),
                            "recorded with the plain compile line")
        self.assert_bad(json.dumps({"schema": "vdsobench-baseline/1", "line": "kline; id",
                                    "sim": rows}), "line")

    def test_missing_file(self):
        rc, _, err = vdsobench("gate", "--baseline", os.path.join(self.tmp.name, "none.json"))
        self.assertEqual(rc, 2)
        self.assertIn("--update-baseline", err)


if __name__ == "__main__":
    unittest.main()


class ImportedTreesTest(unittest.TestCase):
    """A committed baseline's globs do not reach one machine's imported trees."""

    REGISTRY = [{"name": n} for n in ("generic_5_3+rdtscp+always", "x86_gtod+rdtscp+always",
                                      "kernel:mine+rdtscp+always")]

    def chosen(self, patterns):
        from vdsobench_cli.cli import variants
        with mock.patch.object(variants, "load", return_value=self.REGISTRY):
            return [v["name"] for v in gate.baseline_variants(patterns, "--variants")]

    def test_a_glob_leaves_imports_out(self):
        self.assertEqual(self.chosen(["*+rdtscp+always"]),
                         ["generic_5_3+rdtscp+always", "x86_gtod+rdtscp+always"])

    def test_naming_them_takes_them(self):
        self.assertEqual(self.chosen(["kernel:mine+*"]), ["kernel:mine+rdtscp+always"])
