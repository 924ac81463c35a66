"""--arch: names and aliases, one-line errors, the Bazel flags and output folder
of a cross build, programs started under qemu-user, the arm64 package group
and dpkg's second architecture, `test --arch arm64` (the C suites only, never
with --asan), and an emulated run's file name, compare --results and gate.
Nothing is built or measured: Bazel, dpkg and apt are stood in for."""

import contextlib
import copy
import io
import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

from vdsobench_cli import main
from vdsobench_cli.cli import arch, build, confine, packages, variants
from vdsobench_cli.commands import gate, run, testrun
from vdsobench_cli.tests.support import run_made_up_elf, vdsobench

EMU = {"label": "emulated (qemu-user)", "emulator": "qemu-user",
       "program": "qemu-aarch64-static", "version": "7.2.22", "guest": "aarch64",
       "host": "x86_64", "note": "emulated (qemu-user): aarch64 code ..."}
SMALL = os.path.join(os.path.dirname(__file__), "testdata", "results_small.json")


class ArchCase(unittest.TestCase):
    def setUp(self):
        self.addCleanup(arch.use, None)  # the next test gets the host's again


class NamesTest(ArchCase):
    def test_names_and_aliases(self):
        self.assertEqual(arch.parse("arm64"), "arm64")
        self.assertEqual(arch.parse("aarch64"), "arm64")
        self.assertEqual(arch.parse("x86_64"), "x86_64")
        self.assertEqual(arch.parse("amd64"), "x86_64")

    def test_bad_name_is_one_line_exit_2(self):
        rc, out, err = vdsobench("list", "--arch", "mips")
        self.assertEqual(rc, 2)
        self.assertEqual(err.strip().splitlines(),
                         ["vdsobench: error: argument --arch: 'mips' is not an architecture "
                          "vdsobench builds (valid: x86_64, arm64, i386, arm)"])

    def test_commands_that_take_it(self):
        for command in ("setup", "list", "verify", "run", "compare", "counters", "test",
                        "layout", "recipe", "bundle"):
            out = io.StringIO()
            with contextlib.redirect_stdout(out), self.assertRaises(SystemExit) as cm:
                main.parser().parse_args([command, "--help"])
            self.assertEqual(cm.exception.code, 0, command)
            self.assertIn("--arch ARCH", out.getvalue(), command)


class TargetTest(ArchCase):
    def test_native_needs_no_flags(self):
        t = arch.Target("x86_64", "x86_64")
        self.assertTrue(t.native)
        self.assertFalse(t.emulated)
        with mock.patch.dict(os.environ, {arch.LINE_ENV: "plain"}):
            self.assertEqual(t.bazel_flags(), [])
        with mock.patch.dict(os.environ, {arch.LINE_ENV: ""}):  # the kernel line, x86's
            self.assertEqual(t.bazel_flags(), ["--config=kline"])
            self.assertEqual(arch.Target("arm64", "arm64").bazel_flags(), [])

    def test_arm64_on_x86_64_is_cross_built_and_emulated(self):
        t = arch.Target("arm64", "x86_64")
        self.assertTrue(t.emulated)
        self.assertEqual(t.machine, "aarch64")
        self.assertEqual(t.bazel_flags(), ["--config=arm64"])

    def test_x86_64_from_arm64_is_refused_in_one_line(self):
        with self.assertRaises(arch.UsageError) as cm:
            arch.Target("x86_64", "arm64").bazel_flags()
        self.assertIn("cross-building from arm64 is not set up", str(cm.exception))


class TimedCounterTest(ArchCase):
    """The default read of timed commands follows what the kernel says the CPU
    has, from made-up /proc/cpuinfo texts: never this CPU's."""

    @unittest.skipUnless(arch.host() == "x86_64", "x86-64's flags")
    def test_x86_rdtscp_when_the_kernel_reports_it(self):
        arch.use(None)
        with_it = "processor\t: 0\nflags\t\t: fpu tsc rdtscp lm constant_tsc\n"
        without = "processor\t: 0\nflags\t\t: fpu tsc lm constant_tsc rdtscpx\n"
        self.assertEqual(arch.timed_counter(with_it), "rdtscp")
        self.assertEqual(arch.timed_counter(without), "lfence_rdtsc")
        self.assertEqual(arch.timed_counter(""), "lfence_rdtsc")

    @unittest.skipUnless(arch.host() == "x86_64", "arm64 is emulated from x86-64")
    def test_emulated_arm64_reads_what_qemu_has(self):
        arch.use("arm64")
        self.assertEqual(arch.timed_counter("Features\t: fp asimd ecv\n"), "isb_cntvct_dep")

    def test_every_choice_is_a_counter_of_the_table(self):
        arch.use(None)
        host = arch.host()
        chosen = set(arch.TIMED_COUNTER[host][1:]) | {arch.DEFAULT_COUNTER[host]}
        self.assertLessEqual(chosen, set(variants.axis_values(variants.load(), "counter")))


