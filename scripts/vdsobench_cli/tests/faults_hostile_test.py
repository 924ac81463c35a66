"""Hostile inputs as attacks, against the real commands.

- Files that are not files: a FIFO nobody writes, /dev/zero, /dev/stdin on a
  pipe, a directory, a socket, a symbolic link to /dev/zero, a sparse file
  far over the cap, handed to every command that reads a file (gate
  --baseline, merge, report, plot, compare --results, patch-review's
  --patch): exit 2, one line naming the file and what it is, nothing written,
  nothing hangs (each real process runs under a timeout).
- Numbers no field may hold: a 401-digit (and a 5000-digit) integer, 1e400,
  2e19, in a results file and in a baseline: refused where the file is read,
  with the line and the field; gate before it measures anything.
- Strings a machine made: control characters, escape sequences, bidi
  overrides and isolates, zero-width characters, separators, a lone
  surrogate, mathtext in a results file's fingerprint and in this machine's:
  report writes every SVG well-formed, index.md and the terminal get none of
  them, exit 0.
- A report too large to draw, layout --live of another architecture and a
  build without its cross compiler: one line, exit 2, before any work.
"""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import arch, build, inputs
from vdsobench_cli.measure import fingerprint, rounds
from vdsobench_cli.recipes import patch_review
from vdsobench_cli.tests.support import vdsobench
from vdsobench_cli.measure import sim
from vdsobench_cli.cli.build import ROOT
from vdsobench_cli.core import text

from reports import plots  # noqa: E402  (ROOT is on sys.path now)

VDSOBENCH = str(ROOT / "scripts" / "vdsobench")
SMALL = Path(__file__).resolve().parent / "testdata" / "results_small.json"
BASELINE = ROOT / "results" / "baselines" / "ci.json"
# A hang is the failure these tests look for: a refusal takes a second.
HANG_S = 60
# What must never reach a terminal, a Markdown file or an SVG raw: C0 but the
# line break, DEL, C1, bidi controls, zero-width ones, separators, surrogates.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                 "\u2060-\u2069\ufeff\ufff9-\uffff\ud800-\udfff]")
EVIL = ("\x1b[31mred\x1b[0m\x07\x00\x08\x7f\x85\x9b2J \u202eevil\u202c \u2066iso\u2069 "
        "zero\u200bwidth\u2060 line\u2028para\u2029 tab\there cr\r\nnl \ud800 \ufffe "
        "$\\frac{a$ <svg>&amp;")


def real(*argv, stdin=subprocess.DEVNULL):
    """(exit status, stdout, stderr) of the real scripts/vdsobench ARGV, in a
    process of its own: a blocking open or read shows as a timeout."""
    r = subprocess.run([sys.executable, VDSOBENCH, *map(str, argv)], stdin=stdin,
                       capture_output=True, timeout=HANG_S, cwd=ROOT,
                       text=True, errors="surrogateescape")
    return r.returncode, r.stdout, r.stderr


def snapshot(directory):
    return sorted((str(p.relative_to(directory)), p.is_dir(), p.is_symlink())
                  for p in Path(directory).rglob("*"))


class Attack(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="vdsobench-hostile-")
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def assert_one_line(self, rc, out, err, *needles):
        self.assertEqual(rc, 2, err)
        self.assertEqual(out, "")
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("vdsobench: error: "), err)
        for needle in needles:
            self.assertIn(needle, err)

    def assert_refused_in_process(self, argv, *needles):
        before = snapshot(self.dir)
        self.assert_one_line(*vdsobench(*map(str, argv)), *needles)
        self.assertEqual(snapshot(self.dir), before, "nothing written")


# ---- files that are not files --------------------------------------------------------------

# (command, argv with {bad}, {good} and {out}, the kind of file in messages)
READERS = (
    ("gate", ["gate", "--baseline", "{bad}"], "a baseline"),
    ("merge", ["merge", "{good}", "{bad}"], "a results file"),
    ("report", ["report", "{bad}", "--out", "{out}"], "a results file"),
    ("plot", ["plot", "{bad}", "--out", "{out}"], "a results file or comparison"),
    ("compare-old", ["compare", "--results", "{bad}", "{good}"], "a results file"),
    ("compare-new", ["compare", "--results", "{good}", "{bad}"], "a results file"),
)


