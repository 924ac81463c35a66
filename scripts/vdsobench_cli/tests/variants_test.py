import unittest

from vdsobench_cli.cli import variants
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.tests.support import LIST_JSON, VARIANTS


def names(vs):
    return [v["name"] for v in vs]


class SelectTest(unittest.TestCase):
    def test_exact(self):
        self.assertEqual(names(variants.select(VARIANTS, ["generic_5_3+rdtsc+always"])),
                         ["generic_5_3+rdtsc+always"])

    def test_glob_keeps_list_order_and_dedupes(self):
        got = variants.select(VARIANTS, ["*+rdtscp+*", "generic_*", "x86_4_19+rdtscp+always"])
        self.assertEqual(names(got), ["generic_5_3+rdtscp+always", "generic_5_3+rdtsc+always",
                                      "x86_4_19+rdtscp+always"])

    def test_no_match_names_the_pattern_and_the_valid_axes(self):
        with self.assertRaises(UsageError) as cm:
            variants.select(VARIANTS, ["generic_*", "xyz"], "--variants")
        msg = str(cm.exception)
        self.assertIn("--variants: 'xyz' matches no variant", msg)
        self.assertIn("layouts: generic_5_3, x86_4_19, torn_read", msg)
        self.assertIn("counters: rdtscp, rdtsc, fake", msg)
        self.assertIn("inline: always", msg)
        self.assertNotIn("\n", msg)

    def test_split_patterns(self):
        self.assertEqual(variants.split_patterns(["a,b", " c ", ",,"]), ["a", "b", "c"])


class ParseTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(names(variants.parse(LIST_JSON)), names(VARIANTS))

    def test_malformed(self):
        for text in ("", "{", "{}", "[1]", '[{"nom": "x"}]'):
            with self.subTest(text=text), self.assertRaises(Failure):
                variants.parse(text)


if __name__ == "__main__":
    unittest.main()
