"""`recipe patch-review`, run for real: reviews started at once, and a review
of a tree whose .git is hostile. Each is a --quick --no-arm64 review of
Debian's 6.12 in a throwaway imports table (minutes: commands/testrun.py
lists this module among the slow ones). They are the suite's reviews of 6.12
on x86: each also carries what its patch must show in the block.

- At once (`--source linux-source-6.12`, each its own --out): offs_boot
  added before basetime[] (the field, the struct's growth, the clocks whose
  lines moved), verified for real in every mode (PASS: the patch is
  correct) and timed (any verdict: a few rounds of live timing), both trees'
  vdso32 built and checked, its code changed too; and a patch that breaks
  only the 32-bit vDSO (6.12-u64-div-32bit.patch: a u64 / and % i386
  compiles to libgcc calls): WRONG first, vdso32 and kbuild's error named,
  the 64-bit image built, nothing verified or timed; and a patch wrong only
  on 32-bit (6.12-long-delta-32bit.patch: the delta an unsigned long, both
  vDSOs build): WRONG from verify --arch i386 (under qemu-i386 here), the
  failure named, the 64-bit code unchanged (the others run with --no-i386:
  the i386 build and its runs cost CI a minute each under qemu-i386). Where
  the kernel runs 32-bit programs, the field's review runs its i386 verify
  too, natively, and times the vdso32: a row per quick clock, the i386
  variants of both trees (any verdict: the structure, never its value).
  The later ones wait for the first and say so, and the table is empty after
  (review_support.check_review()). The long tier adds the reorder patch
  (object code, simulation and data page unchanged), a third at once.
- A hostile .git (refs linked to /proc, HEAD `ref: refs/kmsg`: the old
  reader blocked in the kernel log's reader until killed): the review ends,
  its commit is recorded as not read and why, and .git is as it was. Its
  tree is the unpatched 6.12 the first class's reviews left in the cache,
  and its patch the torn one: the block says WRONG, names the torn read
  and the nearest right answer, and times nothing."""

import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli import arch, build
from vdsobench_cli.kimport import store
from vdsobench_cli.tests.cross_support import cross_run_missing
from vdsobench_cli.tests.review_support import ROWS, check_review
from vdsobench_cli.tests.support import (KERNEL_TESTDATA, LONG_ENV, NESTED, TEST_BUDGET_S,
                                         TORN_612, ImportsDir, long_tier, tarball)

NFC_REORDER = str(KERNEL_TESTDATA / "6.12-nfc-reorder.patch")
OFFS_BOOT = str(KERNEL_TESTDATA / "6.12-offs-boot.patch")
U64_DIV = str(KERNEL_TESTDATA / "6.12-u64-div-32bit.patch")
LONG_DELTA = str(KERNEL_TESTDATA / "6.12-long-delta-32bit.patch")
# a guard against a review that hangs, never a timing: a --quick review takes
# a few minutes on a loaded 2-core machine
HANG_S = 1800
WAITED = "patch-review: waiting for patch-review (pid "


def native32_missing():
    """Why this machine cannot time the vdso32 (it runs no 32-bit program
    natively, or has no i386 build), or None."""
    why = cross_run_missing("i386")
    if why:
        return why
    runs, why = arch.Target("i386").runs_natively
    return None if runs else f"the kernel runs no 32-bit program here ({why})"


