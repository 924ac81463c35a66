"""The kept kbuild tree and the patched image made again from it
(kimport/kbuild_patched.py, kbuild.keep_tree): what counts as kbuild's
output, which files a patch gets copies of, which kept trees are pruned, and
a tree's Makefile that writes through a link into the kept tree, a file's or
a folder's (refused: the confined build sees it read-only); link_farm.py's
folders. A real tree's patched image:
kernel_import_test's Import612Test (the max_cycles patch)."""

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import build
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import kbuild, kbuild_kept, kbuild_patched, patches as patches_mod
from vdsobench_cli.tests.support import one_line, vdsobench

ROOT_ONLY = unittest.skipUnless(os.geteuid() == 0, "the sandbox user is switched to as root")
OLD = time.time() - 86400 * 400  # a tarball's times
PATCH = str(build.ROOT / "kernel_import" / "testdata" / "6.12-max-cycles-last.patch")


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
        made = kbuild_kept.made_files(src, since).split(b"\0")
        self.assertEqual(sorted(made), [b".config", b"arch/x86/entry/vdso/vdso64.so"])

    def test_a_kept_tree_keeps_no_setuid_file_nor_folder_others_write(self):
        src = self.root / "src"
        tree(src, {"tools/prog": "x", "arch/x86/entry/vdso/vdso64.so": "so"})
        os.chmod(src / "tools" / "prog", 0o6755)
        os.chmod(src / "arch", 0o777)
        os.symlink("tools/prog", src / "link")
        kbuild_kept.tame(src)
        self.assertEqual(stat.S_IMODE(os.stat(src / "tools" / "prog").st_mode), 0o755)
        self.assertEqual(stat.S_IMODE(os.stat(src / "arch").st_mode), 0o755)

    def test_a_patch_gets_copies_of_regular_files_only_below_no_link(self):
        kept = self.root / "kept"
        tree(kept, {"lib/vdso/gettimeofday.c": "c", "real/x.h": "h"})
        os.symlink("real", kept / "linked")
        os.symlink("x.h", kept / "real" / "y.h")
        os.mkdir(kept / "lib" / "a-folder")
        patch = mock.Mock(names=["lib/vdso/gettimeofday.c", "linked/x.h", "real/y.h",
                                 "new/file.c", "lib/vdso/gettimeofday.c/x", "lib/a-folder",
                                 "../kept/real/x.h"])
        self.assertEqual(kbuild_patched.copied(kept, [patch]), b"lib/vdso/gettimeofday.c")

    def test_the_least_used_trees_are_pruned(self):
        top = self.root / "cache"
        for i in range(kbuild_kept.KEPT_TREES + 2):
            folder = top / f"k{i}"
            tree(folder, {f"{kbuild_kept.TREE}/Makefile": "x", kbuild_kept.MADE: ""}, when=OLD + i)
            (folder / "line.json").write_text("{}")
        kbuild_kept.prune_trees(top, "k0")  # the one just kept stays, however old
        left = sorted(p.parent.name for p in top.glob(f"*/{kbuild_kept.TREE}"))
        self.assertEqual(left, ["k0"] + [f"k{i}" for i in range(3, kbuild_kept.KEPT_TREES + 2)])
        self.assertEqual(len(list(top.glob("*/line.json"))), kbuild_kept.KEPT_TREES + 2)

    def test_a_locked_tree_is_not_pruned(self):
        top = self.root / "cache"
        for i in range(kbuild_kept.KEPT_TREES + 1):
            tree(top / f"k{i}", {f"{kbuild_kept.TREE}/Makefile": "x", kbuild_kept.MADE: ""},
                 when=OLD + i)
        with kbuild.key_lock(top, "k0", print):  # another review builds from it
            kbuild_kept.prune_trees(top, f"k{kbuild_kept.KEPT_TREES}")
        self.assertTrue((top / "k0" / kbuild_kept.TREE).is_dir())


