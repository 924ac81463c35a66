"""How an image's read path reads the counter (recipes/counter_read.py) and
the line that names a change (the block's: reports/cover_letter_test.py):
the kinds on objdump's texts, then an object compiled here and disassembled
by the real objdump, its alternative's site given as the image check would
give it."""

import platform
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import tools
from vdsobench_cli.recipes import counter_read
from vdsobench_cli.recipes.review_parts import listing


ORDERED = counter_read.ORDERED
SOURCE = r"""
void do_hres(void) { asm volatile("rdtsc; nop; nop; nop" ::: "eax", "edx"); }
void own(void) { asm volatile("rdtscp" ::: "eax", "ecx", "edx"); }
void fenced(void) { asm volatile("lfence; rdtsc" ::: "eax", "edx"); }
void unordered(void) { asm volatile("rdtsc" ::: "eax", "edx"); }
int none(int x) { return x + 1; }
asm(".pushsection .altinstr_replacement, \"ax\"\n lfence; rdtsc\n rdtscp\n .popsection");
"""


class KindTest(unittest.TestCase):
    def test_each_read(self):
        cases = [("rdtscp", None, False, "rdtscp"),
                 ("rdtsc", "lfence", False, "lfence; rdtsc"),
                 ("rdtsc", "mfence", False, "mfence; rdtsc"),
                 ("rdtsc", "mov %rax,%rdx", False, "rdtsc"),
                 ("rdtsc", "lfence", True, ORDERED),  # a slot, whatever precedes it
                 ("rdpid %rax", None, False, None),
                 ("mov 0x8(%rdi),%eax", None, False, None),
                 ("", None, False, None)]
        for text, previous, site, want in cases:
            with self.subTest(text=text, previous=previous, site=site):
                self.assertEqual(counter_read.kind(text, previous, site), want)


class ChangeTest(unittest.TestCase):
    def test_the_same_kinds_are_no_change(self):
        before = {"__cvdso_clock_gettime_common": [ORDERED, ORDERED]}
        self.assertIsNone(counter_read.change(before, before))
        # do_hres no longer inlined: the read moved, it did not change
        self.assertIsNone(counter_read.change(before, {"do_hres": [ORDERED]}))

    def test_a_new_read_is_named_with_its_functions(self):
        before = {"do_hres": [ORDERED], "vread_pvclock": [ORDERED]}
        after = {"do_hres": ["rdtscp"], "vread_pvclock": [ORDERED]}
        self.assertEqual(counter_read.change(before, after),
                         "rdtsc_ordered() -> rdtsc_ordered() + rdtscp (do_hres)")
        self.assertEqual(counter_read.change(after, before),
                         "rdtsc_ordered() + rdtscp -> rdtsc_ordered()")  # nothing new
        self.assertEqual(counter_read.change({}, {"x.constprop.0": ["rdtsc"]}),
                         "none -> rdtsc (x)")
        self.assertEqual(counter_read.change({"x": ["rdtsc"]}, {}), "rdtsc -> none")


@unittest.skipUnless(platform.machine() == "x86_64", "x86-64's instructions, compiled here")
@unittest.skipUnless(tools.have("gcc") and tools.have("objdump"), "needs gcc and objdump")
class ObjectTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.obj = Path(tmp.name, "reads.o")
        src = self.obj.with_suffix(".c")
        src.write_text(SOURCE)
        subprocess.run(["gcc", "-O2", "-c", "-o", str(self.obj), str(src)], check=True)

    def test_reads_of_an_object_with_one_site(self):
        code, why = listing(self.obj)
        self.assertIsNone(why)
        self.assertNotIn(".altinstr_replacement", code)  # a section's label, no function
        [site] = [a for a, t in code["do_hres"] if t.split()[0] == "rdtsc"]
        with mock.patch.object(counter_read.vdso_image, "parse",
                               return_value={"sites": [site]}):
            got, why = counter_read.reads(self.obj)
        self.assertIsNone(why)
        self.assertEqual(got, {"do_hres": [ORDERED], "own": ["rdtscp"],
                               "fenced": ["lfence; rdtsc"], "unordered": ["rdtsc"]})

    def test_an_image_the_check_refuses_says_why(self):
        with mock.patch.object(counter_read.vdso_image, "parse",
                               side_effect=counter_read.vdso_image.ImageError("no slot")):
            got, why = counter_read.reads(self.obj)
        self.assertIsNone(got)
        self.assertIn("no slot", why)
        self.assertEqual(counter_read.reads(None), (None, "no kbuild image"))


if __name__ == "__main__":
    unittest.main()
