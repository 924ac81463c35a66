"""Which build patch-review measures (recipes/review_image.py): the kbuild
images where both imports hold one, else the rebuilds, saying why; on an
imports table made here, nothing built."""

import unittest

from vdsobench_cli.kimport import store, vdso_image
from vdsobench_cli.recipes import review_image
from vdsobench_cli.tests.support import ImportsDir

KBUILD = {"identity": {"kbuild": {"line": "gcc -O2 ..."}}}


class ChosenTest(unittest.TestCase):
    def setUp(self):
        self.dir = ImportsDir()
        self.addCleanup(self.dir.close)

    def imported(self, key, image):
        if image:
            path = store.trees_dir() / key / vdso_image.STORED
            path.parent.mkdir(parents=True)
            path.write_bytes(b"\x7fELF")
        return dict(KBUILD, key=key)

    def test_both_images_are_measured(self):
        table = {"b": self.imported("kb", True), "a": self.imported("ka", True)}
        self.assertEqual(review_image.chosen(table, "b", "a"), (review_image.IMAGE, None))
        self.assertIn("kbuild's vDSO image", review_image.measured(review_image.IMAGE, None))

    def test_else_the_rebuilds_and_why(self):
        no_kbuild = {"key": "kn", "identity": {"kbuild": {"line": None}}}
        cases = [({"b": no_kbuild, "a": self.imported("ka", True)}, "kbuild did not run"),
                 ({"b": self.imported("kb", False), "a": self.imported("ka2", True)},
                  "the tree's kbuild made none"),
                 ({"b": self.imported("kb2", True), "a": self.imported("ka3", False)},
                  "of the patched tree")]
        for table, why in cases:
            with self.subTest(why=why):
                inline, said = review_image.chosen(table, "b", "a")
                self.assertEqual(inline, review_image.REBUILT)
                self.assertIn(why, said)
                text = review_image.measured(inline, said)
                self.assertTrue(text.startswith(review_image.MEASURED_REBUILT), text)
                self.assertIn(why, text)

    def test_the_read_path_of_an_image_missing_or_unreadable_says_why(self):
        # no image before (the code and the counter read both say so, nothing
        # raised), then an image objdump cannot read
        table = {"b": self.imported("kb", False), "a": self.imported("ka", True)}
        self.assertEqual(review_image.read_path(table, "b", "a"),
                         (None, "no kbuild image", {"why": "no kbuild image"}))
        table["b"] = self.imported("kb2", True)
        code, why, counter = review_image.read_path(table, "b", "a")
        self.assertIsNone(code)
        self.assertRegex(why, r"objdump -d vdso64\.so failed$")
        self.assertEqual(counter, {"why": why})


if __name__ == "__main__":
    unittest.main()
