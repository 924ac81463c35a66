"""An import whose tree the shim cannot build (a release newer than it) when
kbuild is asked for: kbuild runs all the same and the one line (exit 2) says
what it built (the image's path in the kbuild cache) and what the shim could
not (the compiler's first error); without kbuild, or when kbuild cannot run,
the shim's own line as before. The tree, the probe and kbuild are stand-ins:
no compiler or make runs here."""

import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import flow, kbuild, patch_parse, probe, request
from vdsobench_cli.tests.support import ImportsDir

FIRST = ("arch/x86/include/asm/vdso/sys_call.h:10:10: fatal error: asm/cpufeatures.h: "
         "No such file or directory")
VERSION = (7, 3, 4, "7.3.4")


class ShimAfterKbuildTest(unittest.TestCase):
    def setUp(self):
        self.imports = ImportsDir()
        self.addCleanup(self.imports.close)
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-shim-kbuild-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.tarball = self.tmp / "linux-source-7.3.tar.xz"
        self.tarball.write_bytes(b"x")
        self.cache = self.tmp / "kbuild"
        (self.cache / "k").mkdir(parents=True)
        self.calls = []

    def make_tree(self, *args, **kwargs):
        e = probe.ShimError("linux-source-7.3", "vDSO data", FIRST)
        e.version = VERSION
        raise e

    def line_for(self, source, tree_id, series, patches, config=None, say=print):
        self.calls.append(series)
        return {"key": "k", "vdso_dir": "arch/x86/entry/vdso/vdso64"}

    def take_in(self, use_kbuild=True, line_for=None, patches=()):
        req = request.Request("t", "linux-source-7.3", self.tarball, list(patches), "x86_64",
                              use_kbuild)
        with mock.patch.object(flow, "make_tree", self.make_tree), \
                mock.patch.object(flow, "cached", return_value=None), \
                mock.patch.object(kbuild, "line_for", line_for or self.line_for), \
                mock.patch.object(kbuild, "cache_dir", return_value=self.cache), \
                self.assertRaises(UsageError) as e:
            flow.take_in(req)
        msg = str(e.exception)
        self.assertEqual(len(msg.splitlines()), 1, msg)
        return msg

    def test_says_what_kbuild_built_and_what_the_shim_could_not(self):
        for name in ("vdso64.so", "vdso64.so.dbg"):
            (self.cache / "k" / name).write_bytes(b"\x7fELF")
        msg = self.take_in()
        self.assertEqual(self.calls, ["7.3"])
        self.assertIn(f"import: linux-source-7.3: kbuild built {self.cache}/k/vdso64.so and its "
                      ".dbg (Linux 7.3.4, arch/x86/entry/vdso/vdso64/)", msg)
        self.assertIn(f"but the shim cannot build this tree's vDSO data: {FIRST}", msg)

    def test_a_patched_trees_line_is_said_to_be_the_unpatched_trees(self):
        # a patch to a header the shim compiles: kbuild made the line of the tree
        # without it, never the patched tree's image
        for name in ("vdso64.so", "vdso64.so.dbg"):
            (self.cache / "k" / name).write_bytes(b"\x7fELF")
        header = "arch/x86/include/asm/vdso/gettimeofday.h"
        patch = patch_parse.Patch(Path("p.patch"), b"p", [(header, [])], [header], "a header")
        msg = self.take_in(patches=[patch])
        self.assertIn(f"kbuild built {self.cache}/k/vdso64.so and its .dbg of the tree without "
                      "its patches (the compiler line's) (Linux 7.3.4", msg)
        self.assertNotIn("without its patches", self.take_in())

    def test_kbuild_that_made_no_image(self):
        msg = self.take_in()
        self.assertIn(f"kbuild ran (its line in {self.cache}/k/line.json) but made no "
                      "vdso64.so", msg)
        self.assertIn(FIRST, msg)

    def test_kbuild_that_fails_is_said_with_the_shim(self):
        def failing(*args, **kwargs):
            raise UsageError("kbuild: make prepare failed (exit 2): no bc")
        msg = self.take_in(line_for=failing)
        self.assertIn(f"the shim cannot build this tree's vDSO data: {FIRST}", msg)
        self.assertIn("and its own kbuild failed: kbuild: make prepare failed", msg)

    def test_without_kbuild_the_shims_line_as_before(self):
        msg = self.take_in(use_kbuild=False)
        self.assertEqual(msg, f"import: linux-source-7.3: the shim cannot build this tree's "
                              f"vDSO data: {FIRST}")
        self.assertEqual(self.calls, [])
        msg = self.take_in(line_for=lambda *a, **k: None)  # kbuild cannot run here
        self.assertTrue(msg.startswith("import: linux-source-7.3: the shim cannot build"), msg)


