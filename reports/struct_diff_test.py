"""The data page's structs compared from (synthetic) pahole readings."""

import copy
import unittest

from reports import struct_diff


def member(offset, size, type_="u64", dims=()):
    return {"offset": offset, "size": size, "type": type_, "dims": list(dims)}


def structs_6_12():
    """vdso_data as Linux 6.12's include/vdso/datapage.h lays it out (shortened)."""
    return {
        "vdso_timestamp": {"size": 16, "members": {"sec": member(0, 8), "nsec": member(8, 8)}},
        "vdso_data": {"size": 240, "members": {
            "seq": member(0, 4, "u32"), "clock_mode": member(4, 4, "s32"),
            "cycle_last": member(8, 8), "max_cycles": member(16, 8), "mask": member(24, 8),
            "mult": member(32, 4, "u32"), "shift": member(36, 4, "u32"),
            "basetime": member(40, 192, "struct vdso_timestamp", (12,)),
            "hrtimer_res": member(232, 4, "u32"), "__unused": member(236, 4, "u32")}},
    }


def with_offs_boot():
    s = copy.deepcopy(structs_6_12())
    d = s["vdso_data"]
    d["members"]["offs_boot"] = member(40, 8)
    for name in ("basetime", "hrtimer_res", "__unused"):
        d["members"][name]["offset"] += 8
    d["size"] = 248
    return s


class StructDiffTest(unittest.TestCase):
    def test_flatten_expands_arrays_of_structs(self):
        f = struct_diff.flatten(structs_6_12(), "vdso_data")
        self.assertEqual(f["basetime[1].sec"], (56, 8))
        self.assertEqual(f["basetime[11].nsec"], (224, 8))
        self.assertEqual(f["mult"], (32, 4))

    def test_unchanged(self):
        self.assertEqual(struct_diff.diff(structs_6_12(), structs_6_12(), "vdso_data"),
                         ["struct vdso_data: unchanged (240 bytes, 4 lines)"])

    def test_added_field_growth_and_moves(self):
        out = struct_diff.diff(structs_6_12(), with_offs_boot(), "vdso_data", limit=4)
        self.assertEqual(out[0], "offs_boot: added at 40..47 (line 0)")
        self.assertEqual(out[-1], "struct vdso_data: 240 -> 248 bytes, 4 -> 4 lines")
        self.assertIn("23 more fields moved within their lines", out)
        short = struct_diff.diff(structs_6_12(), with_offs_boot(), "vdso_data", limit=2)
        self.assertIn("25 more fields changed", short)
        moved = [line for line in out if "->" in line and "line 0 -> 1" in line]
        self.assertTrue(moved, out)
        self.assertLessEqual(len(out), 6)
        for line in out:
            self.assertLessEqual(len(line), 70)

    def test_removed_and_missing(self):
        b = copy.deepcopy(structs_6_12())
        del b["vdso_data"]["members"]["mask"]
        out = struct_diff.diff(structs_6_12(), b, "vdso_data")
        self.assertIn("mask: removed (was at 24..31)", out)
        self.assertEqual(struct_diff.diff(structs_6_12(), {}, "vdso_data"),
                         ["struct vdso_data: not found in the patched tree's DWARF"])

    def test_the_page_puts_the_size_line_first(self):
        # the block cuts the page from its end (cover_letter_test checks the
        # cut keeps it): the struct's growth first, then each clock, then fields
        fields = struct_diff.diff(structs_6_12(), with_offs_boot(), "vdso_data", limit=3)
        paths = ["REALTIME: 2 -> 3 lines per call", "MONOTONIC: 2 -> 3 lines per call"]
        page = struct_diff.page(paths, fields, "vdso_data")
        self.assertEqual(page[0], "struct vdso_data: 240 -> 248 bytes, 4 -> 4 lines")
        self.assertEqual(page[1:3], paths)
        self.assertEqual(page[3:], fields[:-1])
        same = struct_diff.diff(structs_6_12(), structs_6_12(), "vdso_data")
        self.assertEqual(struct_diff.page(paths, same, "vdso_data")[0],
                         "struct vdso_data: unchanged (240 bytes, 4 lines)")

if __name__ == "__main__":
    unittest.main()
