"""kimport/git_index.py: which of a tree's files differ from git's index,
read as data. Each repository is made here by the real git (the reader
itself never runs it): an edit not staged, a file git does not track, one
gone and a link retargeted are named; a clean tree, an index of version 4, a
linked worktree and a SHA-256 repository read as git reads them; an edit
staged is not seen (the module says so); a split, sparse, cut or garbled
index gives no answer and one phrase why."""

import os
import random
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.kimport import git_index

FILES = ("lib/vdso/gettimeofday.c", "kernel/time/vsyscall.c", "include/vdso/datapage.h")


def git(cwd, *args):
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True,
                          capture_output=True, text=True).stdout


@unittest.skipUnless(shutil.which("git"), "no git to make the repositories with")
class GitIndexTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-git-index-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def repo(self, *init):
        tree = self.tmp / "linux"
        tree.mkdir()
        git(tree, "init", "-q", *init)
        for rel in FILES:
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_text(f"/* {rel} */\nint x;\n")
        os.symlink("gettimeofday.c", tree / "lib/vdso/link.c")
        git(tree, "add", "-A")
        git(tree, "commit", "-q", "-m", "one")
        return tree

    def changed(self, tree, paths=FILES + ("lib/vdso/link.c",)):
        return git_index.changed(str(tree), list(paths))

    def test_a_clean_tree_has_no_changes(self):
        tree = self.repo()
        self.assertEqual(self.changed(tree), git_index.Changes(files=[]))

    def test_edits_not_staged_untracked_gone_and_relinked_are_named(self):
        tree = self.repo()
        (tree / FILES[0]).write_text("/* mine */\n")
        (tree / "lib/vdso/new.h").write_text("new\n")
        (tree / FILES[2]).unlink()
        os.unlink(tree / "lib/vdso/link.c")
        os.symlink("elsewhere.c", tree / "lib/vdso/link.c")
        got = self.changed(tree, FILES + ("lib/vdso/link.c", "lib/vdso/new.h"))
        self.assertIsNone(got.why)
        self.assertEqual(got.files, [FILES[0], FILES[2], "lib/vdso/link.c", "lib/vdso/new.h"])

    def test_an_edit_staged_is_not_seen(self):
        # the documented limit: the index holds the edit
        tree = self.repo()
        (tree / FILES[1]).write_text("/* staged */\n")
        git(tree, "add", FILES[1])
        self.assertEqual(self.changed(tree).files, [])

    def test_version_4_and_a_linked_worktree(self):
        tree = self.repo()
        git(tree, "update-index", "--index-version", "4")
        (tree / FILES[1]).write_text("/* v4 */\n")
        self.assertEqual(self.changed(tree).files, [FILES[1]])
        wt = self.tmp / "wt"
        git(tree, "worktree", "add", "-q", str(wt))
        self.assertEqual(self.changed(wt).files, [])
        (wt / FILES[0]).write_text("/* in the worktree */\n")
        self.assertEqual(self.changed(wt).files, [FILES[0]])

    def test_a_sha256_repository(self):
        tree = self.repo("--object-format=sha256")
        self.assertEqual(self.changed(tree).files, [])
        (tree / FILES[2]).write_text("/* mine */\n")
        self.assertEqual(self.changed(tree).files, [FILES[2]])

    def test_indexes_it_does_not_read_say_why(self):
        tree = self.repo()
        git(tree, "update-index", "--split-index")
        self.assertIn("split index", self.changed(tree).why)
        self.assertIsNone(self.changed(tree).files)

    def test_hostile_indexes_give_one_phrase(self):
        tree = self.repo()
        index = tree / ".git" / "index"
        good = index.read_bytes()
        count_huge = good[:8] + (10 ** 9).to_bytes(4, "big") + good[12:]
        unknown = good[:4] + (9).to_bytes(4, "big") + good[8:]
        cases = {b"": "not an index", b"XXXX" + good[4:]: "not an index",
                 good[:60]: "cut short", count_huge: "more than",
                 unknown: "version 9", good[:12] + b"\xff" * 62: "its index: "}
        for data, words in cases.items():
            with self.subTest(words=words, size=len(data)):
                index.write_bytes(data)
                got = self.changed(tree)
                self.assertIsNone(got.files)
                self.assertIn(words, got.why)
                self.assertNotIn("\n", got.why)
        # any bytes at all: an answer or a phrase, never an exception
        rng = random.Random(30)
        for _ in range(300):
            data = bytearray(good)
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            data = bytes(data[:rng.randint(0, len(data))]) if rng.random() < 0.3 else bytes(data)
            index.write_bytes(data)
            got = self.changed(tree)
            self.assertTrue(got.files is not None or got.why, got)
        index.unlink()
        os.mkfifo(index)  # never opened: the reader refuses what is not a file
        self.assertIsNone(self.changed(tree).files)

    def test_patch_review_asks_of_the_files_it_built_from(self):
        from vdsobench_cli.recipes import review_provenance
        tree = self.repo()
        meta = {"hashes": {FILES[0]: "h", FILES[1]: "h", "include/generated/autoconf.h": "h",
                           "kimport.json": "h"}}
        # what the import wrote beside them is never counted as not tracked
        self.assertEqual(review_provenance.git_dirty(str(tree), meta), git_index.Changes(files=[]))
        (tree / FILES[1]).write_text("/* not committed */\n")
        self.assertEqual(review_provenance.git_dirty(str(tree), meta).files, [FILES[1]])
        self.assertEqual(review_provenance.git_dirty(str(self.tmp / "linux.tar.xz"), meta),
                         git_index.Changes())

    def test_no_git(self):
        plain = self.tmp / "plain"
        plain.mkdir()
        self.assertEqual(self.changed(plain), git_index.Changes(why="no .git in it"))


if __name__ == "__main__":
    unittest.main()
