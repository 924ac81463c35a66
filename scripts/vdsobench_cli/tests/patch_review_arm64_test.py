"""patch_review_arm64.review(), end to end on Debian's 6.12 sources for arm64
under qemu-user (nothing mocked): a good patch passes on both trees with the
instructions per call listed; the generic vdso_calc_ns() without its delta
mask is CAUGHT (arm64's 56-bit arch timer wrap); a patch that does not build
for arm64 and a missing cross compiler or emulator are one line each, with
the imports table as it was. Nothing here measures time. Skips, saying why,
without the tarball, the cross compiler or qemu-user (scripts/vdsobench
setup --arch arm64 --kernel-sources). About 75 s.
"""

import os
import tempfile
import unittest
from unittest import mock

from vdsobench_cli.cli import arch
from vdsobench_cli.kimport import store, txn
from vdsobench_cli.recipes import patch_review_arm64 as arm64
from vdsobench_cli.tests.support import (KERNEL_TESTDATA, TORN_612, ImportsDir,
                                         arm64_tarball_or_skip, cross_missing, long_tier)

from reports import cover_letter_arm64

GOOD = str(KERNEL_TESTDATA / "6.12-max-cycles-last.patch")
NOMASK = str(KERNEL_TESTDATA / "6.12-arm64-delta-nomask.patch")
OURS = (arm64.BEFORE, arm64.AFTER)


def record(v, status, *checks, reason=None):
    """A verify --json record as the binary prints it; checks (name, ok)."""
    rec = {"variant": v, "status": status,
           "checks": [{"name": n, "ok": ok, "skipped": False, "detail": f"{n} detail"}
                      for n, ok in checks], "first_failure": None}
    bad = [c for c in rec["checks"] if not c["ok"]]
    if bad:
        rec["first_failure"] = f"{bad[0]['name']}: {bad[0]['detail']}"
    if reason:
        rec["reason"] = reason
    return rec


class VerdictTest(unittest.TestCase):
    """How verify's records decide a side, from recorded records: no qemu."""

    def recs(self, name, fake, real, ecv="SKIP"):
        return {arm64.variant(name, "fake"): fake, arm64.variant(name, "isb_cntvct_dep"): real,
                arm64.variant(name, "cntvctss"): record("x", ecv, reason="no HWCAP2_ECV")}

    def test_passes_name_every_check_run(self):
        recs = self.recs(arm64.AFTER, record("f", "PASS", ("exact", True), ("edges", True)),
                         record("r", "PASS", ("exact", True), ("system", True)))
        self.assertEqual(arm64.side(recs, arm64.AFTER, "isb_cntvct_dep"),
                         (True, "PASS (exact, edges, system)", None, None))
        self.assertEqual(arm64.the_counter(recs)[0], "isb_cntvct_dep")
        self.assertIn("no HWCAP2_ECV", arm64.the_counter(recs)[1])

    def test_the_fake_counters_failure_comes_first(self):
        fake = record("f", "FAIL", ("exact", True), ("edges", False))
        recs = self.recs(arm64.AFTER, fake, record("r", "FAIL", ("exact", False)))
        ok, text, bad, _ = arm64.side(recs, arm64.AFTER, "isb_cntvct_dep")
        self.assertEqual((ok, bad), (False, fake))
        self.assertEqual(text, "FAIL: edges: edges detail")

    def test_a_system_only_failure_is_the_emulators(self):
        fake = record("f", "PASS", ("exact", True), ("concurrency", True))
        real = record("r", "FAIL", ("exact", True), ("system", False))
        recs = self.recs(arm64.BEFORE, fake, real)
        self.assertEqual(arm64.side(recs, arm64.BEFORE, "isb_cntvct_dep"),
                         (True, "PASS (exact, concurrency); system not counted", None,
                          "system: system detail"))
        # natively the system check is the machine's own clock: it counts
        ok, text, bad, _ = arm64.side(recs, arm64.BEFORE, "isb_cntvct_dep", emulated=False)
        self.assertEqual((ok, bad), (False, real))
        self.assertEqual(text, "isb_cntvct_dep: FAIL: system: system detail")
        # and with another check failing beside it, the side fails
        real = record("r", "FAIL", ("exact", False), ("system", False))
        recs = self.recs(arm64.BEFORE, fake, real)
        self.assertFalse(arm64.side(recs, arm64.BEFORE, "isb_cntvct_dep")[0])

    def test_ecv_where_verify_ran_cntvctss(self):
        recs = self.recs(arm64.AFTER, {}, {}, ecv="PASS")
        self.assertEqual(arm64.the_counter(recs)[0], "cntvctss")


