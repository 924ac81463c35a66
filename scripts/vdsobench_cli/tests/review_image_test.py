"""Which build patch-review measures (recipes/review_image.py): the kbuild
images where both imports hold one, else the rebuilds, saying why; on an
imports table made here, nothing built."""

import unittest

from vdsobench_cli.kimport import store, vdso_image
from vdsobench_cli.recipes import review_image, review_parts
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

    def test_the_dwarf_writer_is_named(self):
        """Where the patched tree's update path could not be built, the line
        says its data page was the DWARF writer's; else it names no writer."""
        labels = {"b": "the tree", "a": "the patched tree"}
        text = review_image.measured(review_image.IMAGE, None,
                                     {"b": {"writer": "tree"}, "a": {"writer": "dwarf"}}, labels)
        self.assertTrue(text.startswith(review_image.MEASURED_IMAGE), text)
        self.assertIn("the data page of the patched tree written by the DWARF writer", text)
        self.assertNotIn("DWARF", review_image.measured(review_image.IMAGE, None,
                                                        {"b": {}, "a": {}}, labels))

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



class RelocatedTest(unittest.TestCase):
    """An image's code compared by the symbols its addresses resolve to
    (objdump's lines as listing() keeps them): a function that only moved is
    identical, a field that moved is not."""

    BEFORE = {"getres": [
        (0xf90, "endbr64"),
        (0xf94, "ja     fea <__vdso_clock_getres+0x5a>"),
        (0xf96, "lea    -0x4f27(%rip),%rdx        # ffffffffffffc080 <vvar__vdso_data>"),
        (0xf9d, "mov    0xf0(%rdx),%eax"),
        (0xfa0, "call   7e0 <__arch_get_hw_counter>"),
        (0xfa5, "movaps -0xe6b(%rip),%xmm5        # 560 <CONSTANTS>")]}

    def moved(self, by, field="0xf0"):
        out = []
        for addr, text in self.BEFORE["getres"]:
            text = text.replace("fea <", f"{0xfea + by:x} <").replace("7e0 <", f"{0x7e0 + by:x} <")
            text = text.replace("-0x4f27", f"-{0x4f27 + by:#x}").replace("-0xe6b", f"-{0xe6b + by:#x}")
            out.append((addr + by, text.replace("0xf0(", f"{field}(")))
        return {"getres": out}

    def test_code_that_only_moved_is_identical(self):
        a, b = review_parts.relocated(self.BEFORE), review_parts.relocated(self.moved(0x10))
        self.assertEqual(review_parts.code_comparison(a, b), "identical")
        self.assertEqual(a["getres"][1:], ["ja <__vdso_clock_getres+0x5a>",
                                           "lea <vvar__vdso_data>(%rip),%rdx",
                                           "mov 0xf0(%rdx),%eax",
                                           "call <__arch_get_hw_counter>",
                                           "movaps <CONSTANTS>(%rip),%xmm5"])
        # what the rebuilds' comparison (stripped) would have said of it
        self.assertNotEqual(review_parts.code_comparison(
            review_parts.stripped(self.BEFORE), review_parts.stripped(self.moved(0x10))),
            "identical")

    def test_a_field_that_moved_differs(self):
        a = review_parts.relocated(self.BEFORE)
        b = review_parts.relocated(self.moved(0x10, field="0xf8"))
        self.assertEqual(review_parts.code_comparison(a, b),
                         ["getres: 1 of 6 instructions differ"])
        other = dict(self.BEFORE)
        other["getres"] = [(x, t.replace("<vvar__vdso_data>", "<vvar__vdso_data+0x8>"))
                           for x, t in self.BEFORE["getres"]]
        self.assertEqual(review_parts.code_comparison(a, review_parts.relocated(other)),
                         ["getres: 1 of 6 instructions differ"])


if __name__ == "__main__":
    unittest.main()
