"""patch-review's vdso32 time (recipes/review_vdso32_timed.py) on made-up
rows: the review's lines, the block's compact form, INCOMPLETE, every
"not timed because", and its wiring (arch i386, the variants) with the
rounds replaced. No live timing, no harness: the rows are review.row()s of
simulated rounds (stats.simulate_rounds), and patch_review_isolation_test
times a real review's."""

import contextlib
import io
import json
import random
import tempfile
import unittest
from unittest import mock

from vdsobench_cli.cli import arch
from vdsobench_cli.core import stats
from vdsobench_cli.recipes import (patch_review, review_vdso32, review_vdso32_timed as timed_mod,
                                   review_vdso32_verify)

from reports import cover_letter, cover_letter_vdso32, review

CLOCKS = ("realtime", "monotonic", "monotonic_raw", "boottime", "tai", "realtime_coarse",
          "monotonic_coarse")
NAMES = (patch_review.BEFORE, patch_review.AFTER)
PASS = {"status": "PASS", "checks": [{"name": n, "skipped": False, "ok": True}
                                     for n in ("exact", "edges", "concurrency")]}
FAIL = {"status": "FAIL", "first_failure": "exact: realtime: got 1, want 2",
        "checks": [{"name": "exact", "skipped": False, "ok": False}]}
ON = arch.Target("i386", "x86_64", abi32_probe=lambda: (True, ""))
OFF = arch.Target("i386", "x86_64", abi32_probe=lambda: (
    False, "the kernel does not run 32-bit programs (execve: Exec format error)"))


def row(effect=1.0, sigma=0.002, n=60, seed=1):
    b, a = stats.simulate_rounds(random.Random(seed), n, effect, sigma, 0.0)
    return review.row(b, a, comparisons=len(CLOCKS))


def timed(**effects):
    """A timed record of every clock: no difference, but for the clocks
    given an effect (a ratio), or None (too noisy for a verdict)."""
    rows = []
    for i, c in enumerate(CLOCKS):
        e = effects.get(c, 1.0)
        r = row(sigma=0.05, n=12, seed=i) if e is None else row(e, seed=i)
        rows.append({"clock": c, "mode": "hot", **r})
    return {"rows": rows, "rounds": 60, "build": "image", "how": "natively",
            "variants": ["kernel:patch-review-before+rdtscp+image",
                         "kernel:patch-review-after+rdtscp+image"],
            "capped": False, "why": None}


def joined(lines):
    """Wrapped lines as the one sentence they wrap."""
    return " ".join(" ".join(lines).split())


def verify(after=PASS, before=PASS, **given):
    recs = {"after": {f"kernel:patch-review-after+fake+{i}": after for i in ("always", "image")},
            "before": {f"kernel:patch-review-before+fake+{i}": before
                       for i in ("always", "image")}}
    return review_vdso32_verify.result(**dict(dict(
        ran=True, records=recs, failed=review_vdso32_verify.first_failure(recs["after"]),
        before_failed=review_vdso32_verify.first_failure(recs["before"])), **given))


def v32(ver=None, **over):
    out = {"native": "runs here", "native_short": None, "broken": False,
           "built": {"before": True, "after": True}, "verify": ver or verify(),
           "check": {"after": {"ok": True, "exports": ["a"], "problems": []}},
           "code": "identical"}
    out.update(over)
    return out


