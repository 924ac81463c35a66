import unittest

from vdsobench_cli.commands import listing
from vdsobench_cli.tests.support import VARIANTS


class TableTest(unittest.TestCase):
    def setUp(self):
        self.lines = listing.table(VARIANTS)

    def test_one_line_per_variant_and_a_total(self):
        self.assertEqual(len(self.lines), len(VARIANTS) + 1)
        self.assertEqual(self.lines[-1], "4 variants: 3 layouts x 3 counters x 1 inline")

    def test_row_content(self):
        first = self.lines[0].split()
        self.assertEqual(first[:4], ["generic_5_3+rdtscp+always", "generic_5_3", "rdtscp",
                                     "always"])
        self.assertIn("hres=realtime,monotonic,tai coarse=realtime_coarse,monotonic_coarse "
                      "raw=-", self.lines[0])
        self.assertIn("raw=monotonic_raw", self.lines[2])
        self.assertEqual(first[-1], "impls/layouts/generic_5_3.c")

    def test_known_bad_marker_only_on_known_bad(self):
        self.assertEqual([("KNOWN-BAD" in line) for line in self.lines[:-1]],
                         [False, False, False, True])

    def test_columns_aligned(self):
        starts = {line.index("impls/") for line in self.lines[:-1]}
        self.assertEqual(len(starts), 1)

    def test_empty(self):
        self.assertEqual(listing.table([]), ["0 variants: 0 layouts x 0 counters x 0 inline"])



class ReferencesTest(unittest.TestCase):
    def test_each_reference_says_what_it_measures(self):
        lines = listing.reference_lines(["sys/syscall", "floor/rdtscp", "floor/empty"], [])
        self.assertEqual(len(lines), 4)
        self.assertIn("syscall itself", lines[1])
        self.assertIn("rdtscp counter read alone", lines[2])
        self.assertIn("overhead", lines[3])

    def test_unavailable_reference_keeps_its_reason(self):
        lines = listing.reference_lines(
            ["sys/libc"], ["skipped sys/vdso: not available: AT_SYSINFO_EHDR is 0"])
        self.assertIn("sys/vdso", lines[2])
        self.assertIn("not available: AT_SYSINFO_EHDR is 0", lines[2])

    def test_the_time64_entry_is_not_a_counter(self):
        # the fallback for an unknown name is a floor's "counter read alone"
        lines = listing.reference_lines(["sys/vdso", "sys/vdso_gettime64"], [])
        self.assertIn("__vdso_clock_gettime64", lines[2])
        self.assertIn("--arch i386", lines[2])
        self.assertNotIn("counter read alone", lines[2])

    def test_the_time64_entry_keeps_its_reason(self):
        why = ("the vDSO has no __vdso_clock_gettime64 (LINUX_2.6): a kernel "
               "before 5.3")
        lines = listing.reference_lines(
            ["sys/vdso"], [f"skipped sys/vdso_gettime64: not available: {why}"])
        self.assertEqual(len(lines), 3)
        self.assertIn("__vdso_clock_gettime64 (64-bit time_t", lines[2])
        self.assertIn(f"(not available: {why})", lines[2])


if __name__ == "__main__":
    unittest.main()
