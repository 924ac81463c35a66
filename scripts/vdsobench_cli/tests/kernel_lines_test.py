"""impls/kernel_lines/lines.bzl: every layout's family has a line, each line
passes the table's check and has its provenance, and, where this machine has
a kbuild record of Debian's tree (`vdsobench import linux-source-X.Y`), the
committed line is the one kbuild gives now."""

import re
import tempfile
import unittest
from pathlib import Path

from unittest import mock

from vdsobench_cli.cli import arch
from vdsobench_cli.kimport import imports_table, kernel_lines
from vdsobench_cli.commands import run
from vdsobench_cli.cli.errors import UsageError

VARIANTS = kernel_lines.ROOT / "impls" / "variants.bzl"


def layout_families():
    """layout -> family, from the LAYOUTS rows ("name": ("source", "family"[, arches]))."""
    block = re.search(r"LAYOUTS = \{(.*?)\n\}", VARIANTS.read_text(), re.S).group(1)
    return dict(re.findall(r'"(\w+)": \("[^"]+", "([\d.]+)"[,)]', block))


class CommittedTest(unittest.TestCase):
    def test_each_layout_has_a_family_with_a_checked_line(self):
        table = kernel_lines.read()
        layouts = re.search(r"LAYOUTS = \{(.*?)\n\}", VARIANTS.read_text(), re.S).group(1)
        fams = layout_families()
        for layout in re.findall(r'(?m)^    "(\w+)":', layouts):
            self.assertIn(layout, fams, f"{layout}: its LAYOUTS row names no family")
        for fam in set(fams.values()):
            if fam not in table:
                self.skipTest(f"no committed line for {fam} yet")
            self.assertTrue(imports_table.kline_ok(table[fam]["copts"]), fam)
            prov = table[fam]["provenance"]
            for field in ("tree", "config", "config_sha256", "compiler", "made", "line"):
                self.assertTrue(prov.get(field), f"{fam}: no {field}")
            self.assertIn(f"linux-config-{fam}/", prov["config"])

    def test_render_reads_back(self):
        table = {"6.1": {"copts": ["-O2"], "provenance": {"tree": "t"}},
                 "6.12": {"copts": ["-O2", "-mno-sse"], "provenance": {"tree": "u"}}}
        with tempfile.TemporaryDirectory() as d:
            old = kernel_lines.LINES
            kernel_lines.LINES = Path(d) / "lines.bzl"
            try:
                kernel_lines.write(kernel_lines.render(table))
                self.assertEqual(kernel_lines.read(), table)
            finally:
                kernel_lines.LINES = old


class LineChoiceTest(unittest.TestCase):
    def test_kernel_by_default_plain_on_request_bad_value_named(self):
        x86 = arch.Target("x86_64", "x86_64")
        with mock.patch.dict("os.environ", {arch.LINE_ENV: "plain"}):
            self.assertEqual(arch.line(), "plain")
            self.assertEqual(x86.bazel_flags(), [])
        with mock.patch.dict("os.environ", {arch.LINE_ENV: ""}):
            self.assertEqual(arch.line(), "kernel")
            self.assertEqual(x86.bazel_flags(), ["--config=kline"])
            with mock.patch.object(arch, "current", return_value=arch.Target("arm64", "x86_64")):
                self.assertEqual(arch.layouts_line(), "plain")  # the kernel line is amd64's
        with mock.patch.dict("os.environ", {arch.LINE_ENV: "kernel"}):
            self.assertEqual(x86.bazel_flags(), ["--config=kline"])
            self.assertEqual(arch.Target("arm64", "arm64").bazel_flags(), [])  # x86's line
            with mock.patch.object(arch, "current", return_value=x86):
                ctx = run.line_context()
            self.assertEqual(ctx["layouts"], "kernel")
            self.assertEqual(set(ctx["families"]), set(kernel_lines.read()))
        with mock.patch.dict("os.environ", {arch.LINE_ENV: "kline; rm -rf /"}):
            with self.assertRaisesRegex(UsageError, r"VDSOBENCH_LINE=.*valid: plain, kernel"):
                arch.line()
            with self.assertRaisesRegex(UsageError, r"VDSOBENCH_LINE=.*valid: plain, kernel"):
                x86.bazel_flags()


class AgainstKbuildTest(unittest.TestCase):
    def test_committed_lines_are_kbuilds(self):
        found = kernel_lines.records()
        if not found:
            self.skipTest("no kbuild record of Debian's 6.1 or 6.12 here (vdsobench import "
                          "linux-source-6.12 makes one)")
        table = kernel_lines.read()
        for fam, rec in found.items():
            self.assertEqual(table.get(fam, {}).get("copts"), rec["copts"],
                             f"{fam}: run kernel_lines --update --force")


if __name__ == "__main__":
    unittest.main()