class LinkFarmTest(unittest.TestCase):
    """link_farm.py: a link per untouched folder, a folder of links on the way
    to every named path."""

    def farm(self, kept, *lists):
        files = []
        for i, names in enumerate(lists):
            f = Path(self.tmp, f"{i}.list")
            f.write_bytes(b"\0".join(names))
            files.append(str(f))
        dest = Path(self.tmp, "farm")
        r = subprocess.run([sys.executable, "-I", "-S", str(kbuild_patched.LINK_FARM),
                            str(kept), str(dest), *files], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return dest

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_only_the_named_paths_folders_are_folders(self):
        kept = Path(self.tmp, "kept")
        tree(kept, {"Makefile": "m", "drivers/a/b.c": "b", "lib/vdso/gettimeofday.c": "c",
                    "lib/other/x.c": "x", "arch/x86/entry/vdso/vdso64.so": "so",
                    "arch/x86/entry/vdso/Makefile": "m", "arch/arm64/y.c": "y"})
        os.symlink("lib", kept / "linked")
        dest = self.farm(kept, [b"arch/x86/entry/vdso/vdso64.so"],
                         [b"lib/vdso/gettimeofday.c", b"linked/z.c", b"../escape",
                          b"/etc/passwd", b"lib/./other/x.c", b"new/dir/file.c"])
        folders = sorted(str(p.relative_to(dest)) for p in dest.rglob("*")
                         if p.is_dir() and not p.is_symlink())
        self.assertEqual(folders, ["arch", "arch/x86", "arch/x86/entry", "arch/x86/entry/vdso",
                                   "lib", "lib/vdso"])
        for rel in ("Makefile", "drivers", "lib/other", "arch/arm64", "linked",
                    "lib/vdso/gettimeofday.c", "arch/x86/entry/vdso/vdso64.so"):
            self.assertEqual(os.readlink(dest / rel), str(kept / rel), rel)
        self.assertEqual((dest / "drivers" / "a" / "b.c").read_text(), "b")
        self.assertFalse(Path(self.tmp, "escape").exists())


class UsageTest(unittest.TestCase):
    def test_patched_image_needs_a_patch_and_kbuild(self):
        for args, why in ((["/usr/src"], "no --patch to apply"),
                          (["/usr/src", "--patch", PATCH, "--no-kbuild"], "it needs kbuild")):
            rc, _, err = vdsobench("import", *args, "--name", "x", "--patched-image")
            one_line(self, rc, err, "--patched-image", why)


@ROOT_ONLY
class WriteThroughTest(unittest.TestCase):
    """A tree's Makefile writing through a link into the kept tree (a file
    that is a link to it, or a new file in a folder linked whole): the
    build fails, the kept tree is as it was, nothing is cached."""

    def rebuilt(self, recipe):
        with tempfile.TemporaryDirectory() as d:
            top = Path(d, "cache")
            base = top / "base"
            kept = base / kbuild_kept.TREE
            tree(kept, {"victim.txt": "as kept\n", "src.c": "int x;\n",
                        "drivers/keep.c": "k\n",
                        "Makefile": f"{kbuild.VDSO_DIR}/:\n\t{recipe}\n"})
            (base / kbuild_kept.MADE).write_bytes(b"")
            os.chmod(base, 0o711)
            for p in [top, *kept.rglob("*")]:
                os.chmod(p, 0o755 if p.is_dir() else 0o644)
            patch = Path(d, "p.patch")
            patch.write_text("--- a/src.c\n+++ b/src.c\n@@ -1 +1 @@\n-int x;\n+int y;\n")
            patches = patches_mod.check_patches([str(patch)])
            how = kbuild.Setup({"kind": "given", "path": "c", "sha256": "0"}, b"",
                               kbuild.compiler_identity("gcc"))
            with self.assertRaises(UsageError) as e:
                kbuild_patched.rebuilt(base, patches, how, top / "patched", lambda s: None)
            self.assertIn(f"make {kbuild.VDSO_DIR}/ failed", str(e.exception))
            self.assertEqual((kept / "victim.txt").read_text(), "as kept\n")
            self.assertEqual((kept / "src.c").read_text(), "int x;\n")
            self.assertEqual(sorted(os.listdir(kept / "drivers")), ["keep.c"])
            self.assertFalse((top / "patched").exists())

    def test_a_linked_file_is_read_only_to_the_build(self):
        self.rebuilt("echo pwned > victim.txt")

    def test_a_linked_folder_is_read_only_to_the_build(self):
        self.rebuilt("echo pwned > drivers/new.c")

if __name__ == "__main__":
    unittest.main()
