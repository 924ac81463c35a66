"""A work tree's commits as patches and BASE's files (kimport/git_range.py),
read with git run confined (kimport/git_run.py), on small repositories a
test makes: the patches and the files exact (applied in turn to BASE's
files they give HEAD's), a linked worktree read, a hostile repository
(every hook, core.fsmonitor, a diff driver, a filter, the pager, gpg)
whose commands never run, and every bad range one line. Nothing built."""

import os
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import confine
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import git_range, git_run
from vdsobench_cli.tests.git_support import git, git_commit_patch, git_tree, hostile_git

OPTION = "--range R"
BASE_FILES = {
    "Makefile": b"VERSION = 6\nPATCHLEVEL = 12\n",
    "lib/vdso/gettimeofday.c": b"int do_hres(void)\n{\n\treturn 0;\n}\n",
    "include/vdso/datapage.h": b"struct vdso_data {\n\tint seq;\n};\n",
    "include/vdso/sub/deep.h": b"/* not directly in a folder import takes */\n",
    "arch/x86/include/asm/vdso/gettimeofday.h": b"/* x86 */\n",
    "arch/arm64/include/asm/vdso/gettimeofday.h": b"/* arm64 */\n",
    "Documentation/vdso.rst": b"vDSO\n====\n",
    "README": b"not taken\n",
}
PATCH_A = """From: t <t@localhost>
Subject: [PATCH 1/2] vdso: Return one

---
--- a/lib/vdso/gettimeofday.c
+++ b/lib/vdso/gettimeofday.c
@@ -1,4 +1,4 @@
 int do_hres(void)
 {
-\treturn 0;
+\treturn 1;
 }
"""
PATCH_B = """From: t <t@localhost>
Subject: [PATCH 2/2] vdso: Add a field, and say so
 in the documentation

---
--- a/include/vdso/datapage.h
+++ b/include/vdso/datapage.h
@@ -1,3 +1,4 @@
 struct vdso_data {
 \tint seq;
+\tint more;
 };
--- a/Documentation/vdso.rst
+++ b/Documentation/vdso.rst
@@ -1,2 +1,3 @@
 vDSO
 ====
+It has a field more.
"""


def pass_through(argv, write=(), read=()):
    """confine.command() undone: git runs as the test's own user, so that a
    command its config names would leave its marker."""
    return [str(a) for a in argv]


class RepoTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-range-"))
        self.addCleanup(subprocess.run, ["rm", "-rf", str(self.tmp)])
        self.repo = self.tmp / "linux"
        self.base = git_tree(self.repo, BASE_FILES)
        self.commits = []
        for n, text in enumerate((PATCH_A, PATCH_B)):
            p = self.tmp / f"{n}.patch"
            p.write_text(text)
            self.commits.append(git_commit_patch(self.repo, p))
        self.markers = self.tmp / "markers"
        self.markers.mkdir()

    def taken(self, rev_range="main~2..main", tree=None):
        base, head = git_range.parse(rev_range, OPTION)
        rng = git_range.resolve(tree or self.repo, base, head, OPTION)
        into = self.tmp / f"into{len(list(self.tmp.glob('into*')))}"
        into.mkdir()
        return rng, *git_range.taken(rng, str(into), OPTION)

    def check_taken(self, rng, source, patches):
        self.assertEqual(rng.base, self.base)
        self.assertEqual(rng.commits, [(self.commits[0], "vdso: Return one"),
                                       (self.commits[1], "vdso: Add a field, and say so in "
                                                         "the documentation")])
        got = {str(p.relative_to(source)) for p in Path(source).rglob("*") if p.is_file()}
        self.assertEqual(got, {"Makefile", "lib/vdso/gettimeofday.c",
                               "include/vdso/datapage.h", "Documentation/vdso.rst",
                               "arch/x86/include/asm/vdso/gettimeofday.h",
                               "arch/arm64/include/asm/vdso/gettimeofday.h"})
        for rel in got:
            self.assertEqual(Path(source, rel).read_bytes(), BASE_FILES[rel], rel)
        self.assertEqual([Path(p).name for p in patches],
                         [f"0001-{self.commits[0][:12]}.patch",
                          f"0002-{self.commits[1][:12]}.patch"])
        self.assertIn(b"\nSubject: [PATCH] vdso: Return one\n", Path(patches[0]).read_bytes())
        # applied in turn to BASE's files, they give HEAD's
        for p in patches:
            subprocess.run(["git", "apply", "-"], cwd=source, check=True,
                           input=Path(p).read_bytes(), capture_output=True)
        for rel in got:
            head = git(self.repo, "show", f"main:{rel}").encode()
            self.assertEqual(Path(source, rel).read_bytes(), head, rel)


