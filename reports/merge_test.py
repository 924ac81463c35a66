"""Merging results across machines and cores: the committed AMD and "Intel"
fixtures give the expected table, columns keyed by machine and CPU, the
differing commit, flags and compiler called out, ratios to a reference."""

import copy
import csv
import io
import json
import statistics
import unittest

from reports import merge
from vdsobench_cli.core import vocab
from reports.testsupport import (ROOT, SELECTION, SMALL, ZEN3_RUN, ZEN4_RUN, fixture,
                                 without_rdtscp, zen5)


TWO_MACHINES = """\
Machines:
  Zen 3 cpu1: Zen 3 (AMD EPYC, 25/1/1), microcode 0x1000065, kernel 6.18.44-fc-v782, KVM guest \
(amd-epyc.json; warnings: hypervisor, load)
  Sapphire Rapids cpu0: Sapphire Rapids (Intel Xeon Platinum 8480+, 6/143/8), microcode 0x2b000\
4b1, kernel 6.8.0-49-generic, KVM guest (intel-xeon.json; warnings: hypervisor)
  Sapphire Rapids cpu8: Sapphire Rapids (Intel Xeon Platinum 8480+, 6/143/8), microcode 0x2b000\
4b1, kernel 6.8.0-49-generic, KVM guest (intel-xeon.json; warnings: hypervisor)
Differences between the runs (besides the machine):
  project commit: amd-epyc.json 275c39f86a44; intel-xeon.json 6af4520a88f0
  copts: amd-epyc.json -g -UNDEBUG -Wall -Wextra -Werror; intel-xeon.json -g -UNDEBUG -Wall -We\
xtra -Werror -march=x86-64-v3
  compiler: amd-epyc.json 12.2.0; intel-xeon.json 13.2.0

variant                          clock                       Zen 3 cpu1  Sapphire Rapids cpu0  \
Sapphire Rapids cpu8
-----------------------------------------------------------------------------------------------\
--------------------
x86_gtod_raw_copy+rdtscp+always  CLOCK_MONOTONIC      28.7 [26.8, 43.0]     30.1 [29.3, 30.9]  \
   30.4 [29.5, 33.0]
x86_gtod_raw_copy+rdtscp+always  CLOCK_MONOTONIC_RAW  27.2 [26.6, 51.1]     31.9 [29.2, 34.4]  \
   32.2 [30.0, 33.5]
sys/vdso                         CLOCK_MONOTONIC      29.7 [28.6, 31.2]     31.7 [29.0, 33.8]  \
   32.0 [29.4, 34.8]
sys/vdso                         CLOCK_MONOTONIC_RAW  28.9 [28.3, 31.8]     33.6 [31.4, 37.1]  \
   33.9 [32.4, 39.0]

ns per call: the median of the repetitions [its 95% confidence interval, order statistics]; [a.\
.b]: the min..max range, where too few repetitions for an interval.
"""
ZEN3 = "Zen 3 (AMD EPYC, 25/1/1)"
SPR = "Sapphire Rapids (Intel Xeon Platinum 8480+, 6/143/8)"


def repetitions(data, name):
    return sorted(b["real_time"] for b in data["benchmarks"]
                  if b["run_type"] == "iteration" and b["run_name"] == name)


class TwoMachinesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.amd, cls.intel = fixture("amd-epyc.json"), fixture("intel-xeon.json")
        cls.merged = merge.merge([cls.amd, cls.intel], **SELECTION)

    def test_the_expected_table(self):
        self.maxDiff = None
        self.assertEqual(merge.render_merge(self.merged, "table"), TWO_MACHINES)

    def test_columns_are_machines_and_cpus(self):
        cols = self.merged["columns"]
        self.assertEqual([(c["label"], c["cpu"], c["source"]) for c in cols],
                         [("Zen 3 cpu1", 1, "amd-epyc.json"),
                          ("Sapphire Rapids cpu0", 0, "intel-xeon.json"),
                          ("Sapphire Rapids cpu8", 8, "intel-xeon.json")])
        self.assertEqual([c["machine"]["uarch"] for c in cols],
                         ["Zen 3", "Sapphire Rapids", "Sapphire Rapids"])
        self.assertEqual({k: cols[1]["machine"][k] for k in merge.KEY_FIELDS},
                         {"emulated": None, "vendor": "GenuineIntel", "family": 6, "model": 143,
                          "model_name": "Intel(R) Xeon(R) Platinum 8480+",
                          "microcode": "0x2b0004b1", "kernel": "6.8.0-49-generic",
                          "hypervisor": "KVM"})

    def test_cells_are_medians_with_order_statistic_intervals(self):
        row = next(r for r in self.merged["rows"]
                   if (r["variant"], r["clock"]) == ("sys/vdso", "monotonic"))
        times = repetitions(self.amd[1], "sys/vdso/monotonic/hot/cpu1")
        cell = row["cells"]["c1"]
        self.assertEqual(cell["ns"], statistics.median(times))
        # six repetitions: the 95% interval of the median is their range
        self.assertEqual((cell["low"], cell["high"], cell["interval"], cell["n"]),
                         (times[0], times[-1], "ci", 6))

    def test_differences_called_out(self):
        self.assertEqual([(d["what"], d["values"]) for d in self.merged["differences"]],
                         [("project commit", {"amd-epyc.json": "275c39f86a44",
                                              "intel-xeon.json": "6af4520a88f0"}),
                          ("copts", {"amd-epyc.json": "-g -UNDEBUG -Wall -Wextra -Werror",
                                     "intel-xeon.json": "-g -UNDEBUG -Wall -Wextra -Werror "
                                                        "-march=x86-64-v3"}),
                          ("compiler", {"amd-epyc.json": "12.2.0",
                                        "intel-xeon.json": "13.2.0"})])
        same = merge.merge([self.amd, ("again.json", self.amd[1])])
        self.assertEqual(same["differences"], [])
        dirty = copy.deepcopy(self.amd[1])
        dirty["context"]["vdsobench"]["fingerprint"]["build"]["dirty"] = True
        diff, = merge.differences([self.amd, ("dirty.json", dirty)])
        self.assertEqual(diff["values"]["dirty.json"], "275c39f86a44 (uncommitted changes)")

    def test_reference_ratios_per_machine(self):
        merged = merge.merge([self.amd, self.intel], reference="sys/vdso", **SELECTION)
        for row in merged["rows"]:
            vdso = next(r for r in merged["rows"]
                        if (r["variant"], r["clock"]) == ("sys/vdso", row["clock"]))
            for cid, cell in row["cells"].items():
                self.assertAlmostEqual(cell["ratio"], cell["ns"] / vdso["cells"][cid]["ns"])
        text = merge.render_merge(merged, "table")
        self.assertIn("0.950x", text)
        self.assertIn("Nx: the median over sys/vdso's", text)
        # the reference need not be among the variants shown
        only = merge.merge([self.amd, self.intel], reference="sys/vdso",
                           variants=["sys/syscall"], clocks=["monotonic"])
        self.assertEqual([r["variant"] for r in only["rows"]], ["sys/syscall"])
        self.assertGreater(only["rows"][0]["cells"]["c2"]["ratio"], 5)

    def test_formats(self):
        text = merge.render_merge(self.merged, "markdown")
        self.assertIn("| variant | clock | Zen 3 cpu1 | Sapphire Rapids cpu0 |", text)
        self.assertIn("| `sys/vdso` | CLOCK_MONOTONIC | 29.7 [28.6, 31.2] |", text)
        self.assertIn("- project commit: amd-epyc.json 275c39f86a44", text)
        rows = list(csv.DictReader(io.StringIO(merge.render_merge(self.merged, "csv"))))
        self.assertEqual(len(rows), 4 * 3)
        self.assertEqual({r["model_name"] for r in rows},
                         {"AMD EPYC", "Intel(R) Xeon(R) Platinum 8480+"})
        self.assertEqual({r["uarch"] for r in rows}, {"Zen 3", "Sapphire Rapids"})
        self.assertEqual(json.loads(merge.render_merge(self.merged, "json")),
                         json.loads(json.dumps(self.merged)))
        with self.assertRaises(ValueError):
            merge.render_merge(self.merged, "xml")


