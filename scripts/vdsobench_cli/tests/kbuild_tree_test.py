"""kimport/kbuild_tree.py and kbuild's use of it, on small fake trees laid
out as kbuild leaves Linux v6.12 (both images in arch/x86/entry/vdso/,
vdso32/ compiling the 32-bit objects) and v7.3 (in vdso64/ and vdso32/,
beside common/): the compile line and the images, the 32-bit ones too, are
found in both shapes by looking, a link is never followed, and a tree that
leaves no way to tell is one line; which trees import builds with kbuild by
default, and why not. No make runs here."""

import os
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.cli import arch
from vdsobench_cli.kimport import kbuild, kbuild_tree, kbuild_vdso32, request
from vdsobench_cli.recipes import review_provenance

V = kbuild_tree.VDSO_DIR
LINE = "{cc} -nostdinc -I./include -D__KERNEL__ -m64 -O2 -fpic -fcf-protection=none -c -o {o} {c}"
SHAPES = {
    # v6.1, v6.12: the 64-bit vDSO in the folder itself, vdso32/ builds its own
    "6.12": {f"{V}/Makefile": "", f"{V}/vdso.lds.S": "", f"{V}/vclock_gettime.o": "o64",
             f"{V}/vdso64.so": "so64", f"{V}/vdso64.so.dbg": "dbg64",
             f"{V}/vdso32/vclock_gettime.o": "o32", f"{V}/vdso32.so": "so32",
             f"{V}/vdso32.so.dbg": "dbg32"},
    # v7.3: common/ holds the sources, vdso64/ and vdso32/ build each image
    "7.3": {f"{V}/Makefile": "", f"{V}/vma.o": "", f"{V}/common/Makefile.include": "",
            f"{V}/common/vclock_gettime.c": "", f"{V}/vdso64/Makefile": "",
            f"{V}/vdso64/vclock_gettime.o": "o64", f"{V}/vdso64/vdso64.so": "so64",
            f"{V}/vdso64/vdso64.so.dbg": "dbg64", f"{V}/vdso64/vdsox32.so": "x32",
            f"{V}/vdso32/Makefile": "", f"{V}/vdso32/vclock_gettime.o": "o32",
            f"{V}/vdso32/vdso32.so": "so32", f"{V}/vdso32/vdso32.so.dbg": "dbg32"},
}
WHERE = {"6.12": V, "7.3": f"{V}/vdso64"}
WHERE32 = {"6.12": V, "7.3": f"{V}/vdso32"}


def cmd_text(folder, cc="gcc"):
    o = f"{folder}/vclock_gettime.o"
    return (f"savedcmd_{o} := " + LINE.format(cc=cc, o=o, c=o[:-1] + "c") + "\n\n"
            f"source_{o} := {o[:-1]}c\n")


class ShapesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-kbuild-tree-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def tree(self, shape, cmds=None, name=None):
        root = self.tmp / (name or shape)
        files = dict(SHAPES[shape])
        for folder in (cmds if cmds is not None else (WHERE[shape], f"{V}/vdso32")):
            files[f"{folder}/{kbuild_tree.CMD}"] = cmd_text(folder)
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        return root

    def found(self, root):
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            return kbuild_tree.vdso64_dir(fd)
        finally:
            os.close(fd)

    def test_both_shapes_by_looking(self):
        for shape, where in WHERE.items():
            self.assertEqual(self.found(self.tree(shape)), where, shape)

    def test_one_command_without_images_is_the_folder(self):
        # a tree whose kbuild made only the line (the attack tests' own fake)
        root = self.tmp / "bare"
        (root / V).mkdir(parents=True)
        (root / V / kbuild_tree.CMD).write_text(cmd_text(V))
        self.assertEqual(self.found(root), V)

    def test_none_or_no_way_to_tell_is_one_line(self):
        root = self.tree("7.3", cmds=())
        with self.assertRaises(UsageError) as e:
            self.found(root)
        self.assertIn("no .vclock_gettime.o.cmd in arch/x86/entry/vdso/", str(e.exception))
        shutil.rmtree(root)
        root = self.tree("7.3")
        os.unlink(root / V / "vdso64" / kbuild_tree.DBG)
        with self.assertRaises(UsageError) as e:
            self.found(root)
        self.assertIn("none beside vdso64.so.dbg", str(e.exception))
        self.assertEqual(len(str(e.exception).splitlines()), 1)

    def test_links_are_not_followed(self):
        """A tree's kbuild that leaves vdso64/ (or the .cmd) as a link to a
        folder of its choosing is not taken at its word."""
        elsewhere = self.tree("7.3", name="elsewhere")
        root = self.tree("6.12", cmds=(V,))
        os.symlink(elsewhere / V / "vdso64", root / V / "vdso64")
        self.assertEqual(self.found(root), V)
        shutil.rmtree(root)
        root = self.tree("7.3", cmds=(f"{V}/vdso32",))
        os.symlink(elsewhere / V / "vdso64" / kbuild_tree.CMD,
                   root / V / "vdso64" / kbuild_tree.CMD)
        self.assertEqual(self.found(root), f"{V}/vdso32")  # the only regular one

    def test_line_files_of_each_shape(self):
        files = kbuild_tree.line_files(self.tree("6.12"))
        self.assertIn(f"{V}/Makefile", files)
        self.assertIn("scripts/Makefile.lib", files)
        files = kbuild_tree.line_files(self.tree("7.3"))
        for rel in (f"{V}/Makefile", f"{V}/vdso64/Makefile", f"{V}/common/Makefile.include",
                    f"{V}/vdso32/Makefile"):
            self.assertIn(rel, files)
        self.assertNotIn(f"{V}/common/vclock_gettime.c", files)

    def test_kbuild_takes_the_line_and_images_of_each_shape(self):
        compiler = kbuild.compiler_identity("gcc")
        for shape, where in WHERE.items():
            root = self.tree(shape)
            # as olddefconfig leaves it: =y, "is not set", or absent
            (root / ".config").write_text("CONFIG_TIME_NS=y\n# CONFIG_POSIX_AUX_CLOCKS is not "
                                          "set\nCONFIG_GENERIC_VDSO_OVERFLOW_PROTECT_X=y\n")
            fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
            try:
                rec = kbuild.extract(fd, compiler)
                self.assertEqual(rec["options"], {"TIME_NS": True, "POSIX_AUX_CLOCKS": False,
                                                  "GENERIC_VDSO_OVERFLOW_PROTECT": False})
                self.assertEqual(rec["vdso_dir"], where)
                self.assertEqual(rec["vdso32"]["why"], kbuild_vdso32.NO_IA32)
                self.assertIn(f"-o {where}/vclock_gettime.o", rec["line"])
                self.assertIn("-fcf-protection=none", rec["copts"])
                self.assertNotIn("-nostdinc", rec["copts"])
                cache = self.tmp / f"cache-{shape}"
                cache.mkdir()
                kbuild.keep(fd, dict(rec, key="k"), cache, cache / "k")
            finally:
                os.close(fd)
            kept = {p.name: p.read_text() for p in (cache / "k").iterdir()}
            self.assertEqual({n: kept[n] for n in kept if n != "line.json"},
                             {"vclock_gettime.o": "o64", "vdso64.so": "so64",
                              "vdso64.so.dbg": "dbg64"}, shape)
            with mock.patch.object(kbuild, "cache_dir", return_value=cache):
                self.assertEqual(kbuild.own_image({"key": "k"}, own=True),
                                 cache / "k" / "vdso64.so")

    def test_the_32_bit_image_is_found_and_kept_in_each_shape(self):
        compiler = kbuild.compiler_identity("gcc")
        for shape, where in WHERE32.items():
            root = self.tree(shape)
            (root / ".config").write_text("CONFIG_IA32_EMULATION=y\n")
            fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
            try:
                rec = kbuild.extract(fd, compiler)
                self.assertEqual({"built": True, "dir": where, "why": None, "error": None},
                                 rec["vdso32"], shape)
                cache = self.tmp / f"cache32-{shape}"
                cache.mkdir()
                kbuild.keep(fd, dict(rec, key="k"), cache, cache / "k")
                failed = kbuild.extract(fd, compiler, "x: undefined symbols found")
            finally:
                os.close(fd)
            kept = {p.name: p.read_text() for p in (cache / "k").iterdir()}
            self.assertEqual((kept["vdso32.so"], kept["vdso32.so.dbg"]), ("so32", "dbg32"))
            self.assertEqual(kept["vdso64.so"], "so64")
            self.assertEqual((False, "x: undefined symbols found"),
                             (failed["vdso32"]["built"], failed["vdso32"]["error"]))

    def test_the_line_of_another_compiler_names_its_file(self):
        root = self.tree("7.3")
        (root / V / "vdso64" / kbuild_tree.CMD).write_text(cmd_text(f"{V}/vdso64", "./cc"))
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            with self.assertRaises(UsageError) as e:
                kbuild.extract(fd, kbuild.compiler_identity("gcc"))
        finally:
            os.close(fd)
        self.assertIn(f"kbuild: {V}/vdso64/.vclock_gettime.o.cmd: the line runs ./cc",
                      str(e.exception))



