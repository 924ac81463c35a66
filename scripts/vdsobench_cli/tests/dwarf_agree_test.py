"""The DWARF writer (kernel_import/glue/dwarf_writer.c, docs/image.md) on real
trees, the long tier's (`test --long`): Debian's 6.1, 6.12 and 7.3 imported
with kbuild's images, and each one's agree test run (the DWARF writer and
the tree's own update path, byte for byte on the data and namespace pages);
the fallback forced (`--writer dwarf`) and met (a patch whose vsyscall.c the
shim cannot build), the +image variants verified with the DWARF writer.
The plain pass covers the layout's reading on recorded pahole output
(dwarf_layout_test.py) and the imports' plumbing (kernel_import_test.py)."""
import json
import os
import unittest

from vdsobench_cli.cli import arch, build
from vdsobench_cli.kimport import bazel_sync, kbuild, newer_sources, store
from vdsobench_cli.tests.support import (KERNEL_TESTDATA, NESTED, ImportsDir, cli, long_tier,
                                         ok, tarball)

LOCKDEP = str(KERNEL_TESTDATA / "6.12-vsyscall-lockdep.patch")


def agree_target(name, layout_ident=None):
    return f"//impls:variant_{layout_ident or 'kernel_' + name}__fake__image_dwarf_agree"


def verified(test, pattern):
    """{variant: status} of verify --json on pattern; every one PASS but a
    counter this CPU lacks (SKIP), the fake counter's PASS."""
    out = ok(test, ["verify", pattern, "--json"])
    recs = {r["variant"]: r for r in map(json.loads, (
        x for x in out.splitlines() if x.startswith('{"variant"')))}
    for name, r in recs.items():
        lacked = r["status"] == "SKIP" and "this CPU has no" in r.get("reason", "")
        test.assertTrue(r["status"] == "PASS" or lacked, f"{name}: {r['status']}")
    test.assertEqual(recs[pattern.replace("*", "fake")]["status"], "PASS")
    return recs


@long_tier("Debian's 6.1, 6.12 and 7.3 imported for the DWARF writer")
class DwarfWriterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get(NESTED):
            raise unittest.SkipTest("inside the new-variant test's copy of the project")
        if kbuild.missing_tools():
            raise unittest.SkipTest(f"no {' '.join(kbuild.missing_tools())} for kbuild "
                                    "(scripts/vdsobench setup --kernel-sources)")
        for version in ("6.1", "6.12"):
            if tarball(version) is None:
                raise unittest.SkipTest(f"no /usr/src/linux-source-{version}.tar.xz")
        cls.dir = ImportsDir()

    @classmethod
    def tearDownClass(cls):
        cls.dir.close()

    def bazel_test(self, target):
        bazel_sync.sync_env()
        rc, out = build.bazel("test", arch.current().bazel_flags() + ["--test_output=all",
                                                                      target])
        self.assertEqual(rc, 0, out[-3000:])
        return out

    def test_each_tree_agrees_byte_for_byte(self):
        trees = [("6.1", "a61"), ("6.12", "a612")]
        if os.path.exists("/usr/src/linux-source-7.3.tar.xz") or newer_sources.tarball("7.3"):
            trees.append(("7.3", "a73"))  # fetched before (kernel_import_today_test)
        for version, name in trees:
            with self.subTest(version):
                out = ok(self, ["import", f"linux-source-{version}", "--name", name])
                self.assertIn("written by the tree's own update path", out)
                out = self.bazel_test(agree_target(name))
                self.assertRegex(out, r"dwarf agree: 2000 states .*identical byte for byte")

    def test_the_fallback_forced(self):
        out = ok(self, ["import", "linux-source-6.12", "--name", "f612", "--writer", "dwarf"])
        self.assertIn("kernel:f612+{fake,lfence_rdtsc,rdtsc,rdtscp}+{image}", out)
        self.assertIn("the data page is written by the DWARF writer", out)
        verified(self, "kernel:f612+*+image")
        entry = store.read_table()["f612"]
        self.assertEqual(entry["identity"]["writer"], "dwarf")

    def test_the_fallback_met(self):
        """A patch the kernel builds and the shim cannot: the +image variants
        alone, their data page the DWARF writer's, verified; asked for the
        tree's writer, the same import is one line."""
        out = ok(self, ["import", "linux-source-6.12", "--patch", LOCKDEP, "--patched-image",
                        "--name", "m612"])
        self.assertRegex(out, r"the shim cannot build this tree's kernel/time/vsyscall\.c: .*"
                              r"lockdep_assert_held.*: the \+image variants alone")
        self.assertIn("kernel:m612+{fake,lfence_rdtsc,rdtsc,rdtscp}+{image}", out)
        verified(self, "kernel:m612+*+image")
        rc, out, err = cli("import", "linux-source-6.12", "--patch", LOCKDEP, "--patched-image",
                           "--name", "t612", "--writer", "tree")
        self.assertEqual(rc, 2, out + err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("kernel/time/vsyscall.c", err)
        self.assertNotIn("t612", store.read_table())


if __name__ == "__main__":
    unittest.main()
