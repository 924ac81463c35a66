"""review_parts: the read path's disassembly compared the same way for
x86-64's AT&T syntax and aarch64's, on made-up objdump text (no objdump)."""

import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.recipes import review_parts

AARCH64 = """\

reader.o:     file format elf64-littleaarch64

Disassembly of section .text.kernel_a__isb_cntvct_dep__always__clock_gettime:

0000000000000000 <kernel_a__isb_cntvct_dep__always__clock_gettime>:
   0:\tstp\tx29, x30, [sp, #-48]!
   4:\tldr\tx1, [x0, #{off}]
   8:\tmov\tw0, #0x5                   \t// #5
   c:\tb.ne\t40 <kernel_a__isb_cntvct_dep__always__clock_gettime+0x40>  // b.any

0000000000000000 <kernel_a__isb_cntvct_dep__always__update_vsyscall>:
   0:\tret
"""
X86 = """\
0000000000000000 <kernel_{name}__rdtscp__always__clock_gettime>:
   0:\tmov    0x38(%rdi),%rax
   4:\tlea    0x0(%rip),%rdx        # b <kernel_{name}__rdtscp__always__clock_gettime+0xb>
"""


def disassembled(text, arch_name):
    with tempfile.TemporaryDirectory() as d:
        obj = Path(d) / "reader.o"
        done = subprocess.CompletedProcess([], 0, stdout=text, stderr="")
        with mock.patch.object(review_parts.lifecycle, "run", return_value=done):
            return review_parts.disassembly(obj, "objdump", arch_name)


class DisassemblyTest(unittest.TestCase):
    def test_aarch64_immediates_and_offsets_stay(self):
        got, why = disassembled(AARCH64.format(off=56), "arm64")
        self.assertIsNone(why)
        self.assertEqual(got, {"clock_gettime": ["stp x29, x30, [sp, #-48]!",
                                                 "ldr x1, [x0, #56]", "mov w0, #0x5",
                                                 "b.ne 40"]})
        # a field that moved is a difference, not the same code
        moved, _ = disassembled(AARCH64.format(off=64), "arm64")
        self.assertEqual(review_parts.code_comparison(got, moved),
                         ["clock_gettime: 1 of 4 instructions differ"])
        self.assertEqual(review_parts.code_comparison(got, disassembled(
            AARCH64.format(off=56), "arm64")[0]), "identical")

    def test_x86_comments_and_names_go(self):
        a, _ = disassembled(X86.format(name="before"), "x86_64")
        b, _ = disassembled(X86.format(name="after"), "x86_64")
        self.assertEqual(a, {"clock_gettime": ["mov 0x38(%rdi),%rax", "lea 0x0(%rip),%rdx"]})
        self.assertEqual(review_parts.code_comparison(a, b), "identical")

    def test_objdump_failing_is_a_reason(self):
        with mock.patch.object(review_parts.lifecycle, "run", side_effect=OSError(2, "No such file")):
            self.assertEqual(review_parts.disassembly(Path("x.o"), "aarch64-linux-gnu-objdump",
                                                      "arm64"),
                             (None, "aarch64-linux-gnu-objdump: No such file"))


class VerdictTest(unittest.TestCase):
    """verify's record of a tree that reads the counter itself (its own
    RDTSCP) says so in the block's line, and how it was checked: from the
    record's fields (verify/verify_main.c), whatever the details say."""

    @staticmethod
    def record(counter, edges_skipped, itself=True):
        return {"status": "PASS", "reads_counter_itself": itself, "checks": [
            {"name": "exact", "ok": True, "skipped": False, "detail": "", "counter": counter,
             "starved": False},
            {"name": "edges", "ok": True, "skipped": edges_skipped, "detail": ""},
            {"name": "concurrency", "ok": True, "skipped": False, "detail": "",
             "counter": "real", "starved": False}]}

    def test_bracketed_trapped_and_plain(self):
        self.assertEqual(review_parts.verdict(self.record("bracketed", True)),
                         "PASS (exact, concurrency); the tree reads the counter itself and "
                         "this machine cannot trap it: exact values bracketed, edge cases "
                         "not checked")
        self.assertEqual(review_parts.verdict(self.record("trapped", False)),
                         "PASS (exact, edges, concurrency); the tree reads the counter "
                         "itself: checked through the trap")
        plain = self.record("fake", False, itself=False)
        self.assertEqual(review_parts.verdict(plain), "PASS (exact, edges, concurrency)")
        # a real-counter variant, trapped: not a tree reading the counter itself
        self.assertEqual(review_parts.verdict(self.record("trapped", False, itself=False)),
                         "PASS (exact, edges, concurrency)")

    def test_a_starved_check_is_no_verdict(self):
        rec = self.record("fake", False, itself=False)
        rec["status"] = "FAIL"
        self.assertTrue(review_parts.tore(rec))
        rec["checks"][2].update(ok=False, starved=True)
        self.assertFalse(review_parts.tore(rec))
        self.assertFalse(review_parts.judged(rec))


if __name__ == "__main__":
    unittest.main()
