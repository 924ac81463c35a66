"""`plot` end to end on the committed fixtures (reports/testdata): the charts
that apply, valid PNG and SVG of the stated size; plot_comparison() for
`compare --plot`; each bad input one line, exit 2, nothing left behind."""

import json
import os
import unittest
from pathlib import Path

from vdsobench_cli import main
from vdsobench_cli.cli import errors
from vdsobench_cli.measure import charts
from vdsobench_cli.tests.support import AMD, COMPARISON, INTEL, TempDir
from vdsobench_cli.tests.support import plot_vdsobench as vdsobench

SMALL = str(Path(__file__).resolve().parent / "testdata" / "results_small.json")


class PlotTest(TempDir):
    def test_results_and_comparison(self):
        out = self.dir / "charts"
        rc, stdout, err = vdsobench("plot", AMD, INTEL, COMPARISON, "--out", out)
        self.assertEqual(rc, 0, err)
        names = [Path(line).name for line in stdout.splitlines()]
        self.assertEqual(names, [f"{stem}.{ext}" for stem in (
            "bars-amd-epyc", "bars-intel-xeon", "per-cpu-monotonic", "ratios", "counts")
            for ext in ("png", "svg")])
        self.assertEqual(sorted(os.listdir(out)), sorted(names))
        self.assert_charts([out / n for n in names])

    def test_counters_and_selection(self):
        rc, stdout, err = vdsobench("plot", SMALL, "--out", self.dir, "--format", "png",
                                    "--variants", "sys/vdso,generic_*")
        self.assertEqual(rc, 0, err)
        self.assertEqual([Path(p).name for p in stdout.splitlines()],
                         ["bars.png", "counters.png", "per-cpu-monotonic.png"])
        rc, stdout, err = vdsobench("plot", AMD, "--out", self.dir / "one", "--format", "svg",
                                    "--clocks", "monotonic")
        self.assertEqual([Path(p).name for p in stdout.splitlines()], ["bars.svg"])

    def test_per_cpu_per_clock_and_reference(self):
        rc, stdout, err = vdsobench("plot", AMD, INTEL, "--out", self.dir, "--format", "png",
                                    "--clocks", "realtime_coarse,monotonic",
                                    "--reference", "sys/vdso")
        self.assertEqual(rc, 0, err)
        self.assertEqual([Path(p).name for p in stdout.splitlines()][-2:],
                         ["per-cpu-monotonic.png", "per-cpu-realtime-coarse.png"])

    def test_plot_comparison(self):
        comparison = json.loads(Path(COMPARISON).read_text())
        paths = charts.plot_comparison(comparison, self.dir / "cmp")
        self.assertEqual([p.name for p in paths],
                         ["ratios.png", "ratios.svg", "counts.png", "counts.svg"])
        self.assert_charts(paths)
        times_only = dict(comparison, rows=[r for r in comparison["rows"]
                                            if r["metric"] == "ns/call"])
        paths = charts.plot_comparison(times_only, self.dir / "t", formats=("png",))
        self.assertEqual([p.name for p in paths], ["ratios.png"])
        sim_only = dict(comparison, rows=[r for r in comparison["rows"]
                                          if r["metric"].startswith("sim:")])
        paths = charts.plot_comparison(sim_only, self.dir / "s", formats=("svg",))
        self.assertEqual([p.name for p in paths], ["counts.svg"])
        with self.assertRaises(errors.UsageError):
            charts.plot_comparison(comparison, self.dir / "t" / "ratios.png" / "x")
        with self.assertRaises(errors.UsageError):
            charts.plot_comparison(dict(comparison, rows=[]), self.dir / "empty")
        self.assertFalse((self.dir / "empty").exists())


class BadInputTest(TempDir):
    def write(self, name, obj):
        path = self.dir / name
        path.write_text(json.dumps(obj))
        return path

    def test_no_benchmarks(self):
        data = json.loads(Path(AMD).read_text())
        empty = self.write("empty.json", dict(data, benchmarks=[]))
        self.assert_refused("plot", empty, "--out", self.dir / "out",
                            needle="empty.json: no benchmarks")
        failed = dict(data, benchmarks=[dict(b, error_occurred=True)
                                        for b in data["benchmarks"]])
        self.assert_refused("plot", self.write("failed.json", failed), "--out", self.dir,
                            needle="no benchmark with a measured time")

    def test_mixed_schema_versions(self):
        data = json.loads(Path(INTEL).read_text())
        data["context"]["vdsobench"]["schema"] = "vdsobench-results/2"
        newer = self.write("newer.json", data)
        for command in ("plot", "report"):
            self.assert_refused(command, AMD, newer, "--out", self.dir / "out",
                                needle="mixed schema versions")

    def test_unknown_variant_clock_format(self):
        self.assert_refused("plot", AMD, "--variants", "sys/vdso,nosuch*", "--out", self.dir,
                            needle="--variants: 'nosuch*' matches no variant in the inputs")
        self.assert_refused("plot", COMPARISON, "--clocks", "tai", "--out", self.dir,
                            needle="--clocks: 'tai' matches no clock")
        self.assert_refused("plot", AMD, INTEL, "--reference", "sys/nosuch", "--out", self.dir,
                            needle="--reference: 'sys/nosuch' matches no variant")
        self.assert_refused("plot", AMD, "--format", "png,gif", "--out", self.dir,
                            needle="--format: 'gif' is not a plot format")

    def test_unwritable_output_directory(self):
        (self.dir / "file").write_text("")
        self.assert_refused("plot", AMD, "--out", self.dir / "file" / "charts",
                            needle="is not a directory")
        self.assert_refused("plot", COMPARISON, "--out", self.dir / "file",
                            needle="is not a directory")

    def test_not_json_or_neither_kind(self):
        self.assert_refused("plot", self.write("x.json", {"meta": {}, "rows": [{"clock": 1}]}),
                            "--out", self.dir, needle="rows[0]: missing 'mode'")
        self.assert_refused("plot", self.write("y.json", [1]), "--out", self.dir,
                            needle="y.json: expected a JSON object")
        self.assert_refused("plot", self.dir / "missing.json", "--out", self.dir,
                            needle="No such file")


class RegisteredTest(unittest.TestCase):
    def test_main_registers_plot_merge_report(self):
        commands = main.parser().commands
        if "plot" not in commands:
            self.skipTest("main.py does not register plot, merge, report yet")
        self.assertTrue({"plot", "merge", "report"} <= set(commands))


if __name__ == "__main__":
    unittest.main()
