"""`run` end to end with the real harness at a tiny --min-time: every mode, the
results file, no-overwrite, and each bad input. No timing is asserted."""

import os
import tempfile
import unittest

from vdsobench_cli import main
from vdsobench_cli.measure import results
from vdsobench_cli.commands import run
from vdsobench_cli.tests.support import difference_report, gbench_load, vdsobench

VARIANT = "generic_timens+lfence_rdtsc+always"  # the one layout every mode applies to
CLOCKS = ("monotonic", "getres:monotonic", "gettimeofday", "time")
ALL_MODES = ("hot", "pressure", "compute", "writer", "timens", "pointer")
QUICK = ["--min-time", "0.001", "--repetitions", "2", "--quiet"]


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def expected_names(cpu):
    names = {f"{VARIANT}/{c}/{m}/cpu{cpu}" for c in CLOCKS for m in ALL_MODES}
    names |= {f"sys/vdso/{c}/{m}/cpu{cpu}" for c in CLOCKS
              for m in ("hot", "pressure", "compute", "pointer")}
    names |= {f"floor/empty/none/{m}/cpu{cpu}" for m in ("hot", "pressure", "compute")}
    return names


class HarnessArgsTest(unittest.TestCase):
    def test_defaults_and_lists(self):
        p = main.parser()
        ns = p.parse_args(["run", "--variants", "a*,b", "--variants", "c", "--no-pin"])
        self.assertEqual(run.harness_args(ns),
                         ["--variants", "a*,b,c", "--min-time", "0.1",
                          "--repetitions", "3", "--no-pin"])

    def test_cpus_of_names(self):
        self.assertEqual(run.cpus_of(["sys/vdso/monotonic/hot/cpu3", "floor/empty/none/hot/cpu0",
                                      "x/monotonic/hot/cpu3"]), [0, 3])


class RunEndToEndTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-run-test-")
        cls.path = os.path.join(cls.tmp.name, "every-mode.json")
        cls.cpus = os.cpu_count() or 1
        cls.rc, cls.out, cls.err = vdsobench(
            "run", "--variants", f"{VARIANT},sys/vdso,floor/empty", "--clocks", ",".join(CLOCKS),
            "--modes", ",".join(ALL_MODES), "--out", cls.path, *QUICK)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        if self.cpus < 2:
            self.skipTest("the writer mode needs a second CPU")

    def test_every_mode_ran(self):
        self.assertEqual(self.rc, 0, self.err)
        data = results.load(self.path)
        names = {b["run_name"] for b in data["benchmarks"]}
        cpu = data["context"]["vdsobench"]["pinning"]["cpus"][0]
        self.assertEqual(names, expected_names(cpu))
        iterations = [b for b in data["benchmarks"] if b["run_type"] == "iteration"]
        self.assertEqual(len(iterations), 2 * len(names), "two repetitions each")
        for b in iterations:
            self.assertGreater(b["iterations"], 0, b["name"])
            self.assertNotIn("error_occurred", b, b["name"])
            # pinned: each ran where its name says
            self.assertEqual(b["cpu"], results.benchmark_key(b["name"])[3], b["name"])
            if "/writer/" in b["name"]:
                self.assertGreater(b["writer_hz"], 0, "the writer published")

    def test_context_records_what_a_reader_needs(self):
        v = results.load(self.path)["context"]["vdsobench"]
        self.assertEqual(v["schema"], run.SCHEMA)
        self.assertTrue(v["pinning"]["pinned"])
        counters = v["counters"]
        self.assertIsInstance(counters["available"], bool)
        if not counters["available"]:
            self.assertTrue(counters["reason"], "no counters: the reason is recorded")
        self.assertTrue(v["fingerprint"]["kernel"]["vdso"]["available"])
        self.assertTrue(v["fingerprint"]["build"]["compiler"])
        self.assertEqual(v["command"][:2], ["scripts/vdsobench", "run"])

    def test_compare_py_reads_it(self):
        data = gbench_load(self.path)
        report = difference_report(data, data)
        self.assertTrue(report)
        for row in report:
            for m in row["measurements"]:
                self.assertEqual(m["time"], 0.0)

    def test_table_lists_every_benchmark(self):
        self.assertIn("ns/call", self.out)
        for name in expected_names(results.load(self.path)["context"]["vdsobench"]
                                   ["pinning"]["cpus"][0]):
            self.assertIn(name, self.out)

    def test_never_overwrites_without_force(self):
        before = read_bytes(self.path)
        rc, _, err = vdsobench("run", "--variants", "floor/empty", "--out", self.path, *QUICK)
        self.assertEqual(rc, 2)
        self.assertIn("exists", err)
        self.assertEqual(read_bytes(self.path), before)

    def test_force_overwrites(self):
        path = os.path.join(self.tmp.name, "forced.json")
        for _ in range(2):
            rc, _, err = vdsobench("run", "--variants", "floor/empty", "--out", path, "--force",
                                   *QUICK)
            self.assertEqual(rc, 0, err)
        runs = [b for b in results.load(path)["benchmarks"] if b["run_type"] == "iteration"]
        self.assertEqual(len(runs), 2)
        self.assertEqual(sorted(os.listdir(self.tmp.name)),
                         sorted(["every-mode.json", "forced.json"]), "no temp files left")


