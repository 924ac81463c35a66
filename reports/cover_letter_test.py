"""The patch-review block's shape, from synthetic rows: no machine, no timing."""

import random
import unittest

from reports import cover_letter, cover_letter_arm64, fleet_review, review, struct_diff
from reports.testsupport import paired_rounds
from vdsobench_cli.core import stats

CLOCKS = ("realtime", "monotonic", "monotonic_raw", "boottime", "tai", "realtime_coarse",
          "monotonic_coarse")


def rows(effect=1.0, sigma=0.002, n=60, seed=1, refused=None):
    rng = random.Random(seed)
    out = []
    for clock in CLOCKS:
        for mode in ("hot", "pressure"):
            b, a = stats.simulate_rounds(rng, n, effect, sigma, 0.0)
            out.append((clock, mode, review.row(b, a, comparisons=14, refused=refused)))
    return out


def review_of(**over):
    rv = {"subject": "vdso: Reorder the do_hres() loads", "patches": 1,
          "measured": "the tree's lib/vdso read path rebuilt in userspace",
          "tree": "Linux 6.12.117", "commit": "0123456789abcdef0123",
          "compiler": "gcc 12.2.0", "line": "the kernel's vDSO line (kbuild, Debian config)",
          "machine": {"cpu": "AMD EPYC 7B13 64-Core Processor", "microcode": "0xa0011d1",
                      "kernel": "6.18.44", "hypervisor": "KVM", "counter": "rdtscp",
                      "cpu_pinned": 1},
          "verify": {"after": (True, "PASS (exact, edges, concurrency)"),
                     "before": (True, "PASS (exact, edges, concurrency)")},
          "code": "identical",
          "sim": [(c, m, 60, 60, 1, 1) for c in CLOCKS for m in ("hot", "pressure")],
          "rows": rows(), "page": ["no field moved; every path loads the same lines"],
          "why": [], "notes": [], "target": review.TARGET}
    rv.update(over)
    return rv