class NotAFileTest(Attack):
    def kinds(self):
        """{name: (path, what the message calls it)} of each thing that is not a file."""
        d = self.dir / "inputs"
        d.mkdir()
        fifo = d / "fifo.json"
        os.mkfifo(fifo)
        (d / "zero.json").symlink_to("/dev/zero")
        (d / "fifo-link.json").symlink_to(fifo)
        sock = socket.socket(socket.AF_UNIX)
        self.addCleanup(sock.close)
        sock.bind(str(d / "socket.json"))
        (d / "folder.json").mkdir()
        with open(d / "sparse.json", "wb") as f:
            f.truncate(1 << 40)  # a TB, in no blocks
        return {"fifo": (fifo, "is a named pipe (FIFO);"),
                "dev-zero": ("/dev/zero", "is a character device;"),
                "link-to-dev-zero": (d / "zero.json",
                                     "is a character device (through a symbolic link);"),
                "link-to-fifo": (d / "fifo-link.json",
                                 "is a named pipe (FIFO) (through a symbolic link);"),
                "socket": (d / "socket.json", "is a socket;"),
                "directory": (d / "folder.json", "is a directory;"),
                "sparse": (d / "sparse.json", "1048576 MB is larger than the")}

    def test_every_reader_refuses_every_kind(self):
        # in process (a refusal of each of 42 pairs); the kinds that could
        # block are also run as real processes below
        kinds = self.kinds()
        for command, argv, what in READERS:
            for name, (path, says) in kinds.items():
                with self.subTest(command=command, kind=name):
                    out = self.dir / f"out-{command}-{name}"
                    self.assert_refused_in_process(
                        [a.format(bad=path, good=SMALL, out=out) for a in argv],
                        str(path), says, what)
                    self.assertFalse(out.exists())
        # and what is left behind still works: the good file still merges
        rc, out, err = vdsobench("merge", str(SMALL))
        self.assertEqual(rc, 0, err)
        self.assertIn("generic_5_3+rdtscp+always", out)

    def test_nothing_blocks_in_a_real_process(self):
        kinds = self.kinds()
        fifo = kinds["fifo"][0]
        for command, argv, what in READERS:
            with self.subTest(command=command, kind="fifo"):
                out = self.dir / f"out-{command}"
                self.assert_one_line(*real(*[a.format(bad=fifo, good=SMALL, out=out)
                                             for a in argv]), str(fifo), what)
                self.assertFalse(out.exists())
        # /dev/stdin on a pipe whose writer never writes nor closes
        with subprocess.Popen(["sleep", str(HANG_S)], stdout=subprocess.PIPE) as writer:
            try:
                self.assert_one_line(*real("gate", "--baseline", "/dev/stdin",
                                           stdin=writer.stdout),
                                     "/dev/stdin: is a named pipe (FIFO) (through a symbolic "
                                     "link); a baseline must be a regular file")
            finally:
                writer.kill()

    def test_a_patch_is_read_by_the_same_rules(self):
        kinds = self.kinds()
        for name, (path, says) in kinds.items():
            with self.subTest(kind=name), self.assertRaises(inputs.UsageError) as cm:
                patch_review.subject(str(path))
            self.assertIn(says, str(cm.exception))
        fifo = kinds["fifo"][0]
        self.assert_one_line(*real("recipe", "patch-review", "--patch", fifo, "--out",
                                   self.dir / "review"),
                             f"{fifo}: is a named pipe (FIFO); a patch must be a regular file")
        self.assertFalse((self.dir / "review").exists())
        patch = self.dir / "good.patch"
        patch.write_text("From x\nSubject: [PATCH] vdso: \x1b]0;owned\x07move max_cycles\n\n"
                         "--- a/lib/vdso/gettimeofday.c\n+++ b/lib/vdso/gettimeofday.c\n"
                         "@@ -1 +1 @@\n-a\n+b\n")
        self.assertEqual(patch_review.subject(str(patch)),
                         "vdso: \\x1b]0;owned\\x07move max_cycles")

    def test_the_reader_opens_without_blocking_what_it_checked(self):
        # a FIFO put in place between the stat and the open: the open does
        # not block, and fstat refuses it
        fifo = self.dir / "swapped"
        os.mkfifo(fifo)
        real_stat = os.stat

        def regular_then_fifo(path, *a, **k):
            return real_stat(SMALL) if str(path) == str(fifo) else real_stat(path, *a, **k)
        with mock.patch.object(os, "stat", regular_then_fifo), \
                self.assertRaisesRegex(inputs.UsageError, "is a named pipe"):
            inputs.read_bytes(str(fifo), "baseline", inputs.LIMITS["baseline"])


