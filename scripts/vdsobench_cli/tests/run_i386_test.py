"""`run --arch i386`: refused in one line (exit 2) where the kernel runs no
32-bit program (abi32.probe()'s answer, stood in for, then this machine's
own through the CLI when it is such a machine), never timed under qemu; and
the results' ABI on recorded data: testdata/rounds-i386-qemu.jsonl is the
i386 harness's --rounds output recorded under qemu-i386 (so sys/vdso and
sys/vdso_gettime64 are skipped there: qemu-user 7.2 maps no vDSO). Its times are an emulator's and
no test reads them as figures: the structure alone is asserted. Where the
kernel runs 32-bit programs, one short run on the CPU (its structure too)."""

import json
import os
import tempfile
import unittest
from types import SimpleNamespace
from unittest import mock

from vdsobench_cli.cli import abi32, arch, build
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.commands import run
from vdsobench_cli.measure import abi, results, rounds
from vdsobench_cli.tests.support import TESTDATA, cli, one_line
from reports import run_table, tables
from vdsobench_cli.core import run_abi

NO_IA32 = (False, "the kernel does not run 32-bit programs (execve: Exec format error): "
                  "no IA32 emulation here")
RECORDED = TESTDATA / "rounds-i386-qemu.jsonl"
LEFT_OUT = ["Google Benchmark", "libpfm4", "hwloc"]


def use_i386(answer):
    arch.use("i386")
    arch.current()._abi32 = lambda: answer


class RefusalTest(unittest.TestCase):
    def setUp(self):
        self.addCleanup(arch.use, None)

    def test_run_refused_before_anything_is_built(self):
        use_i386(NO_IA32)
        with mock.patch.object(build, "build") as built, \
                self.assertRaises(UsageError) as cm:
            run.run(SimpleNamespace(argv=["run", "--arch", "i386"]))
        line = str(cm.exception)
        self.assertEqual(len(line.splitlines()), 1)
        self.assertIn("--arch i386: " + NO_IA32[1], line)
        self.assertIn("on the CPU or not at all", line)
        built.assert_not_called()

    def test_sequential_refused_natively_too(self):
        # the i386 harness times interleaved rounds only: --sequential would be
        # ignored and the results would say "interleaved": false
        use_i386((True, ""))
        with mock.patch.object(build, "build") as built, \
                self.assertRaises(UsageError) as cm:
            run.run(SimpleNamespace(argv=["run", "--arch", "i386", "--sequential"],
                                    sequential=True))
        line = str(cm.exception)
        self.assertEqual(len(line.splitlines()), 1)
        self.assertIn("--sequential with --arch i386", line)
        built.assert_not_called()

    def test_rounds_refused_too(self):
        # compare, gate and selftest-stats time through rounds.binary()
        use_i386(NO_IA32)
        with mock.patch.object(build, "build") as built, self.assertRaises(UsageError):
            rounds.binary()
        built.assert_not_called()

    def test_natively_not_refused(self):
        use_i386((True, ""))
        arch.timed_natively("run")  # no exception: the CPU runs it

    def test_arm64_keeps_its_emulated_label(self):
        arch.use("arm64")
        arch.timed_natively("run")  # arm64 under qemu is labelled, not refused

    def test_this_machine_through_the_cli(self):
        native, why = abi32.probe()
        if native:
            self.skipTest("this kernel runs 32-bit programs: run --arch i386 times them")
        rc, out, err = cli("run", "--arch", "i386")
        one_line(self, rc, err, "--arch i386: " + why, "on the CPU or not at all")
        self.assertEqual(out, "")


