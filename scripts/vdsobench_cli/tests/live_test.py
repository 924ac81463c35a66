"""layout --live's decode and checks on a recorded dump of a real kernel's
[vvar] (testdata/vvar-6.18-zen4.json: kernel 6.18.44, TSC clocksource, read
by live/vdsobench_vvar), so they hold on any machine: the v6.15 shape
matches it, v6.10's does not (its raw base sits elsewhere), and a page
changed in one field is named by the check that field feeds."""

import copy
import subprocess
import unittest

from vdsobench_cli.cli import build
from vdsobench_cli.measure import live
from vdsobench_cli.tests import vvar_support
from vdsobench_cli.tests.vvar_support import DUMP, TIMENS_DUMP, V6_10, V6_15, timens_dump

def edited(offset, size, value):
    d = copy.deepcopy(DUMP)
    page = bytearray.fromhex(d["snapshot"]["hex"])
    page[offset:offset + size] = value.to_bytes(size, "little")
    d["snapshot"]["hex"] = page.hex()
    return d


def failing(result):
    return [c["what"] for c in result["checks"] if not c["ok"]]


class DecodeTest(unittest.TestCase):
    def test_the_v6_15_shape_matches_the_recorded_kernel(self):
        r = live.check(DUMP, V6_15)
        self.assertTrue(r["matches"], failing(r))
        self.assertEqual(r["offset"], 0)
        whats = [c["what"] for c in r["checks"]]
        for needed in ("monotonic from the counter", "realtime from the counter",
                       "monotonic_raw from the counter", "CS_RAW.seq",
                       "CS_HRES_COARSE.clock_mode"):
            self.assertIn(needed, whats)
        text = "\n".join(live.render(r, DUMP))
        self.assertIn("live: the model matches the running kernel", text)
        self.assertIn("1 (TSC)", text)
        self.assertIn("skipped (SIGBUS: not populated)", text)

    def test_the_v6_10_shape_does_not(self):
        r = live.check(DUMP, V6_10)
        self.assertFalse(r["matches"])
        self.assertTrue(any(w.startswith("CS_RAW") or w.startswith("monotonic_raw")
                            for w in failing(r)), failing(r))
        self.assertIn("does not match the running kernel",
                      "\n".join(live.render(r, DUMP)))

    def test_an_odd_seq_is_named(self):
        seq = int.from_bytes(bytes.fromhex(DUMP["snapshot"]["hex"])[0:4], "little")
        r = live.check(edited(0, 4, seq + 1), V6_15)
        self.assertIn("CS_HRES_COARSE.seq", failing(r))

    def test_a_wrong_shift_breaks_the_arithmetic(self):
        r = live.check(edited(36, 4, 23), V6_15)
        self.assertFalse(r["matches"])
        self.assertIn("monotonic from the counter", failing(r))

    def test_a_wrong_mult_breaks_the_arithmetic(self):
        mult = int.from_bytes(bytes.fromhex(DUMP["snapshot"]["hex"])[32:36], "little")
        r = live.check(edited(32, 4, mult + 1000), V6_15)
        self.assertIn("monotonic from the counter", failing(r))

    def test_an_unknown_clock_mode(self):
        r = live.check(edited(4, 4, 77), V6_15)
        self.assertIn("CS_HRES_COARSE.clock_mode", failing(r))

    def test_a_kvm_clock_guest_is_not_checked_against_the_tsc(self):
        # clock_mode 2 (PVCLOCK): a KVM guest whose clocksource is kvm-clock;
        # the recorded page's arithmetic no longer applies, and is skipped
        tsc_far_off = copy.deepcopy(DUMP)
        tsc_far_off["sample"]["cycles"] += 10**12
        self.assertIn("monotonic from the counter", failing(live.check(tsc_far_off, V6_15)))
        d = edited(4, 4, 2)  # CS_HRES_COARSE's clock_mode, and CS_RAW's (232 on)
        page = bytearray.fromhex(d["snapshot"]["hex"])
        page[236:240] = (2).to_bytes(4, "little")
        d["snapshot"]["hex"] = page.hex()
        d["sample"]["cycles"] += 10**12
        r = live.check(d, V6_15)
        self.assertTrue(r["matches"], failing(r))
        self.assertNotIn("monotonic from the counter", [c["what"] for c in r["checks"]])
        self.assertIn("monotonic from the counter", [c["what"] for c in r["skipped"]])
        text = "\n".join(live.render(r, d))
        self.assertIn("skip monotonic from the counter: clock_mode 2 (PVCLOCK)", text)
        self.assertIn("not checked: the clocks from the counter", text)

    def test_no_snapshot_says_why(self):
        d = dict(DUMP, snapshot=None, why="no page of [vvar] is readable")
        r = live.check(d, V6_15)
        self.assertFalse(r["matches"])
        self.assertIn("cannot check: no page of [vvar] is readable",
                      "\n".join(live.render(r, d)))


DAY = 86400 * 10**9