# ---- numbers no field may hold -------------------------------------------------------------

def with_token(path, where, token):
    """The JSON text of path with the value at `where` (keys) replaced by the raw token."""
    obj = json.loads(Path(path).read_text())
    node = obj
    for k in where[:-1]:
        node = node[k]
    node[where[-1]] = "@@TOKEN@@"
    return json.dumps(obj, indent=1).replace('"@@TOKEN@@"', token)


NUMBERS = (
    ("401-digits", "9" * 401, "9999999999...9999 (401 digits)", "64-bit range"),
    ("5000-digits", "-" + "7" * 5000, "-777777777...7777 (5000 digits)", "64-bit range"),
    ("2^64", str(1 << 64), str(1 << 64), "64-bit range"),
    ("1e400", "1e400", "1e400", "beyond the 1.8e19"),
    ("2e19", "2e19", "2e19", "beyond the 1.8e19"),
    ("-1.7e308", "-1.7e308", "-1.7e308", "beyond the 1.8e19"),
)


class NumbersTest(Attack):
    def test_results_files(self):
        field = ("benchmarks", 3, "iterations")
        for case, token, shown, why in NUMBERS:
            bad = self.dir / f"{case}.json"
            bad.write_text(with_token(SMALL, field, token))
            for argv in (["merge", SMALL, bad], ["report", bad, "--out", self.dir / "out"],
                         ["compare", "--results", SMALL, bad]):
                with self.subTest(case=case, command=argv[0]):
                    self.assert_refused_in_process(argv, f"{bad}: line ", shown,
                                                   "at benchmarks[3].iterations", why)

    def test_a_baseline_is_refused_before_anything_is_measured(self):
        measured = mock.Mock(side_effect=AssertionError("measured"))
        for case, token, shown, why in NUMBERS:
            bad = self.dir / f"{case}.json"
            bad.write_text(with_token(BASELINE, ("sim", "rows", 0, "instructions_per_call"),
                                      token))
            for extra in ([], ["--update-baseline"]):
                with self.subTest(case=case, update=bool(extra)), \
                        mock.patch.object(sim, "measure", measured), \
                        mock.patch.object(rounds, "measure", measured):
                    self.assert_refused_in_process(
                        ["gate", "--baseline", bad, *extra], shown,
                        "at sim.rows[0].instructions_per_call", why)
        measured.assert_not_called()

    def test_in_range_numbers_load_on_the_fast_path(self):
        path = self.dir / "edges.json"
        path.write_text(json.dumps({"a": [-(1 << 63), (1 << 64) - 1, 1.8e19, -1.8e19,
                                          5e-324, 1e-300, 0.5]}))
        self.assertEqual(inputs.read(path, "baseline")["a"][:2], [-(1 << 63), (1 << 64) - 1])
        path.write_text('{"a": 1,\n "b": [2, 3,\n 1e999]}')
        with self.assertRaisesRegex(inputs.UsageError, r"line 3: 1e999 at b\[2\]"):
            inputs.read(path, "baseline")


# ---- strings a machine made ----------------------------------------------------------------

def hostile_results(path):
    obj = json.loads(SMALL.read_text())
    fp = obj["context"]["vdsobench"]["fingerprint"]
    fp["cpu"].update(model_name="Intel(R) " + EVIL, microcode="0x1" + EVIL, uarch=EVIL)
    fp["kernel"]["release"] = "6.1" + EVIL
    fp["hypervisor"] = {"present": True, "vendor": EVIL, "vendor_source": EVIL}
    fp["hostname"] = EVIL
    fp["build"]["compiler"] = "gcc " + EVIL
    obj["context"]["vdsobench"]["warnings"] = [{"id": "load" + EVIL, "message": EVIL}]
    # surrogateescape: the lone surrogate goes into the file as JSON's \ud800
    path.write_text(json.dumps(obj))
    return path


