"""`import --patch P --patched-image` on Debian's real 6.12 (kimport/kbuild_patched.py):
the patched tree's own image, kbuild's, made again from the tree's kept build.
The parts that need no tree: kbuild_patched_test."""

import json
import unittest

from vdsobench_cli.cli import build
from vdsobench_cli.kimport import store, vdso_image
from vdsobench_cli.tests.support import (ImportsDir, assert_one_miss_more, ok, tarball_or_skip,
                                         vdsobench)

MAX_CYCLES_LAST = str(build.ROOT / "kernel_import" / "testdata" / "6.12-max-cycles-last.patch")


class PatchedImageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.src = tarball_or_skip("6.12")
        cls.dir = ImportsDir()
        cls.imported = vdsobench("import", str(cls.src), "--name", "t")

    @classmethod
    def tearDownClass(cls):
        cls.dir.close()

    def test_patched_image_is_the_patched_trees_own(self):
        """--patched-image: kbuild made again for the patched tree, from the
        tree's kept build: its image reads the patched layout (max_cycles
        moved to line 3: one miss more under pressure, as the rebuild's) and
        passes verify; without it, a patched import has no +image."""
        rc, out, err = self.imported
        self.assertEqual(rc, 0, err + out)
        out = ok(self, ["import", str(self.src), "--patch", MAX_CYCLES_LAST,
                        "--name", "t-maxi", "--patched-image"])
        self.assertIn("+{fake,lfence_rdtsc,mfence_rdtsc,rdtsc,rdtscp}+{always,auto,image}", out)
        table = store.read_table()
        images = [(store.trees_dir() / table[n]["key"] / vdso_image.STORED).read_bytes()
                  for n in ("t", "t-maxi")]
        self.assertNotEqual(images[0], images[1])
        out = ok(self, ["verify", "kernel:t-maxi+fake+image", "--json"])
        rec = next(json.loads(x) for x in out.splitlines() if x.startswith('{"variant"'))
        self.assertEqual(rec["status"], "PASS", rec)
        assert_one_miss_more(self, "kernel:t+rdtscp+image", "kernel:t-maxi+rdtscp+image")
        listed = {v["name"] for v in json.loads(ok(self, ["list", "--json"]))}
        self.assertIn("kernel:t-maxi+rdtscp+image", listed)
        ok(self, ["import", str(self.src), "--patch", MAX_CYCLES_LAST, "--name", "t-noi"])
        listed = {v["name"] for v in json.loads(ok(self, ["list", "--json"]))}
        self.assertFalse({v for v in listed if v.startswith("kernel:t-noi+")
                          and v.endswith("+image")}, listed)



if __name__ == "__main__":
    unittest.main()