class RangeTest(RepoTest):
    def test_the_commits_as_patches_and_base_as_it_is(self):
        self.check_taken(*self.taken())
        self.assertEqual(git_range.parse("main~2..", OPTION), ("main~2", "HEAD"))

    def test_a_linked_worktree_is_read(self):
        wt = self.tmp / "wt"
        git(self.repo, "worktree", "add", "-q", "--detach", str(wt), "main~1")
        self.assertTrue((wt / ".git").is_file())
        rng = git_range.resolve(wt, "main~2", "HEAD", OPTION)
        self.assertEqual(rng.commits, [(self.commits[0], "vdso: Return one")])

    def test_a_hostile_repository_runs_nothing(self):
        commands = hostile_git(self.repo, self.markers)
        # git as root, not confined: only git's own options keep its commands off
        with mock.patch.object(confine, "command", pass_through):
            self.check_taken(*self.taken())
        self.assertEqual(os.listdir(self.markers), [])
        # ... and confined, as the review runs it
        self.check_taken(*self.taken())
        self.assertEqual(os.listdir(self.markers), [])
        # the same repository runs them for git's porcelain: they are live
        subprocess.run(["git", "-C", str(self.repo), "diff", "main~1", "main"],
                       capture_output=True)
        subprocess.run(["git", "-C", str(self.repo), "status"], capture_output=True)
        self.assertTrue({"fsmonitor", "diff-command"} <= set(os.listdir(self.markers)),
                        (os.listdir(self.markers), commands))

    def test_bad_ranges_are_one_line(self):
        git(self.repo, "branch", "side", "main~2")
        git(self.repo, "checkout", "-q", "side")
        Path(self.repo, "README").write_text("side\n")
        git(self.repo, "commit", "-q", "-am", "side")
        git(self.repo, "checkout", "-q", "-b", "merged", "main")
        git(self.repo, "merge", "-q", "--no-edit", "side")
        git(self.repo, "checkout", "-q", "main")
        plain = self.tmp / "plain"
        plain.mkdir()
        linked = self.tmp / "linked"
        linked.mkdir()
        os.symlink(self.repo / ".git", linked / ".git")
        for value, tree, said in (
                ("main..main", self.repo, "no commits in the range"),
                ("side..main", self.repo, "side is not an ancestor of main"),
                ("main~2..merged", self.repo, "is a merge (of 2 parents)"),
                ("nope..main", self.repo, "'nope' names no commit"),
                ("main..HEAD~9", self.repo, "'HEAD~9' names no commit"),
                ("--output=/tmp/x..main", self.repo, "starts with '-'"),
                ("main..-p", self.repo, "starts with '-'"),
                ("main~2...main", self.repo, "not BASE..HEAD"),
                ("main", self.repo, "not BASE..HEAD"),
                ("..main", self.repo, "no BASE before '..'"),
                ("ma in..main", self.repo, "is not a revision name"),
                ("main:README..main", self.repo, "is not a revision name"),
                ("main~2..main", plain, "is not a git work tree git may read (no .git"),
                ("main~2..main", linked, "is not a git work tree git may read (.git: is a "
                                         "symbolic link")):
            with self.subTest(value, tree=tree.name):
                with self.assertRaises(UsageError) as caught:
                    base, head = git_range.parse(value, f"--range {value}")
                    git_range.resolve(tree, base, head, f"--range {value}")
                line = str(caught.exception)
                self.assertNotIn("\n", line)
                self.assertTrue(line.startswith(f"recipe patch-review: --range {value}: "),
                                line)
                self.assertIn(said, line)

    def test_an_empty_commit_is_one_line(self):
        git(self.repo, "commit", "-q", "--allow-empty", "-m", "nothing")
        with self.assertRaises(UsageError) as caught:
            self.taken("main~1..main")
        self.assertIn("changes no file's text", str(caught.exception))

    def test_git_output_is_capped(self):
        oid = git(self.repo, "rev-parse", "main:Makefile").strip()
        with self.assertRaises(UsageError) as caught:
            git_run.run(self.repo, ["cat-file", "--batch"], "t", limit=8,
                        stdin=f"{oid}\n".encode(), read=(str(self.repo / ".git"),))
        self.assertEqual(str(caught.exception), "t: git wrote over 8 bytes")


