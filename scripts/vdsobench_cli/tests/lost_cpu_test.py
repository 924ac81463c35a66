"""Rounds that lost the CPU to another task: read from the harness's batch lines,
shown per row, and no verdict for a group with too many. All on recorded rounds
(testdata/rounds-gtod-raw-copy.jsonl) with synthetic retries and disturbed
flags: nothing here is timed."""

import json
import sys
import unittest
from unittest import mock

from vdsobench_cli.measure import rounds
from vdsobench_cli.cli.build import ROOT
from vdsobench_cli.tests.support import BASE, OTHER, recorded_records, vdsobench

sys.path.insert(0, str(ROOT))
from reports import tables  # noqa: E402

MONO = "monotonic/hot/cpu1"
RAW = "monotonic_raw/hot/cpu1"


def recorded(lost=None, retried=None, retries_in_context=True):
    """The recorded rounds' lines, with lost {group: {(subject, round)}} marked
    disturbed (after 3 retries) and retried {group: {(subject, round): n}}."""
    recs = recorded_records()
    for r in recs:
        if "context" in r and retries_in_context:
            r["lost_cpu"] = {"min_share": 0.98, "retries": 3}
        if "round" not in r:
            continue
        who = (r["subject"], r["round"])
        if who in (lost or {}).get(r["group"], ()):
            r.update(retries=3, disturbed=True, cpu_share=0.5)
        elif who in (retried or {}).get(r["group"], {}):
            r.update(retries=retried[r["group"]][who], disturbed=False, cpu_share=0.99)
    return [json.dumps(r) for r in recs]


def measure_from(lines):
    """A stand-in for rounds.measure() returning these lines' rounds."""
    return mock.Mock(side_effect=lambda *a, **k: rounds.parse(lines))


class SeriesTest(unittest.TestCase):
    def test_old_recordings_lost_nothing(self):
        _, groups = rounds.parse(recorded(retries_in_context=False))
        for g in groups:
            self.assertEqual(g.rounds_lost(), (16, 0))
            self.assertEqual(g.lost((BASE, 0), (OTHER, 0)), (0, 0))
        self.assertEqual(rounds.lost_cpu({}, groups), {})

    def test_retried_and_disturbed_counted_per_pair(self):
        lost = {MONO: {(BASE, 2), (OTHER, 2), (OTHER, 7)}}
        retried = {MONO: {(BASE, 0): 1, (OTHER, 5): 2}}
        _, groups = rounds.parse(recorded(lost, retried))
        g = {str(g.key): g for g in groups}
        # rounds 2 and 7 lost (round 2 counts once); batches retried: the two
        # retried that kept the CPU and the three that lost it even so
        self.assertEqual(g[MONO].lost((BASE, 0), (OTHER, 0)), (5, 2))
        self.assertEqual(g[MONO].lost((BASE, 0)), (2, 1))
        self.assertEqual(g[MONO].rounds_lost(), (16, 2))
        self.assertEqual(g[RAW].rounds_lost(), (16, 0))

    def test_threshold(self):
        def reasons(n_lost):
            lost = {MONO: {(OTHER, r) for r in range(n_lost)}}
            context, groups = rounds.parse(recorded(lost))
            return {str(k): why for k, why in rounds.lost_cpu(context, groups).items()}
        # 16 rounds: 10% is 1.6, so one lost round is within, two are not
        self.assertEqual(reasons(1), {})
        self.assertEqual(list(reasons(2)), [MONO])
        self.assertEqual(
            reasons(5)[MONO],
            "monotonic/hot/cpu1: 5 of 16 rounds lost the CPU even after 3 retries: "
            "another process is running on CPU 1; no verdict (more than 10% of the rounds)")