def confined(cmd):
    """What cmd, a command line of build.program's, starts: tree code never
    runs but through the trampoline (confine.py)."""
    assert cmd[3] == str(confine.EXEC) and "--" in cmd, cmd
    return cmd[cmd.index("--") + 1:]


class ProgramTest(ArchCase):
    """build.program(): the binary itself natively, the qemu runner and the
    binary of the cross build's own output folder otherwise."""

    def bazel(self, answers):
        calls = []

        def fake(command, args):
            calls.append((command, list(args)))
            return answers.get(command, (0, ""))
        return calls, mock.patch.object(build, "bazel", side_effect=fake)

    def test_native(self):
        arch.use("x86_64") if arch.host() == "x86_64" else arch.use("arm64")
        with mock.patch.dict(os.environ, {arch.LINE_ENV: "plain"}):
            self.assertEqual(confined(build.program("//verify:vdsobench_verify")),
                             [str(build.ROOT / "bazel-bin" / "verify" / "vdsobench_verify")])
        if arch.host() == "x86_64":  # the kernel line's outputs are a configuration apart
            with mock.patch.dict(os.environ, {arch.LINE_ENV: "kernel"}):
                path, = confined(build.program("//verify:vdsobench_verify"))
            self.assertRegex(path, r"/k8-optkline/bin/verify/vdsobench_verify$")

    @unittest.skipUnless(arch.host() == "x86_64", "arm64 is emulated on x86-64 hosts")
    def test_emulated(self):
        arch.use("arm64")
        calls, patch = self.bazel({"info": (0, "Loading...\n/out/k8-optarm64/bin\n")})
        with patch, mock.patch.dict(build._bin_dirs, clear=True):
            cmd = confined(build.program("//verify:vdsobench_verify"))
            again = confined(build.program("//bench:vdsobench_bench"))
        runner = str(build.ROOT / arch.RUNNER)
        self.assertEqual(cmd, [runner, "/out/k8-optarm64/bin/verify/vdsobench_verify"])
        self.assertEqual(again[1], "/out/k8-optarm64/bin/bench/vdsobench_bench")
        self.assertEqual(calls, [("info", ["--config=arm64", "bazel-bin"])], "asked once")
        self.assertTrue(os.access(runner, os.X_OK))

    @unittest.skipUnless(arch.host() == "x86_64", "arm64 is emulated on x86-64 hosts")
    def test_build_passes_the_config(self):
        arch.use("arm64")
        calls, patch = self.bazel({"build": (0, "")})
        with patch:
            build.build(["//verify:vdsobench_verify"])
        self.assertEqual(calls, [("build", ["--config=arm64", "//verify:vdsobench_verify"])])

    def test_bazel_info_failure_is_a_failure(self):
        arch.use("arm64")
        if arch.current().native:
            self.skipTest("arm64 is this machine")
        calls, patch = self.bazel({"info": (2, "ERROR: no such config\n")})
        with patch, mock.patch.dict(build._bin_dirs, clear=True), \
                self.assertRaises(build.Failure) as cm:
            build.binary_path("//verify:vdsobench_verify")
        self.assertIn("bazel info --config=arm64 bazel-bin failed (exit 2)", str(cm.exception))