@unittest.skipUnless(arch.host() == "x86_64", "arm64 is cross-built from x86-64")
class MissingToolsTest(unittest.TestCase):
    """Without the cross compiler or qemu-user: the line that says what and
    how to install it, and nothing attempted (no import, no build)."""

    def setUp(self):
        self.dir = ImportsDir()
        self.addCleanup(self.dir.close)
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.empty = tmp.name

    def review_without_touching(self):
        with mock.patch.object(txn, "temporary",
                               side_effect=AssertionError("imported")):
            got = arm64.review("/usr/src/linux-source-6.12.tar.xz", [GOOD], quick=True)
        self.assertEqual(arch.current().name, arch.host())
        self.assertEqual(store.read_table(), {})
        return got

    def test_no_cross_compiler(self):
        with mock.patch.object(arch, "CROSS_BIN", self.empty):
            got = self.review_without_touching()
        self.assertEqual(got["missing"], f"no aarch64-linux-gnu-gcc, aarch64-linux-gnu-g++ in "
                                         f"{self.empty} (as root: scripts/vdsobench setup "
                                         "--arch arm64)")
        self.assertEqual((got["verify"], got["instructions"], got["torn"]), ({}, [], None))
        out = cover_letter_arm64.lines(got)
        self.assertTrue(out[0].startswith("arm64 (emulated under qemu-user): not checked: no "
                                          "aarch64-linux-gnu-gcc"), out)

    def test_no_qemu(self):
        if arch.Target("arm64").missing_toolchain():
            self.skipTest("no cross compiler: the first thing said missing")
        with mock.patch.dict(os.environ, {"PATH": self.empty}):
            got = self.review_without_touching()
        self.assertEqual(got["missing"], "no qemu-aarch64-static or qemu-aarch64 on PATH (as "
                                         "root: scripts/vdsobench setup --arch arm64)")


class HostileInputTest(unittest.TestCase):
    """What import refuses is one line in the dict, before anything is built."""

    def setUp(self):
        if cross_missing():
            self.skipTest(cross_missing())
        self.dir = ImportsDir()
        self.addCleanup(self.dir.close)

    def test_refused_inputs(self):
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "fifo.patch")
            os.mkfifo(fifo)
            for source, patch, needle in (
                    ("/nonexistent/linux", GOOD, "/nonexistent/linux"),
                    ("/usr/src/linux-source-6.12.tar.xz", "/dev/zero", "/dev/zero"),
                    ("/usr/src/linux-source-6.12.tar.xz", fifo, "fifo.patch")):
                got = arm64.review(source, [patch], quick=True)
                self.assertRegex(got["missing"], r"^on arm64, import: ", got)
                self.assertIn(needle, got["missing"])
                self.assertNotIn("\n", got["missing"])
                self.assertEqual(got["verify"], {})
                self.assertEqual(arch.current().name, arch.host())
                self.assertEqual(store.read_table(), {})


