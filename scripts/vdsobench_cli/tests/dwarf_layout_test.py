"""dwarf_layout.py on pahole's recorded reading of Debian's 6.1, 6.12 and 7.3
kbuild images (kernel_import/testdata/dwarf/*.pahole, `pahole FILE; pahole -C
vdso_clock_mode FILE` of each vdso64.so.dbg): the layout the DWARF writer
writes by, its field table against the probe's offsetof() of the tree's own
struct (*.probe.json, recorded from each import's kimport.json), the header;
and hostile DWARF, each refused with one phrase. No tree, no pahole run:
the byte-for-byte agreement with the trees' own writers is the long tier's
(dwarf_agree_test.py)."""
import json
import re
import unittest

from vdsobench_cli.kimport import dwarf_layout
from vdsobench_cli.tests.support import KERNEL_TESTDATA

DATA = KERNEL_TESTDATA / "dwarf"
# (recorded name, data offset in the image's page, family, data size, max_cycles, aux)
IMAGES = (("debian-6.1", 128, "vdso_data", 480, False, 0),
          ("debian-6.12", 128, "vdso_data", 496, True, 0),
          ("debian-7.3", 0, "vdso_time_data", 2368, True, 8))


def recorded(name):
    return (DATA / f"{name}.pahole").read_text()


def probe_fields(name):
    return [(f["name"], f["offset"], f["size"])
            for f in json.loads((DATA / f"{name}.probe.json").read_text())]


def refused(test, text, phrase, offset=128):
    with test.assertRaises(dwarf_layout.LayoutError) as cm:
        dwarf_layout.of_text(text, offset)
    test.assertIn(phrase, str(cm.exception))
    test.assertEqual(len(str(cm.exception).splitlines()), 1)


class Recorded(unittest.TestCase):
    def test_each_image_layout(self):
        for name, offset, family, size, max_cycles, aux in IMAGES:
            with self.subTest(name):
                lay = dwarf_layout.of_text(recorded(name), offset)
                self.assertEqual((lay.family, lay.data_size, lay.clocks, lay.aux_clocks),
                                 (family, size, 2, aux))
                self.assertEqual(lay.members["max_cycles"] >= 0, max_cycles)
                self.assertEqual(lay.modes, {"NONE": 0, "TSC": 1, "PVCLOCK": 2, "HVCLOCK": 3,
                                             "TIMENS": 0x7fffffff})
                self.assertEqual((lay.bases, lay.ts, lay.ns), (12, (0, 8), (0, 8)))

    def test_fields_are_the_probes(self):
        """The table the DWARF writer hands the variant is, entry for entry,
        what the probe measured with offsetof() on the tree's own struct."""
        for name, offset, *_ in IMAGES:
            with self.subTest(name):
                lay = dwarf_layout.of_text(recorded(name), offset)
                self.assertEqual(dwarf_layout.fields(lay), probe_fields(name))

    def test_header(self):
        lay = dwarf_layout.of_text(recorded("debian-7.3"), 0)
        text = dwarf_layout.c_header(lay, "39 fields of struct vdso_time_data, by pahole")
        for line in ("KDW_FAMILY_TIME_DATA (1)", "KDW_DATA_SIZE (2368)", "KDW_AUX_AT (464)",
                     "KDW_MAX_CYCLES (16)", "KDW_TZ_MINUTESWEST (2320)",
                     "KDW_MODE_TIMENS (2147483647)"):
            self.assertIn(f"#define {line}\n", text)
        self.assertIn('{ "clock_data[CS_RAW].basetime[CLOCK_MONOTONIC_RAW]", 336, 16 }', text)
        old = dwarf_layout.c_header(dwarf_layout.of_text(recorded("debian-6.1"), 128), "x")
        self.assertIn("#define KDW_MAX_CYCLES (-1)\n", old)  # none: not written
        # nothing but numbers and the table's names reaches the C
        for line in old.splitlines() + text.splitlines():
            self.assertRegex(line, r'^(#define KDW_\w+ \(-?\d+\)|#define KDW_\w+( \d+| \\)|'
                                   r'\t\{ "[][\w.]+", \d+, \d+ \}, \\|/\*.*\*/|#\w+.*|)$')


class Hostile(unittest.TestCase):
    """What a hostile (or merely other) image's DWARF may say: each is one
    phrase, before anything is compiled."""

    def setUp(self):
        self.text = recorded("debian-6.12")
        self.new = recorded("debian-7.3")

    def edit(self, old, new, text=None):
        text = self.text if text is None else text
        self.assertIn(old, text)
        return text.replace(old, new, 1)

    def test_a_member_past_its_struct(self):
        refused(self, self.edit("u32                        shift;                /*    36     4 */",
                                "u32                        shift;                /*   300     4 */"),
                "past struct vdso_data")

    def test_a_member_of_another_size(self):
        refused(self, self.edit("u64                        mask;                 /*    24     8 */",
                                "u32                        mask;                 /*    24     4 */"),
                "vdso_data.mask is 4 bytes, not 8")

    def test_members_that_overlap(self):
        refused(self, self.edit("u32                        mult;                 /*    32     4 */",
                                "u32                        mult;                 /*    26     4 */"),
                "overlap")

    def test_a_missing_member(self):
        refused(self, re.sub(r"\n\s*u32\s+seq;[^\n]*", "", self.text), "has no seq")

    def test_too_few_bases(self):
        refused(self, self.edit("struct vdso_timestamp basetime[12];      /*    40   192 */",
                                "struct vdso_timestamp basetime[8];       /*    40   128 */"),
                "VDSO_BASES")

    def test_data_too_big_for_its_page(self):
        text = self.edit("/* size: 2368, cachelines: 37, members: 7 */",
                         "/* size: 4000, cachelines: 63, members: 7 */", self.new)
        refused(self, text, "does not fit its page past offset 128", offset=128)
        refused(self, self.new, "data offset 64", offset=64)

    def test_an_array_that_does_not_fit(self):
        refused(self, self.edit("struct vdso_clock          aux_clock_data[8];    /*   464  1856 */",
                                "struct vdso_clock          aux_clock_data[80];   /*   464 18560 */",
                                self.new), "aux_clock_data[80]")

    def test_no_data_struct(self):
        refused(self, self.text.replace("struct vdso_data {", "struct vdso_other {"),
                "no struct vdso_data or vdso_time_data")

    def test_no_clock_modes(self):
        refused(self, self.edit("VDSO_CLOCKMODE_TIMENS", "VDSO_CLOCKMODE_OTHER"),
                "no VDSO_CLOCKMODE_TIMENS")

    def test_a_struct_twice_differently(self):
        twice = self.text + self.text.replace("/* size: 248,", "/* size: 256,")
        refused(self, twice, "defined twice")

    def test_too_much_output(self):
        refused(self, "x" * (dwarf_layout.OUTPUT_LIMIT + 1), "over")


if __name__ == "__main__":
    unittest.main()
