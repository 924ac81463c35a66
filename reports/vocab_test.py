"""The vocabulary: each name parsed and written one way, one failure (BadName)."""

import unittest

from reports import run_table, vocab


class BenchmarkNameTest(unittest.TestCase):
    def test_parse_and_format_round_trip(self):
        for name, key in (("sys/vdso/monotonic/hot/cpu0", ("sys/vdso", "monotonic", "hot", 0)),
                          ("generic_5_3+rdtscp+always/tai/cold-l2/cpu12",
                           ("generic_5_3+rdtscp+always", "tai", "cold-l2", 12)),
                          ("floor/empty/none/hot/cpu3", ("floor/empty", "none", "hot", 3))):
            self.assertEqual(vocab.parse_benchmark(name), key)
            self.assertEqual(vocab.benchmark(*key), name)
            self.assertEqual(vocab.subject(name), key[0])

    def test_one_failure_for_every_bad_name(self):
        for name in ("no/cpu/here", "a/b/c/cpu", "a/b/c/cpux1", "a//c/cpu1", "/b/c/cpu1",
                     "a/b/c/cpu1/", "monotonic/hot/cpu1", "a/b/c/cpu\u0661", ""):
            with self.subTest(name=name):
                with self.assertRaisesRegex(vocab.BadName, "is not <variant>/<clock>/<mode>"):
                    vocab.parse_benchmark(name)
                # the table's reader shows such a name ungrouped instead
                self.assertIsNone(run_table.split_name(name))

    def test_group(self):
        self.assertEqual(vocab.parse_group("monotonic/hot/cpu1"), ("monotonic", "hot", 1))
        self.assertEqual(vocab.group("tai", "cold", 7), "tai/cold/cpu7")
        for key in ("monotonic/hot", "monotonic/hot/1", "a/monotonic/hot/cpu1"):
            with self.assertRaises(vocab.BadName):
                vocab.parse_group(key)


class VariantNameTest(unittest.TestCase):
    def test_split_and_join(self):
        self.assertEqual(vocab.split_variant("x86_gtod+lfence_rdtsc+auto"),
                         ("x86_gtod", "lfence_rdtsc", "auto"))
        self.assertEqual(vocab.variant("x86_gtod", "fake", "auto"), "x86_gtod+fake+auto")
        self.assertEqual(vocab.variant("*", "rdtscp"), "*+rdtscp+always")
        for name in ("x86_gtod", "a+b", "a+b+c+d", "a++c"):
            with self.assertRaisesRegex(vocab.BadName, "LAYOUT\\+COUNTER\\+INLINE"):
                vocab.split_variant(name)

    def test_layout_of(self):
        self.assertEqual(vocab.layout_of("kernel:6.12+rdtscp+always"), "kernel:6.12")
        self.assertEqual(vocab.layout_of("sys/vdso"), "sys/vdso")


if __name__ == "__main__":
    unittest.main()
