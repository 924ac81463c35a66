"""`merge` and `report` end to end on the two committed machines' fixtures:
the table, the JSON (never over an existing file without --force), the
report directory; each bad input one line, exit 2, nothing left behind."""

import csv
import io
import json
import os
import re
from pathlib import Path

from vdsobench_cli.tests.support import AMD, COMPARISON, INTEL, TempDir
from vdsobench_cli.tests.support import plot_vdsobench as vdsobench
from reports.testsupport import png_size


class MergeTest(TempDir):
    def test_table_across_machines(self):
        rc, out, err = vdsobench("merge", AMD, INTEL, "--clocks", "monotonic")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        head = next(line for line in lines if line.startswith("variant"))
        self.assertEqual(re.split(r"\s{2,}", head),
                         ["variant", "clock", "Zen 3 cpu1", "Sapphire Rapids cpu0", "Sapphire Rapids cpu8"])
        vdso = next(line for line in lines if line.startswith("sys/vdso "))
        self.assertEqual(re.split(r"\s{2,}", vdso),
                         ["sys/vdso", "CLOCK_MONOTONIC", "29.7 [28.6, 31.2]",
                          "31.7 [29.0, 33.8]", "32.0 [29.4, 34.8]"])
        self.assertIn("  project commit: amd-epyc.json 275c39f86a44; intel-xeon.json "
                      "6af4520a88f0", lines)
        self.assertIn("  compiler: amd-epyc.json 12.2.0; intel-xeon.json 13.2.0", lines)
        # every variant the AMD run has, with "-" where the Intel run has none
        raw_branch = next(line for line in lines if line.startswith("x86_gtod_raw_branch"))
        self.assertEqual(re.split(r"\s{2,}", raw_branch)[-2:], ["-", "-"])

    def test_reference_and_formats(self):
        rc, out, err = vdsobench("merge", AMD, INTEL, "--reference", "sys/vdso", "--clocks",
                                 "monotonic", "--variants", "sys/syscall", "--format", "csv")
        self.assertEqual(rc, 0, err)
        rows = list(csv.DictReader(io.StringIO(out)))
        self.assertEqual([(r["column"], round(float(r["ratio"]), 2)) for r in rows],
                         [("Zen 3 cpu1", 11.18), ("Sapphire Rapids cpu0", 5.49), ("Sapphire Rapids cpu8", 5.49)])
        rc, out, err = vdsobench("merge", AMD, INTEL, "--format", "markdown")
        self.assertIn("| `sys/vdso` | CLOCK_MONOTONIC | 29.7 [28.6, 31.2] | 31.7 [29.0, 33.8] |",
                      out)

    def test_out_is_json_and_never_overwritten(self):
        path = self.dir / "merged.json"
        rc, out, err = vdsobench("merge", AMD, INTEL, "--out", path, "--format", "json")
        self.assertEqual(rc, 0, err)
        saved = json.loads(path.read_text())
        self.assertEqual(saved, json.loads(out))
        self.assertEqual(len(saved["columns"]), 3)
        self.assertEqual([d["what"] for d in saved["differences"]],
                         ["project commit", "copts", "compiler"])
        self.assert_refused("merge", AMD, "--out", path, needle="exists")
        self.assertEqual(json.loads(path.read_text()), saved)
        rc, _, err = vdsobench("merge", AMD, "--out", path, "--force")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(json.loads(path.read_text())["columns"]), 1)

    def test_bad_input(self):
        self.assert_refused("merge", AMD, COMPARISON, needle="compare.json is a comparison")
        self.assert_refused("merge", AMD, "--variants", "nosuch", needle="'nosuch' matches no")
        self.assert_refused("merge", AMD, "--format", "lkml", needle="--format: 'lkml'")
        data = json.loads(Path(INTEL).read_text())
        data["context"]["vdsobench"]["schema"] = "vdsobench-results/0"
        (self.dir / "old.json").write_text(json.dumps(data))
        self.assert_refused("merge", AMD, self.dir / "old.json", "--out", self.dir / "m.json",
                            needle="mixed schema versions")
        (self.dir / "file").write_text("")
        self.assert_refused("merge", AMD, "--out", self.dir / "file" / "m.json",
                            needle="not a directory")


class ReportTest(TempDir):
    def test_report_directory(self):
        out = self.dir / "report"
        rc, stdout, err = vdsobench("report", AMD, INTEL, "--out", out, "--reference",
                                    "sys/vdso", "--format", "png")
        self.assertEqual(rc, 0, err)
        self.assertEqual([Path(p).name for p in stdout.splitlines()],
                         ["index.md", "merged.json", "per-cpu-monotonic.png",
                          "bars-amd-epyc.png", "bars-intel-xeon.png"])
        index = (out / "index.md").read_text()
        self.assertIn("| `sys/vdso` | CLOCK_MONOTONIC | 29.7 [28.6, 31.2] 1.000x |", index)
        self.assertIn("- copts: amd-epyc.json -g -UNDEBUG -Wall -Wextra -Werror; "
                      "intel-xeon.json -g -UNDEBUG -Wall -Wextra -Werror -march=x86-64-v3",
                      index)
        images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", index)
        self.assertEqual(images[0], "per-cpu-monotonic.png")
        for image in images:
            self.assertEqual(png_size(out / image)[0], 1050)
        self.assertEqual(json.loads((out / "merged.json").read_text())["reference"], "sys/vdso")
        self.assertEqual(sorted(os.listdir(out)), sorted(Path(p).name
                                                         for p in stdout.splitlines()))

    def test_bad_input_leaves_nothing(self):
        out = self.dir / "report"
        self.assert_refused("report", AMD, COMPARISON, "--out", out, needle="is a comparison")
        self.assert_refused("report", AMD, "--variants", "x86_*,nosuch", "--out", out,
                            needle="'nosuch' matches no variant")
        (self.dir / "file").write_text("")
        self.assert_refused("report", AMD, INTEL, "--out", self.dir / "file",
                            needle="not a directory")
