"""The tree kbuild built in, kept (kbuild.keep_tree): what counts as
kbuild's output, which kept trees are pruned."""

import os
import tempfile
import time
import unittest
from pathlib import Path

from vdsobench_cli.kimport import kbuild

OLD = time.time() - 86400 * 400  # a tarball's times


def tree(root, files, when=OLD):
    """files {rel: text} under root, each dated `when`."""
    for rel, text in files.items():
        p = Path(root, rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        os.utime(p, (when, when))


class KeptTreeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.root = Path(self.tmp.name)

    def test_made_files_are_what_changed_since_the_build_began(self):
        src = self.root / "src"
        tree(src, {"Makefile": "x", "lib/vdso/gettimeofday.c": "c", "include/a.h": "h"})
        since = time.time()
        tree(src, {"arch/x86/entry/vdso/vdso64.so": "so", ".config": "y"}, when=since + 1)
        os.symlink("/etc/passwd", src / "arch" / "link")  # never a made file
        made = kbuild.made_files(src, since).split(b"\0")
        self.assertEqual(sorted(made), [b".config", b"arch/x86/entry/vdso/vdso64.so"])

    def test_the_least_used_trees_are_pruned(self):
        top = self.root / "cache"
        for i in range(kbuild.KEPT_TREES + 2):
            folder = top / f"k{i}"
            tree(folder, {f"{kbuild.TREE}/Makefile": "x", kbuild.MADE: ""}, when=OLD + i)
            (folder / "line.json").write_text("{}")
        kbuild.prune_trees(top, "k0")  # the one just kept stays, however old
        left = sorted(p.parent.name for p in top.glob(f"*/{kbuild.TREE}"))
        self.assertEqual(left, ["k0"] + [f"k{i}" for i in range(3, kbuild.KEPT_TREES + 2)])
        self.assertEqual(len(list(top.glob("*/line.json"))), kbuild.KEPT_TREES + 2)

    def test_a_locked_tree_is_not_pruned(self):
        top = self.root / "cache"
        for i in range(kbuild.KEPT_TREES + 1):
            tree(top / f"k{i}", {f"{kbuild.TREE}/Makefile": "x", kbuild.MADE: ""}, when=OLD + i)
        with kbuild.key_lock(top, "k0", print):  # another review builds from it
            kbuild.prune_trees(top, f"k{kbuild.KEPT_TREES}")
        self.assertTrue((top / "k0" / kbuild.TREE).is_dir())


if __name__ == "__main__":
    unittest.main()