class UarchLabelsTest(unittest.TestCase):
    """Machines named by microarchitecture: two "AMD EPYC" runs on different
    CPUs no longer look alike."""

    def test_zen3_and_zen5_are_told_apart(self):
        name, data = fixture("amd-epyc.json")
        merged = merge.merge([(name, data), ("zen5.json", zen5(data))], variants=["sys/vdso"],
                             clocks=["monotonic"])
        labels = [c["label"] for c in merged["columns"]]
        self.assertEqual(labels, ["Zen 3 cpu1", "Zen 5 cpu1"])
        text = merge.render_merge(merged, "table")
        self.assertIn("  Zen 3 cpu1: Zen 3 (AMD EPYC, 25/1/1), microcode 0x1000065", text)
        self.assertIn("  Zen 5 cpu1: Zen 5 (AMD EPYC, 26/2/1), microcode 0x1000065", text)
        self.assertEqual([merge.meta(c["machine"])["cpu_model"] for c in merged["columns"]],
                         [ZEN3, "Zen 5 (AMD EPYC, 26/2/1)"])

    def test_recorded_uarch_is_kept(self):
        name, data = fixture("amd-epyc.json")
        self.assertNotIn("uarch", data["context"]["vdsobench"]["fingerprint"]["cpu"])
        self.assertEqual(merge.machine(data)["uarch"], "Zen 3")
        named = copy.deepcopy(data)
        named["context"]["vdsobench"]["fingerprint"]["cpu"]["uarch"] = "Milan"
        self.assertEqual(merge.machine(named)["uarch"], "Milan")
        self.assertTrue(merge.machine_text(merge.machine(named)).startswith(
            "Milan (AMD EPYC, 25/1/1), microcode 0x1000065, kernel 6.18.44-fc-v782, KVM guest"))

    def test_unknown_cpu_is_named_by_its_ids(self):
        name, data = fixture("amd-epyc.json")
        odd = copy.deepcopy(data)
        odd["context"]["vdsobench"]["fingerprint"]["cpu"]["model"] = 0xf0
        merged = merge.merge([("odd.json", odd)], variants=["sys/vdso"], clocks=["monotonic"])
        self.assertEqual(merged["columns"][0]["label"],
                         "AuthenticAMD family 25 model 240 stepping 1 (AMD EPYC) cpu1")

    # The committed reference runs and the CPU each was taken on: a run
    # added from a new CPU model adds its row here, so its label is checked
    # against what the machine was, not against what the table says.
    COMMITTED = {(25, 1): ZEN3, (25, 17): "Zen 4 (AMD EPYC, 25/17/1)"}

    def test_committed_runs_are_named_by_their_uarch(self):
        runs = sorted((ROOT / "results" / "runs").glob("*.json"))
        self.assertTrue(runs, "no committed runs in results/runs")
        for path in runs:
            with self.subTest(run=path.name):
                data = json.loads(path.read_text())
                cpu = data["context"]["vdsobench"]["fingerprint"]["cpu"]
                self.assertIn((cpu["family"], cpu["model"]), self.COMMITTED,
                              "a committed run from a CPU this test does not know")
                expected = self.COMMITTED[(cpu["family"], cpu["model"])]
                m = merge.machine(data)
                self.assertEqual(m["uarch"], expected.split(" (")[0])
                self.assertTrue(merge.machine_text(m).startswith(expected + ", "))


