"""`recipe patch-review` of a series and of a range, run for real: four
--quick --no-arm64 reviews of Debian's 6.12 made a git tree (the files
import takes, committed) in a throwaway imports table (minutes:
commands/testrun.py lists this module among the slow ones).

- A series whose middle patch does not build (offs_boot, then a line that
  does not compile, then its revert): the block names patch 2, its
  Subject: and the compiler's error, exit 2, nothing left in the table.
- A series whose second patch tears the reader (offs_boot, then
  6.12-torn-mult-shift): named, WRONG, exit 1, nothing timed.
- `--range BASE..main` of two committed patches (nfc-reorder, offs-boot),
  in a tree with every hook and a hostile config (core.fsmonitor, a diff
  driver, a filter...): none of them runs, and the block is the one
  `--patch` gives with the two patch files on BASE's tree, but for the
  range and the commits it names and the timing's figures. Any timing
  verdict will do: these are a few rounds of live timing.

The same on today's tree, Debian's 7.3 (fetched from the newer suites as
`import linux-source-7.3` fetches it), made a git tree: the series whose
middle patch does not build (do_hres() not always inline, the line, its
revert) and `--range` of two committed patches (do_hres() not always
inline, the counter read with rdtsc()) against their patch files.
"""

import json
import os
import re
import shutil
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import (newer_sources, source as source_mod, store,
                                   tarball as tarball_mod)
from vdsobench_cli.tests.git_support import git, git_commit_patch, hostile_git
from vdsobench_cli.tests.support import (KERNEL_TESTDATA, NESTED, TEST_BUDGET_S, TORN_612,
                                         ImportsDir, cli, long_tier, tarball_or_skip)

OFFS_BOOT = str(KERNEL_TESTDATA / "6.12-offs-boot.patch")
NFC_REORDER = str(KERNEL_TESTDATA / "6.12-nfc-reorder.patch")
HUNK = """--- a/lib/vdso/gettimeofday.c
+++ b/lib/vdso/gettimeofday.c
@@ -132,{} +132,{} @@
 {{
 \tconst struct vdso_timestamp *vdso_ts = &vd->basetime[clk];
 \tu64 cycles, sec, ns;
{}\tthis does not compile;
 \tu32 seq;
 
 \t/* Allows to compile the high resolution parts out */
"""
# the same line in 7.3's vdso_get_timestamp(), where do_hres()'s lines were
HUNK_73 = """--- a/lib/vdso/gettimeofday.c
+++ b/lib/vdso/gettimeofday.c
@@ -115,{} +115,{} @@
 {{
 \tconst struct vdso_timestamp *vdso_ts = &vc->basetime[clkidx];
 \tu64 cycles;
{}\tthis does not compile;
 
 \tif (unlikely(!vdso_clocksource_ok(vc)))
"""


def breaking(hunk, old, new):
    """The patches 2/3 and 3/3 of a series: a line that does not compile
    (hunk: where, with old and new its line counts), then its revert."""
    return ("From: t <t@localhost>\nSubject: [PATCH 2/3] vdso: Declare what does not compile\n"
            "\n---\n" + hunk.format(old, new, "+"),
            "From: t <t@localhost>\nSubject: [PATCH 3/3] vdso: Take back what did not "
            "compile\n\n---\n" + hunk.format(new, old, "-"))


BREAK, UNBREAK = breaking(HUNK, 6, 7)


def kernel_git_tree(repo, tarball, version):
    """A kernel tarball's files that import takes for every architecture, as
    a git work tree with one commit; its id."""
    repo.mkdir()
    patterns = [p for arch_dir in source_mod.ARCH_DIRS.values()
                for p in source_mod.expand(source_mod.TAKE, arch_dir)]
    tarball_mod.untar(tarball, list(dict.fromkeys(patterns)), [], repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"Linux {version}, the files import takes")
    return git(repo, "rev-parse", "HEAD").strip()


def review(out_dir, *argv):
    """(exit status, stdout, cover letter lines, patch-review.json)."""
    rc, out, err = cli("recipe", "patch-review", "--quick", "--no-arm64",
                       "--budget", TEST_BUDGET_S, "--out", out_dir, *argv)
    letter = Path(out_dir, "cover-letter.txt")
    if not letter.is_file():
        return rc, out + err, [], {}
    return (rc, out + err, letter.read_text().splitlines(),
            json.loads(Path(out_dir, "patch-review.json").read_text()))


