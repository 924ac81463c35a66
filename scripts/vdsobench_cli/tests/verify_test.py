import io
import json
import platform
import unittest
from unittest import mock

from vdsobench_cli.commands import verify
from vdsobench_cli.tests import support, vvar_support


def rec(name, status, known_bad=False, first_failure=None):
    return json.dumps({"variant": name, "known_bad": known_bad, "status": status,
                       "checks": [{"name": "exact", "ok": first_failure is None,
                                   "detail": ""}],
                       "first_failure": first_failure, "seconds": 0.42}) + "\n"


def summary(passed=0, failed=0, caught=0, missed=0):
    return json.dumps({"summary": {"passed": passed, "failed": failed, "caught": caught,
                                   "missed": missed}}) + "\n"


GOOD = "generic_5_3+lfence_rdtsc+always"
BAD = "torn_read+fake+always"
REASONS = {GOOD: None, BAD: "reads the seqcount once"}


def report(lines, expected=(GOOD, BAD), rc=0, as_json=False):
    out = io.StringIO()
    status = verify.report(lines, list(expected), REASONS, lambda: rc, as_json, out)
    return status, out.getvalue().splitlines()


class ReportTest(unittest.TestCase):
    def test_pass_and_caught_is_success(self):
        status, out = report([rec(GOOD, "PASS"),
                              rec(BAD, "CAUGHT", True, "torn: went backwards"),
                              summary(passed=1, caught=1)])
        self.assertEqual(status, 0)
        self.assertEqual(out[0], f"PASS   {GOOD}  (0.4 s)")
        self.assertIn("CAUGHT", out[1])
        self.assertIn("known bad: reads the seqcount once", out[1])
        self.assertIn("torn: went backwards", out[1])
        self.assertEqual(out[-1], "verify: 1 PASS, 0 FAIL, 1 CAUGHT (known bad), 0 MISSED")

    def test_skip_says_why_and_neither_passes_nor_fails(self):
        skip = json.dumps({"variant": GOOD, "known_bad": False, "status": "SKIP",
                           "checks": [], "first_failure": None, "seconds": 0,
                           "reason": "this CPU has no FEAT_ECV, so no CNTVCTSS_EL0"}) + "\n"
        status, out = report([skip, rec(BAD, "CAUGHT", True, "torn"),
                              summary(caught=1)])
        self.assertEqual(status, 0)
        self.assertEqual(out[0], f"SKIP   {GOOD}  (not available here: this CPU has no "
                                 "FEAT_ECV, so no CNTVCTSS_EL0)")
        self.assertEqual(out[-1], "verify: 0 PASS, 0 FAIL, 1 CAUGHT (known bad), 0 MISSED, "
                                  "1 SKIP (not available here)")

    def test_emulated_counter_says_so_in_its_line(self):
        def noted(status, first_failure=None):
            r = json.loads(rec(GOOD, status, status == "CAUGHT", first_failure))
            r["note"] = "RDTSCP emulated: this CPU has none"
            return json.dumps(r) + "\n"

        status, out = report([noted("PASS"), rec(BAD, "CAUGHT", True, "torn"),
                              summary(passed=1, caught=1)])
        self.assertEqual(status, 0)
        self.assertEqual(out[0], f"PASS   {GOOD}  (0.4 s) [RDTSCP emulated: this CPU has none]")
        _, out = report([noted("FAIL", "exact: off by 1 ns"), rec(BAD, "CAUGHT", True, "t"),
                         summary(failed=1, caught=1)], rc=1)
        self.assertEqual(out[0], f"FAIL   {GOOD}  exact: off by 1 ns "
                                 "[RDTSCP emulated: this CPU has none]")

    def test_a_note_that_is_no_string_is_left_out(self):
        r = json.loads(rec(GOOD, "PASS"))
        r["note"] = {"x": 1}
        _, out = report([json.dumps(r) + "\n", rec(BAD, "CAUGHT", True, "t"),
                         summary(passed=1, caught=1)])
        self.assertEqual(out[0], f"PASS   {GOOD}  (0.4 s)")

    def test_missed_fails(self):
        status, out = report([rec(GOOD, "PASS"), rec(BAD, "MISSED", True),
                              summary(passed=1, missed=1)], rc=1)
        self.assertEqual(status, 1)
        self.assertTrue(out[1].startswith(f"MISSED {BAD}"))
        self.assertEqual(out[-1], "verify: 1 PASS, 0 FAIL, 0 CAUGHT (known bad), 1 MISSED")

    def test_fail_fails(self):
        status, out = report([rec(GOOD, "FAIL", first_failure="exact: off by 1 ns"),
                              rec(BAD, "CAUGHT", True, "torn: x"), summary(failed=1, caught=1)])
        self.assertEqual(status, 1)
        self.assertEqual(out[0], f"FAIL   {GOOD}  exact: off by 1 ns")

    def test_missing_summary_fails(self):
        status, out = report([rec(GOOD, "PASS"), rec(BAD, "CAUGHT", True, "x")], rc=-11)
        self.assertEqual(status, 1)
        self.assertIn("verify: vdsobench_verify ended without a summary", out)

    def test_missing_variant_fails(self):
        status, out = report([rec(GOOD, "PASS"), summary(passed=1)])
        self.assertEqual(status, 1)
        self.assertIn(f"verify: no result for {BAD}", out)

    def test_nonzero_exit_after_clean_summary_fails(self):
        status, _ = report([rec(GOOD, "PASS"), summary(passed=1)], expected=[GOOD], rc=1)
        self.assertEqual(status, 1)

    def test_stray_output_is_shown_not_fatal(self):
        status, out = report(["warming up\n", rec(GOOD, "PASS"), summary(passed=1)],
                             expected=[GOOD])
        self.assertEqual(status, 0)
        self.assertEqual(out[0], "warming up")

    def test_json_passes_lines_through(self):
        lines = [rec(GOOD, "PASS"), summary(passed=1)]
        status, out = report(lines, expected=[GOOD], as_json=True)
        self.assertEqual(status, 0)
        self.assertEqual(out, [line.rstrip("\n") for line in lines])