class ShapeTest(unittest.TestCase):
    def check_shape(self, lines):
        self.assertLessEqual(len(lines), cover_letter.MAX_LINES, "\n".join(lines))
        for line in lines:
            self.assertLessEqual(len(line), cover_letter.WIDTH, line)
        text = "\n".join(lines)
        self.assertNotIn("kernel:", text)
        self.assertNotIn("+always", text)

    def test_full_review_fits(self):
        lines = cover_letter.render(review_of())
        self.check_shape(lines)
        text = "\n".join(lines)
        self.assertIn("Read path object code: identical", text)
        self.assertIn("instructions, L1D misses per call unchanged", text)
        self.assertIn("git 0123456789ab", text)
        self.assertIn("Compiler: gcc 12.2.0", text)
        self.assertEqual(sum(line.startswith("MONOTONIC ") for line in lines), 2)
        self.assertTrue(lines[0].startswith("vdsobench patch-review:"))

    def test_every_row_is_arithmetic(self):
        for clock, mode, r in review_of()["rows"]:
            self.assertAlmostEqual(r["after"] / r["before"], r["ratio"], places=12)

    def test_incomplete_says_so_first(self):
        rv = review_of(rows=rows(sigma=0.05, n=12))
        lines = cover_letter.render(rv)
        self.check_shape(lines)
        self.assertTrue(lines[0].startswith("INCOMPLETE: "), lines[0])
        self.assertIn("?", "\n".join(lines))

    def test_lost_cpu_is_the_reason(self):
        rv = review_of(rows=rows(refused="lost the CPU in 9 of 40 rounds"),
                       notes=[cover_letter.group_lost([(6, 40), (34, 40), (0, 40)])])
        lines = cover_letter.render(rv)
        self.check_shape(lines)
        self.assertIn("the CPU was lost too often", lines[0])
        self.assertIn("Note: lost the CPU in 6 to 34 of 40 rounds on 2 rows", "\n".join(lines))

    def test_wrong_patch_has_no_table(self):
        rv = review_of(torn="concurrency: CLOCK_MONOTONIC went back 1000000 ns",
                       verify={"after": (False, "CAUGHT: concurrency")})
        lines = cover_letter.render(rv)
        self.check_shape(lines)
        self.assertTrue(lines[0].startswith("WRONG:"))
        self.assertFalse(any(line.startswith("clock ") for line in lines))
        self.assertIn("Where it tore", "\n".join(lines))

    def test_a_verify_that_did_not_run_is_no_tear(self):
        # was WRONG: a second review had taken the imports from under the first
        why = ("verify gave no verdict on the patched tree (rdtscp counter): "
               "no result (exit 2)")
        rv = review_of(unverified=why, rows=[], code=None, sim=[], page=[],
                       verify={"after": (False, "no result (exit 2)"),
                               "before": (True, "PASS (exact, edges, concurrency)")})
        lines = cover_letter.render(rv)
        self.check_shape(lines)
        text = "\n".join(lines)
        self.assertTrue(lines[0].startswith("INCOMPLETE: verify gave no verdict on the "
                                            "patched tree"), lines)
        self.assertIn("no result (exit 2); do not post", text)
        self.assertNotIn("WRONG", text)
        self.assertNotIn("tore", text)
        self.assertFalse(any(line.startswith("clock ") for line in lines))

    def test_a_commit_not_read_is_said(self):
        lines = cover_letter.render(review_of(commit=None, commit_why=".git/refs: is a "
                                              "symbolic link, not a folder"))
        self.assertIn("Linux 6.12.117 (git commit not read)", "\n".join(lines))
        lines = cover_letter.render(review_of(commit=None))  # a tarball: nothing to say
        self.assertIn("Measured: Linux 6.12.117, the tree's", "\n".join(lines))

    def test_code_and_sim_differences_shown(self):
        sim = [("monotonic", "hot", 60, 63, 1, 2), ("realtime", "hot", 60, 60, 1, 1)]
        rv = review_of(code=["MONOTONIC: +3 instructions"], sim=sim,
                       page=["offs_boot: added at 120..127 (line 1)",
                             "struct vdso_data: 496 -> 528 bytes, 8 -> 9 lines"])
        lines = cover_letter.render(rv)
        self.check_shape(lines)
        text = "\n".join(lines)
        self.assertIn("object code differs", text)
        self.assertIn("MONOTONIC hot: instructions 60 -> 63, L1D misses 1 -> 2", text)
        self.assertNotIn("REALTIME hot: instructions", text)
        self.assertIn("offs_boot", text)

    def test_the_code_section_names_a_changed_counter_read(self):
        rv = review_of(code=["do_hres: 2 of 40 instructions differ"])
        self.assertFalse(any(x.startswith("Counter read:") for x in cover_letter.render(rv)))
        rv["counter_read"] = {"before": {"do_hres": ["rdtsc_ordered()"]},
                              "after": {"do_hres": ["rdtscp"]},
                              "change": "rdtsc_ordered() -> rdtscp (do_hres)"}
        lines = cover_letter.render(rv)
        at = lines.index("Counter read: rdtsc_ordered() -> rdtscp (do_hres)")
        self.assertEqual(lines[at - 1], "  do_hres: 2 of 40 instructions differ", lines)
        self.assertLessEqual(len(lines), cover_letter.MAX_LINES)

    def test_everything_at_once_still_fits(self):
        sim = [(c, m, 60, 61, 1, 2) for c in CLOCKS for m in ("hot", "pressure")]
        rv = review_of(rows=rows(sigma=0.05, n=12), sim=sim,
                       code=[f"f{i}: 1 of 30 instructions differ" for i in range(6)],
                       page=[f"FIELD{i}: moved" for i in range(9)],
                       why=["A sentence long enough to wrap onto a second line of the "
                            "block, as the reconciliation does."],
                       notes=["lost the CPU in 9 to 29 of 40 rounds on 14 rows",
                              "pressure is simulated, not timed", "--quick"])
        lines = cover_letter.render(rv)
        self.check_shape(lines)
        self.assertIn("Data page:", lines)
        self.assertTrue(lines[0].startswith("INCOMPLETE"))

    def test_a_vdso32_that_does_not_build_is_wrong_and_untimed(self):
        v32 = {"broken": True, "built": {"before": True, "after": False},
               "lines": ["vdso32: the patched tree's does NOT build: arch/x86/entry/vdso/"
                         "vdso32.so.dbg: undefined symbols found (calls libgcc's "
                         "__udivdi3, which a vDSO does not link)",
                         "vdso32 verify and time: not run: the patched tree's vdso32 "
                         "does not build"]}
        lines = cover_letter.render(review_of(vdso32=v32, rows=[], verify={}))
        self.check_shape(lines)
        self.assertTrue(lines[0].startswith("WRONG: the patched tree's vdso32"), lines)
        text = "\n".join(lines)
        self.assertIn("__udivdi3", text)
        self.assertNotIn("change, 95% CI", text)
        self.assertNotIn("Read path object code", text)

    def test_the_vdso32_lines_leave_the_table_whole(self):
        v32 = {"broken": False, "built": {"before": True, "after": True},
               "lines": ["vdso32: built, symbols as expected; code differs in 2 functions; "
                         "not verified or timed: the kernel does not run 32-bit programs"]}
        sim = [(c, m, 60, 61, 1, 2) for c in CLOCKS for m in ("hot", "pressure")]
        rv = review_of(vdso32=v32, sim=sim, page=[f"FIELD{i}: moved" for i in range(9)],
                       code=[f"f{i}: 1 of 30 instructions differ" for i in range(6)],
                       notes=["pressure is simulated, not timed", "--quick"])
        lines = cover_letter.render(rv)
        self.check_shape(lines)
        self.assertIsNone(cover_letter.first_line(rv, rv["rows"], None))
        self.assertIn("vdso32: built, symbols as expected; code differs in 2 functions; not",
                      lines)
        start = next(i for i, x in enumerate(lines) if x.startswith("clock "))
        table = lines[start + 1:start + 1 + 2 * len(CLOCKS)]
        self.assertEqual([x.split()[:2] for x in table],
                         [[c.upper(), m] for c in CLOCKS for m in ("hot", "pressure")], lines)

    def test_hostile_strings_are_escaped(self):
        m = dict(review_of()["machine"], cpu="EPYC\x1b[2J\u202eevil")
        lines = cover_letter.render(review_of(machine=m, subject="x\x07y"))
        text = "\n".join(lines)
        self.assertNotIn("\x1b", text)
        self.assertNotIn("\u202e", text)
        self.assertIn("\\x1b", text)

    def test_terms_defined_once(self):
        text = "\n".join(cover_letter.render(review_of()))
        self.assertEqual(text.count("Legend:"), 1)
        self.assertIn("hot: back-to-back calls", text)
        self.assertIn("pressure:", text)

    def test_the_struct_size_survives_the_pages_cut(self):
        # a field added before the bases, every clock's lines changed, and a
        # block full of notes: the page is cut to its first lines, and the
        # struct's growth is among them (struct_diff.page puts it first)
        fields = ["offs_boot: added at 40..47 (line 0)",
                  "basetime[0].sec: 40..47 -> 48..55 (line 0)",
                  "23 more fields moved within their lines",
                  "struct vdso_data: 240 -> 248 bytes, 4 -> 4 lines"]
        paths = [f"{c.upper()}: 2 -> 3 lines per call (lines 0, 1 -> lines 0, 1, 2)"
                 for c in CLOCKS]
        notes = [f"note {i}: a sentence long enough to take a line of its own"
                 for i in range(9)]
        for page, kept in ((struct_diff.page(paths, fields, "vdso_data"), True),
                           (paths + fields, False)):  # the old order lost it
            lines = cover_letter.render(review_of(page=page, notes=notes))
            self.check_shape(lines)
            self.assertTrue(any("more lines: patch-review.json" in x for x in lines), lines)
            self.assertEqual(any("240 -> 248 bytes" in x for x in lines), kept, lines)

    def test_a_dirty_tree_is_named(self):
        lines = cover_letter.render(review_of(dirty=["lib/vdso/gettimeofday.c"]))
        self.check_shape(lines)
        text = " ".join(x.strip() for x in lines)
        self.assertIn("(git 0123456789ab, dirty: lib/vdso/gettimeofday.c)", text)
        many = review_of(dirty=["lib/vdso/gettimeofday.c", "include/vdso/datapage.h",
                                "kernel/time/vsyscall.c", "include/vdso/helpers.h"])
        text = " ".join(x.strip() for x in cover_letter.render(many))
        self.assertIn("dirty: lib/vdso/gettimeofday.c, include/vdso/datapage.h and 2 more)",
                      text)
        self.assertNotIn("dirty", " ".join(cover_letter.render(review_of(dirty=[]))))

    def test_a_series_says_what_was_timed_and_keeps_its_shape(self):
        """Each patch verified, the end points alone timed: said before any
        number, in whatever room the table leaves (cover_letter_series_test:
        the series' own lines)."""
        for n in (2, 3, 5, 100):
            steps = [{"n": k, "subject": f"vdso: Change {k}", "result": "verified",
                      "why": None, "code": "identical", "sim": []} for k in range(1, n + 1)]
            lines = cover_letter.render(review_of(patches=n, series={"patches": steps,
                                                                     "stopped": None}))
            self.check_shape(lines)
            text = " ".join(x.strip() for x in lines)
            self.assertIn(f"(a series of {n})", text)
            self.assertIn(f"Series: {n} patches, each applied, built and verified in turn; "
                          "timed: the end points", text)
            self.assertIn("were not timed", text)
            self.assertLess(text.index("Series:"), text.index("ns/call"))
        one = " ".join(x.strip() for x in cover_letter.render(review_of()))
        self.assertNotIn("Series:", one)

    def test_the_legend_states_the_level_the_rows_hold(self):
        # 14 rows, each at 1 - 0.05/14: the header claims no level of its own
        lines = cover_letter.render(review_of())
        text = " ".join(x.strip() for x in lines)
        self.assertNotIn("95% CI", text)
        self.assertIn("CI: 95% for the 14 rows together (each 99.64%, Bonferroni)", text)
        one = [("monotonic", "hot", review.row(*stats.simulate_rounds(random.Random(2), 60,
                                                                       1.0, 0.002, 0.0)))]
        text = " ".join(x.strip() for x in cover_letter.render(review_of(rows=one)))
        self.assertIn("CI: 95%.", text)
        self.assertNotIn("Bonferroni", text)


