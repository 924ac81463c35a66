"""cover_letter_arm64.lines() on made-up review dicts: no machine, no emulator."""

import re
import unittest

from reports import cover_letter_arm64 as section

PASS = (True, "PASS (exact, edges, concurrency, system)")
TORE = "edges: 56-bit arch timer wrapped past cycle_last: realtime at counter 500 is -4 ns off"
PAGE = ["offs_boot: added at 32..39 (line 0)",
        "basetime[1].nsec: 56..63 -> 64..71 (line 0 -> 1)",
        "basetime[5].nsec: 120..127 -> 128..135 (line 1 -> 2)",
        "27 more fields changed", "struct vdso_data: 240 -> 248 bytes, 4 -> 4 lines"]


def joined(out):
    """The section's words, its wrapping undone."""
    return " ".join(x.strip() for x in out)


def review(**given):
    a = {"arch": "arm64", "emulator": "qemu-aarch64-static 7.2.22",
         "counter": "isb_cntvct_dep", "counter_why": "cntvctss SKIP: no FEAT_ECV",
         "verify": {"after": PASS, "before": PASS}, "torn": None,
         "code": ["clock_gettime: 171 -> 172 instructions (+1)"], "code_why": None,
         "instructions": [("realtime", 41, 41), ("monotonic", 41, 42),
                          ("monotonic_raw", 48, 48)],
         "page": PAGE, "notes": [], "missing": None}
    a.update(given)
    return a


class Arm64SectionTest(unittest.TestCase):
    def check_shape(self, out, width=72):
        for line in out:
            self.assertLessEqual(len(line), width, line)
            self.assertTrue(line.isprintable(), repr(line))
        self.assertNotRegex("\n".join(out), r"\bns/call\b|\bus\b|\d\s*ns\b(?! off)")

    def test_a_passing_patch(self):
        out = section.lines(review())
        self.check_shape(out)
        self.assertEqual(out[0], section.EMULATED)
        self.assertIn("emulated under qemu-user", out[0])
        self.assertIn("never time", out[0])
        self.assertLessEqual(len(out), 8, out)
        text = "\n".join(out)
        self.assertIn("verify, before and after: PASS (exact, edges, concurrency, system)", text)
        self.assertEqual(text.count("verify"), 1)
        self.assertIn("counter: isb_cntvct_dep (no FEAT_ECV), qemu-aarch64-static 7.2.22", text)
        # only the clock that changed
        self.assertIn("instructions per call, before -> after: MONOTONIC 41 -> 42", text)
        self.assertNotIn("REALTIME", text)
        self.assertIn("read path code differs: clock_gettime: 171 -> 172", text)
        page = [i for i, x in enumerate(out) if "data page" in x][0]
        self.assertLessEqual(len(out) - page, section.PAGE_LINES)
        self.assertIn("offs_boot: added at 32..39 (line 0)", text)
        self.assertIn(section.MORE, text)
        self.assertNotIn("CAUGHT", text)

    def test_unchanged(self):
        out = section.lines(review(
            code="identical", instructions=[("realtime", 41, 41), ("monotonic", 41, 41),
                                            ("monotonic_raw", 48, 48)],
            page=["struct vdso_data: unchanged (240 bytes, 4 lines)"]))
        self.check_shape(out)
        self.assertEqual(out[1:], [
            "  verify, before and after: PASS (exact, edges, concurrency, system)",
            "  counter: isb_cntvct_dep (no FEAT_ECV), qemu-aarch64-static 7.2.22",
            "  instructions per call: unchanged on 3 clocks (41 to 48)",
            "  read path code: identical",
            "  data page: struct vdso_data: unchanged (240 bytes, 4 lines)"])

    def test_many_changed_clocks_are_counted(self):
        rows = [(c, 40, 41) for c in ("realtime", "monotonic", "boottime", "tai", "monotonic_raw")]
        out = section.lines(review(instructions=rows))
        self.check_shape(out)
        text = joined(out)
        self.assertIn("BOOTTIME 40 -> 41, 2 more", text)
        self.assertEqual(text.count(" 40 -> 41"), section.SHOWN)

    def test_torn_is_caught_and_says_where(self):
        out = section.lines(review(verify={"after": (False, f"FAIL: {TORE}"), "before": PASS},
                                   torn=TORE))
        self.check_shape(out)
        text = joined(out[1:])
        self.assertIn("CAUGHT: the patched tree fails verify on arm64", text)
        self.assertIn("verify (after): FAIL: edges: 56-bit arch timer", text)
        self.assertIn("verify (before): PASS", text)
        # nothing measured on a wrong patch is shown, and the tear once
        for word in ("instructions", "read path code", "data page", "counter:"):
            self.assertNotIn(word, text)
        self.assertEqual(text.count("56-bit"), 1)
        # where it tore, when verify's line does not already say
        out = section.lines(review(verify={"after": (False, "FAIL"), "before": PASS},
                                   torn="concurrency: torn read"))
        self.assertIn("  where it tore: concurrency: torn read", out)

    def test_missing_is_one_short_paragraph(self):
        why = ("no aarch64-linux-gnu-gcc, aarch64-linux-gnu-g++ in /nowhere (as root: "
               "scripts/vdsobench setup --arch arm64)")
        out = section.lines({"missing": why})
        self.check_shape(out)
        self.assertTrue(out[0].startswith("arm64 (emulated under qemu-user): not checked: no "))
        self.assertLessEqual(len(out), 3)
        self.assertIn("(as root: scripts/vdsobench setup --arch arm64)", joined(out))
        self.assertNotIn("verify", joined(out))
        # the full dict with missing set is the same section
        self.assertEqual(section.lines(review(missing=why)), out)

    def test_the_sides_disagree(self):
        out = section.lines(review(verify={"after": PASS, "before": (False, "FAIL: exact")}))
        self.assertIn("  verify (after): PASS (exact, edges, concurrency, system)", out)
        self.assertIn("  verify (before): FAIL: exact", out)

    def test_hostile_text_and_narrow_width(self):
        evil = "\x1b[2J\u202eevil\n\x00"
        out = section.lines(review(code=[f"clock_{evil}: 1 of 3 instructions differ"],
                                   page=[f"{evil}: added at 0..7 (line 0)"] * 9,
                                   emulator=f"qemu {evil}", notes=[evil * 30]), width=40)
        self.check_shape(out, 40)
        text = "\n".join(out)
        self.assertNotRegex(text, "[\x00-\x09\x0b-\x1f\u202e]")
        self.assertIn("\\x1b", text)
        self.assertIn("\\u202e", text)

    def test_the_emulators_system_check_is_a_note_without_its_times(self):
        side = (True, "PASS (exact, edges, concurrency); system not counted")
        out = section.lines(review(
            verify={"after": side, "before": PASS},
            not_counted={"after": "system: monotonic: ret 0, -74284 ns off the system's"}))
        self.check_shape(out)
        self.assertIn("  note: system check not counted (qemu-user's clock): after", out)
        self.assertNotIn("74284", "\n".join(out))
        self.assertNotIn("CAUGHT", "\n".join(out))

    def test_native_arm64_is_not_called_emulated(self):
        out = section.lines(review(emulator=None))
        self.assertEqual(out[0], section.NATIVE)
        self.assertNotIn("qemu", "\n".join(out))

    def test_a_step_not_made_is_a_note(self):
        out = section.lines(review(code=None, code_why="no reader object", instructions=[],
                                   notes=["instructions per call not counted: driver failed"]))
        self.check_shape(out)
        self.assertIn("  read path code not compared: no reader object", out)
        self.assertTrue(any(re.match(r"  note: instructions per call not counted", x)
                            for x in out), out)