class RunnerTest(unittest.TestCase):
    """toolchains/qemu_aarch64.sh: anything but an aarch64 ELF runs as it is."""

    RUNNER = str(build.ROOT / arch.RUNNER)

    def test_host_programs_run_directly(self):
        r = subprocess.run([self.RUNNER, "/bin/echo", "hi"], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (0, "hi\n"))
        with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
            f.write("#!/bin/sh\necho script \"$@\"\n")
        self.addCleanup(os.unlink, f.name)
        os.chmod(f.name, 0o755)
        r = subprocess.run([self.RUNNER, f.name, "a"], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout), (0, "script a\n"))

    def test_usage(self):
        r = subprocess.run([self.RUNNER], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage:", r.stderr)

    def test_aarch64_elf_without_qemu_says_which_package(self):
        # a made-up aarch64 ELF header: magic, then e_machine 0xb7 at byte 18
        r = run_made_up_elf(self, self.RUNNER, b"\x7fELF\x02\x01\x01" + bytes(11) + b"\xb7\x00")
        self.assertEqual(r.returncode, 127)
        self.assertIn("setup --arch arm64", r.stderr)


class EmulationRecordTest(ArchCase):
    def test_native_has_none(self):
        arch.use(None)
        self.assertIsNone(arch.emulation())
        self.assertEqual(arch.warnings(None), [])

    @unittest.skipUnless(arch.host() == "x86_64", "arm64 is emulated on x86-64 hosts")
    def test_emulated_record(self):
        arch.use("arm64")
        done = subprocess.CompletedProcess([], 0, "qemu-aarch64 version 7.2.22 (Debian)\n", "")
        with mock.patch.object(arch.shutil, "which", return_value="/usr/bin/qemu-aarch64-static"), \
                mock.patch.object(arch.subprocess, "run", return_value=done):
            emu = arch.emulation()
        self.assertEqual({k: emu[k] for k in ("label", "program", "version", "guest", "host")},
                         {"label": "emulated (qemu-user)", "program": "qemu-aarch64-static",
                          "version": "7.2.22", "guest": "aarch64", "host": "x86_64"})
        self.assertIn("the times measure the emulator", emu["note"])
        self.assertEqual(arch.warnings(emu), [{"id": "emulated", "message": emu["note"]}])


class PackagesTest(ArchCase):
    def test_the_arm64_group_only_for_arm64(self):
        arch.use(None)
        self.assertEqual(packages.wanted(), packages.PACKAGES)
        if arch.host() != "x86_64":
            return
        arch.use("arm64")
        self.assertEqual(packages.wanted(), packages.PACKAGES + packages.CROSS_PACKAGES["arm64"])
        for name in ("gcc-aarch64-linux-gnu", "qemu-user-static", "libhwloc-dev:arm64",
                     "libpfm4-dev:arm64", "libbenchmark-dev:arm64"):
            self.assertIn(name, packages.wanted())

    def dpkg(self, foreign):
        calls = []

        def fake(cmd, **kwargs):
            calls.append(cmd)
            if cmd[:2] == ["dpkg", "--print-foreign-architectures"]:
                return subprocess.CompletedProcess(cmd, 0, "".join(f"{a}\n" for a in foreign),
                                                   "")
            return subprocess.CompletedProcess(cmd, 0, "", "")
        return calls, mock.patch.object(packages.subprocess, "run", side_effect=fake)

    def test_second_architecture_added_once(self):
        calls, patch = self.dpkg([])
        with patch, mock.patch("sys.stdout"):
            self.assertTrue(packages.add_architectures(["g++", "libhwloc-dev:arm64"]))
        self.assertIn(["dpkg", "--add-architecture", "arm64"], calls)
        calls, patch = self.dpkg(["arm64"])
        with patch:
            self.assertFalse(packages.add_architectures(["libhwloc-dev:arm64"]))
        self.assertNotIn(["dpkg", "--add-architecture", "arm64"], calls)
        calls, patch = self.dpkg([])
        with patch:
            self.assertFalse(packages.add_architectures(["g++", "valgrind"]))
        self.assertEqual(calls, [["dpkg", "--print-foreign-architectures"]])

    @unittest.skipUnless(arch.host() == "x86_64", "arm64 is emulated on x86-64 hosts")
    def test_setup_adds_the_architecture_before_apt(self):
        arch.use("arm64")
        order = []
        absent = {"libhwloc-dev:arm64"}

        def installed(name):
            return name not in absent

        def apt(args):
            order.append(("apt", args[0]))
            if args[0] == "install":
                absent.clear()
            return 0, ""
        with mock.patch.object(packages, "installed", side_effect=installed), \
                mock.patch.object(packages, "apt", side_effect=apt), \
                mock.patch.object(packages, "add_architectures",
                                  side_effect=lambda names: order.append(("dpkg", names))), \
                mock.patch.object(packages.os, "geteuid", return_value=0), \
                mock.patch("sys.stdout"):
            self.assertEqual(packages.setup(), 0)
        self.assertEqual(order, [("dpkg", ["libhwloc-dev:arm64"]), ("apt", "update"),
                                 ("apt", "install")])


@unittest.skipUnless(arch.host() == "x86_64", "arm64 is emulated on x86-64 hosts")
class TestCommandTest(ArchCase):
    def test_asan_refused_under_emulation(self):
        rc, _, err = vdsobench("test", "--asan", "--arch", "arm64")
        self.assertEqual(rc, 2)
        self.assertIn("--asan with --arch arm64", err)

    def test_c_suites_only_with_the_config(self):
        seen = []

        def bazel(command, args):
            seen.append((command, list(args)))
            return 0, "//impls:layout_test    PASSED in 1.0s\n"
        with mock.patch.object(testrun.packages, "ensure_setup"), \
                mock.patch.object(testrun.build, "bazel", side_effect=bazel), \
                mock.patch.object(testrun, "log_text", return_value="ok 1 - a\nok 2 - b\n"), \
                mock.patch.object(testrun, "python_tests") as python:
            arch.use("arm64")
            buf = io.StringIO()
            rc = testrun.run(main.parser().parse_args(["test", "--arch", "arm64"]), out=buf)
            out = buf.getvalue()
        self.assertEqual(rc, 0, out)
        self.assertEqual(seen[0][0], "test")
        self.assertIn("--config=arm64", seen[0][1])
        python.assert_not_called()
        self.assertEqual(out.splitlines()[-1], "2 passed, 0 failed")


class LayoutTest(ArchCase):
    """layout --arch arm64 on x86-64: the fields of the aarch64 build's own table,
    its own objects for pahole, a bare layout name meaning +isb_cntvct_dep+always,
    and no read sets (valgrind runs the host's code only), said so."""

    VARIANT = {"name": "generic_6_10+isb_cntvct_dep+always", "layout": "generic_6_10",
               "counter": "isb_cntvct_dep", "inline": "always", "data_size": 64,
               "vvar_size": 4096, "has_timens": False, "hres_clocks": ["monotonic"],
               "coarse_clocks": [], "raw_clocks": [],
               "fields": [{"name": "seq", "offset": 0, "size": 4},
                          {"name": "basetime[CLOCK_MONOTONIC]", "offset": 56, "size": 16}]}

    @unittest.skipUnless(arch.host() == "x86_64", "arm64 is emulated on x86-64 hosts")
    def test_fields_only(self):
        from vdsobench_cli.measure import layouts, pahole
        arch.use("arm64")
        other = dict(self.VARIANT, name="generic_6_10+isb_cntvct_isb+always",
                     counter="isb_cntvct_isb")
        seen = {}
        with mock.patch.object(layouts.build, "build"), \
                mock.patch.object(layouts.variant_list, "load", return_value=[other,
                                                                              self.VARIANT]), \
                mock.patch.object(pahole, "crosschecks",
                                  side_effect=lambda chosen: seen.setdefault(
                                      "chosen", {v["name"]: {"skipped": "x"}
                                                 for v in chosen})), \
                mock.patch.object(layouts, "measure") as traced:
            rc, out, err = vdsobench("layout", "--arch", "arm64", "generic_6_10")
        self.assertEqual(rc, 0, err)
        traced.assert_not_called()
        self.assertEqual(list(seen["chosen"]), [self.VARIANT["name"]])
        self.assertIn("basetime[CLOCK_MONOTONIC]  <-- straddles lines 0/1", out)
        self.assertNotIn("read paths", out)
        self.assertIn("fields: the aarch64 build's offsetof table; read sets: not traced",
                      out)

    @unittest.skipUnless(arch.host() == "x86_64", "arm64 is emulated on x86-64 hosts")
    def test_objects_of_the_cross_build(self):
        from vdsobench_cli.measure import pahole
        arch.use("arm64")
        with mock.patch.object(build, "bin_dir", return_value=build.Path("/o/k8-optarm64/bin")):
            obj = pahole.object_of(self.VARIANT)
        self.assertEqual(str(obj), "/o/k8-optarm64/bin/impls/_objs/"
                                   "variant_generic_6_10__isb_cntvct_dep__always/generic_6_10.o")
        self.assertEqual(pahole.shown_path("/x/bazel-out/k8-optarm64/bin/a.o"),
                         "bazel-out/k8-optarm64/bin/a.o")


class CrossBundleTest(ArchCase):
    """bundle --arch arm64: the cross build's own output folder, and its libraries
    found by DT_NEEDED in the aarch64 folders (ldd asks this machine's loader)."""

    def test_bin_dir_of_the_cross_bundle(self):
        from vdsobench_cli.fleet import bundle
        arch.use("arm64")
        if arch.current().native:
            self.skipTest("arm64 is this machine")
        with mock.patch.object(bundle.build, "bin_dir", return_value="/b") as bin_dir:
            self.assertEqual(bundle.bundle_bin_dir(), "/b")
        bin_dir.assert_called_once_with(["--config=arm64", "--config=bundle"])

    @unittest.skipUnless(arch.host() == "x86_64", "arm64 is emulated on x86-64 hosts")
    def test_libraries_by_needed_entries(self):
        from vdsobench_cli.fleet import bundle
        arch.use("arm64")
        graph = {"vdsobench_bench": ["libbenchmark.so.1debian", "libc.so.6", "libm.so.6"],
                 "libbenchmark.so.1debian": ["libstdc++.so.6", "libc.so.6"],
                 "libstdc++.so.6": ["libgcc_s.so.1", "ld-linux-aarch64.so.1"],
                 "libgcc_s.so.1": ["libc.so.6"]}
        with tempfile.TemporaryDirectory() as multiarch, \
                tempfile.TemporaryDirectory() as cross:
            for name in ("libbenchmark.so.1debian", "libstdc++.so.6"):
                open(os.path.join(multiarch, name), "w").close()
            open(os.path.join(cross, "libgcc_s.so.1"), "w").close()
            elf = build.Path(multiarch, "vdsobench_bench")
            with mock.patch.dict(bundle.CROSS_LIB_DIRS, {"aarch64": (multiarch, cross)}), \
                    mock.patch.object(bundle, "needed",
                                      side_effect=lambda p: graph[build.Path(p).name]):
                found = bundle.resolve(elf)
                self.assertEqual(found, {
                    "libbenchmark.so.1debian": build.Path(multiarch, "libbenchmark.so.1debian"),
                    "libstdc++.so.6": build.Path(multiarch, "libstdc++.so.6"),
                    "libgcc_s.so.1": build.Path(cross, "libgcc_s.so.1")})
                graph["libgcc_s.so.1"] = ["libudev.so.1"]
                with self.assertRaises(build.Failure) as cm:
                    bundle.resolve(elf)
        self.assertIn("needs libudev.so.1, which is not installed here for aarch64 "
                      "(scripts/vdsobench setup --arch arm64)", str(cm.exception))


class EmulatedFilesTest(ArchCase):
    def test_default_name_says_emulated(self):
        args = mock.Mock(out=None)
        with mock.patch.object(run.fingerprint, "short_host", return_value="box"):
            path = run.output_path(args, "abc123", EMU)
            plain = run.output_path(args, "abc123")
        self.assertIn("/box-aarch64-emulated-", path)
        self.assertIn("/box-", plain)
        self.assertNotIn("emulated", plain)

    def test_compare_results_labels_an_emulated_run(self):
        with open(SMALL) as f:
            data = json.load(f)
        emu = copy.deepcopy(data)
        emu["context"]["vdsobench"]["emulation"] = dict(EMU)
        with tempfile.TemporaryDirectory() as tmp:
            old, new = os.path.join(tmp, "old.json"), os.path.join(tmp, "new.json")
            for path, d in ((old, data), (new, emu)):
                with open(path, "w") as f:
                    json.dump(d, f)
            rc, out, err = vdsobench("compare", "--results", old, new)
            self.assertEqual(rc, 0, err)
            self.assertIn("aarch64 emulated (qemu-user) on ", out)
            rc, out, err = vdsobench("compare", "--results", old, new, "--format", "csv")
            self.assertEqual(rc, 0, err)
            self.assertTrue(all(line.split(",")[4] == "emulated (qemu-user)"
                                for line in out.splitlines()[1:]), out)

    def test_gate_refuses_emulated_timing_rows(self):
        baseline = {"schema": gate.SCHEMA, "machine": {"emulated": "emulated (qemu-user)"},
                    "line": arch.layouts_line(),
                    "timing": {"reference": "x86_gtod+rdtscp+always", "threshold": 0.05,
                               "rows": [{"variant": "x86_gtod+rdtscp+always",
                                         "clock": "monotonic", "mode": "hot",
                                         "ratio_to_reference": 1.0}]}}
        self.assertEqual(gate.emulated_timing(baseline), "emulated (qemu-user)")
        row_only = copy.deepcopy(baseline)
        row_only["machine"] = {}
        row_only["timing"]["rows"][0]["emulated"] = "emulated (qemu-user)"
        self.assertEqual(gate.emulated_timing(row_only), "emulated (qemu-user)")
        native = copy.deepcopy(row_only)
        native["timing"]["rows"][0].pop("emulated")
        self.assertIsNone(gate.emulated_timing(native))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "base.json")
            with open(path, "w") as f:
                json.dump(baseline, f)
            with mock.patch.object(gate.rounds, "measure") as measure:
                rc, out, err = vdsobench("gate", "--baseline", path, "--only", "timing")
            measure.assert_not_called()
        self.assertEqual(rc, 2)
        self.assertIn("timing gate refused", err)
        self.assertIn("measured emulated (qemu-user)", err)


if __name__ == "__main__":
    unittest.main()