if __name__ == "__main__":
    unittest.main()


PASS = (True, "PASS (exact, edges, concurrency)")
ZEN4, ZEN3 = "Zen 4 (AMD EPYC 9654, 25/17/1)", "Zen 3 (AMD EPYC 7763, 25/1/1)"


def fleet_of(spec, seed=3, failed=()):
    """reports/fleet_review.reduce() of synthetic nodes: [(cpu, count, effect)]."""
    rng, nodes = random.Random(seed), []
    for cpu, count, effect in spec:
        for _ in range(count):
            rounds = {(c, "hot"): paired_rounds((c, "hot"), *stats.simulate_rounds(
                rng, 60, effect, 0.002, 0.0)) for c in CLOCKS}
            nodes.append({"node": f"n{len(nodes) + 1}", "cpu": cpu, "counter": "rdtscp",
                          "kernel": "6.1.0-13-amd64", "hypervisor": None,
                          "verify": {"after": PASS, "before": PASS}, "rounds": rounds,
                          "failed": None})
    for name, why in failed:
        nodes.append({"node": name, "cpu": None, "failed": why})
    red = fleet_review.reduce(nodes)
    red.update(job="17", asked=len(nodes), job_dir="/shared/jobs/17")
    return red


def arm64_of(**over):
    a = {"arch": "arm64", "emulator": "qemu-aarch64-static 7.2.22",
         "counter": "isb_cntvct_dep", "counter_why": "no FEAT_ECV",
         "verify": {"after": PASS, "before": PASS}, "torn": None, "code": "identical",
         "code_why": None, "instructions": [(c, 41, 41) for c in CLOCKS[:3]], "page": [],
         "not_counted": {}, "notes": [], "missing": None}
    a.update(over)
    return a