class EdgesTest(unittest.TestCase):
    def test_too_few_repetitions_give_the_range(self):
        merged = merge.merge([fixture(str(SMALL))])
        cell = merged["rows"][0]["cells"]["c1"]
        self.assertEqual((cell["interval"], cell["n"]), ("range", 3))
        self.assertIn("17.4 [17.4..17.5]", merge.render_merge(merged, "table"))

    def test_hybrid_cpus_are_labelled_with_their_kind(self):
        # the Intel fixture measured CPUs 0 and 8: make them a P- and an E-core
        name, data = fixture("intel-xeon.json")
        hybrid = copy.deepcopy(data)
        hybrid["context"]["vdsobench"]["pinning"]["cpu_kinds"] = {"0": "IntelCore",
                                                                  "8": "IntelAtom"}
        merged = merge.merge([(name, hybrid)], variants=["sys/vdso"])
        self.assertEqual([c["label"] for c in merged["columns"]],
                         ["Sapphire Rapids cpu0 (IntelCore)", "Sapphire Rapids cpu8 (IntelAtom)"])
        # one kind tells nothing about a column: no label
        hybrid["context"]["vdsobench"]["pinning"]["cpu_kinds"] = {"0": "IntelCore",
                                                                  "8": "IntelCore"}
        merged = merge.merge([(name, hybrid)], variants=["sys/vdso"])
        self.assertEqual([c["label"] for c in merged["columns"]],
                         ["Sapphire Rapids cpu0", "Sapphire Rapids cpu8"])

    def test_one_machine_in_two_files_is_told_apart(self):
        name, data = fixture("amd-epyc.json")
        merged = merge.merge([(name, data), ("rerun.json", data)], variants=["sys/vdso"])
        self.assertEqual([c["label"] for c in merged["columns"]],
                         ["Zen 3 cpu1 (amd-epyc.json)", "Zen 3 cpu1 (rerun.json)"])
        other = copy.deepcopy(data)
        other["context"]["vdsobench"]["fingerprint"]["kernel"]["release"] = "6.19.0"
        merged = merge.merge([(name, data), ("new.json", other)], variants=["sys/vdso"])
        self.assertEqual([c["label"] for c in merged["columns"]],
                         ["Zen 3 kernel 6.18.44-fc-v782 cpu1", "Zen 3 kernel 6.19.0 cpu1"])

    def test_a_32_bit_run_of_one_machine_is_told_apart_by_its_abi(self):
        # the fixture predates the ABI record: a 64-bit run of its machine's
        name, data = fixture("amd-epyc.json")
        i386 = copy.deepcopy(data)
        i386["context"]["vdsobench"]["abi"] = {"name": "i386", "bits": 32, "left_out": []}
        merged = merge.merge([(name, data), ("i386.json", i386)], variants=["sys/vdso"])
        self.assertEqual([c["label"] for c in merged["columns"]],
                         ["Zen 3 cpu1 x86_64", "Zen 3 cpu1 i386"])
        self.assertEqual(merged["differences"],
                         [{"what": "ABI", "values": {name: "x86_64 (64-bit)",
                                                     "i386.json": "i386 (32-bit)"}}])
        self.assertIn("  ABI: amd-epyc.json x86_64 (64-bit); i386.json i386 (32-bit)",
                      merge.render_merge(merged).splitlines())

    def test_bad_input(self):
        name, data = fixture("amd-epyc.json")
        with self.assertRaises(merge.InputError) as cm:
            merge.merge([(name, data)], variants=["nosuch*"])
        self.assertIn("'nosuch*' matches no variant in the inputs (present: "
                      "x86_gtod+rdtscp+always, ", str(cm.exception))
        with self.assertRaises(merge.InputError):
            merge.merge([(name, data)], reference="generic_*")   # more than one
        failed = copy.deepcopy(data)
        for b in failed["benchmarks"]:
            b["error_occurred"] = True
        with self.assertRaises(merge.InputError) as cm:
            merge.merge([("failed.json", failed)])
        self.assertIn("failed.json: no benchmark with a measured time", str(cm.exception))
        with self.assertRaises(merge.InputError):
            merge.merge([])

    def test_short_model(self):
        self.assertEqual(merge.short_model("11th Gen Intel(R) Core(TM) i7-1165G7 @ 2.80GHz"),
                         "11th Gen Intel Core i7-1165G7")
        self.assertEqual(merge.short_model("AMD EPYC 7763 64-Core Processor"), "AMD EPYC 7763")
        self.assertEqual(merge.short_model(None), "unknown CPU")


