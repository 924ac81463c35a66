"""`recipe patch-review --range BASE..HEAD` and `--base REV` refused as the
command refuses a bad value: exit 2, one line on stderr, nothing on stdout,
nothing left behind (recipes/review_range.py), on a small repository a test
makes. Nothing is imported or built: every case stops before the banner."""

import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.tests.git_support import git, git_tree, hostile_git
from vdsobench_cli.tests.support import TORN_612, one_line, vdsobench

FILES = {"Makefile": b"VERSION = 6\n", "lib/vdso/gettimeofday.c": b"int x;\n"}


def leftovers():
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("vdsobench-range-")}


class RefusedTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-range-test-"))
        self.addCleanup(subprocess.run, ["rm", "-rf", str(self.tmp)])
        self.repo = self.tmp / "linux"
        git_tree(self.repo, FILES)
        Path(self.repo, "lib/vdso/gettimeofday.c").write_text("int y;\n")
        git(self.repo, "commit", "-q", "-am", "vdso: y")
        git(self.repo, "commit", "-q", "--allow-empty", "-m", "nothing")
        self.markers = self.tmp / "markers"
        self.markers.mkdir()
        hostile_git(self.repo, self.markers)

    def refused(self, *argv, needle):
        before = leftovers()
        rc, out, err = vdsobench("recipe", "patch-review", "--quick", "--no-arm64",
                                 "--out", str(self.tmp / "out"), *argv)
        one_line(self, rc, err, needle)
        self.assertEqual(out, "")
        self.assertFalse((self.tmp / "out").exists())
        self.assertEqual(leftovers(), before)
        self.assertEqual(os.listdir(self.markers), [])

    def test_bad_values_are_one_line(self):
        repo = str(self.repo)
        for argv, needle in (
                (["--source", repo, "--range=-p..HEAD"], "'-p' starts with '-'"),
                (["--source", repo, "--range=HEAD~2..--output=x"], "starts with '-'"),
                (["--source", repo, "--base=--output=/tmp/x"], "starts with '-'"),
                (["--source", repo, "--base", "-x"], "argument --base: expected one"),
                (["--source", repo, "--range", "main~2...main"], "not BASE..HEAD"),
                (["--source", repo, "--range", "HEAD..HEAD"], "no commits in the range"),
                (["--source", repo, "--base", "HEAD"], "no commits in the range"),
                (["--source", repo, "--range", "nope..HEAD"], "'nope' names no commit"),
                (["--source", repo, "--range", "HEAD..HEAD~1"],
                 "HEAD is not an ancestor of HEAD~1"),
                (["--source", repo, "--base", "HEAD~1"], "changes no file's text"),
                (["--source", repo, "--range", "HEAD~2..HEAD", "--patch", TORN_612],
                 "leave out --patch"),
                (["--source", repo, "--range", "HEAD~2..HEAD", "--base", "HEAD~2"],
                 "--range and --base: give one"),
                (["--range", "HEAD~2..HEAD"], "needs --source TREE, a git work tree"),
                (["--source", TORN_612, "--base", "HEAD~2"], "is not a folder"),
                (["--source", str(self.tmp), "--base", "HEAD~2"],
                 "is not a git work tree git may read")):
            with self.subTest(argv[-1]):
                self.refused(*argv, needle=needle)

    def test_another_recipe_takes_no_range(self):
        for argv in (["--range", "HEAD~1..HEAD"], ["--config", "/etc/hostname"], ["--kbuild"]):
            with self.subTest(argv[0]):
                rc, out, err = vdsobench("recipe", "raw-vdso", *argv)
                one_line(self, rc, err, "--base, --config and --kbuild are for patch-review")
                self.assertEqual(out, "")


if __name__ == "__main__":
    unittest.main()
