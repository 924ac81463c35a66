"""Cache-line maps from a field table and measured loads: lines, straddles, read
sets on one or two pages, tglx's comparison, and the three output forms."""

import io
import json
import unittest

from reports import layout_map

# seed 000, tglx's pahole: x86 v5.2 "Before" and v3 1/2 "After" (mult/shift in vgtod_ts)
BEFORE = {"name": "x86_gtod+rdtscp+always", "layout": "x86_gtod", "data_size": 232,
          "vvar_size": 4096, "has_timens": False,
          "fields": [{"name": "seq", "offset": 0, "size": 4},
                     {"name": "vclock_mode", "offset": 4, "size": 4},
                     {"name": "mult", "offset": 24, "size": 4},
                     {"name": "basetime[VGTOD_BASES]", "offset": 32, "size": 192},
                     {"name": "basetime[CLOCK_REALTIME]", "offset": 32, "size": 16},
                     {"name": "basetime[CLOCK_MONOTONIC]", "offset": 48, "size": 16},
                     {"name": "tz_dsttime", "offset": 228, "size": 4}]}
AFTER = {"name": "x86_gtod_ts_multshift+rdtscp+always", "layout": "x86_gtod_ts_multshift",
         "data_size": 320, "vvar_size": 4096, "has_timens": False,
         "fields": [{"name": "seq", "offset": 0, "size": 4},
                    {"name": "vclock_mode", "offset": 4, "size": 4},
                    {"name": "basetime[VGTOD_BASES]", "offset": 24, "size": 288},
                    {"name": "basetime[CLOCK_REALTIME]", "offset": 24, "size": 24},
                    {"name": "basetime[CLOCK_MONOTONIC]", "offset": 48, "size": 24},
                    {"name": "tz_dsttime", "offset": 316, "size": 4}]}
TIMENS = {"name": "generic_timens+rdtscp+always", "layout": "generic_timens",
          "data_size": 480, "vvar_size": 8192, "has_timens": True,
          "fields": [{"name": "seq", "offset": 0, "size": 4},
                     {"name": "clock_mode", "offset": 4, "size": 4},
                     {"name": "basetime[CLOCK_MONOTONIC]", "offset": 48, "size": 16}]}


def load(offset, size, count=1):
    return {"offset": offset, "size": size, "count": count}


def path(clock, kind, loads, mode="hot", key=None):
    return {"path": key or clock, "clock": clock, "kind": kind, "mode": mode,
            "syscalls_per_call": int(kind == "syscall"), "loads": loads}


# what do_hres() loads per MONOTONIC call: seq twice, the mode, the base entry
MONO_BEFORE = [load(0, 4, 2), load(4, 4), load(24, 4), load(48, 8), load(56, 8)]
MONO_AFTER = [load(0, 4, 2), load(4, 4), load(48, 8), load(56, 8), load(64, 4), load(68, 4)]


def maps():
    a = layout_map.variant_map(BEFORE, [path("monotonic", "hres", MONO_BEFORE),
                                        path("monotonic_raw", "syscall", [])])
    b = layout_map.variant_map(AFTER, [path("monotonic", "hres", MONO_AFTER),
                                       path("monotonic_raw", "raw", [load(0, 4), load(120, 8)])])
    return a, b


class LinesTest(unittest.TestCase):
    def test_line_range_and_straddles(self):
        self.assertEqual(layout_map.line_range(48, 16), (0, 0))
        self.assertEqual(layout_map.line_range(48, 24), (0, 1))
        self.assertEqual(layout_map.line_range(64, 1), (1, 1))
        self.assertFalse(layout_map.straddles(48, 16))  # 48..63
        self.assertTrue(layout_map.straddles(48, 24))   # 48..71
        self.assertTrue(layout_map.straddles(63, 2))
        self.assertEqual(layout_map.span(48, 24), "48..71")

    def test_entries_order_and_marks(self):
        rows = {e["name"]: e for e in layout_map.entries(AFTER["fields"])}
        mono = rows["basetime[CLOCK_MONOTONIC]"]
        self.assertEqual((mono["offset"], mono["end"], mono["lines"]), (48, 71, [0, 1]))
        self.assertTrue(mono["straddles"])
        self.assertFalse(mono["container"])
        self.assertTrue(rows["basetime[VGTOD_BASES]"]["container"])
        before = {e["name"]: e for e in layout_map.entries(BEFORE["fields"])}
        self.assertFalse(before["basetime[CLOCK_MONOTONIC]"]["straddles"])
        names = [e["name"] for e in layout_map.entries(AFTER["fields"])]
        self.assertLess(names.index("basetime[VGTOD_BASES]"),
                        names.index("basetime[CLOCK_REALTIME]"))  # the array first

    def test_line_rows(self):
        rows = layout_map.line_rows(layout_map.entries(AFTER["fields"]), 320)
        self.assertEqual(len(rows), 5)
        self.assertEqual(rows[1]["bytes"], [64, 127])
        self.assertIn("basetime[CLOCK_MONOTONIC]", rows[1]["continued"])
        self.assertIn("basetime[CLOCK_MONOTONIC]", rows[0]["fields"])


