"""`sim` end to end under cachegrind: the layout effect seed 000 argued about,
determinism, and the bad inputs. Counts are simulated, so they are asserted."""

import os
import platform
import subprocess
import unittest
from unittest import mock

from vdsobench_cli.cli import build, labels
from vdsobench_cli.commands import sim as sim_cmd
from vdsobench_cli.measure import sim
from vdsobench_cli.tests import support, vvar_support
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.tests.support import vdsobench

GTOD = "x86_gtod+rdtscp+always"
MULTSHIFT = "x86_gtod_ts_multshift+rdtscp+always"
RAW_COPY = "x86_gtod_raw_copy+rdtscp+always"
CLOCKS = ("monotonic", "monotonic_raw")

SUMMARY = """desc: I1 cache:         32768 B, 64 B, 8-way associative
desc: D1 cache:         32768 B, 64 B, 8-way associative
desc: LL cache:         8388608 B, 64 B, 16-way associative
cmd: bazel-bin/bench/vdsobench_sim_driver x86_gtod+rdtscp+always monotonic hot 1000
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw
fl=???
fn=0x0000000000001040
0 3 1 1 0 0 0 0 0 0
summary: 1901693 1607 1556 476201 14139 8839 154757 2919 2063
"""


def by_key(results):
    return {(r["variant"], r["clock"], r["mode"]): r for r in results}


class ParseTest(unittest.TestCase):
    def test_summary(self):
        totals = sim.parse_summary(SUMMARY)
        self.assertEqual(totals["Ir"], 1901693)
        self.assertEqual(totals["D1mr"], 14139)
        self.assertEqual(totals["D1mw"], 2919)
        self.assertEqual(len(totals), 9)

    def test_no_cache_simulation_is_an_error(self):
        with self.assertRaisesRegex(sim.Failure, "D1mr"):
            sim.parse_summary("events: Ir\nsummary: 12\n")
        with self.assertRaisesRegex(sim.Failure, "summary"):
            sim.parse_summary("events: Ir\n")

    def test_per_call_is_the_exact_difference(self):
        lo = dict.fromkeys(sim.EVENTS, 100)
        hi = dict(lo, Ir=100 + 51 * (sim.ITERATIONS[1] - sim.ITERATIONS[0]), D1mr=101)
        calls = sim.per_call(lo, hi)
        self.assertEqual(calls["Ir"], 51)
        self.assertEqual(sim.figure(calls["D1mr"]),
                         round(1 / (sim.ITERATIONS[1] - sim.ITERATIONS[0]), 3))

    def test_a_variant_reading_the_counter_itself_is_not_counted(self):
        # the driver's exit 3 (bench/sim_driver.c): a twin whose counter read
        # bypasses the fake one would be counted on the real counter's delta
        done = subprocess.CompletedProcess([], sim.READS_ITSELF, "", (
            "vdsobench_sim_driver: kernel:t+fake+always reads the counter itself, ...\n"))
        runner = sim.Runner("/nonexistent/driver", "/tmp")
        with mock.patch.object(sim.lifecycle, "run", return_value=done), \
                mock.patch.object(sim.lifecycle, "temp_file", return_value=(os.open(
                    os.devnull, os.O_RDONLY), os.devnull)), \
                mock.patch.object(sim.confine, "own"), \
                mock.patch.object(sim.tools, "path", side_effect=lambda name, _: name):
            with self.assertRaises(sim.Unsimulated) as caught:
                runner(("kernel:t+rdtsc+always", "monotonic", "hot", 1000))
        self.assertEqual(str(caught.exception), (
            "sim: kernel:t+rdtsc+always reads the counter itself, not the fake one (verify "
            "checks it as a real counter): under valgrind that is the real counter, whose "
            "delta, and so the path counted, differs from run to run"))
        self.assertNotIn("\n", caught.exception.reason)

    def test_an_instruction_valgrind_lacks_is_named(self):
        # valgrind 3.19 on a CPU whose CPUID lists no rdtscp, running a tree
        # that reads the counter with its own RDTSCP
        stderr = ("vex amd64->IR: unhandled instruction bytes: 0xF 0x1 0xF9 0x31 0xC0 0xC3\n"
                  "==2== Process terminating with default action of signal 4 (SIGILL)\n")
        e = sim.unsimulated("kernel:after+fake+always", stderr)
        self.assertIsInstance(e, Failure)
        self.assertEqual(str(e), "sim: valgrind cannot run kernel:after+fake+always here: "
                                 "RDTSCP (valgrind offers the instructions this "
                                 "CPU's CPUID lists)")
        self.assertIn("the bytes 0xF 0x1 0xAE", str(sim.unsimulated(
            "v", "unhandled instruction bytes: 0xF 0x1 0xAE 0x0\n")))
        self.assertIn(": an instruction (", str(sim.unsimulated("v", "signal 4 (SIGILL)")))
        # lackey (layout's tool) fails an assertion after the same line, exit 1
        lackey = (stderr.splitlines()[0] + "\nLackey: lk_main.c:529 (addEvent_Ir): "
                  "Assertion '...' failed.\n")
        self.assertTrue(sim.lacks_instruction(1, lackey))
        self.assertTrue(str(sim.unsimulated("v", lackey, "layout")).startswith(
            "layout: valgrind cannot run v here: RDTSCP"))
        self.assertFalse(sim.lacks_instruction(1, "==2== could not unlink ..."))
        self.assertFalse(sim.lacks_instruction(0, stderr))  # a run that ended well
        self.assertEqual(e.reason, str(e).removeprefix("sim: "))

    def test_placement_must_not_move(self):
        a = {"stack_page_offset": 3968, "fake_counter_page_offset": 2744, "evicted_span": 1024}
        self.assertEqual(sim.placement([a, dict(a)])["stack_page_offset"], 3968)
        with self.assertRaisesRegex(sim.Failure, "setarch"):
            sim.placement([a, dict(a, stack_page_offset=3952)])


class MeasureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.results = sim.measure([GTOD, MULTSHIFT, RAW_COPY], CLOCKS, sim.ALL_MODES)
        cls.r = by_key(cls.results)

    def test_one_result_per_point_with_its_keys(self):
        self.assertEqual(len(self.results), 3 * len(CLOCKS) * len(sim.ALL_MODES))
        r = self.r[(GTOD, "monotonic", "hot")]
        self.assertEqual(r["measured_as"], "x86_gtod+fake+always")
        for key in ("instructions_per_call", "l1d_reads_per_call", "l1d_misses_per_call",
                    "l1d_read_misses_per_call", "net_instructions_per_call",
                    "net_l1d_misses_per_call"):
            self.assertIsInstance(r[key], float, key)
        self.assertEqual(r["geometry"]["D1"], "32768,8,64")
        self.assertEqual(r["geometry"]["tool"], "cachegrind")

    def test_multshift_monotonic_straddles_a_line_under_pressure(self):
        # seed 000, tglx on v3: MONOTONIC's {sec, nsec, mult, shift} at 48..71
        # crosses into a second cache line; x86_gtod's 48..63 does not.
        gtod = self.r[(GTOD, "monotonic", "pressure")]["net_l1d_misses_per_call"]
        multshift = self.r[(MULTSHIFT, "monotonic", "pressure")]["net_l1d_misses_per_call"]
        print(f"\nsim: net L1D misses per MONOTONIC call under pressure: "
              f"x86_gtod {gtod}, x86_gtod_ts_multshift {multshift}")
        self.assertGreater(multshift, gtod)
        self.assertGreaterEqual(gtod, 1)  # the data line was evicted: it misses

    def test_cold_evicts_the_lines_the_call_reads(self):
        # the cold loop's eviction (2 x 8 ways of loads per set) leaves each call
        # to miss every line its data occupies, as pressure does, and nothing else
        for variant in (GTOD, MULTSHIFT):
            for clock in CLOCKS:
                cold = self.r[(variant, clock, "cold")]["net_l1d_misses_per_call"]
                pressure = self.r[(variant, clock, "pressure")]["net_l1d_misses_per_call"]
                self.assertEqual(cold, pressure, (variant, clock))
        self.assertEqual(self.r[(GTOD, "monotonic", "cold")]["net_l1d_misses_per_call"], 1)
        self.assertEqual(self.r[(MULTSHIFT, "monotonic", "cold")]["net_l1d_misses_per_call"],
                         2)

    def test_hot_loop_misses_nothing(self):
        for (variant, clock, mode), r in self.r.items():
            if mode == "hot":
                self.assertLess(r["net_l1d_misses_per_call"], 0.01, (variant, clock))
                self.assertGreater(r["instructions_per_call"], 0, (variant, clock))

    def test_raw_is_a_syscall_on_x86_gtod(self):
        # v5.2 served MONOTONIC_RAW from the syscall; seed 000's v2 copied do_hres()
        gtod = self.r[(GTOD, "monotonic_raw", "hot")]["net_instructions_per_call"]
        copy = self.r[(RAW_COPY, "monotonic_raw", "hot")]["net_instructions_per_call"]
        self.assertGreater(gtod, 3 * copy)

    def test_deterministic(self):
        again = sim.measure([GTOD, MULTSHIFT, RAW_COPY], CLOCKS, sim.ALL_MODES, jobs=1)
        self.assertEqual(again, self.results)

    def test_table(self):
        lines = sim_cmd.format_table(self.results)
        self.assertTrue(lines[0].startswith("variant"))
        self.assertIn("measured as <layout>+fake+<inline>", "\n".join(lines))
        self.assertTrue(lines[-1].startswith("geometry: cachegrind"))