class SoftwareCountersTest(unittest.TestCase):
    """Hardware events may be missing (these VMs have no PMU); software ones open
    everywhere, so the counter path from harness to table is exercised here."""

    def test_counters_per_call_and_dropped_ones(self):
        with tempfile.TemporaryDirectory(prefix="vdsobench-counters-") as tmp:
            path = os.path.join(tmp, "r.json")
            rc, out, err = vdsobench("run", "--variants", "sys/syscall", "--clocks", "monotonic",
                                     "--events", "task-clock,context-switches", "--out", path,
                                     *QUICK)
            self.assertEqual(rc, 0, err)
            data = results.load(path)
        counters = data["context"]["vdsobench"]["counters"]
        self.assertTrue(counters["available"])
        self.assertEqual(counters["events"], ["task-clock", "context-switches"])
        self.assertIn(counters["mode"], ("user", "user+kernel"))
        for b in data["benchmarks"]:
            if b["run_type"] == "iteration":
                self.assertGreater(b["task-clock"], 0, "a syscall takes some task time")
                self.assertGreater(b["counted_fraction"], 0)
                self.assertLessEqual(b["counted_fraction"], 1.0)
        self.assertIn("task-clock/call", out)


class BadInputTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-bad-")
        self.out = os.path.join(self.tmp.name, "r.json")

    def tearDown(self):
        self.tmp.cleanup()

    def assert_bad(self, needle, *argv, out=None):
        out = out or self.out
        # QUICK first: the bad value given last is the one argparse keeps
        rc, stdout, err = vdsobench("run", *QUICK, *argv, "--out", out)
        self.assertEqual(rc, 2, err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertIn(needle, lines[0])
        self.assertFalse(os.path.exists(out), "nothing written")

    def test_unknown_variant(self):
        self.assert_bad("'nope*'", "--variants", "nope*")

    def test_unknown_clock(self):
        self.assert_bad("'monotonic_fast'", "--clocks", "monotonic_fast")

    def test_unknown_mode(self):
        self.assert_bad("'frigid'", "--modes", "hot,frigid")

    def test_unknown_event(self):
        self.assert_bad("no_such_event_xyz", "--variants", "floor/empty",
                        "--events", "cycles,no_such_event_xyz")

    def test_empty_selection(self):
        self.assert_bad("selection is empty", "--variants", "sys/vdso", "--modes", "writer")

    def test_cpu_out_of_range(self):
        self.assert_bad("999", "--variants", "floor/empty", "--cpus", "999")

    def test_bad_min_time(self):
        self.assert_bad("--min-time", "--variants", "floor/empty", "--min-time", "soon")

    def test_unwritable_output(self):
        blocker = os.path.join(self.tmp.name, "file")
        open(blocker, "w").close()
        self.assert_bad(blocker, "--variants", "floor/empty",
                        out=os.path.join(blocker, "r.json"))

    def test_list_writes_nothing(self):
        rc, out, err = vdsobench("run", "--variants", "floor/*", "--list", "--out", self.out)
        self.assertEqual(rc, 0, err)
        self.assertIn("floor/empty/none/hot/cpu", out)
        self.assertFalse(os.path.exists(self.out))


if __name__ == "__main__":
    unittest.main()