class RecordedAbiTest(unittest.TestCase):
    def setUp(self):
        self.addCleanup(arch.use, None)
        self.lines = RECORDED.read_text().splitlines()

    def test_the_harness_context_says_i386_and_what_is_left_out(self):
        context, benchmarks, lost = abi.rounds_results(self.lines)
        rec = abi.record(context, "x86_64")  # the harness's word wins
        self.assertEqual((rec["name"], rec["bits"]), ("i386", 32))
        self.assertEqual([e["what"] for e in rec["left_out"]], LEFT_OUT)
        for e in rec["left_out"]:
            self.assertIn("not in the i386 build", e["why"])
        self.assertEqual(context["counters"]["available"], False)

    def test_no_vdso_skips_both_entries_with_the_reason(self):
        # recorded under qemu-i386: no vDSO, so nothing to check either
        context, _, _ = abi.rounds_results(self.lines)
        why = "not available: AT_SYSINFO_EHDR is 0: this kernel maps no vDSO"
        self.assertEqual(context["skipped"], [f"sys/vdso: {why}",
                                              f"sys/vdso_gettime64: {why}"])
        self.assertEqual((context["vdso"]["symbols"], context["vdso"]["checked"]), ({}, {}))

    def test_a_gettime64_row_is_tabled_as_sys_vdsos(self):
        # the structure of a native run's rows: the recorded sys/libc renamed
        lines = [line.replace("sys/libc", "sys/vdso_gettime64") for line in self.lines]
        data = run.from_rounds("\n".join(lines))
        rows = run_table.summarize(data["benchmarks"])
        row = next(r for r in rows if r["name"].startswith("sys/vdso_gettime64/"))
        self.assertEqual(row["key"], ("sys/vdso_gettime64", "monotonic", "hot", 1))
        self.assertEqual(row["runs"], 3)
        table = run_table.format_table(rows)
        self.assertEqual(len([t for t in table if "sys/vdso_gettime64" in t]), 1)

    def test_batches_become_repetitions(self):
        _, benchmarks, lost = abi.rounds_results(self.lines)
        names = sorted({b["run_name"] for b in benchmarks})
        self.assertEqual(names, ["generic_6_15+lfence_rdtsc+always/monotonic/hot/cpu1",
                                 "sys/libc/monotonic/hot/cpu1",
                                 "sys/syscall/monotonic/hot/cpu1"])
        self.assertEqual((len(benchmarks), lost), (9, 0))
        for b in benchmarks:
            self.assertEqual((b["run_type"], b["time_unit"]), ("iteration", "ns"))
            self.assertIn(b["repetition_index"], (0, 1, 2))
            self.assertEqual(b["real_time"], b["cpu_time"])

    def test_results_context_records_the_abi(self):
        use_i386((True, ""))
        data = run.from_rounds("\n".join(self.lines))
        harness = json.loads(data["context"]["vdsobench_harness"])
        args = SimpleNamespace(variants=None, clocks=None, modes=None, min_time=None,
                               repetitions=None, sequential=False)
        ctx = run.vdsobench_context(args, ["run", "--arch", "i386"], harness, {}, {}, [],
                                    [], [1])
        self.assertEqual(ctx["abi"]["name"], "i386")
        self.assertEqual(ctx["abi"]["bits"], 32)
        self.assertNotIn("abi", ctx["harness"])

    def test_the_results_file_is_one_every_reader_takes(self):
        # compare --results, merge, report and plot load it through results.load
        # (the results schema): Google Benchmark's context fields and each
        # benchmark's repetitions and threads, a row lost in every round included
        use_i386((True, ""))
        lines = [line.replace('"disturbed":false', '"disturbed":true', 1)
                 if '"subject":"sys/libc"' in line else line for line in self.lines]
        data = run.from_rounds("\n".join(lines))
        harness = json.loads(data["context"].pop("vdsobench_harness"))
        args = SimpleNamespace(variants=None, clocks=None, modes=None, min_time=None,
                               repetitions=None, sequential=False)
        data["context"]["vdsobench"] = run.vdsobench_context(
            args, ["run", "--arch", "i386"], harness, {}, {}, [], [], [1])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "i386.json")
            with open(path, "w") as f:
                json.dump(data, f)
            loaded = results.load(path)
        self.assertEqual(loaded["context"]["num_cpus"], os.cpu_count())
        # no library: the harness's own build (the recorded harness was optimized)
        self.assertTrue(harness["optimized"])
        self.assertEqual(loaded["context"]["library_build_type"], "release")
        self.assertEqual(loaded["context"]["vdsobench"]["abi"]["bits"], 32)
        for b in loaded["benchmarks"]:
            self.assertEqual((b["repetitions"], b["threads"]), (3, 1))
        lost = [b for b in loaded["benchmarks"] if b.get("error_occurred")]
        self.assertEqual([b["name"] for b in lost], ["sys/libc/monotonic/hot/cpu1"])

    def test_a_64_bit_context_is_its_architectures(self):
        self.assertEqual(abi.record({"compiler": "12.2.0"}, "x86_64"),
                         {"name": "x86_64", "bits": 64, "left_out": []})

    def test_a_disturbed_batch_is_left_out(self):
        lines = [line.replace('"disturbed":false', '"disturbed":true', 1)
                 if '"round":0,"position":0' in line else line for line in self.lines]
        _, benchmarks, lost = abi.rounds_results(lines)
        self.assertEqual((len(benchmarks), lost), (8, 1))

    def test_a_benchmark_lost_in_every_round_stays_as_its_error(self):
        # a busy machine (CI's other lane) can take the CPU from every batch of one
        # benchmark: the row stays, failed with the reason, never silently gone
        lines = [line.replace('"disturbed":false', '"disturbed":true', 1)
                 if '"subject":"sys/libc"' in line else line for line in self.lines]
        _, benchmarks, lost = abi.rounds_results(lines)
        self.assertEqual(lost, 3)
        libc = [b for b in benchmarks if b["name"] == "sys/libc/monotonic/hot/cpu1"]
        self.assertEqual(len(libc), 1)
        self.assertEqual(libc[0]["error_message"], abi.LOST)
        rows = run_table.summarize(benchmarks)
        self.assertEqual([r["error"] for r in rows if r["name"].startswith("sys/libc")],
                         [abi.LOST])

    def test_hostile_rounds_fail_in_one_line(self):
        bad = [line.replace('"ns_per_call":', '"ns_per_call":"x","was":', 1)
               if '"round":1' in line else line for line in self.lines]
        for lines in (bad, self.lines[1:], ["[1]"], ["{"]):
            with self.assertRaises(Failure) as cm:
                abi.rounds_results(lines)
            self.assertEqual(len(str(cm.exception).splitlines()), 1)

    def test_rounds_args(self):
        args = SimpleNamespace(repetitions="5", min_time="0.2")
        self.assertEqual(run.rounds_args(args), ["--rounds", "5", "--batch-ms", "200"])
        args = SimpleNamespace(repetitions=None, min_time="7200")
        self.assertEqual(run.rounds_args(args)[2:], ["--batch-ms", "3600"])