class SysVdsoTest(unittest.TestCase):
    """sim sys/vdso: the running kernel's own vDSO, copied and counted beside a
    variant; where this kernel's data page cannot be copied (not the TSC, not
    v6.15's page), the row is left out with the reason, never a crash."""

    def test_a_row_of_its_own_or_the_reason(self):
        notes = []
        try:
            results = sim.measure([sim.SYS_VDSO, GTOD], ["monotonic"], ["hot"], notes=notes)
        except Failure as e:
            self.fail(str(e))
        rows = [r for r in results if r["variant"] == sim.SYS_VDSO]
        if notes:
            self.assertEqual(rows, [])
            self.assertRegex(notes[0], r"^sim: sys/vdso left out: \S")
            return
        self.assertEqual(len(rows), 1)
        row = rows[0]
        self.assertEqual((row["measured_as"], row["clock"], row["mode"]),
                         (sim.SYS_VDSO, "monotonic", "hot"))
        # a whole number of instructions per call: every call took one path
        self.assertGreater(row["net_instructions_per_call"], 10)
        self.assertEqual(row["instructions_per_call"], round(row["instructions_per_call"]))
        self.assertIn(sim.SYS_NOTE, sim_cmd.format_table(results))

    def test_in_a_time_namespace_the_kernels_page_is_copied(self):
        """unshare --time --monotonic 86400: [vvar]'s first page is the
        namespace's (seq 1, clock_mode TIMENS). Never blamed on an update: the
        kernel's own page is copied, said in a note, and the answer is the
        one outside the namespace (a row, or the same reason)."""
        why = vvar_support.timens_unavailable()
        if why:
            self.skipTest(why)
        argv = [str(build.ROOT / "scripts" / "vdsobench"), "sim", sim.SYS_VDSO,
                "--clocks", "monotonic", "--modes", "hot"]
        outside = subprocess.run(argv, capture_output=True, text=True)
        inside = subprocess.run(vvar_support.TIMENS_CMD + argv, capture_output=True, text=True)
        self.assertNotIn("update", inside.stderr)
        self.assertNotIn("Traceback", inside.stderr)
        self.assertEqual(inside.returncode, outside.returncode, inside.stderr)
        if outside.returncode == 0:
            self.assertIn(f"{sim.SYS_VDSO}: this process is in a time namespace: the "
                          "kernel's own time data page was copied", inside.stdout)
        else:
            self.assertEqual(inside.stderr, outside.stderr)

    def test_modes_it_cannot_take(self):
        rc, out, err = vdsobench("sim", sim.SYS_VDSO, "--clocks", "monotonic",
                                 "--modes", "cold")
        self.assertEqual((rc, out), (2, ""), err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("valid: hot, pressure", err)


@unittest.skipUnless(platform.machine() == "x86_64", "pvclock is x86's")
class ClockModeTest(unittest.TestCase):
    """--clock-mode pvclock: the same calls through the simulated host's
    pvclock page, which only the clocks that read the counter pay for."""

    def test_pvclock_costs_the_counted_clocks_alone(self):
        args = (["x86_gtod+rdtscp+always"], ["monotonic", "realtime_coarse"], ["hot", "pressure"])
        tsc, pv = by_key(sim.measure(*args)), by_key(sim.measure(*args, clock_mode="pvclock"))
        self.assertEqual({r["clock_mode"] for r in pv.values()}, {"pvclock"})
        mono, coarse = (("x86_gtod+rdtscp+always", c, "hot") for c in
                        ("monotonic", "realtime_coarse"))
        # vread_pvclock(): the page's loads, its version loop and the 128-bit scale
        self.assertGreater(pv[mono]["instructions_per_call"],
                           tsc[mono]["instructions_per_call"] + 10)
        self.assertEqual(pv[coarse]["instructions_per_call"],
                         tsc[coarse]["instructions_per_call"])
        # the host's page is one more line for pressure to evict
        pressure = ("x86_gtod+rdtscp+always", "monotonic", "pressure")
        self.assertEqual(pv[pressure]["l1d_misses_per_call"],
                         tsc[pressure]["l1d_misses_per_call"] + 1)

    def test_the_running_kernels_vdso_is_refused(self):
        build.build([labels.SIM_DRIVER])
        r = subprocess.run([str(build.binary_path(labels.SIM_DRIVER)), sim.SYS_VDSO,
                            "monotonic", "hot", "1", "--clock-mode", "pvclock"],
                           capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (2, ""), r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("x86 layouts and imports only", r.stderr)

    def test_a_bad_clock_mode_is_one_line(self):
        rc, out, err = vdsobench("sim", "--clock-mode", "hpet")
        support.one_line(self, rc, err, "--clock-mode", "'hpet'", "pvclock")


class BadInputTest(unittest.TestCase):
    def one_line(self, argv, *names):
        rc, out, err = vdsobench("sim", *argv)
        self.assertEqual(rc, 2)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertNotIn("Traceback", err)
        for name in names:
            self.assertIn(name, err)
        return err

    def test_unknown_variant(self):
        self.one_line(["nosuch+rdtscp+always", "--clocks", "monotonic"],
                      "'nosuch+rdtscp+always'", "x86_gtod")
        with self.assertRaises(UsageError):
            sim.measure(["nosuch+rdtscp+always"], ["monotonic"], ["hot"])

    def test_unknown_clock(self):
        self.one_line([GTOD, "--clocks", "monotonik"], "'monotonik'", "monotonic_raw")

    def test_unknown_mode(self):
        self.one_line([GTOD, "--clocks", "monotonic", "--modes", "hot,frozen"],
                      "'frozen'", "cold")

    def test_bad_jobs(self):
        self.one_line([GTOD, "--jobs", "0"], "--jobs")

    def test_valgrind_missing(self):
        with support.missing_tool("valgrind"), \
                mock.patch.object(sim.build, "build") as build:
            err = self.one_line([GTOD], "valgrind not found")
            with self.assertRaises(UsageError):
                sim.measure([GTOD])
            build.assert_not_called()  # said before anything is built
        self.assertTrue(err.startswith("vdsobench: error: sim: valgrind"))


if __name__ == "__main__":
    unittest.main()