class TimensTest(unittest.TestCase):
    """A task in a time namespace: [vvar]'s first page is the namespace's (seq
    1, clock_mode TIMENS, offsets), the kernel's own data is the next page,
    and the sampled clocks are the namespace's."""

    def test_the_kernels_page_is_checked_with_the_offsets_taken_off(self):
        d = timens_dump(DAY, -3600 * 10**9 + 5)
        r = live.check(d, V6_15)
        self.assertTrue(r["matches"], failing(r))
        whats = [c["what"] for c in r["checks"]]
        for needed in ("monotonic from the counter", "boottime from the counter",
                       "monotonic_raw from the counter", "timens offsets"):
            self.assertIn(needed, whats)
        self.assertEqual((r["page"], r["offset"]), (4096, 0))
        text = "\n".join(live.render(r, d))
        self.assertIn("time namespace", text)
        self.assertIn("monotonic +86400.000000000 s", text)
        self.assertIn("boottime -3599.999999995 s", text)
        self.assertNotIn("FAIL", text)

    def test_offsets_that_disagree_with_proc_are_named(self):
        d = timens_dump(DAY, 0)
        d["timens_offsets"] = "monotonic 86401 0\nboottime 0 0\n"
        r = live.check(d, V6_15)
        self.assertFalse(r["matches"])
        self.assertEqual(failing(r), ["timens offsets"])

    def test_the_offsets_decide_the_clocks(self):
        d = timens_dump(DAY, 0)
        page = bytearray.fromhex(d["pages"][0]["hex"])
        page[40 + 16 + 0:40 + 16 + 8] = (86401).to_bytes(8, "little")  # monotonic's sec
        d["pages"][0]["hex"] = d["snapshot"]["hex"] = page.hex()
        d["timens_offsets"] = None
        r = live.check(d, V6_15)
        self.assertIn("monotonic from the counter", failing(r))
        self.assertNotIn("boottime from the counter", failing(r))

    def test_without_the_kernels_page_it_says_what_was_read(self):
        d = timens_dump(DAY, 0)
        del d["pages"]
        r = live.check(d, V6_15)
        self.assertFalse(r["matches"])
        text = "\n".join(live.render(r, d))
        self.assertIn("time namespace", r["why"])
        self.assertNotIn("update", text)
        self.assertNotIn("does not match", text)

    def test_recorded_in_a_namespace_on_a_kvm_guest(self):
        r = live.check(TIMENS_DUMP, V6_15)
        self.assertTrue(r["matches"], failing(r))
        self.assertEqual(r["page"], 4096)
        text = "\n".join(live.render(r, TIMENS_DUMP))
        self.assertIn("monotonic +86400.000000000 s, boottime +3600.000000000 s", text)
        self.assertIn("CS_HRES_COARSE.basetime[boottime]", [c["what"] for c in r["checks"]])


class NamespaceLiveTest(unittest.TestCase):
    """layout --live run in a time namespace (unshare --time --monotonic 86400):
    the same verdict as outside it, the namespace's page named, its offsets
    checked against /proc/self/timens_offsets."""

    def test_layout_live_in_a_time_namespace(self):
        why = vvar_support.timens_unavailable()
        if why:
            self.skipTest(why)
        argv = [str(build.ROOT / "scripts" / "vdsobench"), "layout", "--live"]
        outside = subprocess.run(argv, capture_output=True, text=True)
        inside = subprocess.run(vvar_support.TIMENS_CMD + argv, capture_output=True, text=True)
        self.assertEqual(inside.returncode, outside.returncode, inside.stdout + inside.stderr)
        if "cannot check" in outside.stdout or "not checked:" in outside.stdout.split("\n")[0]:
            return  # no page of this kernel's to compare, in or out
        self.assertIn("time namespace: [vvar]+0x0 is this namespace's page", inside.stdout)
        self.assertIn("ok   timens offsets: monotonic +86400.000000000 s", inside.stdout)
        self.assertEqual(inside.stdout.splitlines()[-1], outside.stdout.splitlines()[-1])


class ChooseTest(unittest.TestCase):
    REGISTRY = [{"layout": name, "counter": counter, "kernel_version": version}
                for name, version in (("x86_gtod", "5.2"), ("generic_5_3", "5.3"),
                                      ("generic_6_10", "6.10"), ("generic_6_15", "6.15"),
                                      ("generic_6_17", "6.17"))
                for counter in ("rdtscp", "fake")]

    def layout(self, release):
        v, why = live.choose_layout(self.REGISTRY, release)
        return v["layout"] if v else why

    def test_newest_at_or_below(self):
        self.assertEqual(self.layout("6.18.44-fc-v669"), "generic_6_17")
        self.assertEqual(self.layout("6.17.0"), "generic_6_17")
        self.assertEqual(self.layout("6.12.117-amd64"), "generic_6_10")
        self.assertEqual(self.layout("5.10.0"), "generic_5_3")

    def test_none_older(self):
        self.assertIn("no layout in the table models kernel 4.19.0", self.layout("4.19.0"))
        self.assertIn("cannot read a version", self.layout("weird"))


if __name__ == "__main__":
    unittest.main()


class RegistryTest(unittest.TestCase):
    """The table's own layouts against the recorded 6.18 page."""

    @classmethod
    def setUpClass(cls):
        from vdsobench_cli.cli import variants
        cls.registry = variants.load()

    def test_the_layout_chosen_for_6_18_matches_it(self):
        v, why = live.choose_layout(self.registry, DUMP["kernel"])
        self.assertIsNotNone(v, why)
        r = live.check(DUMP, v)
        self.assertTrue(r["matches"], failing(r))
        self.assertIn("monotonic_raw from the counter", [c["what"] for c in r["checks"]])

    def test_generic_6_10_does_not_match_it(self):
        v = next(v for v in self.registry if v["layout"] == "generic_6_10")
        self.assertFalse(live.check(DUMP, v)["matches"])