class OwnCounterTest(unittest.TestCase):
    """A mixed cluster: rows line up by layout, clock and mode where each
    machine read its own counter (recorded Zen 3 and Zen 4 runs, the Zen 4 one
    renamed as a node without RDTSCP); no timing is taken here."""

    @classmethod
    def setUpClass(cls):
        cls.zen3 = ("zen3.json", json.loads(ZEN3_RUN.read_text()))
        cls.zen4 = ("zen4-lfence.json", without_rdtscp(json.loads(ZEN4_RUN.read_text())))
        cls.hot = dict(clocks=["monotonic"], modes=["hot"])
        cls.merged = merge.merge([cls.zen3, cls.zen4], **cls.hot)

    def test_own_counter(self):
        self.assertEqual(merge.own_counter(self.zen3[1]), "rdtscp")
        self.assertEqual(merge.own_counter(self.zen4[1]), "lfence_rdtsc")
        for arch, flags, want in (("x86_64", {"rdtscp": True}, "rdtscp"),
                                  ("x86_64", {"rdtscp": False}, "lfence_rdtsc"),
                                  ("x86_64", {"rdtscp": None}, None),  # not read
                                  ("aarch64", {"rdtscp": None}, None),  # no ecv recorded
                                  ("riscv64", {"rdtscp": True}, None),
                                  ("x86_64", None, None)):
            self.assertEqual(vocab.own_counter(arch, flags), want, (arch, flags))
        emulated = copy.deepcopy(self.zen3[1])
        emulated["context"]["vdsobench"]["emulation"] = {"label": "emulated (qemu-user)"}
        self.assertIsNone(merge.own_counter(emulated))

    def test_rows_line_up(self):
        m = self.merged
        labels = {c["id"]: c["label"] for c in m["columns"]}
        self.assertEqual(m["own_counters"], {"rdtscp": ["c1", "c2"], "lfence_rdtsc": ["c3"]})
        self.assertEqual([c["counter"] for c in m["columns"]],
                         ["rdtscp", "rdtscp", "lfence_rdtsc"], labels)
        row = {r["variant"]: r for r in m["rows"]}
        for layout in ("generic_5_3", "generic_6_10", "x86_gtod"):
            self.assertEqual(sorted(row[f"{layout}+default+always"]["cells"]),
                             ["c1", "c2", "c3"], layout)
        self.assertFalse([v for v in row if "+rdtscp+" in v or "+lfence_rdtsc+" in v])
        self.assertIn("sys/vdso", row)  # not a layout: as it was
        # the Zen 4 cell is the renamed file's own median
        zen4 = repetitions(self.zen4[1], "generic_5_3+lfence_rdtsc+always/monotonic/hot/cpu0")
        self.assertEqual(row["generic_5_3+default+always"]["cells"]["c3"]["ns"],
                         statistics.median(zen4))
        rows = list(csv.DictReader(io.StringIO(merge.render_merge(m, "csv"))))
        self.assertEqual({r["variant"] for r in rows if r["variant"].startswith("generic_5_3+")},
                         {"generic_5_3+rdtscp+always", "generic_5_3+lfence_rdtsc+always"})
        text = merge.render_merge(m, "table")
        self.assertIn("(zen4-lfence.json; own counter lfence_rdtsc; warnings", text)
        self.assertIn("+default+: each machine's own counter read, the one a run reads by "
                      "default there (rdtscp on Zen 3 cpu0, Zen 3 cpu1; lfence_rdtsc on "
                      "Zen 4 cpu0).", text)

    def test_measured_names_still_select(self):
        ref = merge.merge([self.zen3, self.zen4], reference="generic_5_3+lfence_rdtsc+always",
                          **self.hot)
        self.assertEqual(ref["reference"], "generic_5_3+default+always")
        base = next(r for r in ref["rows"] if r["variant"] == ref["reference"])
        self.assertEqual({c["ratio"] for c in base["cells"].values()}, {1.0})
        one = merge.merge([self.zen3, self.zen4], variants=["generic_5_3+lfence_rdtsc+always"],
                          **self.hot)
        (r,) = one["rows"]
        self.assertEqual(list(r["cells"]), ["c3"])
        every = merge.merge([self.zen3, self.zen4], variants=["generic_5_3+default+always"],
                            **self.hot)
        self.assertEqual(len(every["rows"][0]["cells"]), 3)
        # the Zen 3 columns alone: still the aligned row, so still its note
        zen3 = merge.merge([self.zen3, self.zen4], variants=["generic_5_3+rdtscp+always"],
                           **self.hot)
        self.assertEqual([c["id"] for c in zen3["columns"]], ["c1", "c2"])
        self.assertEqual(zen3["own_counters"], {"rdtscp": ["c1", "c2"]})
        self.assertIn("+default+: each machine's own counter read",
                      merge.render_merge(zen3, "table"))
        with self.assertRaises(merge.InputError) as cm:
            merge.merge([self.zen3, self.zen4], variants=["generic_5_3+mfence_rdtsc+always"])
        self.assertIn("(present: ", str(cm.exception))

    def test_only_the_own_counter_lines_up(self):
        # a Zen 3 run that also read lfence_rdtsc, which is not its own: its own row
        name, data = self.zen3
        data = copy.deepcopy(data)
        for b in data["benchmarks"]:
            if b["name"].startswith("generic_6_10+rdtscp+"):
                b["name"] = b["run_name"] = b["run_name"].replace("+rdtscp+", "+lfence_rdtsc+")
        m = merge.merge([(name, data), self.zen4], **self.hot)
        row = {r["variant"]: r for r in m["rows"]}
        self.assertEqual(sorted(row["generic_6_10+lfence_rdtsc+always"]["cells"]), ["c1", "c2"])
        self.assertEqual(sorted(row["generic_6_10+default+always"]["cells"]), ["c3"])

    def test_one_counter_names_stay(self):
        m = merge.merge([self.zen3, ("zen4.json", json.loads(ZEN4_RUN.read_text()))],
                        **self.hot)
        self.assertEqual(m["own_counters"], {})
        self.assertIn("generic_5_3+rdtscp+always", {r["variant"] for r in m["rows"]})
        self.assertNotIn("own counter", merge.render_merge(m, "table"))


if __name__ == "__main__":
    unittest.main()