class PureTest(unittest.TestCase):
    def test_git_runs_with_its_commands_off(self):
        argv = git_run.argv("/usr/bin/git", "/t", ["rev-list", "x"])
        for option in ("core.hooksPath=/dev/null", "core.fsmonitor=false",
                       "--no-replace-objects", "--literal-pathspecs", "--no-pager"):
            self.assertIn(option, argv)
        self.assertEqual(argv[-2:], ["rev-list", "x"])
        env = git_run.environment("/t/linux")
        self.assertEqual((env["GIT_CONFIG_NOSYSTEM"], env["GIT_CONFIG_GLOBAL"],
                          env["GIT_CEILING_DIRECTORIES"]), ("1", "/dev/null", "/t"))

    def test_subject_is_the_first_paragraph(self):
        raw = (b"tree " + b"a" * 40 + b"\nauthor x <y> 1 +0000\n\n\n  vdso: One\n"
               b" two\n\nbody\n")
        self.assertEqual(git_range.subject(raw), "vdso: One two")
        self.assertEqual(git_range.subject(b"tree x\n\n"), "")

    def test_what_git_wrote_is_checked(self):
        oid = "b" * 40
        self.assertEqual(git_range.parse_batch(f"{oid} blob 3\nabc\n".encode(), OPTION),
                         {oid: ("blob", b"abc")})
        for bad in (f"{oid} blob 9\nabc\n", "not an object\n", f"{oid} missing\n"):
            with self.assertRaises(UsageError):
                git_range.parse_batch(bad.encode(), OPTION)
        with self.assertRaises(UsageError):
            git_range.checked_commits([["x"]], OPTION)
        self.assertEqual(git_range.checked_commits([[oid, "c" * 40]], OPTION),
                         [(oid, "c" * 40)])
        wanted = (["include/vdso"], ["Makefile"])
        entries = "\0".join([f"100644 blob {oid}\tMakefile",
                             f"100644 blob {oid}\tinclude/vdso/a.h",
                             f"100644 blob {oid}\tinclude/vdso/sub/b.h",
                             f"160000 commit {oid}\tinclude/vdso/mod",
                             f"100644 blob {oid}\tREADME", ""]).encode()
        self.assertEqual(git_range.listed(entries, wanted, OPTION),
                         [("Makefile", oid), ("include/vdso/a.h", oid)])
        with self.assertRaisesRegex(UsageError, "include/vdso/l.h is a symbolic link"):
            git_range.listed(f"120000 blob {oid}\tinclude/vdso/l.h\0".encode(), wanted,
                             OPTION)
        with self.assertRaisesRegex(UsageError, "a file name import does not take"):
            git_range.listed(f"100644 blob {oid}\tinclude/vdso/a b.h\0".encode(), wanted,
                             OPTION)

    def test_a_patch_holds_the_subject_and_the_diff_alone(self):
        text = git_range.patch_text("a" * 40, "vdso: One", b"diff --git a/x b/x\n")
        self.assertEqual(text, ("From " + "a" * 40 + " Mon Sep 17 00:00:00 2001\n"
                                "Subject: [PATCH] vdso: One\n\n---\n"
                                "diff --git a/x b/x\n").encode())


if __name__ == "__main__":
    unittest.main()