# the block's sections that live timing does not decide (the table, its
# legend, the notes, the machine's line with the CPU pinned, an INCOMPLETE
# first line are left out, and the data page, which the notes' room cuts:
# patch-review.json's is compared whole)
UNTIMED = ("WRONG", "FAILS", "vdsobench patch-review", "Series:", "Measured:", "Compiler:",
           "verify", "Read path", "Simulated (cachegrind)")


PATCH_LINE = re.compile(r"  (\d+/\d+) .*?(: same code and counts)?$")


def untimed(lines):
    """The words of the block's UNTIMED sections (a line and the indented
    ones after it), each patch's own line as its number and whether it
    changed nothing (its subject is cut to the room a commit id leaves)."""
    kept, keep = [], False
    for line in lines:
        if not line.startswith(" "):
            keep = line.startswith(UNTIMED)
        m = PATCH_LINE.fullmatch(line)
        if keep:
            kept.append(f"{m.group(1)}{m.group(2) or ''}" if m else line.strip())
    return " ".join(kept)


DO_HRES_73 = str(KERNEL_TESTDATA / "7.3-do-hres-not-always-inline.patch")
RDTSC_73 = str(KERNEL_TESTDATA / "7.3-rdtsc-counter.patch")


class SeriesCases:
    """The reviews of one tree made a git tree (a TestCase's mixin): FIRST
    then a line that does not build (BREAKING) then its revert, and --range
    of the two PAIR committed, in a tree with every hook and a hostile
    config, against the two as patch files."""

    VERSION = FIRST = PAIR = BREAKING = None

    @classmethod
    def source(cls):
        raise NotImplementedError

    @classmethod
    def setUpClass(cls):
        cls.imports = ImportsDir()
        try:
            source = cls.source()
        except BaseException:
            cls.imports.close()
            raise
        cls.tmp = Path(tempfile.mkdtemp(prefix=f"vdsobench-series-{cls.VERSION}-"))
        cls.base = kernel_git_tree(cls.tmp / "linux", source, cls.VERSION)
        # BASE's tree as a work tree of its own, under the name a range's takes
        cls.at_base = Path(shutil.copytree(cls.tmp / "linux",
                                           cls.tmp / "at-base" / f"linux-{cls.base[:12]}",
                                           symlinks=True))
        for name, text in zip(("0002-break.patch", "0003-unbreak.patch"), cls.BREAKING):
            Path(cls.tmp, name).write_text(text)
        cls.commits = [git_commit_patch(cls.tmp / "linux", p) for p in cls.PAIR]
        cls.markers = cls.tmp / "markers"
        cls.markers.mkdir()
        hostile_git(cls.tmp / "linux", cls.markers)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        cls.imports.close()

    def test_the_middle_patch_does_not_build(self):
        rc, out, letter, record = review(str(self.tmp / "out-build"), "--source",
                                         str(self.at_base), "--patch", self.FIRST, "--patch",
                                         str(self.tmp / "0002-break.patch"), "--patch",
                                         str(self.tmp / "0003-unbreak.patch"))
        self.assertEqual(rc, 2, out[-3000:])
        self.assertEqual(letter[0], "FAILS: patch 2 of 3 does not build; do not post")
        text = " ".join(x.strip() for x in letter)
        self.assertIn("2/3 vdso: Declare what does not compile does not build: "
                      "lib/vdso/gettimeofday.c:", text)
        self.assertRegex(text, r"error: unknown type name .this.")
        self.assertIn("not tried: patch 3", text)
        self.assertNotIn("ns/call", text)
        self.assertEqual([p["result"] for p in record["series"]["patches"]],
                         ["verified", "does not build", "not tried"])
        self.assertEqual(record["series"]["stopped"], 2)
        self.assertEqual(store.read_table(), {})

    def test_a_range_is_its_patch_files(self):
        rc, out, by_range, record = review(str(self.tmp / "out-range"), "--source",
                                           str(self.tmp / "linux"), "--range",
                                           f"{self.base[:12]}..main")
        self.assertIn(rc, (0, 1), out[-3000:])
        self.assertTrue(by_range, out[-3000:])
        self.assertFalse(by_range[0].startswith(("WRONG", "FAILS")), by_range)
        self.assertEqual(os.listdir(self.markers), [])
        self.assertEqual(record["range"], f"{self.base[:12]}..main")
        self.assertEqual(record["commits"], self.commits)
        self.assertEqual(record["commit"], self.base)
        self.assertEqual([p["result"] for p in record["series"]["patches"]],
                         ["verified", "verified"])
        rc, out, by_files, files = review(str(self.tmp / "out-files"), "--source",
                                          str(self.at_base), "--patch", self.PAIR[0],
                                          "--patch", self.PAIR[1])
        self.assertIn(rc, (0, 1), out[-3000:])
        self.assertTrue(any(x.startswith("clock ") for x in by_range), by_range)
        for n, commit in enumerate(self.commits, 1):
            self.assertTrue(any(x.startswith(f"  {n}/2 {commit[:12]} ") and "vdso: " in x
                                for x in by_range), by_range)
            self.assertTrue(any(x.startswith(f"  {n}/2 ") and "vdso: " in x
                                for x in by_files), by_files)
        named = untimed(by_range)
        self.assertIn(f"Series: 2 commits of {self.base[:12]}..main,", named)
        named = named.replace(f"2 commits of {self.base[:12]}..main", "2 patches")
        self.assertEqual(named, untimed(by_files))
        for key in ("page", "code", "sim", "verify", "tree", "commit", "line"):
            self.assertEqual(json.dumps(record[key]), json.dumps(files[key]), key)
        for a, b in zip(record["series"]["patches"], files["series"]["patches"]):
            self.assertEqual({k: v for k, v in a.items() if k != "patch"},
                             {k: v for k, v in b.items() if k != "patch"})
        self.assertEqual(store.read_table(), {})


