"""The run table: which runs count, medians, counters per call, the columns."""

import unittest

from reports import run_table


def bench(name, ns, run_type="iteration", **extra):
    return dict(name=name, run_name=name, run_type=run_type, real_time=ns, cpu_time=ns,
                time_unit="ns", iterations=1000, repetitions=3, threads=1, **extra)


class SummarizeTest(unittest.TestCase):
    def test_split_name(self):
        self.assertEqual(run_table.split_name("sys/vdso/getres:tai/hot/cpu12"),
                         ("sys/vdso", "getres:tai", "hot", 12))
        self.assertIsNone(run_table.split_name("no/cpu/here"))

    def test_median_of_runs_ignores_aggregates(self):
        rows = run_table.summarize([
            bench("a/monotonic/hot/cpu0", 30.0, cycles=90.0, cpu=0),
            bench("a/monotonic/hot/cpu0", 10.0, cycles=30.0, cpu=0),
            bench("a/monotonic/hot/cpu0", 20.0, cycles=60.0, cpu=0),
            dict(bench("a/monotonic/hot/cpu0_mean", 999.0, run_type="aggregate"),
                 run_name="a/monotonic/hot/cpu0", aggregate_name="mean"),
        ])
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertEqual((r["ns"], r["min"], r["max"], r["runs"]), (20.0, 10.0, 30.0, 3))
        self.assertEqual(r["counters"], {"cycles": 60.0}, "harness counters are not events")

    def test_plan_order(self):
        rows = run_table.summarize([bench("b/time/hot/cpu0", 1.0), bench("a/time/hot/cpu0", 2.0)],
                                   order=["a/time/hot/cpu0", "b/time/hot/cpu0"])
        self.assertEqual([r["name"] for r in rows], ["a/time/hot/cpu0", "b/time/hot/cpu0"])

    def test_units_and_errors(self):
        rows = run_table.summarize([
            dict(bench("b/time/hot/cpu1", 0.5), time_unit="us"),
            dict(bench("c/time/hot/cpu1", 0), error_occurred=True, error_message="bind refused"),
        ])
        self.assertEqual(rows[0]["ns"], 500.0)
        self.assertEqual(rows[1]["error"], "bind refused")

    def test_format(self):
        rows = run_table.summarize([
            bench("a/monotonic/hot/cpu0", 31.25, cycles=90.0),
            bench("a/monotonic/writer/cpu0", 35.0, writer_hz=1000.4),
            dict(bench("c/time/hot/cpu1", 0), error_occurred=True, error_message="bind refused"),
        ])
        lines = run_table.format_table(rows, events=["cycles", "instructions"])
        self.assertEqual(lines[0].split(), ["benchmark", "ns/call", "min..max", "cycles/call"])
        self.assertTrue(set(lines[1]) == {"-"})
        self.assertIn("31.25", lines[2])
        self.assertIn("90.00", lines[2])
        self.assertIn("(writer 1000/s)", lines[3])
        self.assertIn("failed", lines[4])
        self.assertIn("bind refused", lines[4])


class CpuKindTest(unittest.TestCase):
    HYBRID = {"0": "IntelCore", "4": "IntelAtom"}

    def rows(self):
        return run_table.summarize([
            bench("a/monotonic/hot/cpu0", 20.0),
            bench("a/monotonic/hot/cpu4", 30.0),
            dict(bench("a/monotonic/pressure/cpu4", 0), error_occurred=True,
                 error_message="bind refused"),
        ])

    def test_shown_kinds(self):
        self.assertEqual(run_table.shown_kinds(self.HYBRID), {0: "IntelCore", 4: "IntelAtom"})
        self.assertEqual(run_table.shown_kinds({"0": "kind 1", "4": "kind 0", "5": None}),
                         {0: "kind 1", 4: "kind 0"})
        self.assertEqual(run_table.shown_kinds({"0": "IntelCore", "1": "IntelCore"}), {},
                         "one kind among the CPUs run on tells nothing")
        self.assertEqual(run_table.shown_kinds({"0": None, "1": None}), {})
        self.assertEqual(run_table.shown_kinds(None), {}, "results from before cpu_kinds")

    def test_cpu_label(self):
        kinds = run_table.shown_kinds(self.HYBRID)
        self.assertEqual(run_table.cpu_label(4, kinds), "cpu4 (IntelAtom)")
        self.assertEqual(run_table.cpu_label(2, kinds), "cpu2")

    def test_table_labels_cpus_on_a_hybrid(self):
        lines = run_table.format_table(self.rows(), cpu_kinds=self.HYBRID)
        self.assertTrue(lines[2].startswith("a/monotonic/hot/cpu0 (IntelCore)  "), lines[2])
        self.assertTrue(lines[3].startswith("a/monotonic/hot/cpu4 (IntelAtom)  "), lines[3])
        self.assertIn("a/monotonic/pressure/cpu4 (IntelAtom)", lines[4])
        self.assertIn("bind refused", lines[4])

    def test_table_unlabelled_with_one_kind(self):
        for kinds in (None, {"0": None, "4": None}, {"0": "IntelCore", "4": "IntelCore"}):
            lines = run_table.format_table(self.rows(), cpu_kinds=kinds)
            self.assertEqual(lines[2].split()[0], "a/monotonic/hot/cpu0", kinds)
            self.assertNotIn("(", lines[3], kinds)


if __name__ == "__main__":
    unittest.main()