class WhyNotTest(unittest.TestCase):
    def test_a_native_verified_pair_is_timed(self):
        self.assertIsNone(timed_mod.why_not(v32(), target=ON))

    def test_each_reason_not_to_time(self):
        cases = {
            "emulated": (v32(), OFF, "the kernel does not run 32-bit programs; under "
                         "qemu-i386 there is no CPU's time"),
            "--no-i386": (v32(review_vdso32_verify.result(why="left out (--no-i386)")), ON,
                          "its verify --arch i386 did not run: left out (--no-i386)"),
            "no verdict": (v32(verify(why="no verdict on kernel:A+fake+always: no result")),
                           ON, "its verify --arch i386 gave no verdict (no verdict on "
                           "kernel:A+fake+always: no result)"),
            "patched fails": (v32(verify(after=FAIL)), ON,
                              "the patched tree fails verify --arch i386"),
            "tree fails": (v32(verify(before=FAIL)), ON,
                           "the tree itself fails verify --arch i386"),
            "no verify": (v32(verify=None), ON, "its verify --arch i386 did not run"),
            "broken": (v32(broken=True), ON,
                       "the patched tree's vdso32 does not build, check or verify"),
        }
        for name, (v, target, want) in cases.items():
            with self.subTest(name):
                self.assertEqual(want, timed_mod.why_not(v, target=target))
        self.assertIn("cluster", timed_mod.why_not(v32(), fleet=True, target=ON))

    def test_a_reason_is_one_line_in_the_review_and_the_block(self):
        t = timed_mod.untimed(timed_mod.why_not(v32(), target=OFF))
        self.assertEqual(["vdso32 time: not timed here: the kernel does not run 32-bit "
                          "programs; under qemu-i386 there is no CPU's time"],
                         timed_mod.lines(t))
        self.assertTrue(timed_mod.complete(t))
        block = review_vdso32.block(v32(timed=timed_mod.untimed("its verify --arch i386 "
                                                                "gave no verdict (x)")))
        self.assertEqual(["vdso32: built, symbols as expected; code identical; verified "
                          "natively; not timed: its verify --arch i386 gave no verdict (x)"],
                         block)

    def test_nothing_is_measured_where_it_is_not_timed(self):
        with mock.patch.object(timed_mod.rounds_mod, "timed_rounds") as rounds, \
                mock.patch.object(timed_mod.arch, "Target", return_value=ON):
            t = timed_mod.timed(None, v32(verify(after=FAIL)), NAMES, CLOCKS, lambda _: None)
        rounds.assert_not_called()
        self.assertEqual(([], "the patched tree fails verify --arch i386"),
                         (t["rows"], t["why"]))


class Rounds:
    """What timed_rounds() returns, its rows made up; the architecture and
    variants it was asked with kept."""

    def __init__(self, rows):
        self.rows, self.asked = rows, []

    def __call__(self, s, before, after, clocks, progress):
        self.asked.append((arch.current().name, before, after, list(clocks)))
        t = mock.Mock()
        t.block_rows.return_value = [(r["clock"], r["mode"], r) for r in self.rows]
        return t, {"rounds": 60, "capped": False}, 1.0


class WiringTest(unittest.TestCase):
    def run_timed(self, listed):
        fake = Rounds(timed()["rows"])
        with mock.patch.object(arch.abi32, "probe", return_value=(True, "")), \
                mock.patch.object(timed_mod.variants_mod, "load",
                                  return_value=[{"name": n} for n in listed]), \
                mock.patch.object(timed_mod.rounds_mod, "timed_rounds", fake), \
                mock.patch.object(timed_mod.build, "binary_path",
                                  side_effect=lambda label: f"{arch.current().name}:{label}"):
            with arch.using("i386"):
                counter = arch.timed_counter()
            host = arch.current().name
            t = timed_mod.timed(None, v32(), NAMES, CLOCKS, lambda _: None)
            self.assertEqual(host, arch.current().name)  # put back
        return t, fake.asked, counter

    def names(self, counter, *inlines):
        return [f"kernel:patch-review-{s}+{counter}+{i}" for i in inlines
                for s in ("before", "after")]

    def test_the_images_are_timed_as_i386_where_both_trees_have_them(self):
        with mock.patch.object(arch.abi32, "probe", return_value=(True, "")), \
                arch.using("i386"):
            counter = arch.timed_counter()
        t, asked, counter = self.run_timed(self.names(counter, "always", "image"))
        self.assertEqual([("i386", f"kernel:patch-review-before+{counter}+image",
                           f"kernel:patch-review-after+{counter}+image", list(CLOCKS))], asked)
        self.assertEqual(("image", "natively", 60, None), (t["build"], t["how"], t["rounds"],
                                                           t["why"]))
        self.assertEqual(list(CLOCKS), [r["clock"] for r in t["rows"]])
        self.assertEqual("i386://bench:vdsobench_bench", t["harness"])

    def test_the_rebuilt_path_where_a_tree_has_no_image(self):
        with mock.patch.object(arch.abi32, "probe", return_value=(True, "")), \
                arch.using("i386"):
            counter = arch.timed_counter()
        listed = self.names(counter, "always") + [f"kernel:patch-review-before+{counter}+image"]
        t, asked, _ = self.run_timed(listed)
        self.assertEqual("always", t["build"])
        self.assertTrue(asked[0][1].endswith("+always"), asked)
        t, asked, _ = self.run_timed([f"kernel:patch-review-before+{counter}+always"])
        self.assertEqual([], asked)
        self.assertIn("no i386", t["why"])