class CompareRefusesTest(unittest.TestCase):
    def compare(self, lines, *argv):
        with mock.patch.object(rounds, "measure", measure_from(lines)):
            return vdsobench("compare", BASE, OTHER, "--clocks", "monotonic_raw,monotonic",
                             "--rounds", "16", "--quiet", *argv)

    def test_no_verdict_for_the_group_that_lost_the_cpu(self):
        lost = {MONO: {(OTHER, r) for r in range(5)}}
        rc, out, err = self.compare(recorded(lost), "--format", "json")
        self.assertEqual(rc, 1, err)
        self.assertEqual(err.strip().splitlines()[-1],
                         "vdsobench: error: monotonic/hot/cpu1: 5 of 16 rounds lost the CPU "
                         "even after 3 retries: another process is running on CPU 1; no "
                         "verdict (more than 10% of the rounds)")
        data = json.loads(out)
        rows = {r["clock"]: r for r in data["rows"] if r["metric"] == "ns/call"}
        self.assertEqual(rows["monotonic"]["verdict"], tables.NO_VERDICT)
        self.assertEqual((rows["monotonic"]["retries"], rows["monotonic"]["lost"]), (5, 5))
        # the other group kept the CPU: its verdict stands
        self.assertEqual(rows["monotonic_raw"]["verdict"], "faster")
        self.assertEqual((rows["monotonic_raw"]["retries"], rows["monotonic_raw"]["lost"]),
                         (0, 0))
        self.assertEqual(len(data["meta"]["refused"]), 1)
        self.assertIn(data["meta"]["refused"][0], data["meta"]["notes"])

    def test_retries_shown_and_a_verdict_when_few_rounds_were_lost(self):
        lost = {MONO: {(BASE, 3)}}
        retried = {MONO: {(BASE, 0): 1, (OTHER, 9): 2}}
        rc, out, err = self.compare(recorded(lost, retried))
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        head = next(line for line in lines if line.startswith("clock"))
        self.assertEqual(head.split()[-2:], ["retries", "lost"])
        mono = next(line for line in lines if line.startswith("CLOCK_MONOTONIC "))
        self.assertEqual(mono.split()[-2:], ["3", "1"])
        self.assertIn(tables.LOST_LEGEND, out)

    def test_lkml_marks_a_row_without_verdict(self):
        lost = {MONO: {(OTHER, r) for r in range(8)}}
        rc, out, _ = self.compare(recorded(lost), "--format", "lkml")
        self.assertEqual(rc, 1)
        self.assertTrue(all(len(line) <= 72 for line in out.splitlines()), out)
        mono = next(line for line in out.splitlines() if line.startswith("CLOCK_MONOTONIC "))
        self.assertIn(tables.NO_VERDICT_MARK, mono.split()[-1])
        self.assertIn(f"{tables.NO_VERDICT_MARK} = no verdict", out)


class TablesTest(unittest.TestCase):
    def test_marks(self):
        self.assertEqual(tables.diff(1.2, tables.NO_VERDICT), "?+20%")
        self.assertEqual(tables.diff(1.2, "slower"), "+20%")

    def test_no_columns_without_rounds(self):
        row = {"clock": "monotonic", "mode": "hot", "metric": "ns/call", "baseline": "a",
               "variant": "b", "base": 1.0, "value": 2.0, "ratio": 2.0, "verdict": "slower",
               "n": 5}
        out = tables.render({"meta": {}, "rows": [row]}, "table")
        self.assertNotIn("retries", out)
        out = tables.render({"meta": {}, "rows": [dict(row, retries=2, lost=0)]}, "markdown")
        self.assertIn("| retries | lost |", out)


if __name__ == "__main__":
    unittest.main()


class GateTest(unittest.TestCase):
    """gate on rounds that lost the CPU: no pass, no regression, the reason."""

    def setUp(self):
        import os
        import tempfile
        from vdsobench_cli.measure import fingerprint
        from vdsobench_cli.commands import gate
        self.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-gate-lost-")
        self.path = os.path.join(self.tmp.name, "timing.json")
        with open(self.path, "w") as f:
            json.dump({"schema": gate.SCHEMA, "machine": gate.machine_of(fingerprint.collect([])),
                       "line": gate.arch.layouts_line(),
                       "timing": {"reference": BASE, "threshold": 0.05, "rounds": 16,
                                  "rows": [{"variant": OTHER, "clock": "monotonic_raw",
                                            "mode": "hot", "ratio_to_reference": 0.075}]}}, f)

    def tearDown(self):
        self.tmp.cleanup()

    def test_too_many_lost_rounds_are_no_verdict(self):
        lost = {RAW: {(OTHER, r) for r in range(5)}}
        with mock.patch.object(rounds, "measure", measure_from(recorded(lost))):
            rc, out, err = vdsobench("gate", "--baseline", self.path, "--quiet")
        self.assertEqual(rc, 1, out + err)
        self.assertIn("disturbed", out)
        self.assertIn(f"{RAW}: 5 of 16 rounds lost the CPU even after 3 retries", err)

    def test_a_few_lost_rounds_still_gate(self):
        lost = {RAW: {(OTHER, 3)}}
        with mock.patch.object(rounds, "measure", measure_from(recorded(lost))):
            rc, out, err = vdsobench("gate", "--baseline", self.path, "--quiet")
        self.assertNotIn("disturbed", out)
        self.assertNotIn("lost the CPU", err)
