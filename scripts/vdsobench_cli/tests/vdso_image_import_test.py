"""The +image variants end to end (docs/image.md): Debian's 6.12 imported with
a kbuild vdso64.so of it, verify on every counter, and an image built from the
torn patch caught. A kbuild image takes a minute to make, so this runs where
one is named: VDSOBENCH_TEST_VDSO_IMAGE (the 6.12 tree's
arch/x86/entry/vdso/vdso64.so) and, for the torn case,
VDSOBENCH_TEST_VDSO_IMAGE_TORN (the same tree with
kernel_import/testdata/6.12-torn-mult-shift.patch applied); skipped with the
reason otherwise."""
import json
import os
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.kimport import store
from vdsobench_cli.tests import vdso_images
from vdsobench_cli.tests.support import TORN_612, ImportsDir, cli, ok, one_line, tarball

IMAGE = os.environ.get("VDSOBENCH_TEST_VDSO_IMAGE", "")
TORN = os.environ.get("VDSOBENCH_TEST_VDSO_IMAGE_TORN", "")


class Image612Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not IMAGE:
            raise unittest.SkipTest("VDSOBENCH_TEST_VDSO_IMAGE is unset (a kbuild vdso64.so "
                                    "of Debian's 6.12: docs/image.md)")
        if tarball("6.12") is None:
            raise unittest.SkipTest("no /usr/src/linux-source-6.12.tar.xz (as root: "
                                    "scripts/vdsobench setup --kernel-sources)")
        cls.dir = ImportsDir()

    @classmethod
    def tearDownClass(cls):
        cls.dir.close()

    def test_verify_passes_on_every_counter(self):
        out = ok(self, ["import", "linux-source-6.12", "--name", "i", "--vdso-image", IMAGE])
        self.assertIn("+{always,auto,image}", out)
        out = ok(self, ["verify", "kernel:i+*+image", "--json"])
        recs = {r["variant"]: r for r in map(json.loads, (
            x for x in out.splitlines() if x.startswith('{"variant"')))}
        self.assertEqual(sorted(recs), sorted(f"kernel:i+{c}+image" for c in
                                              ("rdtsc", "lfence_rdtsc", "rdtscp", "fake")))
        # a counter this CPU lacks (RDTSCP on some guests) is verify's SKIP, not a failure
        lacked = {n for n, r in recs.items()
                  if r["status"] == "SKIP" and "this CPU has no" in r.get("reason", "")}
        self.assertEqual({r["status"] for n, r in recs.items() if n not in lacked}, {"PASS"}, out)
        self.assertNotIn("kernel:i+fake+image", lacked)
        fake = recs["kernel:i+fake+image"]
        self.assertEqual({c["name"] for c in fake["checks"] if not c["skipped"]},
                         {"exact", "edges", "concurrency"})

    def test_a_bad_image_is_one_line(self):
        rc, out, err = cli("import", "linux-source-6.12", "--name", "i-bad",
                           "--vdso-image", "/dev/zero")
        self.assertEqual(rc, 2, err + out)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("--vdso-image", err)

    def test_hostile_images_leave_the_import_working(self):
        """Each refused in one line, over an import of the same name, which
        stays as it was and still verifies."""
        ok(self, ["import", "linux-source-6.12", "--name", "i", "--vdso-image", IMAGE])
        table = store.table_path().read_bytes()
        with tempfile.TemporaryDirectory() as d:
            for case in ("dt-needed", "unterminated-dynstr", "own-replacement",
                         "no-gettimeofday"):
                make, phrase = vdso_images.HOSTILE[case]
                bad = Path(d) / f"{case}.so"
                bad.write_bytes(make())
                rc, out, err = cli("import", "linux-source-6.12", "--name", "i",
                                   "--vdso-image", str(bad))
                one_line(self, rc, err, str(bad), phrase)
                self.assertEqual(store.table_path().read_bytes(), table, case)
        out = ok(self, ["verify", "kernel:i+fake+image"])
        self.assertRegex(out, r"PASS +kernel:i\+fake\+image")

    @unittest.skipUnless(TORN, "VDSOBENCH_TEST_VDSO_IMAGE_TORN is unset (a kbuild "
                               "vdso64.so of 6.12 with the torn patch)")
    def test_torn_image_is_caught(self):
        ok(self, ["import", "linux-source-6.12", "--patch", TORN_612, "--name", "i-torn",
                  "--vdso-image", TORN])
        rc, out, err = cli("verify", "kernel:i-torn+rdtscp+image")
        self.assertEqual(rc, 1, err + out)
        self.assertRegex(out, r"FAIL +kernel:i-torn\+rdtscp\+image +concurrency: torn read")


if __name__ == "__main__":
    unittest.main()
