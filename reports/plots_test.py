"""The charts from the committed fixtures: every label clear of every other
(the renderer's text extents), inside the figure, grayscale cues, units and
the machine stated, the line at 1.0, and files that are valid PNG and SVG of
the stated size, written all or none."""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from reports import merge, plots, plots_layout, plots_write, tables
from reports.testsupport import ROOT, SMALL, all_text, fig_title, fixture, png_size, svg_size, zen5

LAYOUTS = "*+rdtscp+always"


def pixels(fig):
    return tuple(round(v) for v in fig.get_size_inches() * fig.dpi)


class ChartsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.amd, cls.intel = fixture("amd-epyc.json"), fixture("intel-xeon.json")
        cls.comparison = fixture("compare.json")[1]
        cls.small = fixture(str(SMALL))
        cls.figs = {
            "bars-8x7": plots.bars([cls.amd], variants=[LAYOUTS]),
            "bars-11x7": plots.bars([cls.amd]),
            "per-cpu": plots.per_cpu([cls.amd, cls.intel]),
            "per-cpu-ref": plots.per_cpu([cls.amd, cls.intel], reference="sys/vdso",
                                         clock="monotonic_raw"),
            # the AMD fixture and a copy edited to a Zen 5's family/model: two "AMD EPYC"
            "per-cpu-zen": plots.per_cpu([cls.amd, ("zen5.json", zen5(cls.amd[1]))]),
            "ratios": plots.ratios(cls.comparison),
            "counts": plots.counters(cls.comparison),
            "counters": plots.counters([cls.small]),
            "bars-3-reps": plots.bars([cls.small]),
        }

    def test_no_label_overlaps_another_or_leaves_the_figure(self):
        for name, fig in self.figs.items():
            with self.subTest(chart=name):
                self.assertEqual(plots_layout.overlapping_labels(fig), [])
                self.assertEqual(plots_layout.clipped_labels(fig), [])

    def test_ratio_markers_say_the_verdict(self):
        # a row without a verdict is grey, never filled as a difference; one
        # series over 14 rows keeps no value label that runs into another
        rows = []
        for i, clock in enumerate(["realtime", "monotonic", "monotonic_raw", "boottime", "tai",
                                   "realtime_coarse", "monotonic_coarse"]):
            for mode in ("hot", "pressure"):
                verdict = ["slower", "no significant difference", tables.NO_VERDICT][i % 3]
                rows.append({"clock": clock, "mode": mode, "metric": "ns/call", "cpu": 1,
                             "baseline": "a", "variant": "b", "ratio": 1.01,
                             "ci_low": 1.0 + (verdict == "slower") * 0.005, "ci_high": 1.02,
                             "verdict": verdict})
        fig = plots.ratios({"meta": {}, "rows": rows})
        self.assertEqual(plots_layout.overlapping_labels(fig), [])
        faces = [line.get_markerfacecolor() for line in fig.axes[0].lines
                 if len(line.get_xdata()) == 1 and line.get_marker() in plots.MARKERS]
        self.assertEqual(faces.count("black"), sum(r["verdict"] == "slower" for r in rows))
        self.assertEqual(faces.count(plots.NO_VERDICT_FACE),
                         sum(r["verdict"] == tables.NO_VERDICT for r in rows))
        self.assertIn("grey: no verdict", all_text(fig))

    def test_eight_variants_by_seven_clocks(self):
        fig = self.figs["bars-8x7"]
        ax, = fig.axes
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()],
                         ["REALTIME", "MONO", "MONO_RAW", "BOOTTIME", "TAI", "REAL_COARSE",
                          "MONO_COARSE"])
        self.assertEqual(len(ax.patches), 8 * 7)
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        self.assertEqual(len(legend), 8)
        self.assertIn("x86_gtod_ts_multshift", legend)
        self.assertEqual(pixels(fig)[0], 1050, "7 in at 150 dpi")
        # the legend sits below the plot, not on it
        renderer = fig.canvas.get_renderer()
        self.assertLess(fig.legends[0].get_window_extent(renderer).y1,
                        ax.get_tightbbox(renderer).y0)

    def test_grayscale_cues_differ_for_every_series(self):
        for name in ("bars-8x7", "bars-11x7", "per-cpu"):
            ax = self.figs[name].axes[0]
            styles = {}
            for bars in ax.containers:
                if not hasattr(bars, "patches") or not bars.patches:
                    continue
                r, g, b, _ = bars.patches[0].get_facecolor()
                self.assertAlmostEqual(r, g)
                self.assertAlmostEqual(g, b)
                styles[(round(r, 2), bars.patches[0].get_hatch())] = True
            with self.subTest(chart=name):
                self.assertEqual(len(styles), len(self.figs[name].legends[0].get_texts()))

    def test_units_and_machine(self):
        text = all_text(self.figs["bars-8x7"])
        for needle in ("ns per call", "Zen 3 (AMD EPYC, 25/1/1)", "kernel 6.18.44-fc-v782", "KVM",
                       "95% confidence interval of the median", "microcode 0x1000065",
                       "Warnings: hypervisor, load."):
            self.assertIn(needle, text)
        text = all_text(self.figs["per-cpu"])
        for needle in ("Sapphire Rapids (Intel Xeon Platinum 8480+, 6/143/8), microcode",
                       "kernel 6.8.0-49-generic", "Zen 3 cpu1", "Sapphire Rapids cpu8",
                       "Machines: Zen 3 (AMD EPYC, 25/1/1), microcode",
                       "project commit"):
            self.assertIn(needle, text)
        self.assertIn("ratio after/before", all_text(self.figs["ratios"]))
        self.assertIn("ratio to sys/vdso", all_text(self.figs["per-cpu-ref"]))

    def test_machines_named_by_microarchitecture(self):
        fig = self.figs["per-cpu-zen"]
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        self.assertEqual(legend, ["Zen 3 cpu1", "Zen 5 cpu1"])
        self.assertIn("Machines: Zen 3 (AMD EPYC, 25/1/1), microcode 0x1000065", all_text(fig))
        # the title of a one-machine chart names it the same way
        title = fig_title(self.figs["bars-8x7"])
        self.assertIn("Zen 3 (AMD EPYC, 25/1/1), kernel 6.18.44-fc-v782, KVM guest, CPU 1", title)

    def test_too_few_repetitions_draw_the_range_and_say_so(self):
        text = all_text(self.figs["bars-3-reps"])
        self.assertIn("min..max range", text)
        self.assertIn("6 repetitions are needed", text)
        # whiskers span the three repetitions exactly
        _, data = self.small
        times = sorted(b["real_time"] for b in data["benchmarks"]
                       if b["run_name"] == "sys/vdso/monotonic/hot/cpu0"
                       and b["run_type"] == "iteration")
        segments = [seg for c in self.figs["bars-3-reps"].axes[0].collections
                    for seg in c.get_segments()]
        self.assertTrue(any(abs(s[0][1] - times[0]) < 1e-9 and abs(s[1][1] - times[-1]) < 1e-9
                            for s in segments))

    def test_ratio_chart_has_the_line_at_one_and_the_intervals(self):
        ax, = self.figs["ratios"].axes
        lines = [line for line in ax.lines if line.get_gid() == "no-change"]
        self.assertEqual(len(lines), 1)
        self.assertEqual(set(lines[0].get_ydata()), {1.0})
        text = all_text(self.figs["ratios"])
        self.assertIn("0.064", text)
        self.assertIn("[0.059, 0.066]", text)
        self.assertIn("Before: x86_gtod+rdtscp+always", text)

    def test_counts_one_panel_per_metric(self):
        self.assertEqual(len(self.figs["counts"].axes), 2)
        self.assertIn("0 for every clock and variant", all_text(self.figs["counts"]))
        self.assertEqual([ax.get_ylabel().replace("\n", " ") for ax in self.figs["counters"].axes],
                         ["cycles per call", "instructions per call"])

    def test_files_are_valid_png_and_svg_of_the_stated_size(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("bars-8x7", "ratios"):
                fig = self.figs[name]
                paths = plots_write.write_all(tmp, plots_write.figure_outputs(name, fig))
                self.assertEqual([p.name for p in paths], [f"{name}.png", f"{name}.svg"])
                self.assertEqual(png_size(paths[0]), pixels(fig))
                width, height = fig.get_size_inches() * 72
                self.assertEqual(svg_size(paths[1]), (round(width, 2), round(height, 2)))
            svg = Path(tmp, "ratios.svg").read_text()
            self.assertIn('id="no-change"', svg)
            self.assertEqual(sorted(os.listdir(tmp)), ["bars-8x7.png", "bars-8x7.svg",
                                                       "ratios.png", "ratios.svg"])


class WriteAllTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def test_all_or_nothing(self):
        def fail(f):
            raise OSError(28, "No space left on device")
        out = self.dir / "a" / "b"
        outputs = [plots_write.text_output("one.md", "x"), ("two.png", fail)]
        with self.assertRaises(OSError):
            plots_write.write_all(out, outputs)
        self.assertEqual(os.listdir(self.dir), [], "no file, no directory it created")
        (self.dir / "kept").mkdir()
        (self.dir / "kept" / "one.md").write_text("old")
        with self.assertRaises(OSError):
            plots_write.write_all(self.dir / "kept", outputs)
        self.assertEqual(os.listdir(self.dir / "kept"), ["one.md"])
        self.assertEqual((self.dir / "kept" / "one.md").read_text(), "old")

    def test_under_a_regular_file(self):
        (self.dir / "file").write_text("")
        with self.assertRaises(NotADirectoryError):
            plots_write.write_all(self.dir / "file" / "sub", [plots_write.text_output("x", "")])
        self.assertEqual(os.listdir(self.dir), ["file"])

    def test_replaces_derived_files(self):
        plots_write.write_all(self.dir, [plots_write.text_output("x.md", "1")])
        plots_write.write_all(self.dir, [plots_write.text_output("x.md", "2")])
        self.assertEqual((self.dir / "x.md").read_text(), "2")
        self.assertEqual(os.listdir(self.dir), ["x.md"])


class CheckTest(unittest.TestCase):
    def test_overlap_check_sees_an_overlap(self):
        fig, (ax,) = plots_layout.figure()
        fig.text(0.5, 0.5, "one label")
        fig.text(0.51, 0.5, "another label")
        self.assertEqual(plots_layout.overlapping_labels(fig), [("one label", "another label")])
        fig.text(0.99, 0.5, "off the edge")
        self.assertEqual(plots_layout.clipped_labels(fig), ["off the edge"])

    def test_short_names(self):
        self.assertEqual(plots.short_clock("monotonic_coarse"), "MONO_COARSE")
        self.assertEqual(plots.short_clock("getres:realtime_coarse"), "getres(REAL_COARSE)")
        labels, note = plots.short_variants(["generic_5_3+rdtscp+always", "sys/vdso"])
        self.assertEqual(labels, {"generic_5_3+rdtscp+always": "generic_5_3",
                                  "sys/vdso": "sys/vdso"})
        self.assertIn("+rdtscp+always", note)
        labels, note = plots.short_variants(["a+rdtsc+always", "a+rdtscp+always"])
        self.assertEqual((labels["a+rdtsc+always"], note), ("a+rdtsc+always", ""))

    def test_bad_input(self):
        with self.assertRaises(merge.InputError):
            plots.counters([fixture("amd-epyc.json")])   # no PMU there
        with self.assertRaises(merge.InputError):
            plots.ratios({"meta": {}, "rows": []})
        with self.assertRaises(merge.InputError):
            plots.per_cpu([fixture("amd-epyc.json")], clock="gettimeofday")

    def test_matplotlib_only_when_drawing(self):
        r = subprocess.run([sys.executable, "-c", "import sys; from reports import plots, merge; "
                            "print('matplotlib' in sys.modules)"], cwd=ROOT,
                           capture_output=True, text=True)
        self.assertEqual(r.stdout.strip(), "False", r.stderr)


if __name__ == "__main__":
    unittest.main()
