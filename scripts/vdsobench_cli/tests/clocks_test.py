"""The clock table (common/clocks.h, core/clocks.py): its rows as Python reads
them, a row out of form refused in one line, and the classes the table gives
against the clocks each variant's own masks (transcribed from its kernel) serve:
a layout's hres/coarse/raw clocks are the table's HRES/COARSE/RAW ones."""

import unittest

from vdsobench_cli.cli import variants
from vdsobench_cli.core import clocks

ROW = 'X("{}", {}, {}, {}, "L", "S", "A")'


def header(*rows, table="SUITE_CLOCKS"):
    return f"#define {table}(X) \\\n\t" + " \\\n\t".join(rows) + "\n"


class TableTest(unittest.TestCase):
    def test_the_suite_clocks_in_order(self):
        self.assertEqual(clocks.NAMES[:2], ("realtime", "monotonic"))
        self.assertEqual(len(clocks.NAMES), len(set(clocks.NAMES)))
        self.assertEqual([c.name for c in clocks.of_kind("COARSE")],
                         ["realtime_coarse", "monotonic_coarse"])
        self.assertEqual(clocks.BY_NAME["monotonic_raw"].kind, "RAW")
        self.assertEqual(clocks.BY_NAME["boottime"].number, 7)

    def test_labels(self):
        self.assertEqual(clocks.label("monotonic_coarse"), "MONOTONIC_COARSE")
        self.assertEqual(clocks.short("monotonic_coarse"), "MONO_COARSE")
        self.assertEqual(clocks.abbrev("monotonic_coarse"), "MONO_C")
        self.assertEqual(clocks.label("getres:tai"), "GETRES:TAI")
        self.assertIsNone(clocks.short("gettimeofday"))

    def test_a_new_row_is_read(self):
        t = clocks.parse(header(ROW.format("realtime", "CLOCK_REALTIME", "HRES", "REAL"),
                                ROW.format("boottime_alarm", "CLOCK_BOOTTIME_ALARM", "HRES",
                                           "BOOT")))
        self.assertEqual([c.name for c in t["SUITE_CLOCKS"]], ["realtime", "boottime_alarm"])
        self.assertEqual(t["SUITE_CLOCKS"][1].number, 9)

    def test_rows_out_of_form_are_refused(self):
        for text, why in (
                (header(ROW.format("x", "CLOCK_NOPE", "HRES", "REAL")), "the id must be"),
                (header(ROW.format("x", "CLOCK_TAI", "FAST", "REAL")), "the kind one of"),
                (header(ROW.format("x", "CLOCK_TAI", "HRES", "MARS")), "the base one of"),
                (header('X("x", CLOCK_TAI, HRES)'), "a row is not"),
                (header(ROW.format("tai", "CLOCK_TAI", "HRES", "TAI"),
                        ROW.format("tai", "CLOCK_TAI", "HRES", "TAI")), "in two rows"),
                (header(ROW.format("tai", "CLOCK_TAI", "HRES", "TAI"))
                 + header(ROW.format("tai2", "CLOCK_TAI", "HRES", "TAI"),
                          table="OTHER_CLOCKS"), "in two rows"),
                ("", "no SUITE_CLOCKS")):
            with self.subTest(why=why), self.assertRaisesRegex(clocks.TableError, why) as cm:
                clocks.parse(text)
            self.assertNotIn("\n", str(cm.exception))


class MasksAgreeTest(unittest.TestCase):
    def test_each_variant_serves_its_clocks_by_the_tables_kind(self):
        # every layout's masks are its kernel's VDSO_HRES/COARSE/RAW: a clock
        # served as coarse must be COARSE in the table, as raw RAW; the hres
        # path serves HRES clocks, and RAW ones where a layout branches to the
        # raw base inside it (x86_gtod_raw_branch)
        kinds = {"hres_clocks": {"HRES", "RAW"}, "coarse_clocks": {"COARSE"},
                 "raw_clocks": {"RAW"}}
        checked = 0
        for v in variants.load():
            for field, allowed in kinds.items():
                for name in v.get(field, ()):
                    if name in clocks.BY_NAME:
                        checked += 1
                        self.assertIn(clocks.BY_NAME[name].kind, allowed,
                                      f"{v['name']} serves {name} as {field}")
        self.assertGreater(checked, 0)
