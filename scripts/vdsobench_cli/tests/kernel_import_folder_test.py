"""A whole tree given as a folder, as a developer's git work tree is: import
runs its kbuild by default, in a copy (the folder is never written), keeps
the copy, and makes a patched tree's image again from it in seconds (the
patched import's image); an edit of a header the vDSO was compiled from is
another kbuild. Debian's 6.12 unpacked is the folder (minutes:
commands/testrun.py lists this module among the slow ones). Which folders
get kbuild, and why not: kbuild_tree_test."""

import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.kimport import (kbuild, kbuild_patched, patches as patches_mod, store,
                                   vdso_image)
from vdsobench_cli.tests.support import (KERNEL_TESTDATA, ImportsDir, ok, snapshot,
                                         tarball_or_skip)

NFC_REORDER = str(KERNEL_TESTDATA / "6.12-nfc-reorder.patch")
CACHE_ENV = "VDSOBENCH_KBUILD_CACHE"
BUILT = ("vmlinux.o", ".tmp_vmlinux1", "modules.order", "kernel/time/vsyscall.o",
         "arch/x86/entry/vdso/.stale.o")


class WholeFolderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        src = tarball_or_skip("6.12")
        if kbuild.missing_tools():
            raise unittest.SkipTest("kbuild cannot run here (scripts/vdsobench setup "
                                    "--kernel-sources)")
        cls.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-folder-")
        cls.tree = Path(cls.tmp.name, "linux")
        cls.tree.mkdir()
        subprocess.run(["tar", "-xf", str(src), "-C", str(cls.tree), "--strip-components=1"],
                       check=True)
        # what a developer's own builds leave: objects, and a vmlinux.o past
        # the confined copy's 1 GiB file limit (sparse: no disk)
        for rel in BUILT:
            (cls.tree / rel).write_bytes(b"\x7fELF stale")
        os.truncate(cls.tree / "vmlinux.o", 3 << 29)
        cls.before = snapshot(cls.tree / "arch" / "x86")
        cls.top = sorted(os.listdir(cls.tree))
        cls.dir = ImportsDir()
        # a kbuild cache of its own: every run builds the folder, and the
        # patched image from its kept copy (a folder's tree is keyed by its
        # files, not by its path: another test's would be found)
        cls.saved_cache = os.environ.get(CACHE_ENV)
        os.environ[CACHE_ENV] = str(Path(cls.tmp.name, "kbuild"))

    @classmethod
    def tearDownClass(cls):
        if cls.saved_cache is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = cls.saved_cache
        cls.dir.close()
        cls.tmp.cleanup()

    def kbuild_record(self, name):
        key = store.read_table()[name]["identity"]["kbuild"]["key"]
        return json.loads((kbuild.cache_dir() / key / "line.json").read_text())

    def test_1_kbuild_by_default_in_a_copy(self):
        out = ok(self, ["import", str(self.tree), "--name", "w"])  # no --kbuild
        self.assertIn("import: kbuild: make olddefconfig prepare", out)
        ctx = store.read_table()["w"]["identity"]["kbuild"]
        self.assertTrue(ctx["line"], ctx)
        self.assertEqual(ctx["config"]["kind"], "debian", ctx)  # the folder has no .config
        self.assertIn("kernel:w+{fake,lfence_rdtsc,mfence_rdtsc,rdtsc,rdtscp}"
                      "+{always,auto,image}", out)
        # the user's tree as it was: no .config, no object, nothing rewritten
        self.assertEqual(sorted(os.listdir(self.tree)), self.top)
        self.assertEqual(snapshot(self.tree / "arch" / "x86"), self.before)
        # its copy kept, built, for patched images; its builds' outputs left
        # out of the copy (the 1.5 GiB vmlinux.o would have stopped it)
        kept = kbuild.cache_dir() / ctx["key"] / "tree"
        self.assertTrue((kept / ".config").is_file())
        self.assertEqual([rel for rel in BUILT if (kept / rel).exists()], [])
        self.assertTrue((kept / "arch/x86/kernel/vmlinux.lds.S").is_file())

    def test_2_a_patched_image_from_the_kept_copy(self):
        out = ok(self, ["import", str(self.tree), "--name", "wp", "--patch", NFC_REORDER,
                        "--patched-image"])
        self.assertIn("from the tree's kept build", out)
        base = self.kbuild_record("wp")["key"]  # its line: the unpatched tree's
        self.assertEqual(base, self.kbuild_record("w")["key"])
        key = kbuild_patched.patches_key(base, patches_mod.check_patches([NFC_REORDER]))
        rec = json.loads((kbuild.cache_dir() / key / "line.json").read_text())
        self.assertTrue(rec["incremental"], rec)
        self.assertEqual(rec["tree"]["base"], base)
        # the +image variants are the patched tree's own (an image kbuild made
        # is verified as such in kernel_import_test's max_cycles test)
        table = store.read_table()
        images = [(store.trees_dir() / table[n]["key"] / vdso_image.STORED).read_bytes()
                  for n in ("w", "wp")]
        self.assertEqual(images[1], kbuild.own_image(rec, own=True).read_bytes())
        self.assertNotEqual(images[0], images[1])
        self.assertEqual(snapshot(self.tree / "arch" / "x86"), self.before)


    def test_3_an_edit_of_a_header_it_was_compiled_from_is_another_key(self):
        """The folder's kbuild is cached while the files its vDSO was compiled
        from are as built: asm/msr.h (rdtsc_ordered()), outside the files
        import takes, edited, is another key (a new kbuild); undone, the first."""
        ctx = store.read_table()["w"]["identity"]["kbuild"]
        rec = kbuild.cached(kbuild.cache_dir() / ctx["key"])
        msr = "arch/x86/include/asm/msr.h"
        self.assertIn(msr, rec["inputs"]["paths"])
        self.assertIn("lib/vdso/gettimeofday.c", rec["inputs"]["paths"])
        self.assertFalse([p for p in rec["inputs"]["paths"] if "/generated/" in p])
        top = kbuild.cache_dir()
        self.assertEqual(kbuild.current_key(top, ctx["key"], self.tree), ctx["key"])
        path = self.tree / msr
        text, st = path.read_bytes(), path.stat()
        try:
            path.write_bytes(text + b"/* edited */\n")
            self.assertNotEqual(kbuild.current_key(top, ctx["key"], self.tree), ctx["key"])
        finally:
            path.write_bytes(text)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        self.assertEqual(kbuild.current_key(top, ctx["key"], self.tree), ctx["key"])


if __name__ == "__main__":
    unittest.main()