class MachineStringsTest(Attack):
    def assert_clean(self, what, content):
        self.assertIsNone(RAW.search(content), f"{what}: {RAW.findall(content)[:5]}")

    def test_report_of_a_hostile_fingerprint(self):
        evil = hostile_results(self.dir / "evil.json")
        out = self.dir / "report"
        rc, stdout, stderr = real("report", evil, SMALL, "--out", out)
        self.assertEqual(rc, 0, stderr)
        self.assert_clean("stdout", stdout)
        self.assert_clean("stderr", stderr)
        svgs = sorted(out.glob("*.svg"))
        self.assertGreaterEqual(len(svgs), 4, os.listdir(out))
        for svg in svgs:
            with self.subTest(svg=svg.name):
                ElementTree.parse(svg)  # well-formed XML, or this raises
        index = (out / "index.md").read_text()
        self.assert_clean("index.md", index)
        self.assertIn("\\x1b[31mred", index)    # shown, escaped
        self.assertIn("\\u202eevil", index)
        self.assert_clean("merged.json", (out / "merged.json").read_text())

    def test_merge_and_compare_print_none_of_it(self):
        evil = hostile_results(self.dir / "evil.json")
        for argv in (["merge", evil, SMALL], ["merge", evil, "--format", "csv"],
                     ["merge", evil, "--format", "markdown"],
                     ["compare", "--results", SMALL, evil]):
            with self.subTest(argv=argv[:3]):
                rc, out, err = vdsobench(*map(str, argv))
                self.assertIn(rc, (0, 1), err)
                self.assertIn("\\x1b", out)
                self.assert_clean("stdout", out)
                self.assert_clean("stderr", err)

    def test_an_error_line_names_a_hostile_path_escaped(self):
        name = self.dir / "a\x1b[2Jb\u202e.json"
        rc, out, err = vdsobench("merge", str(name))
        self.assert_one_line(rc, out, err, "a\\x1b[2Jb\\u202e.json: No such file")

    def test_this_machines_strings(self):
        root = self.dir / "root"
        (root / "proc" / "sys" / "kernel").mkdir(parents=True)
        # the lone surrogate as the invalid UTF-8 bytes a machine could give
        (root / "proc" / "cpuinfo").write_bytes(
            (f"processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t: 140\n"
             f"model name\t: Intel {EVIL.replace(chr(10), '').replace(chr(13), '')}\n\n"
             ).encode("utf-8", "surrogatepass"))
        (root / "proc" / "sys" / "kernel" / "hostname").write_text("h\x1b]0;x\x07\u202e")
        (root / "proc" / "sys" / "kernel" / "osrelease").write_text("6.1\x1b[31m\u2066")
        fp = fingerprint.collect([0], root=str(root))
        self.assertEqual(fp["hostname"], "h\\x1b]0;x\\x07\\u202e")
        self.assertEqual(fp["kernel"]["release"], "6.1\\x1b[31m\\u2066")
        self.assert_clean("fingerprint", json.dumps(fp, ensure_ascii=False))

    def test_printable(self):
        for raw, shown in (("\x1b[31m", "\\x1b[31m"), ("\x00\x7f\x85", "\\x00\\x7f\\x85"),
                           ("a\u202eb\u2066c\u2069", "a\\u202eb\\u2066c\\u2069"),
                           ("\u200b\ufeff\u2028\u2029", "\\u200b\\ufeff\\u2028\\u2029"),
                           ("\ud800\ufffe", "\\ud800\\ufffe"), ("\U000e0001", "\\U000e0001"),
                           ("Zürich Ryzen™ 9 \\x1b", "Zürich Ryzen™ 9 \\x1b")):
            with self.subTest(raw=raw):
                self.assertEqual(text.printable(raw), shown)
                self.assertEqual(text.printable(shown), shown, "idempotent")
        self.assertEqual(text.printable("x" * 500), "x" * (text.LIMIT - 3) + "...")
        self.assertEqual(len(text.printable("\x1b" * 500, limit=20)), 20)
        self.assertEqual(text.printable_lines("a\x1b\nb\u202e"), "a\\x1b\nb\\u202e")
        obj = text.cleaned({"k\x1b": ["v\u202e", {"n": 1, "s\x07": None}]})
        self.assertEqual(obj, {"k\\x1b": ["v\\u202e", {"n": 1, "s\\x07": None}]})


