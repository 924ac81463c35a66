"""code_metrics: function sizes from objdump text of both encodings, the read
path without the writer's functions, the instruction log counted as it
streams, and recipes under emulation (inline only; the others refused before
anything is built). A live run under qemu-user, where the cross toolchain
is installed, checks that a call executes a whole number of instructions."""

import io
import os
import shutil
import unittest
from unittest import mock

from vdsobench_cli.cli import arch
from vdsobench_cli.measure import code_metrics
from vdsobench_cli.recipes import recipes
from vdsobench_cli.tests.support import NESTED, vdsobench

AARCH64 = """
generic_5_3.o:     file format elf64-littleaarch64


Disassembly of section .text.do_hres:

0000000000000000 <do_hres>:
   0:\td503233f \tpaciasp
   4:\ta9bd7bfd \tstp\tx29, x30, [sp, #-48]!
   8:\td65f03c0 \tret

Disassembly of section .text.g__update_vsyscall:

0000000000000000 <g__update_vsyscall>:
   0:\td503233f \tpaciasp
   4:\td65f03c0 \tret

Disassembly of section .text.g__clock_gettime:

0000000000000000 <g__clock_gettime>:
   0:\t94000000 \tbl\t0 <do_hres>
   4:\td65f03c0 \tret
"""

X86 = """
0000000000000000 <g__clock_gettime>:
   0:\t55                   \tpush   %rbp
   1:\t48 89 e5             \tmov    %rsp,%rbp
   4:\t0f 01 f9             \trdtscp
   7:\tc3                   \tret
"""


class ObjdumpTest(unittest.TestCase):
    def test_aarch64(self):
        self.assertEqual(code_metrics.parse_objdump(AARCH64),
                         {"do_hres": (12, 3), "g__update_vsyscall": (8, 2),
                          "g__clock_gettime": (8, 2)})

    def test_x86_64_variable_length(self):
        self.assertEqual(code_metrics.parse_objdump(X86), {"g__clock_gettime": (8, 4)})

    def test_the_writer_is_not_the_read_path(self):
        for name in ("g__update_vsyscall", "g__update_vsyscall_tz", "generic_vvar_init",
                     "vdso_time_update_aux", "generic_time_data_init"):
            self.assertTrue(code_metrics.NOT_READ_PATH.search(name), name)
        for name in ("do_hres", "g__clock_gettime", "g__time", "do_coarse"):
            self.assertFalse(code_metrics.NOT_READ_PATH.search(name), name)

    def test_binutils_of_the_cross_build(self):
        self.addCleanup(arch.use, None)
        arch.use(None)
        self.assertEqual(code_metrics.tool("objdump"), "/usr/bin/objdump")
        if arch.host() == "x86_64":
            arch.use("arm64")
            self.assertEqual(code_metrics.tool("objdump"),
                             f"{arch.CROSS_BIN}/aarch64-linux-gnu-objdump")


class LogTest(unittest.TestCase):
    def test_counts_trace_lines_across_chunks(self):
        log = b"".join(b"Trace 0: 0x7f00 [%016x/0000005502840000/00000001/00000201] \n" % i
                       for i in range(50000))
        log += b"some other line\nTrace 0: 0x1 [x]\n"
        self.assertEqual(code_metrics.count_log_lines(io.BytesIO(log)), 50001)
        self.assertEqual(code_metrics.count_log_lines(io.BytesIO(b"")), 0)

    def test_every_split_of_a_line_counts_once(self):
        # a pipe hands the log over in pieces of any size: wherever a piece
        # ends, inside "\nTrace " or right after it, each line counts once
        log = b"Trace 0: 0x1 [a]\nTrace 0: 0x2 [b]\nother\nTrace 0: 0x3 [c]\n"

        class Pieces:
            def __init__(self, first):
                self.pieces = [log[:first], log[first:]]

            def read(self, _):
                return self.pieces.pop(0) if self.pieces else b""

        for first in range(1, len(log)):
            with self.subTest(first=first):
                self.assertEqual(code_metrics.count_log_lines(Pieces(first)), 3)


class EmulatedRecipesTest(unittest.TestCase):
    def setUp(self):
        self.addCleanup(arch.use, None)

    @unittest.skipUnless(arch.host() == "x86_64", "arm64 is emulated on x86-64 hosts")
    def test_only_the_code_comparisons(self):
        self.assertEqual(recipes.EMULATED, ("inline",))
        with mock.patch.object(recipes, "raw_vdso") as timed:
            rc, _, err = vdsobench("recipe", "raw-vdso", "--arch", "arm64", "--quick")
        self.assertEqual(rc, 2)
        self.assertIn("recipe raw-vdso --arch arm64", err)
        self.assertIn("inline", err)
        timed.assert_not_called()


def cross_tools():
    return (arch.host() == "x86_64" and shutil.which("aarch64-linux-gnu-gcc")
            and shutil.which("qemu-aarch64-static"))


@unittest.skipUnless(cross_tools(), "needs the arm64 group (scripts/vdsobench setup --arch arm64)")
# the copy runs the x86-64 suite: its arm64 build (a whole second compile
# there, 114 s of CI) is the arm64 group's, which the copy does not run
@unittest.skipIf(os.environ.get(NESTED), "inside the new-variant test's copy of the project")
class LiveTraceTest(unittest.TestCase):
    def setUp(self):
        self.addCleanup(arch.use, None)
        arch.use("arm64")

    def test_whole_instructions_per_call(self):
        # a count that moved between the two runs would leave a fraction of
        # an instruction; 800 calls apart, at the same number of digits
        r = code_metrics.executed_per_call(["generic_6_10+isb_cntvct_dep+always"],
                                           ["monotonic"], jobs=2, iterations=(100, 900))[0]
        self.assertEqual(r["measured_as"], "generic_6_10+fake+always")
        self.assertEqual(r["instructions_per_call"], int(r["instructions_per_call"]))
        self.assertEqual(r["net_instructions_per_call"], int(r["net_instructions_per_call"]))
        self.assertGreater(r["net_instructions_per_call"], 10)
        self.assertLess(r["net_instructions_per_call"], r["instructions_per_call"])

if __name__ == "__main__":
    unittest.main()