if __name__ == "__main__":
    unittest.main()


class Arm64WithinLinesTest(unittest.TestCase):
    """In a cluster's block the section keeps max_lines: whole parts go, the
    least telling first, and a line says where they are."""

    def test_parts_dropped_whole(self):
        a = review(notes=["instructions per call not counted: qemu failed"])
        full = section.lines(a)
        self.assertGreater(len(full), 6)
        out = section.lines(a, 72, 6)
        self.assertLessEqual(len(out), 6, out)
        text = "\n".join(out)
        self.assertEqual(out[0], section.EMULATED)
        self.assertIn("verify, before and after: PASS", text)
        self.assertIn("MONOTONIC 41 -> 42", text)  # the instructions stay
        self.assertNotIn("note:", text)  # the notes go first
        self.assertNotIn("offs_boot", text)  # then the data page
        self.assertEqual(out[-1].strip(), section.MORE)
        for line in out[1:-1]:  # what stays is whole: no part cut mid-way
            self.assertIn(line, full)

    def test_room_enough_changes_nothing(self):
        a = review()
        self.assertEqual(section.lines(a, 72, 40), section.lines(a))

    def test_torn_keeps_its_verdict_first(self):
        a = review(torn="edges: 56-bit arch timer wrap: 3 ns off",
                   verify={"after": (False, "CAUGHT: edges: 56-bit arch timer wrap"),
                           "before": PASS})
        out = section.lines(a, 72, 3)
        self.assertEqual(len(out), 3)
        self.assertIn("CAUGHT", "\n".join(out))