class RunAbiTest(unittest.TestCase):
    """What the readers call a results file's ABI (core/run_abi.py): its
    record, else (a file from before it) its guest's or machine's 64 bits."""

    def test_each_kind_of_file(self):
        def ctx(**vdsobench):
            return {"context": {"vdsobench": vdsobench}}
        x86 = {"kernel": {"machine": "x86_64"}}
        cases = [
            (ctx(abi={"name": "i386", "bits": 32}, fingerprint=x86), "i386 (32-bit)"),
            (ctx(abi={"name": "x86_64", "bits": 64, "left_out": []}), "x86_64 (64-bit)"),
            (ctx(fingerprint=x86), "x86_64 (64-bit)"),
            (ctx(fingerprint=x86, emulation={"guest": "aarch64"}), "arm64 (64-bit)"),
            (ctx(abi={"name": "i386", "bits": "32"}), "i386"),
            (ctx(abi={"name": "i386\x1b[2J", "bits": 32}), "i386\\x1b[2J (32-bit)"),
            (ctx(abi=[1]), None), (ctx(), None), ({"context": {}}, None), ([], None),
        ]
        for data, want in cases:
            with self.subTest(data=data):
                self.assertEqual(run_abi.of_results(data), want)
        self.assertTrue(run_abi.is_32_bit("i386 (32-bit)"))
        self.assertFalse(run_abi.is_32_bit(None))

    def test_a_32_bit_comparison_says_so_in_its_machine_line(self):
        meta = {"cpu_model": "Rocket Lake", "kernel": "6.18", "hypervisor": "KVM"}
        self.assertEqual(tables.machine_text(meta), "Machine: Rocket Lake, kernel 6.18, KVM guest")
        self.assertEqual(tables.machine_text(dict(meta, abi="i386 (32-bit)")),
                         "Machine: Rocket Lake, kernel 6.18, KVM guest, an i386 (32-bit) "
                         "process")
        self.assertEqual(tables.machine_text(dict(meta, abi="x86_64 (64-bit)")),
                         tables.machine_text(meta))


class LiveRunTest(unittest.TestCase):
    """Where the kernel runs 32-bit programs: a short run of a layout's
    32-bit build, sys/vdso and sys/vdso_gettime64, on the CPU. The structure
    is asserted, never a time."""

    def setUp(self):
        # asked here, not when the module is imported: it runs a program
        native, why = abi32.probe()
        if not native:
            self.skipTest(f"no native 32-bit run here: {why}")

    def test_a_32_bit_process_is_timed_natively(self):
        counter = arch.timed_counter()
        with tempfile.TemporaryDirectory() as d:
            out_file = f"{d}/i386.json"
            rc, out, err = cli("run", "--arch", "i386", "--variants",
                               f"x86_gtod+{counter}+always,sys/vdso,sys/vdso_gettime64",
                               "--clocks", "monotonic,monotonic_raw", "--repetitions", "2",
                               "--min-time", "0.01", "--out", out_file)
            self.assertTrue(os.path.isfile(out_file), out + err)
            data = results.load(out_file)  # as compare --results, merge, report read it
        # a row whose every batch lost its CPU to other work is failed with that
        # reason (exit 1): the machine's load, not the 32-bit build
        failed = [b for b in data["benchmarks"] if b.get("error_occurred")]
        self.assertEqual(rc, 1 if failed else 0, out + err)
        self.assertEqual({b["error_message"] for b in failed} - {abi.LOST}, set())
        ctx = data["context"]["vdsobench"]
        self.assertEqual((ctx["abi"]["name"], ctx["abi"]["bits"]), ("i386", 32))
        self.assertNotIn("emulated", json.dumps(ctx["abi"]))
        vdso = ctx["fingerprint"]["kernel"]["vdso"]
        self.assertTrue(vdso["available"], vdso)
        self.assertIn("agrees with the syscall", vdso["checked"]["__vdso_clock_gettime64"])
        # how its gate enters, as an imported vdso32's fallbacks will (gate32.c)
        self.assertIn(vdso["gate"], ("sysenter", "syscall", "int $0x80"))
        names = {b["name"].rsplit("/", 1)[0] for b in data["benchmarks"]}
        for row in (f"x86_gtod+{counter}+always/monotonic_raw/hot",
                    "sys/vdso/monotonic/hot", "sys/vdso_gettime64/monotonic_raw/hot"):
            self.assertIn(row, names)
        self.assertTrue(all(b["real_time"] > 0 for b in data["benchmarks"]
                            if b not in failed))


if __name__ == "__main__":
    unittest.main()