def start(out_dir, *argv):
    return subprocess.Popen(
        [sys.executable, str(build.ROOT / "scripts" / "vdsobench"), "recipe", "patch-review",
         "--quick", "--no-arm64", "--budget", TEST_BUDGET_S, *argv, "--out", out_dir],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(p):
    """(exit status, stdout, stderr), killed past HANG_S."""
    try:
        out, err = p.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, out, err
    return p.returncode, out, err


def outputs(out_dir):
    letter = Path(out_dir, "cover-letter.txt").read_text().splitlines()
    return letter, json.loads(Path(out_dir, "patch-review.json").read_text())


def unpatched_tree(into):
    """A copy of the unpatched 6.12 tree a review imported (the cache's, whose
    kimport.json names no patch): a kernel tree as a folder, without a tar."""
    for meta in sorted((store.imports_dir() / "trees").glob("*/kimport.json")):
        m = json.loads(meta.read_text())
        if not m["patches"] and m["arch"] == "x86_64" and "image" not in m:
            return Path(shutil.copytree(meta.parent, into, symlinks=True))
    return None


class TwoReviewsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get(NESTED):
            raise unittest.SkipTest("inside the new-variant test's copy of the project")
        if tarball("6.12") is None:
            raise unittest.SkipTest("no /usr/src/linux-source-6.12.tar.xz (as root: "
                                    "scripts/vdsobench setup --kernel-sources)")
        cls.imports = ImportsDir()
        cls.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-reviews-")
        # the reorder's review is the long tier's: its paths (code, data page
        # and simulation unchanged) are review_parts_test's and objcmp_test's
        patches = {"offs_boot": OFFS_BOOT, "u64_div": U64_DIV, "long_delta": LONG_DELTA}
        if os.environ.get(LONG_ENV):
            patches["reorder"] = NFC_REORDER
        outs = {k: os.path.join(cls.tmp.name, k) for k in patches}
        # the i386 verify (a build and qemu-i386 runs) for the 32-bit patch;
        # natively, the field's too, and its vdso32 timed
        cls.native32 = native32_missing()
        i386 = {"long_delta"} | (set() if cls.native32 else {"offs_boot"})
        runs = {k: start(outs[k], "--source", "linux-source-6.12", "--patch", patches[k],
                         *([] if k in i386 else ["--no-i386"]))
                for k in patches}
        cls.results = {k: (outs[k], *finished(runs[k])) for k in patches}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()
        cls.imports.close()

    def review(self, name, i386=False):
        """(cover letter lines, patch-review.json) of a review, its shape checked
        (i386: its vdso32 verify ran, else --no-i386 left it out)."""
        out_dir, rc, out, err = self.results[name]
        self.assertIn(rc, (0, 1), err[-3000:] + out[-3000:])
        letter, record = outputs(out_dir)
        check_review(self, rc, letter, record)
        self.assertIn("patch-review: verify after", err)  # progress on stderr
        v32 = record["vdso32"]
        self.assertEqual({"before": True, "after": True}, v32["built"], v32)
        self.assertFalse(v32["broken"], v32)
        self.assertTrue(v32["check"]["after"]["ok"], v32)
        self.assertTrue(any(x.startswith("vdso32: built, symbols as expected; code ")
                            for x in letter), letter)
        if i386:
            self.assertEqual((True, None, None, None),
                             tuple(v32["verify"][k] for k in ("ran", "why", "emulator",
                                                             "failed")), v32["verify"])
        else:
            self.assertEqual((False, "left out (--no-i386)"),
                             (v32["verify"]["ran"], v32["verify"]["why"]), v32)
        return letter, record

    @long_tier("a third review of 6.12 at once, a patch that changes no code")
    def test_a_patch_that_changes_no_code(self):
        """The reorder patch: object code identical, the simulation unchanged,
        the data page the same; nothing for time to disagree with."""
        letter, record = self.review("reorder")
        text = "\n".join(letter)
        self.assertEqual(record["code"], "identical")
        self.assertIn("Read path object code: identical", letter)
        self.assertIn("Simulated (cachegrind): instructions, L1D misses per call unchanged",
                      letter)
        self.assertIn("  every clock's read path loads the same lines", letter)
        self.assertRegex(text, r"struct vdso_data: unchanged \(\d+ bytes, \d+ lines\)")
        self.assertEqual(record["why"], [])
        # the folded Subject, unfolded
        self.assertIn("declare do_hres()'s locals in the order they are first used",
                      " ".join(text.split()))

    def test_a_field_added(self):
        """offs_boot before basetime[]: the field, the struct's growth in bytes
        and lines, and the clocks whose lines changed, in the block; the
        lines from the trees' own layout, not from time."""
        letter, record = self.review("offs_boot", i386=not self.native32)
        page = "\n".join(record["page"])
        self.assertRegex(page, r"offs_boot: added at 40\.\.47 \(line 0\)")
        self.assertIn("struct vdso_data: 248 -> 256 bytes, 4 -> 4 lines", page)
        # REALTIME_COARSE's base straddled lines 1 and 2 (120..135); now at 128
        self.assertTrue(any(re.fullmatch(r"REALTIME_COARSE: 3 -> 2 lines per call \(lines "
                                         r"0, 1, 2 -> lines 0, 2\)", x)
                            for x in record["page"]), record["page"])
        block = "\n".join(letter)
        self.assertIn("Data page:", letter)
        for needle in ("offs_boot: added", "248 -> 256 bytes", "REALTIME_COARSE: 3 -> 2"):
            self.assertIn(needle, block)
        self.assertNotEqual(record["code"], "identical")  # every basetime moved 8 bytes
        self.assertTrue(record["vdso32"]["code"], record["vdso32"])  # in i386's too
        self.assertNotEqual(record["vdso32"]["code"], "identical")

    def test_a_field_added_is_timed_on_32_bit_too(self):
        """Natively, the field's review times the vdso32 after the 64-bit
        rows: a row per quick clock, before and after of the two trees' i386
        variants as 32-bit processes, each with a verdict or why not; the
        block's compact line says it. Any verdict: a few rounds of live
        timing."""
        if self.native32:
            self.skipTest(f"vdso32 is timed natively only: {self.native32}")
        _, _, out, err = self.results["offs_boot"]
        letter, record = self.review("offs_boot", i386=True)
        t = record["vdso32"]["timed"]
        self.assertIsNone(t["why"], t)
        self.assertEqual("natively", t["how"])
        self.assertIn(t["build"], ("image", "always"))
        self.assertEqual(ROWS, sorted(r["clock"] for r in t["rows"]))
        for r in t["rows"]:
            self.assertEqual("hot", r["mode"])
            self.assertGreater(r["before"], 0, r)
            self.assertGreater(r["after"], 0, r)
        self.assertRegex(" ".join(t["variants"]),
                         rf"^kernel:patch-review-before\+\w+\+{t['build']} "
                         rf"kernel:patch-review-after\+\w+\+{t['build']}$")
        self.assertGreater(t["rounds"], 0)
        # the rounds ran as i386's: the i386 harness (an ELF32 i386 file),
        # its rows printed
        with open(t["harness"], "rb") as f:
            head = f.read(20)
        self.assertEqual((b"\x7fELF\x01", 3), (head[:5], int.from_bytes(head[18:20], "little")),
                         t["harness"])  # ELFCLASS32, EM_386
        self.assertIn("patch-review: vdso32: timing the i386 variants natively", err)
        self.assertIn(f"vdso32 time (i386, natively, hot, +{t['build']}): ", out)
        self.assertTrue(any(x.startswith(f"vdso32 time (i386, natively, hot, +{t['build']}): ")
                            for x in letter), letter)

    def test_a_patch_that_breaks_only_vdso32(self):
        """The 64-bit image builds (the review is measured on kbuild's
        images), the 32-bit one does not link: WRONG first, vdso32 and
        kbuild's error named, the libgcc calls, nothing verified or timed."""
        out_dir, rc, out, err = self.results["u64_div"]
        self.assertEqual(rc, 1, err[-3000:] + out[-3000:])
        letter, record = outputs(out_dir)
        self.assertLessEqual(len(letter), 40, letter)
        self.assertLessEqual(max(map(len, letter)), 72, letter)
        self.assertEqual("WRONG: the patched tree's vdso32 (the 32-bit vDSO) does not build; "
                         "do not post", " ".join(" ".join(letter[:2]).split()))
        v32 = record["vdso32"]
        self.assertEqual({"before": True, "after": False}, v32["built"], v32)
        self.assertTrue(v32["broken"])
        self.assertRegex(v32["error"], r"vdso32\.so\.dbg: undefined symbols found .*__udivdi3")
        text = " ".join(" ".join(letter).split())
        self.assertIn("vdso32: the patched tree's does NOT build: arch/x86/entry/vdso/"
                      "vdso32.so.dbg: undefined symbols found", text)
        self.assertIn("vdso32 verify and time: not run: the patched tree's vdso32 does not "
                      "build", text)
        self.assertEqual("image", record["build"])  # the 64-bit image was made
        self.assertEqual([], record["rows"])
        self.assertNotIn("patch-review: verify after", err)

    @unittest.skipIf(cross_run_missing("i386"), cross_run_missing("i386"))
    def test_a_patch_wrong_only_on_32_bit(self):
        """x86's vdso_calc_ns() with its delta in an unsigned long: x86-64's
        code unchanged, i386's delta * mult a 32-bit multiply. Both vDSOs
        build and check, the 64-bit verify passes; verify --arch i386 of the
        patched tree's i386 variants fails: WRONG first, the failure named,
        the tree's PASS, nothing timed."""
        out_dir, rc, out, err = self.results["long_delta"]
        self.assertEqual(rc, 1, err[-3000:] + out[-3000:])
        letter, record = outputs(out_dir)
        self.assertLessEqual(len(letter), 40, letter)
        self.assertLessEqual(max(map(len, letter)), 72, letter)
        self.assertEqual("WRONG: the patched tree's vdso32 (the 32-bit vDSO) fails verify "
                         "--arch i386; do not post", " ".join(" ".join(letter[:2]).split()))
        v32 = record["vdso32"]
        self.assertEqual({"before": True, "after": True}, v32["built"], v32)
        self.assertTrue(v32["broken"] and v32["check"]["after"]["ok"], v32)
        self.assertRegex(v32["verify"]["failed"],
                         r"^kernel:patch-review-after\+fake\+always: exact: ")
        self.assertIsNone(v32["verify"]["before_failed"])
        text = " ".join(" ".join(letter).split())
        self.assertRegex(text, r"vdso32 verify --arch i386 \((under qemu-i386\S* \S+|natively)"
                               r"\): the patched tree FAIL \(fake\+always, fake\+image\): "
                               r"exact: .*, the tree PASS \(fake\+always, fake\+image\)")
        self.assertEqual(["PASS", "PASS"], [r["status"] for r in
                                            v32["verify"]["records"]["before"].values()])
        self.assertEqual("image", record["build"])
        self.assertEqual([], record["rows"])
        # the 64-bit verify ran, and passes: the patch is wrong on 32-bit alone
        self.assertIn("patch-review: verify after", err)
        self.assertRegex(text, r"verify, before and after: PASS")

    def test_the_second_waited_and_said_so(self):
        every = list(self.results.values())
        waited = [err for _, _, _, err in every if WAITED in err]
        self.assertEqual(len(waited), len(every) - 1, [e[-2000:] for _, _, _, e in every])

    def test_the_table_is_empty_after(self):
        self.assertEqual(store.read_table(), {})
        _, _, out, _ = self.results["offs_boot"]
        self.assertIn("-- for the cover letter", out)

    def test_a_hostile_git_neither_hangs_nor_is_recorded(self):
        tree = unpatched_tree(Path(self.tmp.name, "tree"))
        self.assertIsNotNone(tree, "the reviews left no unpatched tree in the cache")
        git = tree / ".git"
        git.mkdir()
        (git / "HEAD").write_text("ref: refs/kmsg\n")
        os.symlink("/proc", git / "refs")
        out_dir = os.path.join(self.tmp.name, "hostile")
        rc, out, err = finished(start(out_dir, "--source", str(tree), "--patch", TORN_612,
                                      "--no-i386"))
        self.assertEqual(rc, 1, err[-3000:] + out[-3000:])  # the torn patch: WRONG
        letter, record = outputs(out_dir)
        self.check_torn(out, err, letter, record)
        self.assertIsNone(record["commit"])
        self.assertEqual(record["commit_why"], ".git/refs: is a symbolic link, not a folder")
        self.assertIn("git: the commit was not read: .git/refs: is a symbolic link", out)
        self.assertIn("(git commit not read)", "\n".join(letter))
        self.assertEqual(os.readlink(git / "refs"), "/proc")
        self.assertEqual(sorted(os.listdir(git)), ["HEAD", "refs"])
        self.assertEqual(store.read_table(), {})


    def check_torn(self, out, err, letter, record):
        """The torn patch's block: WRONG, the torn read and the nearest right
        answer named, the tree before it PASS, nothing timed."""
        self.assertIn("-- for the cover letter", out)
        self.assertEqual(letter[0], "WRONG: the patched tree fails verify; do not post")
        text = "\n".join(letter)
        self.assertRegex(text, r"verify \(after\): FAIL: concurrency: torn read")
        self.assertRegex(text, r"nearest is\s+-?\d+\s+(ns|us|s)\s+off")
        self.assertRegex(text, r"verify \(before\): PASS")
        self.assertNotIn("ns/call", text)  # a wrong patch is not timed: no table, no legend
        self.assertIn("Compiler: gcc", text)
        self.assertLessEqual(len(letter), 40)
        self.assertLessEqual(max(map(len, letter)), 72)
        self.assertTrue(record["compiler_version"])
        self.assertEqual(record["rows"], [])
        self.assertIn("patch-review: verify after", err)  # progress on stderr


if __name__ == "__main__":
    unittest.main()