class LinesTest(unittest.TestCase):
    def test_the_review_prints_every_row(self):
        t = timed(monotonic=1.05)
        out = timed_mod.lines(t)
        self.assertTrue(out[0].startswith("vdso32 time (i386, natively, hot, +image): 60 "
                                          "paired rounds of kernel:patch-review-before"),
                        out[0])
        self.assertEqual(len(CLOCKS) + 1, len(out))
        mono = next(x for x in out if x.startswith("  MONOTONIC hot: "))
        r = t["rows"][1]
        self.assertIn(f"{r['before']:.1f} -> {r['after']:.1f} ns, "
                      f"{review.percent(r['ratio'])} {review.interval(r)}, slower", mono)
        self.assertTrue(all(x.endswith(", no difference") for x in out[1:] if x != mono))

    def test_the_block_is_one_line_where_nothing_changed(self):
        t = timed()
        self.assertEqual(["vdso32 time (i386, natively, hot, +image): no difference on 7 "
                          "clocks"], cover_letter_vdso32.lines(t))
        self.assertTrue(timed_mod.complete(t))
        self.assertEqual([], cover_letter_vdso32.lines(timed_mod.untimed("emulated")))

    def test_a_slower_clock_gets_its_line(self):
        t = timed(boottime=1.05)
        out = cover_letter_vdso32.lines(t)
        self.assertEqual("vdso32 time (i386, natively, hot, +image): 1 slower, 6 same",
                         out[0])
        self.assertEqual(2, len(out))
        r = t["rows"][3]
        self.assertEqual(f"  BOOTTIME: {r['before']:.1f} -> {r['after']:.1f} ns, "
                         f"{review.percent(r['ratio'])} {review.interval(r)} slower", out[1])

    def test_rows_without_a_verdict_are_named_in_one_line(self):
        t = timed(**{c: None for c in CLOCKS[:5]}, monotonic_coarse=0.9)
        self.assertFalse(timed_mod.complete(t))
        out = cover_letter_vdso32.lines(t)
        # three verdicts: the summary wraps once
        self.assertEqual("vdso32 time (i386, natively, hot, +image): 1 faster, 5 no "
                         "verdict, 1 same", joined(out[:2]))
        self.assertEqual(["  no verdict: REALTIME, MONOTONIC, MONOTONIC_RAW, BOOTTIME, TAI"],
                         out[3:])
        self.assertTrue(out[2].startswith("  MONOTONIC_COARSE: ") and
                        out[2].endswith(" faster"), out)

    def test_what_the_room_cannot_hold_is_counted(self):
        t = timed(**{c: 1.1 for c in CLOCKS})
        out = cover_letter_vdso32.lines(t, room=4)
        self.assertEqual(4, len(out))
        self.assertEqual("vdso32 time (i386, natively, hot, +image): 7 slower", out[0])
        self.assertEqual("  and 5 more lines (patch-review.json)", out[-1])
        # no room for a clock: the summary points on, in its one line
        self.assertEqual(["vdso32 time (i386, natively, hot, +image): 7 slower "
                          "(patch-review.json)"], cover_letter_vdso32.lines(t, room=0))
        self.assertEqual(cover_letter_vdso32.lines(t, room=0),
                         cover_letter_vdso32.lines(t, room=2))