# ---- what cannot be drawn or built ---------------------------------------------------------

def many_benchmarks(path, variants, clocks, modes):
    """A results file of variants x clocks x modes benchmarks, one repetition each."""
    obj = json.loads(SMALL.read_text())
    one = next(b for b in obj["benchmarks"] if b["run_type"] == "iteration")
    obj["benchmarks"] = []
    for v in range(variants):
        for c in clocks:
            for m in modes:
                name = f"v{v}+rdtscp+always/{c}/{m}/cpu0"
                obj["benchmarks"].append(dict(
                    one, name=name, run_name=name, family_index=len(obj["benchmarks"]),
                    per_family_instance_index=0, repetitions=1, repetition_index=0))
    path.write_text(json.dumps(obj))
    return path


class TooLargeTest(Attack):
    def test_a_chart_past_the_limit_is_refused_before_drawing(self):
        clocks, modes = ("monotonic", "realtime", "monotonic_raw", "boottime"), ("hot", "cold")
        variants = plots.MAX_BARS // (len(clocks) * len(modes)) + 1
        big = many_benchmarks(self.dir / "big.json", variants, clocks, modes)
        bars = variants * len(clocks) * len(modes)
        for argv in (["report", big, "--out", self.dir / "report"],
                     ["plot", big, "--out", self.dir / "plot"]):
            with self.subTest(command=argv[0]):
                before = snapshot(self.dir)
                self.assert_one_line(
                    *real(*argv), f"the bars chart of big.json would draw {bars} bars "
                    f"({variants} variants x 8 clocks and modes); a chart draws at most "
                    f"{plots.MAX_BARS}: choose fewer with --variants, --clocks or --modes")
                self.assertEqual(snapshot(self.dir), before)

    def test_every_chart_checks(self):
        with mock.patch.object(plots, "MAX_BARS", 1):
            self.assert_refused_in_process(["report", SMALL, "--out", self.dir / "r"],
                                           "the bars chart of results_small.json would draw")
            self.assert_refused_in_process(
                ["plot", ROOT / "reports" / "testdata" / "compare.json", "--out",
                 self.dir / "p"], "the ratios chart would draw")

    def test_layout_live_of_another_architecture(self):
        self.assert_one_line(*real("layout", "--live", "--arch", "arm64"),
                             "layout --live --arch arm64: --live reads the running kernel's "
                             "own data page", "(valid: --arch x86_64)")

    def test_a_cross_build_without_its_compiler(self):
        self.addCleanup(arch.use)  # the command made arm64 this process's architecture
        bazel = mock.Mock(side_effect=AssertionError("bazel ran"))
        with mock.patch.object(arch, "CROSS_BIN", str(self.dir)), \
                mock.patch.object(build, "bazel", bazel):
            self.assert_refused_in_process(
                ["layout", "x86_gtod", "--arch", "arm64"],
                "--arch arm64: the cross compiler is not installed (aarch64-linux-gnu-gcc, "
                "aarch64-linux-gnu-g++ not in", "scripts/vdsobench setup --arch arm64")
        bazel.assert_not_called()

    def test_bundle_says_bundle(self):
        there = self.dir / "old.tar.gz"
        there.write_bytes(b"not ours")
        self.assert_refused_in_process(["bundle", "--out", there],
                                       f"bundle file exists: {there}")
        (self.dir / "folder.tar.gz").mkdir()
        self.assert_refused_in_process(["bundle", "--out", self.dir / "folder.tar.gz"],
                                       "cannot write bundle to")


if __name__ == "__main__":
    unittest.main()
