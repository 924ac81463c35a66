"""`gate`: a recorded baseline passes, an increase beyond tolerance fails with
the table, the timing gate refuses another CPU, and every bad baseline or
option is one line and exit 2 with nothing written."""

import json
import os
import shutil
import tempfile
import unittest
from unittest import mock

from .run_test import vdsobench

VARIANT = "x86_gtod+rdtscp+always"


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
        rows = self.baseline["sim"]["rows"]
        self.assertEqual([(r["variant"], r["clock"], r["mode"]) for r in rows],
                         [(VARIANT, "monotonic", "hot")])
        self.assertEqual(self.baseline["sim"]["tolerance"], {"instructions": 0, "l1d_misses": 0})

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

    def timing_baseline(self, name, ratio):
        """x86_gtod_raw_copy's MONOTONIC_RAW against x86_gtod's (a syscall):
        about 0.07 on any machine, a structural gap, so the recorded ratio
        decides the outcome whatever the noise."""
        from . import fingerprint, gate

        here = gate.machine_of(fingerprint.collect([]))

        def timing(d):
            d["machine"] = here
            d.pop("sim")
            d["timing"] = {"reference": VARIANT, "threshold": 0.05, "rounds": 8,
                           "rows": [{"variant": "x86_gtod_raw_copy+rdtscp+always",
                                     "clock": "monotonic_raw", "mode": "hot",
                                     "ratio_to_reference": ratio}]}
        return self.variant_file(name, timing)

    def test_timing_regression_beyond_the_interval(self):
        rc, out, err = vdsobench("gate", "--baseline", self.timing_baseline("t1.json", 0.01),
                                 "--batch-ms", "1", "--quiet")
        self.assertEqual(rc, 1, err)
        self.assertIn("REGRESSION", out)
        self.assertIn(f"time / {VARIANT}", out)

    def test_timing_within_the_recorded_ratio(self):
        rc, out, err = vdsobench("gate", "--baseline", self.timing_baseline("t2.json", 1.0),
                                 "--batch-ms", "1", "--quiet")
        self.assertEqual(rc, 0, err)
        self.assertIn("0 regressed, 1 improved", out)

    def test_selection_must_be_in_the_baseline(self):
        rc, _, err = vdsobench("gate", "--baseline", self.path, "--variants",
                               "generic_5_3+rdtscp+always")
        self.assertEqual(rc, 2)
        self.assertIn("'generic_5_3+rdtscp+always' is not in the baseline", err)

    def test_variant_gone_from_the_build(self):
        def renamed(d):
            d["sim"]["rows"][0]["variant"] = "x86_gtod_gone+rdtscp+always"
        rc, _, err = vdsobench("gate", "--baseline", self.variant_file("gone.json", renamed))
        self.assertEqual(rc, 2)
        self.assertIn("not in this build", err)

    def test_valgrind_missing(self):
        real_which = shutil.which
        hidden = mock.patch("shutil.which",
                            side_effect=lambda cmd, *a, **k: None if cmd == "valgrind"
                            else real_which(cmd, *a, **k))
        with hidden:
            rc, _, err = vdsobench("gate", "--baseline", self.path)
        self.assertEqual(rc, 2)
        self.assertIn("valgrind", err)
        self.assertEqual(len(err.strip().splitlines()), 1)


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

    def test_missing_file(self):
        rc, _, err = vdsobench("gate", "--baseline", os.path.join(self.tmp.name, "none.json"))
        self.assertEqual(rc, 2)
        self.assertIn("--update-baseline", err)


if __name__ == "__main__":
    unittest.main()