class BlockTest(unittest.TestCase):
    def render(self, t, **over):
        v = v32(code=["vdso_clock_gettime: 482 -> 410 instructions (-72)"], timed=t)
        v["lines"] = review_vdso32.block(v)
        rv = {"subject": "vdso: Add offs_boot", "patches": 1, "measured": "its kbuild's image",
              "tree": "Linux 6.12.117", "commit": None, "compiler": "gcc 14.2.0",
              "line": "kbuild", "machine": {"cpu": "Intel Xeon", "counter": "rdtscp"},
              "verify": {"after": (True, "PASS"), "before": (True, "PASS")},
              "code": "identical", "sim": [], "page": [f"FIELD{i}: moved" for i in range(9)],
              "rows": [(c, "hot", r) for c, r in zip(CLOCKS, (row(seed=i) for i in range(7)))],
              "why": [], "notes": ["pressure is simulated, not timed", "--quick"],
              "target": review.TARGET, "vdso32": v}
        rv.update(over)
        lines = cover_letter.render(rv)
        self.assertLessEqual(len(lines), cover_letter.MAX_LINES, "\n".join(lines))
        self.assertLessEqual(max(map(len, lines)), cover_letter.WIDTH, "\n".join(lines))
        return lines

    def test_the_compact_form_sits_under_the_vdso32_sentence(self):
        lines = self.render(timed())
        at = lines.index("vdso32 time (i386, natively, hot, +image): no difference on 7 clocks")
        self.assertTrue(joined(lines[at - 2:at]).endswith("; verified natively"), lines)
        self.assertTrue(lines[0].startswith("vdsobench patch-review: "), lines[0])

    def test_a_vdso32_row_without_a_verdict_makes_it_incomplete(self):
        lines = self.render(timed(tai=None, boottime=None))
        self.assertEqual("INCOMPLETE: 2 of 7 vdso32 rows without a verdict (the rounds were "
                         "too noisy)", joined(lines[:2]))
        both = dict(timed(tai=None), capped=True)
        bad = [(c, "hot", row(sigma=0.05, n=12, seed=9)) for c in CLOCKS[:1]]
        lines = self.render(both, rows=bad, capped=True)
        self.assertEqual("INCOMPLETE: 1 of 1 rows and 1 of 7 vdso32 rows without a verdict "
                         "(the time budget ran out)", joined(lines[:2]))

    def test_every_clock_slower_still_fits(self):
        lines = self.render(timed(**{c: 1.1 for c in CLOCKS}))
        self.assertEqual(7, sum(x.startswith("  ") and x.endswith(" slower")
                                for x in lines), lines)
        self.assertIn("vdso32 time (i386, natively, hot, +image): 7 slower", lines)
        self.assertIsNone(cover_letter.first_line(
            {"vdso32": {"timed": timed(**{c: 1.1 for c in CLOCKS})}}, [], None))

    def test_the_table_legend_and_page_stay_whole_beside_it(self):
        """A crowded block (every row without a verdict, code and simulation
        changed): the vdso32's lines take the room left, the 64-bit table,
        its legend and the page's first lines stay whole."""
        t = timed(**{c: None for c in CLOCKS[:5]}, realtime_coarse=1.1, monotonic_coarse=1.1)
        noisy = [(c, "hot", row(sigma=0.05, n=12, seed=i)) for i, c in enumerate(CLOCKS)]
        passed = (True, "PASS (exact, edges, concurrency); pvclock, hvclock: PASS (exact, "
                        "edges, concurrency)")
        # a live review's lines (Rocket Lake, 2026-12-07), each wrapped once
        lines = self.render(t, rows=noisy, code=[f"f{i}: 1 of 30 differ" for i in range(4)],
                            sim=[(c, "pressure", 76, 76, 3, 2) for c in CLOCKS[:3]],
                            measured="its kbuild's vDSO image (vdso64.so), mapped as the "
                                     "kernel maps it",
                            line="the kernel's vDSO line (the tree's kbuild, Debian's config "
                                 "config.amd64_none_amd64.xz)",
                            machine={"cpu": "Rocket Lake (Intel Xeon, 6/167/1)",
                                     "microcode": "0x1", "kernel": "6.18.44-fc-v1300",
                                     "hypervisor": "KVM", "counter": "rdtscp",
                                     "cpu_pinned": 1},
                            verify={"after": passed, "before": passed})
        text = joined(lines)
        self.assertIn("(each 99.29%, Bonferroni).", text)
        self.assertIn("Data page:", lines)
        self.assertIn("  FIELD0: moved", lines)
        start = lines.index(next(x for x in lines if x.startswith("clock ")))
        self.assertEqual([c.upper() for c in CLOCKS],
                         [x.split()[0] for x in lines[start + 1:start + 8]])
        # the room the table leaves, not 40, cut it: the summary, in one line
        self.assertIn("vdso32 time (i386, natively, hot, +image): 2 slower, 5 no verdict",
                      lines)
        self.assertIn("  and 8 more lines: patch-review.json", lines)  # the page's own

    def test_the_page_keeps_its_first_lines_before_the_vdso32s_clocks(self):
        """A field's review (offs_boot, Rocket Lake, 2026-12-07) whose vdso32 had
        six slower clocks: the block kept "6 slower" and two of them, and cut
        the page to its size line, the field itself among what was cut. The
        page's first PAGE_KEEP lines come before the vdso32's clock lines."""
        page = ["struct vdso_data: 248 -> 256 bytes, 4 -> 4 lines",
                "REALTIME_COARSE: 3 -> 2 lines per call (lines 0, 1, 2 -> lines 0, 2)",
                "MONOTONIC_RAW: 3 -> 2 lines per call (lines 3, 4, 5 -> lines 4, 5)",
                "offs_boot: added at 40..47 (line 0)",
                "basetime[1].sec: 56..63 -> 64..71 (line 0 -> 1)",
                "basetime[5].sec: 120..127 -> 128..135 (line 1 -> 2)",
                "27 more fields changed"]
        passed = (True, "PASS (exact, edges, concurrency); pvclock, hvclock: PASS (exact, "
                        "edges, concurrency)")
        lines = self.render(timed(**{c: 1.1 for c in CLOCKS[:6]}), page=page,
                            code=[f"f{i}: 1 of 30 differ" for i in range(4)],
                            sim=[(c, "pressure", 76, 76, 3, 2) for c in CLOCKS[:2]],
                            measured="its kbuild's vDSO image (vdso64.so), mapped as the "
                                     "kernel maps it",
                            machine={"cpu": "Rocket Lake (Intel Xeon, 6/167/1)",
                                     "microcode": "0x1", "kernel": "6.18.44-fc-v1300",
                                     "hypervisor": "KVM", "counter": "rdtscp"},
                            verify={"after": passed, "before": passed})
        at = lines.index("Data page:")
        self.assertEqual(lines[at + 1:at + 6], [f"  {x}" for x in page[:4]]
                         + ["  and 3 more lines: patch-review.json"], lines)
        self.assertTrue(any(x.startswith("vdso32 time (i386, natively, hot, +image): 6 slower")
                            for x in lines), lines)

    def test_emulated_is_said_in_the_sentence(self):
        v = v32(verify(emulator="qemu-i386-static 7.2.22"), native_short="no IA32 emulation")
        self.assertEqual(["vdso32: built, symbols as expected; code identical; verified under "
                          "qemu-i386-static, not timed: no IA32 emulation (under qemu-i386 "
                          "there is no CPU's time)"], review_vdso32.block(v))