class DwarfFallbackTest(unittest.TestCase):
    """The tree's update path (kernel/time/vsyscall.c) is what the shim cannot
    build: with an image (kbuild's) the import goes on, the DWARF writer's
    (docs/image.md); the probe's failure, or --writer tree, never does."""

    def setUp(self):
        ShimAfterKbuildTest.setUp(self)  # the stand-ins: a tarball, kbuild's cache
        self.what, self.made = flow.WRITER_UNIT, []

    def make_tree(self, *args, **kwargs):
        self.made.append(args[6:])  # (image, writer)
        if args[7:] == ("dwarf",):
            return ({"kernel": "7.3.4", "version": [7, 3, 4], "summary": "s",
                     "writer": "dwarf"}, "0" * 64)
        e = probe.ShimError("linux-source-7.3", self.what, FIRST)
        e.version = VERSION
        raise e

    def fallback(self, writer=None):
        req = request.Request("t", "linux-source-7.3", self.tarball, [], "x86_64", True,
                              writer=writer)
        image = (b"\x7fELF", "vdso64.so.dbg", None)
        with mock.patch.object(flow, "make_tree", self.make_tree), \
                mock.patch.object(flow, "cached", return_value=None), \
                mock.patch.object(kbuild, "line_for", self.line_for), \
                mock.patch.object(kbuild, "cache_dir", return_value=self.cache), \
                mock.patch.object(kbuild, "image_given", return_value=image), \
                mock.patch.object(kbuild, "context", return_value={}), \
                mock.patch("builtins.print") as said:
            entry, meta, _, _ = flow.take_in(req)
        return entry, meta, " ".join(str(c.args[0]) for c in said.call_args_list), image

    def line_for(self, *args, **kwargs):
        return {"key": "k", "vdso_dir": "arch/x86/entry/vdso/vdso64", "copts": []}

    def test_the_update_path_falls_back_to_the_dwarf_writer(self):
        entry, meta, said, image = self.fallback()
        self.assertEqual(self.made, [(None, "tree"), (image, "dwarf")])
        self.assertEqual((meta["writer"], entry["identity"]["writer"]), ("dwarf", "dwarf"))
        self.assertIn("the shim cannot build this tree's kernel/time/vsyscall.c", said)
        self.assertIn("written by the DWARF writer", said)

    def test_writer_tree_and_the_probe_never_fall_back(self):
        with self.assertRaises(UsageError) as e:
            self.fallback(writer="tree")
        self.assertIn("the shim cannot build this tree's kernel/time/vsyscall.c", str(e.exception))
        self.what, self.made = "vDSO data", []
        with self.assertRaises(UsageError) as e:
            self.fallback()
        self.assertEqual(self.made, [(None, "tree")])
        self.assertIn("this tree's vDSO data", str(e.exception))

    def test_a_writer_not_known_is_one_line(self):
        with self.assertRaises(UsageError) as e:
            request.request("linux-source-7.3", [], "t", writer="kernel")
        self.assertIn("--writer kernel: no such writer (valid: tree, dwarf)", str(e.exception))


if __name__ == "__main__":
    unittest.main()