if __name__ == "__main__":
    unittest.main()


class LiveLineTest(unittest.TestCase):
    """verify's "live" line on recorded kernel pages (support.py has them, live_test the decode)."""

    def line(self, result, dumped, why):
        out = io.StringIO()
        with mock.patch.object(verify.live, "live_check", return_value=(result, dumped, why)):
            status = verify.live_line([], out)
        return status, out.getvalue()

    def test_matches(self):
        result = verify.live.check(vvar_support.DUMP, vvar_support.V6_15)
        status, text = self.line(result, vvar_support.DUMP, None)
        self.assertEqual(status, 0)
        self.assertIn("live: PASS   generic_6_15 matches the running kernel 6.18.44", text)

    def test_mismatch_fails(self):
        result = verify.live.check(vvar_support.DUMP, vvar_support.V6_10)
        status, text = self.line(result, vvar_support.DUMP, None)
        self.assertEqual(status, 1)
        self.assertIn("live: FAIL   generic_6_10 does not match", text)
        self.assertIn("CS_RAW", text)

    def test_no_layout_is_skipped_with_the_reason(self):
        status, text = self.line(None, {"kernel": "4.19.0"},
                                 "no layout in the table models kernel 4.19.0 or older")
        self.assertEqual(status, 0)
        self.assertEqual(text, "live: skipped: no layout in the table models kernel 4.19.0 "
                               "or older\n")


class ClockModeTest(unittest.TestCase):
    """verify --clock-mode pvclock, the binary really run: the x86 layouts read
    the simulated host's pvclock page, its negative control is caught there
    and passes in tsc mode."""

    GOOD, NORETRY = "generic_6_17+fake+always", "generic_vclock_noretry+fake+always"

    def records(self, *argv):
        rc, out, err = support.cli("verify", "--json", *argv)
        recs = {r["variant"]: r for r in map(json.loads, (x for x in out.splitlines()
                                                           if x.startswith('{"variant"')))}
        return rc, recs, err

    def test_a_bad_mode_is_one_line(self):
        rc, _, err = support.vdsobench("verify", "--clock-mode", "hpet")
        support.one_line(self, rc, err, "--clock-mode", "'hpet'", "tsc", "pvclock", "hvclock")

    @unittest.skipUnless(platform.machine() == "x86_64", "pvclock is x86's")
    def test_pvclock_passes_the_layouts_and_catches_the_no_retry_read(self):
        rc, recs, err = self.records("--clock-mode", "pvclock", self.GOOD, self.NORETRY,
                                     "x86_gtod+fake+always")
        self.assertEqual(rc, 0, err)
        for name in (self.GOOD, "x86_gtod+fake+always"):
            self.assertEqual(recs[name]["status"], "PASS", recs[name])
            self.assertEqual(recs[name]["clock_mode"], "pvclock")
            checks = {c["name"]: c for c in recs[name]["checks"]}
            self.assertIn("pvclock stable bit cleared", checks["edges"]["detail"])
            self.assertIn("phase H", checks["concurrency"]["detail"])
            self.assertTrue(checks["system"]["skipped"])
        bad = recs[self.NORETRY]
        self.assertEqual((bad["status"], bad["known_bad"]), ("CAUGHT", True), bad)
        self.assertIn("torn read", bad["first_failure"])

    @unittest.skipUnless(platform.machine() == "x86_64", "hvclock is x86's")
    def test_hvclock_the_same(self):
        rc, recs, err = self.records("--clock-mode", "hvclock", self.GOOD, self.NORETRY)
        self.assertEqual(rc, 0, err)
        self.assertEqual((recs[self.GOOD]["status"], recs[self.GOOD]["clock_mode"]),
                         ("PASS", "hvclock"))
        self.assertIn("hvclock sequence 0", json.dumps(recs[self.GOOD]))
        self.assertEqual(recs[self.NORETRY]["status"], "CAUGHT", recs[self.NORETRY])

    @unittest.skipUnless(platform.machine() == "x86_64", "pvclock is x86's")
    def test_the_pvclock_control_is_correct_in_tsc_mode(self):
        rc, recs, err = self.records(self.NORETRY)
        self.assertEqual(rc, 0, err)
        self.assertEqual((recs[self.NORETRY]["status"], recs[self.NORETRY]["known_bad"],
                          recs[self.NORETRY]["clock_mode"]), ("PASS", False, "tsc"))