class Session:
    def __init__(self, out_dir):
        self.out_dir, self.files, self.out = out_dir, [], io.StringIO()

    def heading(self, text):
        self.out.write(f"-- {text}\n")

    def say(self, text=""):
        self.out.write(f"{text}\n")

    block = say


class FinishTest(unittest.TestCase):
    def finish(self, t):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        s = Session(d.name)
        v = v32(timed=t)
        v["lines"] = review_vdso32.block(v)
        rv = {"subject": "vdso: x", "tree": "Linux 6.12", "commit": None, "compiler": "gcc",
              "line": "kbuild", "measured": "image", "machine": {"cpu": "Xeon"},
              "verify": {}, "rows": [(c, "hot", row(seed=1)) for c in CLOCKS[:3]],
              "vdso32": v, "notes": []}
        with contextlib.redirect_stdout(io.StringIO()):
            ok = patch_review.finish(s, rv, None)
        with open(f"{d.name}/patch-review.json") as f:
            return ok, json.load(f), s.out.getvalue()

    def test_a_vdso32_row_without_a_verdict_fails_the_review(self):
        ok, record, out = self.finish(timed(realtime=None))
        self.assertFalse(ok)
        self.assertIn("INCOMPLETE: 1 of 7 vdso32 rows", out)
        self.assertIn("Some rows have no verdict", out)
        self.assertEqual(7, len(record["vdso32"]["timed"]["rows"]))
        self.assertEqual({"clock", "mode", "before", "after", "ratio", "verdict"},
                         {"clock", "mode", "before", "after", "ratio", "verdict"}
                         & set(record["vdso32"]["timed"]["rows"][0]))

    def test_complete_vdso32_rows_pass(self):
        ok, record, out = self.finish(timed())
        self.assertTrue(ok, out)
        self.assertEqual("image", record["vdso32"]["timed"]["build"])


if __name__ == "__main__":
    unittest.main()