class ClusterShapeTest(unittest.TestCase):
    """The block of patch-review --fleet: the cluster's part in place of the
    one machine's line and table, arm64's section, within 40 x 72."""

    def check(self, rv):
        lines = cover_letter.render(rv)
        ShapeTest.check_shape(self, lines)
        return lines

    def test_two_models_and_arm64(self):
        rv = review_of(rows=[], fleet=fleet_of([(ZEN4, 2, 0.98), (ZEN3, 2, 1.03)]),
                       arm64=arm64_of(), notes=["pressure is simulated, not timed: two "
                                                "builds of the same tree differ by a third",
                                                "each node read its CPU's own counter"])
        lines = self.check(rv)
        text = "\n".join(lines)
        self.assertNotIn("Machine:", text)  # the models are named instead
        self.assertIn("verify, before and after, here on AMD EPYC 7B13 64-Core", text)
        self.assertIn("Zen 4", text)
        self.assertIn("Zen 3", text)
        self.assertRegex(text, r"faster on Zen 4, 3\.0% slower on\s+Zen 3")
        i = next(k for k, x in enumerate(lines) if x.startswith("arm64 (emulated"))
        self.assertLess(next(k for k, x in enumerate(lines) if x.startswith("Data page")), i)
        self.assertFalse(any("ns" in x.split() for x in lines[i:i + 6]), lines[i:])
        self.assertEqual(lines[0], "vdsobench patch-review: vdso: Reorder the do_hres() loads")

    def test_a_failed_node_makes_it_incomplete(self):
        rv = review_of(rows=[], fleet=fleet_of([(ZEN4, 2, 1.0)],
                                               failed=[("n9", "exit 3: no vDSO")]))
        lines = self.check(rv)
        self.assertTrue(lines[0].startswith("INCOMPLETE: 1 of 3 nodes gave no review"),
                        lines[0])
        self.assertIn("n9", "\n".join(lines))

    def test_torn_on_arm64_only(self):
        rv = review_of(arm64=arm64_of(torn="edges: 56-bit arch timer wrap: 3 ns off",
                                      verify={"after": (False, "CAUGHT: edges: wrap"),
                                              "before": PASS}))
        lines = self.check(rv)
        self.assertEqual(lines[0], "WRONG: the patched tree fails verify on arm64 "
                                   "(emulated); do not post")
        self.assertIn("MONOTONIC ", "\n".join(lines))  # x86's own time is still shown

    def test_notes_are_cut_whole(self):
        long = "a note long enough to wrap onto a second line of the block " * 2
        rv = review_of(fleet=fleet_of([(ZEN4, 2, 0.98), (ZEN3, 2, 1.03)]), rows=[],
                       arm64=arm64_of(), notes=[long] * 6,
                       page=[f"FIELD{i}: moved" for i in range(9)])
        lines = self.check(rv)
        self.assertEqual(lines[-1], "Note: more notes in patch-review.json")
        notes = [k for k, x in enumerate(lines) if x.startswith("Note: a note")]
        for k in notes:  # each note shown has all its lines
            self.assertTrue(lines[k + 1].startswith("  "), lines[k:])
            self.assertTrue(lines[k + 2].startswith(("  ", "Note:")), lines[k:])

    def test_the_table_is_whole_beside_everything_else(self):
        """The first full review on a cluster cut the table to four rows:
        now code, simulation and arm64 give way to it."""
        sim = [(c, m, 60, 61, 3, 2) for c in CLOCKS for m in ("hot", "pressure")]
        rv = review_of(rows=[], fleet=fleet_of([(ZEN4, 2, 0.99)]), sim=sim,
                       code=[f"f{i}: 1 of 30 instructions differ" for i in range(4)],
                       page=[f"FIELD{i}: moved" for i in range(9)],
                       arm64=arm64_of(code=["clock_getres: 1 of 31 instructions differ"],
                                      instructions=[(c, 29, 31) for c in CLOCKS],
                                      page=["offs_boot: added at 32..39 (line 0)"] * 3),
                       notes=["pressure is simulated, not timed: two builds of the same "
                              "tree differ by a third in time under pressure"])
        lines = self.check(rv)
        start = next(i for i, x in enumerate(lines) if x.startswith("change, 95% CI"))
        table = lines[start + 1:start + 1 + len(CLOCKS)]
        self.assertEqual([x.split()[0] for x in table], [c.upper() for c in CLOCKS], lines)
        self.assertIn("Data page (x86-64):", lines)
        self.assertIn(cover_letter_arm64.EMULATED, lines)

    def test_caught_on_a_node_only(self):
        """verify passed here but a node's own counter read tore it: WRONG,
        that model untimed, the others still shown."""
        red = fleet_of([(ZEN4, 2, 0.99), (ZEN3, 1, 0.99)])
        for m in red["models"]:
            if m["cpu"] == ZEN3:
                m["caught"] = True
                m["verify"] = {"after": (False, "FAIL: concurrency: torn read"),
                               "before": PASS}
        rv = review_of(rows=[], fleet=red, torn=f"caught on {ZEN3}")
        lines = self.check(rv)
        self.assertEqual(lines[0], "WRONG: the patched tree fails verify; do not post")
        text = "\n".join(lines)
        self.assertIn(f"Where it tore: caught on {ZEN3}", " ".join(text.split()))
        self.assertIn("torn read", text)