# the long tier: seven reviews, about 30 minutes on 2 cores; the logic they
# run end to end is checked on made-up input in patch_series_test,
# git_range_test and review_range_test
@long_tier("four real reviews of 6.12, about 18 min on 2 cores")
class SeriesReviewTest(SeriesCases, unittest.TestCase):
    VERSION, FIRST, PAIR = "6.12", OFFS_BOOT, (NFC_REORDER, OFFS_BOOT)
    BREAKING = (BREAK, UNBREAK)

    @classmethod
    def source(cls):
        return tarball_or_skip("6.12")

    def test_the_second_patch_tears(self):
        rc, out, letter, record = review(str(self.tmp / "out-torn"), "--source",
                                         str(self.at_base), "--patch", OFFS_BOOT,
                                         "--patch", TORN_612)
        self.assertEqual(rc, 1, out[-3000:])
        self.assertEqual(letter[0], "WRONG: patch 2 of 2 fails verify; do not post")
        text = " ".join(x.strip() for x in letter)
        self.assertIn("2/2 vdso: read mult and shift once, before the sequence count "
                      "(BROKEN) fails verify: concurrency: torn read", text)
        self.assertEqual([p["result"] for p in record["series"]["patches"]],
                         ["verified", "fails verify"])
        self.assertTrue(record["torn"].startswith("concurrency: torn read"), record["torn"])
        self.assertEqual(record["rows"], [])
        self.assertEqual(store.read_table(), {})


@long_tier("a series and a range reviewed on 7.3, about 15 min on 2 cores")
class TodaySeriesReviewTest(SeriesCases, unittest.TestCase):
    """Issue 30's (d) and (e) on today's tree."""

    VERSION, FIRST, PAIR = "7.3", DO_HRES_73, (DO_HRES_73, RDTSC_73)
    BREAKING = breaking(HUNK_73, 5, 6)

    @classmethod
    def source(cls):
        if os.environ.get(NESTED):
            raise unittest.SkipTest("inside the new-variant test's copy of the project")
        try:
            # as import fetches it: the cache, or Debian's newer suites
            return newer_sources.tree_tarball("linux-source-7.3", "the 7.3 series test",
                                              say=lambda line: None)
        except UsageError as e:  # no archive reachable: its one line
            raise unittest.SkipTest(f"linux-source-7.3 cannot be had: {e}") from None

if __name__ == "__main__":
    unittest.main()