class DefaultKbuildTest(unittest.TestCase):
    """A folder that is a whole tree (a git work tree) gets kbuild by default;
    a part of a tree, another tarball, --no-kbuild and arm64 do not, and
    say why (the block's Compiler: line carries it)."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.tree = Path(tmp.name, "linux")
        for rel in kbuild_tree.WHOLE:
            Path(self.tree, rel).parent.mkdir(parents=True, exist_ok=True)
            Path(self.tree, rel).write_text("")

    def default(self, source, name="x86_64"):
        return request.default_kbuild(name, Path(source), None)

    def test_a_whole_tree_is_built_by_kbuild(self):
        self.assertEqual(kbuild_tree.not_whole(self.tree), None)
        self.assertEqual(self.default(self.tree), (True, None))

    def test_each_missing_part_is_named(self):
        for rel in kbuild_tree.WHOLE:
            with self.subTest(rel=rel):
                Path(self.tree, rel).rename(Path(self.tree, rel + ".gone"))
                try:
                    self.assertEqual(kbuild_tree.not_whole(self.tree), rel)
                    self.assertEqual(self.default(self.tree),
                                     (False, f"the tree has no {rel}: kbuild needs a whole "
                                             "tree"))
                finally:
                    Path(self.tree, rel + ".gone").rename(Path(self.tree, rel))

    def test_a_link_or_a_folder_is_no_part(self):
        top = Path(self.tree, "Makefile")
        top.unlink()
        top.symlink_to("Kconfig")
        self.assertEqual(kbuild_tree.not_whole(self.tree), "Makefile")
        top.unlink()
        top.mkdir()
        self.assertEqual(kbuild_tree.not_whole(self.tree), "Makefile")
        top.rmdir()
        top.write_text("")
        arch_dir = Path(self.tree, "arch")
        arch_dir.rename(Path(self.tree, "real-arch"))
        arch_dir.symlink_to("real-arch")  # x86's files below a link: not read
        self.assertEqual(kbuild_tree.not_whole(self.tree), "arch/x86/Makefile")

    def test_neither_arm64_nor_another_tarball(self):
        self.assertEqual(self.default(self.tree, "arm64"),
                         (False, "--arch arm64: kbuild's line and image are x86-64's"))
        tarball = Path(self.tree, "linux.tar.xz")
        tarball.write_text("")
        self.assertEqual(self.default(tarball)[0], False)
        self.assertIn("not Debian's", self.default(tarball)[1])
        self.assertEqual(request.default_kbuild("x86_64", tarball, "my.config"), (True, None))

    def test_the_request_carries_why_not(self):
        with mock.patch.object(arch.current(), "missing_toolchain", return_value=[]):
            whole = request.request(str(self.tree), [], "t")
            self.assertEqual((whole.kbuild, whole.kbuild_why), (True, None))
            asked_not = request.request(str(self.tree), [], "t", use_kbuild=False)
            self.assertEqual((asked_not.kbuild, asked_not.kbuild_why), (False, "--no-kbuild"))
            Path(self.tree, "Kconfig").unlink()
            part = request.request(str(self.tree), [], "t")
            self.assertEqual((part.kbuild, part.kbuild_why),
                             (False, "the tree has no Kconfig: kbuild needs a whole tree"))
        ctx = kbuild.context(None, part.kbuild_why)
        self.assertEqual(ctx, {"line": None, "why": "the tree has no Kconfig: kbuild needs "
                                                    "a whole tree"})
        self.assertEqual(review_provenance.compile_line(ctx),
                         "the project's userspace build line (Bazel opt, -O2): the tree has "
                         "no Kconfig: kbuild needs a whole tree")
        self.assertEqual(review_provenance.compile_line(
            {"line": ["-O2"], "config": {"kind": "tree", "path": "/t/.config"}}),
            "the kernel's vDSO line (the tree's kbuild, the tree's own .config)")


if __name__ == "__main__":
    unittest.main()