class ReadSetTest(unittest.TestCase):
    def test_monotonic_one_line_then_two(self):
        a, b = maps()
        pa, pb = a["paths"][0], b["paths"][0]
        self.assertEqual([m["line"] for m in pa["lines"]], [0])
        self.assertEqual([m["line"] for m in pb["lines"]], [0, 1])
        self.assertEqual(pb["straddling"], [{"name": "basetime[CLOCK_MONOTONIC]",
                                              "lines": [0, 1]}])
        self.assertEqual(pa["straddling"], [])
        self.assertIn("basetime[CLOCK_MONOTONIC]", pa["fields_read"])
        self.assertNotIn("basetime[VGTOD_BASES]", pa["fields_read"])  # innermost names
        self.assertEqual(pa["summary"], "monotonic (hres): line 0 (1 line)")
        self.assertEqual(pb["summary"], "monotonic (hres): lines 0, 1 (2 lines); "
                                        "basetime[CLOCK_MONOTONIC] straddles 0/1")

    def test_bytes_of_an_array_no_entry_names(self):
        ents = layout_map.entries(BEFORE["fields"])
        self.assertEqual(layout_map.fields_read(ents, [load(96, 8)], "hot"),
                         ["basetime[VGTOD_BASES] bytes 96..103"])
        self.assertEqual(layout_map.fields_read(ents, [load(300, 4)], "hot"),
                         ["bytes 300..303 (in no entry of the table)"])

    def test_syscall_paths_say_so(self):
        a, _ = maps()
        self.assertEqual(a["paths"][1]["summary"],
                         "monotonic_raw: syscall (not served in userspace): no vDSO data read")
        seq_only = layout_map.analyze_path(layout_map.entries(BEFORE["fields"]),
                                           path("boottime", "syscall", [load(0, 4), load(4, 4)]))
        self.assertIn("no vDSO data read beyond seq/clock_mode (line 0)", seq_only["summary"])
        # v6.15's names for the same members
        nested = [{"name": "clock_data[CS_HRES_COARSE].seq", "offset": 0, "size": 4},
                  {"name": "clock_data[CS_HRES_COARSE].clock_mode", "offset": 4, "size": 4},
                  {"name": "clock_data[CS_HRES_COARSE].mult", "offset": 32, "size": 4}]
        seq_only = layout_map.analyze_path(layout_map.entries(nested),
                                           path("boottime", "syscall", [load(0, 4), load(4, 4)]))
        self.assertIn("no vDSO data read beyond seq/clock_mode (line 0)", seq_only["summary"])

    def test_timens_task_reads_both_pages(self):
        # the namespace page comes first for a task in a namespace: seq, clock_mode and
        # its offset there, then the data page's own
        loads = [load(0, 4), load(4, 4), load(48, 16), load(4096, 4, 2), load(4096 + 48, 8)]
        m = layout_map.variant_map(TIMENS, [path("monotonic", "timens", loads, "timens",
                                                 "monotonic/timens")])
        p = m["paths"][0]
        self.assertEqual([(x["role"], x["line"]) for x in p["lines"]],
                         [("timens page", 0), ("data page", 0)])
        self.assertEqual(p["summary"], "monotonic in a time namespace (timens): "
                                       "timens page line 0, data page line 0 (2 lines)")
        # fields are named on the data page only: the namespace page's union differs
        self.assertEqual(p["fields_read"], ["seq", "basetime[CLOCK_MONOTONIC]"])


class DiffTest(unittest.TestCase):
    def test_tglx_comparison(self):
        d = layout_map.diff(*maps())
        mono = next(f for f in d["fields"] if f["name"] == "basetime[CLOCK_MONOTONIC]")
        self.assertEqual((mono["a"]["offset"], mono["a"]["end"]), (48, 63))
        self.assertEqual((mono["b"]["offset"], mono["b"]["end"]), (48, 71))
        self.assertTrue(mono["lines_changed"])
        self.assertEqual([e["name"] for e in d["only_a"]], ["mult"])
        text = "\n".join(layout_map.render_diff(d))
        self.assertIn("48..63", text)
        self.assertIn("48..71", text)
        row = next(x for x in text.splitlines() if "basetime[CLOCK_MONOTONIC]" in x)
        self.assertIn("straddles in B", row)
        mono_path = next(x for x in text.splitlines() if x.strip().startswith("monotonic "))
        self.assertIn("1 line more in B", mono_path)
        raw = next(x for x in text.splitlines() if x.strip().startswith("monotonic_raw"))
        self.assertIn("served in userspace in B only", raw)
        json.dumps(d)  # JSON-ready

    def test_same_layout_no_change(self):
        a, _ = maps()
        d = layout_map.diff(a, a)
        self.assertFalse(any(f["lines_changed"] or f["moved"] for f in d["fields"]))
        self.assertIn("same", "\n".join(layout_map.render_diff(d)))


class RenderTest(unittest.TestCase):
    def test_text(self):
        a, b = maps()
        text = "\n".join(layout_map.render_text([a, b], "method line"))
        self.assertIn("line 0 (bytes 0..63)", text)
        self.assertIn("line 1 (bytes 64..127)", text)
        self.assertIn("<-- straddles lines 0/1", text)
        self.assertIn("(spans lines 0..4)", text)  # the array, not flagged as a straddle
        self.assertTrue(text.endswith("method line"))
        json.dumps([a, b])

    def test_crosscheck_lines(self):
        self.assertEqual(layout_map.crosscheck_lines({"skipped": "pahole not found"}),
                         ["pahole cross-check skipped: pahole not found"])
        self.assertEqual(layout_map.crosscheck_lines(None), [])

    def test_png(self):
        buf = io.BytesIO()
        layout_map.draw_png(list(maps()), buf)
        data = buf.getvalue()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        self.assertGreater(width, 800)
        self.assertGreater(height, 300)
        self.assertLess(len(data), 2_000_000)

    def test_fitted_labels(self):
        text, size = layout_map.fitted("vd[CS_RAW].clock_mode", 36)
        self.assertEqual(text, "vd[CS_RAW].\nclock_mode")
        self.assertGreaterEqual(size, 3)
        self.assertEqual(layout_map.fitted("seq", 200), ("seq", 6.0))


if __name__ == "__main__":
    unittest.main()