@long_tier("reviews of 6.12 for arm64 under qemu, about 3 min on 2 cores")
class Review612Test(unittest.TestCase):
    """Debian's linux-source-6.12, the patches on it, for arm64 under qemu."""

    @classmethod
    def setUpClass(cls):
        cls.src = arm64_tarball_or_skip("6.12")
        cls.dir = ImportsDir()

    @classmethod
    def tearDownClass(cls):
        cls.dir.close()

    def review(self, patch):
        got = arm64.review(str(self.src), [patch], quick=True)
        # the process's arch and the imports table as they were
        self.assertEqual(arch.current().name, arch.host())
        self.assertFalse(set(OURS) & set(store.read_table()))
        for line in cover_letter_arm64.lines(got):
            self.assertLessEqual(len(line), 72, line)
        return got

    def test_a_good_patch_passes_on_both_trees(self):
        # max_cycles is CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT's, which arm64
        # does not select: moving it changes nothing there
        got = self.review(GOOD)
        self.assertIsNone(got["missing"], got)
        self.assertIsNone(got["torn"])
        self.assertEqual(got["verify"]["after"][0], True, got["verify"])
        self.assertEqual(got["verify"]["before"][0], True, got["verify"])
        # the system check is qemu's clock against the host's: on a loaded
        # machine it may fail, on either tree, and is then not counted
        self.assertRegex(got["verify"]["after"][1], r"^PASS \(exact, edges, concurrency"
                                                    r"(, system\)|\); system not counted)$")
        self.assertLessEqual(set(got["not_counted"]), {"after", "before"})
        self.assertRegex(got["emulator"], r"^qemu-aarch64(-static)? \d+\.\d+")
        # qemu-user has no FEAT_ECV: verify SKIPs cntvctss, the kernel's plain read
        self.assertEqual(got["counter"], "isb_cntvct_dep")
        self.assertIn("HWCAP2_ECV", got["counter_why"])
        self.assertEqual([c for c, _, _ in got["instructions"]], arm64.QUICK_CLOCKS)
        for clock, before, after in got["instructions"]:
            self.assertGreater(before, 10, clock)
            self.assertEqual(before, after, clock)
        self.assertEqual(got["code"], "identical")
        self.assertEqual(len(got["page"]), 1, got["page"])
        self.assertRegex(got["page"][0], r"^struct vdso_data: unchanged \(\d+ bytes")
        self.assertEqual(got["notes"], [])
        out = cover_letter_arm64.lines(got)
        self.assertEqual(out[0], cover_letter_arm64.EMULATED)
        self.assertIn("  read path code: identical", out)
        self.assertTrue(any(x.startswith("  instructions per call: unchanged on 3 clocks")
                            for x in out), out)

    def test_the_dropped_mask_is_caught(self):
        got = self.review(NOMASK)
        self.assertIsNone(got["missing"], got)
        self.assertEqual(got["verify"]["after"][0], False)
        self.assertEqual(got["verify"]["before"][0], True, got["verify"])
        self.assertRegex(got["torn"], r"^edges: 56-bit arch timer wrapped past cycle_last")
        # a wrong patch gets nothing more
        self.assertEqual((got["code"], got["instructions"], got["page"]), (None, [], []))
        out = cover_letter_arm64.lines(got)
        self.assertIn("  CAUGHT: the patched tree fails verify on arm64; do not post", out)

    def test_a_patch_arm64_cannot_build_is_one_line(self):
        # the x86 torn patch reads max_cycles, which arm64's struct lacks
        got = self.review(TORN_612)
        self.assertRegex(got["missing"], r"^on arm64, import: .*max_cycles")
        self.assertNotIn("\n", got["missing"])
        self.assertNotIn("Traceback", got["missing"])
        self.assertEqual(got["verify"], {})
        out = " ".join(x.strip() for x in cover_letter_arm64.lines(got))
        self.assertTrue(out.startswith("arm64 (emulated under qemu-user): not checked: on "
                                       "arm64, import: "), out)
        self.assertIn("has no member named", out)


if __name__ == "__main__":
    unittest.main()
