"""`recipe patch-review`, run for real: two reviews started at once, and a
review of a tree whose .git is hostile. Each is a --quick --no-arm64 review
of Debian's 6.12 in a throwaway imports table (minutes: commands/testrun.py
lists this module among the slow ones).

- Two at once (`--source linux-source-6.12 --patch 6.12-max-cycles-last`,
  each its own --out): the second waits for the first and says so; both
  verify each tree for real (PASS, the patch is correct), neither says
  WRONG, and the table is empty after. Any timing verdict will do: these are
  a few rounds of live timing.
- A hostile .git (refs linked to /proc, HEAD `ref: refs/kmsg`: the old
  reader blocked in the kernel log's reader until killed): the review ends,
  its commit is recorded as not read and why, and .git is as it was. Its
  tree is the unpatched 6.12 the first class's reviews left in the cache,
  and its patch the torn one (verify fails: nothing timed, the cheapest
  whole review)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli import build
from vdsobench_cli.kimport import store
from vdsobench_cli.recipes import patch_review
from vdsobench_cli.tests.support import NESTED, TEST_BUDGET_S, TORN_612, ImportsDir, tarball

PATCH = str(build.ROOT / "kernel_import" / "testdata" / "6.12-max-cycles-last.patch")
# a guard against a review that hangs, never a timing: a --quick review takes
# a few minutes on a loaded 2-core machine
HANG_S = 1800
WAITED = "patch-review: waiting for patch-review (pid "


def start(out_dir, *argv):
    return subprocess.Popen(
        [sys.executable, str(build.ROOT / "scripts" / "vdsobench"), "recipe", "patch-review",
         "--quick", "--no-arm64", "--budget", TEST_BUDGET_S, *argv, "--out", out_dir],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(p):
    """(exit status, stdout, stderr), killed past HANG_S."""
    try:
        out, err = p.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, out, err
    return p.returncode, out, err


def outputs(out_dir):
    letter = Path(out_dir, "cover-letter.txt").read_text().splitlines()
    return letter, json.loads(Path(out_dir, "patch-review.json").read_text())


def unpatched_tree(into):
    """A copy of the unpatched 6.12 tree a review imported (the cache's, whose
    kimport.json names no patch): a kernel tree as a folder, without a tar."""
    for meta in sorted((store.imports_dir() / "trees").glob("*/kimport.json")):
        m = json.loads(meta.read_text())
        if not m["patches"] and m["arch"] == "x86_64" and "image" not in m:
            return Path(shutil.copytree(meta.parent, into, symlinks=True))
    return None


class TwoReviewsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get(NESTED):
            raise unittest.SkipTest("inside the new-variant test's copy of the project")
        if tarball("6.12") is None:
            raise unittest.SkipTest("no /usr/src/linux-source-6.12.tar.xz (as root: "
                                    "scripts/vdsobench setup --kernel-sources)")
        cls.imports = ImportsDir()
        cls.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-reviews-")
        outs = [os.path.join(cls.tmp.name, f"out{i}") for i in (1, 2)]
        runs = [start(o, "--source", "linux-source-6.12", "--patch", PATCH) for o in outs]
        cls.results = [(o, *finished(p)) for o, p in zip(outs, runs)]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()
        cls.imports.close()

    def test_each_verified_and_timed_none_wrong(self):
        for out_dir, rc, out, err in self.results:
            with self.subTest(out_dir):
                self.assertIn(rc, (0, 1), err[-3000:] + out[-3000:])
                letter, record = outputs(out_dir)
                text = "\n".join(letter)
                self.assertNotIn("WRONG", text)
                self.assertIsNone(record["torn"], record["verify"])
                self.assertIsNone(record["unverified"])
                for side in ("after", "before"):
                    ok, said = record["verify"][side]
                    self.assertTrue(ok, said)
                    self.assertTrue(said.startswith("PASS ("), said)
                self.assertEqual(len(record["rows"]), len(patch_review.QUICK_CLOCKS), record)
                if rc == 1:  # only a timing without a verdict may fail it
                    self.assertRegex(letter[0], r"^INCOMPLETE: \d of 3 rows without a verdict")

    def test_the_second_waited_and_said_so(self):
        waited = [err for _, _, _, err in self.results if WAITED in err]
        self.assertEqual(len(waited), 1, [e[-2000:] for _, _, _, e in self.results])

    def test_the_table_is_empty_after(self):
        self.assertEqual(store.read_table(), {})
        _, _, out, _ = self.results[0]
        self.assertIn("-- for the cover letter", out)

    def test_a_hostile_git_neither_hangs_nor_is_recorded(self):
        tree = unpatched_tree(Path(self.tmp.name, "tree"))
        self.assertIsNotNone(tree, "the reviews left no unpatched tree in the cache")
        git = tree / ".git"
        git.mkdir()
        (git / "HEAD").write_text("ref: refs/kmsg\n")
        os.symlink("/proc", git / "refs")
        out_dir = os.path.join(self.tmp.name, "hostile")
        rc, out, err = finished(start(out_dir, "--source", str(tree), "--patch", TORN_612))
        self.assertEqual(rc, 1, err[-3000:] + out[-3000:])  # the torn patch: WRONG
        letter, record = outputs(out_dir)
        self.assertIsNone(record["commit"])
        self.assertEqual(record["commit_why"], ".git/refs: is a symbolic link, not a folder")
        self.assertIn("git: the commit was not read: .git/refs: is a symbolic link", out)
        self.assertIn("(git commit not read)", "\n".join(letter))
        self.assertEqual(os.readlink(git / "refs"), "/proc")
        self.assertEqual(sorted(os.listdir(git)), ["HEAD", "refs"])
        self.assertEqual(store.read_table(), {})


if __name__ == "__main__":
    unittest.main()
