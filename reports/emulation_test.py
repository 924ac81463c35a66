"""A run or comparison measured under emulation says so wherever it is shown:
the run table, the merged table (columns, Machines lines, csv, json), the
comparison formats (table, lkml, markdown, csv) and the plots' titles,
legends and captions. Deterministic: the committed fixtures with an
emulation record added, nothing measured."""

import copy
import csv
import io
import unittest

from reports import merge, run_table, tables
from vdsobench_cli.core import emulation
from reports.testsupport import SELECTION, fixture

EMU = {"label": "emulated (qemu-user)", "emulator": "qemu-user",
       "program": "qemu-aarch64-static", "version": "7.2.22", "guest": "aarch64",
       "host": "x86_64"}
EMU["note"] = emulation.describe(EMU)
LABEL = EMU["label"]


def emulated(named):
    """A copy of a (name, results) fixture as if run under qemu-user."""
    name, data = named
    data = copy.deepcopy(data)
    ctx = data["context"]["vdsobench"]
    ctx["emulation"] = dict(EMU)
    ctx["warnings"].insert(0, {"id": "emulated", "message": EMU["note"]})  # as run adds it
    return name.replace(".json", "-aarch64-emulated.json"), data


class RecordTest(unittest.TestCase):
    def test_of_results(self):
        native = fixture("amd-epyc.json")[1]
        self.assertIsNone(emulation.of_results(native))
        self.assertEqual(emulation.of_results(emulated(fixture("amd-epyc.json"))[1]), EMU)
        self.assertIsNone(emulation.of_results({"context": {}}))

    def test_label_and_sentence(self):
        self.assertEqual(emulation.label(None), "")
        self.assertEqual(emulation.label(EMU), LABEL)
        self.assertEqual(emulation.describe(EMU),
                         "emulated (qemu-user): aarch64 code run by qemu-aarch64-static "
                         "7.2.22 on an x86_64 CPU; the times measure the emulator, not an "
                         "aarch64 CPU.")
        self.assertEqual(emulation.on(EMU, "Zen 3"), "aarch64 emulated (qemu-user) on Zen 3")
        self.assertEqual(emulation.on(None, "Zen 3"), "Zen 3")


class RunTableTest(unittest.TestCase):
    def test_emulated_table_says_so_above_and_in_the_time_column(self):
        data = emulated(fixture("amd-epyc.json"))[1]
        rows = run_table.summarize(data["benchmarks"])
        lines = run_table.format_table(rows, emulation=emulation.of_results(data))
        self.assertEqual(lines[0], EMU["note"])
        self.assertIn(f"ns/call, {LABEL}", lines[1])
        plain = run_table.format_table(rows)
        self.assertFalse(any("emulated" in line for line in plain))
        self.assertEqual(len(lines), len(plain) + 1)


class MergeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.native = fixture("amd-epyc.json")
        cls.emu = emulated(cls.native)
        cls.merged = merge.merge([cls.native, cls.emu], **SELECTION)

    def test_the_emulated_run_is_a_machine_of_its_own(self):
        labels = [c["label"] for c in self.merged["columns"]]
        self.assertEqual(labels, ["Zen 3 cpu1", f"aarch64 {LABEL} on Zen 3 cpu1"])

    def test_table_and_machines_lines(self):
        text = merge.render_merge(self.merged, "table")
        self.assertIn(f"  aarch64 {LABEL} on Zen 3 cpu1: aarch64 {LABEL} on Zen 3 (AMD EPYC, "
                      "25/1/1), microcode", text)
        heading = next(line for line in text.splitlines() if line.startswith("variant"))
        self.assertIn(f"aarch64 {LABEL} on Zen 3 cpu1", heading)
        # the emulated guest's ABI is another's, and said among the differences
        self.assertIn("  ABI: amd-epyc.json x86_64 (64-bit); amd-epyc-aarch64-emulated.json "
                      "arm64 (64-bit)", text.splitlines())

    def test_csv_rows_carry_the_label(self):
        rows = list(csv.DictReader(io.StringIO(merge.render_merge(self.merged, "csv"))))
        by_source = {r["source"]: r["emulated"] for r in rows}
        self.assertEqual(by_source, {self.native[0]: "", self.emu[0]: LABEL})

    def test_json_machine(self):
        text = merge.render_merge(self.merged, "json")
        self.assertIn(f'"emulated": "{LABEL}"', text)


class ComparisonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        comparison = fixture("compare.json")[1]
        cls.native = comparison
        cls.emu = copy.deepcopy(comparison)
        cls.emu["meta"]["emulation"] = dict(EMU)
        for row in cls.emu["rows"]:
            if not row["metric"].startswith("sim:"):
                row["emulated"] = LABEL

    def test_every_people_format_says_so(self):
        for fmt in ("table", "lkml", "markdown"):
            text = tables.render(self.emu, fmt)
            self.assertIn(f"aarch64 {LABEL} on ", text, fmt)
            self.assertIn("the times measure the emulator", text, fmt)
            self.assertNotIn("emulat", tables.render(self.native, fmt), fmt)

    def test_lkml_begins_with_it(self):
        first = tables.render(self.emu, "lkml").splitlines()[0]
        self.assertTrue(first.startswith(LABEL), first)

    def test_table_rows_are_labelled(self):
        lines = tables.render(self.emu, "table").splitlines()
        timed = [x for x in lines if " ns/call" in x and "Method" not in x]
        self.assertTrue(timed)
        self.assertTrue(all(LABEL in x for x in timed))

    def test_csv_column(self):
        rows = list(csv.DictReader(io.StringIO(tables.render(self.emu, "csv"))))
        for r in rows:
            self.assertEqual(r["emulated"], "" if r["metric"].startswith("sim:") else LABEL)


class PlotsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            from reports import plots
        except ImportError as e:  # matplotlib missing: scripts/vdsobench setup
            raise unittest.SkipTest(f"matplotlib: {e}")
        from reports.testsupport import all_text, fig_title
        cls.plots = plots
        cls.all_text, cls.fig_title = staticmethod(all_text), staticmethod(fig_title)
        cls.native = fixture("amd-epyc.json")
        cls.emu = emulated(cls.native)

    def tearDown(self):
        import matplotlib.pyplot as plt
        plt.close("all")

    def test_bars_title(self):
        fig = self.plots.bars([self.emu], variants=SELECTION["variants"])
        self.assertIn(f"aarch64 {LABEL} on Zen 3", self.fig_title(fig))
        plain = self.plots.bars([self.native], variants=SELECTION["variants"])
        self.assertNotIn("emulated", self.all_text(plain))

    def test_per_cpu_legend_and_caption(self):
        fig = self.plots.per_cpu([self.native, self.emu], variants=SELECTION["variants"])
        text = self.all_text(fig)
        self.assertIn(f"aarch64 {LABEL} on Zen 3 cpu1", text)  # the legend entry
        self.assertIn("emulated, hypervisor, load.", text)  # the run's warnings

    def test_comparison_chart(self):
        comparison = copy.deepcopy(fixture("compare.json")[1])
        comparison["meta"]["emulation"] = dict(EMU)
        fig = self.plots.ratios(comparison)
        self.assertIn(f"aarch64 {LABEL} on", self.all_text(fig))


if __name__ == "__main__":
    unittest.main()
