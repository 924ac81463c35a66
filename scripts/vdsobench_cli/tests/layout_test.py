"""`layout` on the real build: the offsets VARIANTS.md pins come out of the
registry's offsetof table (and pahole agrees), the straddles tglx refused,
read sets traced under lackey, tglx's comparison end to end, the output
files, and each bad input."""

import contextlib
import functools
import io
import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

from vdsobench_cli import main
from vdsobench_cli.cli import errors, labels, tools, variants
from vdsobench_cli.commands import layout
from vdsobench_cli.measure import layouts, pahole
from vdsobench_cli.tests import support
from vdsobench_cli.cli.errors import Failure, UsageError

GTOD, MULTSHIFT = "x86_gtod+rdtscp+always", "x86_gtod_ts_multshift+rdtscp+always"
TIMENS = "generic_timens+rdtscp+always"
TRACED = (GTOD, MULTSHIFT, TIMENS)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MEASURE = layouts.measure  # the real one: some tests patch it with the traces made once

# seed 000: tglx's pahole of v3 1/2 ("After"), as he posted it
TGLX_AFTER = """struct vsyscall_gtod_data {
	unsigned int               seq;                  /*     0     4 */
	int                        vclock_mode;          /*     4     4 */
	u64                        cycle_last;           /*     8     8 */
	u64                        mask;                 /*    16     8 */
	struct vgtod_ts            basetime[12];         /*    24   288 */
	/* --- cacheline 4 boundary (256 bytes) was 56 bytes ago --- */
	int                        tz_minuteswest;       /*   312     4 */
	int                        tz_dsttime;           /*   316     4 */

	/* size: 320, cachelines: 5, members: 7 */
};
"""


def cli(*argv):
    """(exit status, stdout, stderr) of `vdsobench layout ...`, parsed as main parses
    (whether or not main lists the command yet)."""
    p = main.Parser(prog="vdsobench")
    layout.add_parser(p.add_subparsers(dest="command"))

    def go():
        args = p.parse_args(["layout", *argv])
        args.argv = list(argv)
        return args.func(args)

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = errors.guard(go)
    return rc, out.getvalue(), err.getvalue()


@functools.lru_cache(maxsize=None)
def registry():
    return variants.load()


def variant(name):
    return next(v for v in registry() if v["name"] == name)


@functools.lru_cache(maxsize=None)
def traced():
    """The read sets of TRACED, traced once for every test that needs them."""
    layouts.build.build([labels.LAYOUT_DRIVER])
    return MEASURE([variant(n) for n in TRACED], layouts.build.binary_path(labels.LAYOUT_DRIVER),
                   os.cpu_count() or 1)


def from_cache(chosen, binary, jobs):
    return {v["name"]: traced()[v["name"]] for v in chosen}


def spans(name):
    return {f["name"]: layout.layout_map.span(f["offset"], f["size"])
            for f in variant(name)["fields"]}


def lines_of(name, path_key):
    maps = layout.layout_map.variant_map(variant(name), traced()[name])
    p = next(p for p in maps["paths"] if p["path"] == path_key)
    return [(m["role"], m["line"]) for m in p["lines"]], p


class RegistryTest(unittest.TestCase):
    def test_table_does_not_depend_on_counter_or_inline(self):
        tables = {}
        for v in registry():
            tables.setdefault(v["layout"], set()).add(
                json.dumps([v["fields"], v["data_size"], v["vvar_size"]]))
        # every layout the table builds, however many that is
        self.assertEqual(set(tables), {v["layout"] for v in registry()})
        self.assertGreater(len(tables), 1)
        for name, seen in tables.items():
            self.assertEqual(len(seen), 1, name)

    def test_offsets_pinned_in_variants_md(self):
        gtod = spans(GTOD)
        for field, where in (("seq", "0..3"), ("vclock_mode", "4..7"), ("cycle_last", "8..15"),
                             ("mask", "16..23"), ("mult", "24..27"), ("shift", "28..31"),
                             ("basetime[VGTOD_BASES]", "32..223"),
                             ("basetime[CLOCK_REALTIME]", "32..47"),
                             ("basetime[CLOCK_MONOTONIC]", "48..63"),
                             ("tz_minuteswest", "224..227"), ("tz_dsttime", "228..231")):
            self.assertEqual(gtod[field], where, field)
        multshift = spans(MULTSHIFT)
        for field, where in (("mask", "16..23"), ("basetime[VGTOD_BASES]", "24..311"),
                             ("basetime[CLOCK_REALTIME]", "24..47"),
                             ("basetime[CLOCK_MONOTONIC]", "48..71"),
                             ("tz_minuteswest", "312..315"), ("tz_dsttime", "316..319")):
            self.assertEqual(multshift[field], where, field)
        self.assertNotIn("mult", multshift)  # moved into each vgtod_ts
        g53 = spans("generic_5_3+rdtscp+always")
        for field, where in (("clock_mode", "4..7"), ("mult", "24..27"),
                             ("basetime[CLOCK_MONOTONIC]", "48..63"),
                             ("hrtimer_res", "232..235"), ("vd[CS_RAW].seq", "240..243")):
            self.assertEqual(g53[field], where, field)
        g610 = spans("generic_6_10+rdtscp+always")
        for field, where in (("max_cycles", "16..23"), ("mask", "24..31"), ("mult", "32..35"),
                             ("shift", "36..39"), ("basetime[CLOCK_REALTIME]", "40..55"),
                             ("basetime[CLOCK_MONOTONIC]", "56..71")):
            self.assertEqual(g610[field], where, field)
        sizes = {n: (variant(n)["data_size"], layout.layout_map.cache_lines(
            variant(n)["data_size"])) for n in (GTOD, MULTSHIFT)}
        self.assertEqual(sizes, {GTOD: (232, 4), MULTSHIFT: (320, 5)})

    def test_straddle_flags(self):
        def monotonic(name):
            return next(e for e in layout.layout_map.entries(variant(name)["fields"])
                        if e["name"] == "basetime[CLOCK_MONOTONIC]")
        self.assertFalse(monotonic(GTOD)["straddles"])
        self.assertTrue(monotonic(MULTSHIFT)["straddles"])
        self.assertTrue(monotonic("generic_6_10+rdtscp+always")["straddles"])  # 56..71
        self.assertTrue(monotonic("x86_gtod_raw_copy+rdtscp+always")["straddles"])  # 56..71
        self.assertFalse(monotonic("generic_5_3+rdtscp+always")["straddles"])

    def test_resolve(self):
        chosen = layouts.resolve(["x86_gtod", "generic_5_3+fake+auto", "x86_gtod"], registry())
        self.assertEqual([v["name"] for v in chosen], [GTOD, "generic_5_3+fake+auto"])
        self.assertEqual(len(layouts.resolve(["x86_gtod*"], registry())), 4)
        with self.assertRaisesRegex(UsageError, "'nosuch'.*generic_timens_switch"):
            layouts.resolve(["nosuch"], registry())

    def test_plan(self):
        kinds = {p["path"]: p["kind"] for p in layouts.plan(variant(GTOD))}
        self.assertEqual(kinds["monotonic_raw"], "syscall")  # v5.2: raw is a syscall
        self.assertEqual(kinds["boottime"], "syscall")
        self.assertEqual(kinds["realtime_coarse"], "coarse")
        self.assertNotIn("getres:monotonic", kinds)  # x86 before 5.3: no vDSO getres
        kinds = {p["path"]: p["kind"] for p in layouts.plan(variant(TIMENS))}
        self.assertEqual(kinds["monotonic/timens"], "timens")
        self.assertEqual(kinds["monotonic_raw"], "raw")
        self.assertEqual(kinds["getres:monotonic"], "getres")


class PaholeTest(unittest.TestCase):
    def test_tglx_pahole_agrees_with_the_table(self):
        (struct,) = pahole.parse_pahole(TGLX_AFTER)
        self.assertEqual(struct["size"], 320)
        self.assertEqual(struct["members"]["basetime"], {"offset": 24, "size": 288,
                                                         "dims": [12],
                                                         "type": "struct vgtod_ts"})
        v = variant(MULTSHIFT)
        mismatches, notes = pahole.crosscheck(v["fields"], struct, pahole.c_constants(),
                                              v["data_size"])
        self.assertEqual((mismatches, notes), ([], []))

    def test_a_wrong_entry_is_named(self):
        (struct,) = pahole.parse_pahole(TGLX_AFTER)
        fields = [dict(f, offset=56) if f["name"] == "basetime[CLOCK_MONOTONIC]" else f
                  for f in variant(MULTSHIFT)["fields"]]
        mismatches, _ = pahole.crosscheck(fields, struct, pahole.c_constants(), 320)
        self.assertEqual(len(mismatches), 1)
        self.assertIn("basetime[CLOCK_MONOTONIC]: the table says offset 56 size 24, "
                      "pahole offset 48 size 24", mismatches[0])

    def test_nested_fields_and_the_data_struct_found_by_its_members(self):
        # the shape v6.15 gave the data (struct vdso_time_data holding
        # struct vdso_clock clock_data[CS_BASES]); no struct name is known
        # beforehand: the one the field table describes is found
        text = """struct vdso_timestamp {
	u64                        sec;                  /*     0     8 */
	u64                        nsec;                 /*     8     8 */

	/* size: 16, cachelines: 1, members: 2 */
};
struct vdso_clock {
	u32                        seq;                  /*     0     4 */
	s32                        clock_mode;           /*     4     4 */
	u64                        cycle_last;           /*     8     8 */
	u64                        max_cycles;           /*    16     8 */
	u64                        mask;                 /*    24     8 */
	u32                        mult;                 /*    32     4 */
	u32                        shift;                /*    36     4 */
	struct vdso_timestamp      basetime[12];         /*    40   192 */

	/* size: 232, cachelines: 4, members: 8 */
};
struct vdso_time_data {
	struct vdso_clock          clock_data[2];        /*     0   464 */
	s32                        tz_minuteswest;       /*   464     4 */
	s32                        tz_dsttime;           /*   468     4 */
	u32                        hrtimer_res;          /*   472     4 */
	u32                        __unused;             /*   476     4 */

	/* size: 480, cachelines: 8, members: 5 */
};
"""
        structs = {st["struct"]: st for st in pahole.parse_pahole(text)}
        fields = [{"name": "clock_data[CS_HRES_COARSE].seq", "offset": 0, "size": 4},
                  {"name": "clock_data[CS_RAW].mult", "offset": 232 + 32, "size": 4},
                  {"name": "clock_data[CS_HRES_COARSE].basetime[CLOCK_MONOTONIC]",
                   "offset": 56, "size": 16},
                  {"name": "clock_data[CS_HRES_COARSE].basetime[CLOCK_MONOTONIC].nsec",
                   "offset": 64, "size": 8},
                  {"name": "hrtimer_res", "offset": 472, "size": 4}]
        constants = {"CS_HRES_COARSE": 0, "CS_RAW": 1, "CLOCK_MONOTONIC": 1}
        struct = pahole.data_struct(fields, 480, structs, constants)
        self.assertEqual(struct["struct"], "vdso_time_data")
        self.assertEqual(pahole.crosscheck(fields, struct, constants, 480, structs), ([], []))
        wrong = [dict(fields[2], offset=40)]
        mismatches, _ = pahole.crosscheck(wrong, struct, constants, 480, structs)
        self.assertEqual(mismatches, ["clock_data[CS_HRES_COARSE].basetime[CLOCK_MONOTONIC]: "
                                      "the table says offset 40 size 16, pahole offset 56 "
                                      "size 16"])
        mismatches, _ = pahole.crosscheck([{"name": "clock_data[CS_RAW].bogus", "offset": 0,
                                            "size": 4}], struct, constants, 480, structs)
        self.assertIn("no member bogus in struct vdso_clock", mismatches[0])
        self.assertIsNone(pahole.data_struct([{"name": "nothing", "offset": 0, "size": 4}],
                                             480, structs, constants))

    def test_constants_from_the_sources(self):
        c = pahole.c_constants()
        self.assertEqual((c["CLOCK_MONOTONIC"], c["CLOCK_TAI"]), (1, 11))
        self.assertEqual((c["VGTOD_BASES"], c["VDSO_BASES"], c["CS_RAW"]), (12, 12, 1))

    @unittest.skipUnless(tools.have("pahole"), "pahole (dwarves) not installed")
    def test_every_layout_against_its_compile_unit(self):
        chosen = layouts.resolve(variants.axis_values(registry(), "layout"), registry())
        for name, c in pahole.crosschecks(chosen).items():
            v = variant(name)
            self.assertEqual(c["compile_unit"], f"impls/layouts/{v['layout']}.c")
            self.assertEqual((c["agree"], c["notes"]), (len(v["fields"]), []), name)

    @unittest.skipUnless(tools.have("pahole"), "pahole (dwarves) not installed")
    def test_disagreement_fails(self):
        v = dict(variant(GTOD), fields=[{"name": "mult", "offset": 28, "size": 4}])
        with self.assertRaisesRegex(Failure, "mult: the table says offset 28"):
            pahole.check_pahole(v, pahole.c_constants(), "v1")

    def test_pahole_missing_is_one_line_and_goes_on(self):
        err = io.StringIO()
        with support.missing_tool("pahole"), contextlib.redirect_stderr(err):
            got = pahole.crosschecks([variant(GTOD)])
        self.assertIn("pahole not found", got[GTOD]["skipped"])
        self.assertEqual(len(err.getvalue().splitlines()), 1)
        self.assertIn("cross-check was skipped", err.getvalue())


class TraceTest(unittest.TestCase):
    """What the compiled read paths load, per call."""

    def test_monotonic_lines_as_tglx_said(self):
        gtod, p = lines_of(GTOD, "monotonic")
        self.assertEqual(gtod, [("data page", 0)])
        self.assertEqual(p["straddling"], [])
        multshift, p = lines_of(MULTSHIFT, "monotonic")
        self.assertEqual(multshift, [("data page", 0), ("data page", 1)])
        self.assertEqual(p["straddling"], [{"name": "basetime[CLOCK_MONOTONIC]",
                                            "lines": [0, 1]}])

    def test_one_call_of_do_hres(self):
        # the seqcount is read twice (begin and retry); the base entry once
        loads = {(x["offset"], x["size"]): x["count"]
                 for x in next(p for p in traced()[GTOD] if p["path"] == "monotonic")["loads"]}
        self.assertEqual(loads[(0, 4)], 2)
        self.assertEqual(loads[(48, 8)], 1)
        self.assertEqual(loads[(56, 8)], 1)

    def test_raw_is_a_syscall_on_x86_gtod(self):
        marks, p = lines_of(GTOD, "monotonic_raw")
        self.assertEqual((marks, p["kind"], p["syscalls_per_call"]), ([], "syscall", 1))
        self.assertIn("syscall (not served in userspace): no vDSO data read", p["summary"])
        marks, p = lines_of(MULTSHIFT, "monotonic_raw")
        self.assertEqual(p["syscalls_per_call"], 0)

    def test_timens_task_reads_the_namespace_page_then_the_data(self):
        marks, p = lines_of(TIMENS, "monotonic/timens")
        self.assertEqual(marks, [("timens page", 0), ("data page", 0)])
        host, _ = lines_of(TIMENS, "monotonic")
        self.assertEqual(host, [("data page", 0)])

    def test_traced_as_the_fake_twin(self):
        self.assertEqual({p["traced_as"] for p in traced()[GTOD]}, {"x86_gtod+fake+always"})

    def test_registry_and_trace_must_agree(self):
        p = {"kind": "hres", "syscalls_per_call": 1, "loads": []}
        with self.assertRaisesRegex(Failure, "made 1 syscalls"):
            layouts.check_path(p, "x")
        with self.assertRaisesRegex(Failure, "made none"):
            layouts.check_path(dict(p, kind="syscall", syscalls_per_call=0), "x")
        with self.assertRaisesRegex(Failure, "no load"):
            layouts.check_path(dict(p, syscalls_per_call=0), "x")

    def test_difference_of_two_traces(self):
        self.assertEqual(layouts.one_more_call({(0, 4): 7, (8, 8): 3}, {(0, 4): 9, (8, 8): 3},
                                              "x"), [{"offset": 0, "size": 4, "count": 2}])
        with self.assertRaisesRegex(Failure, "not one call longer"):
            layouts.one_more_call({(0, 4): 7}, {(0, 4): 6}, "x")
        trace = " L 00001000,4\n S 00001000,4\n M 00001008,8\nI  00401000,3\n L 00003000,4\n"
        self.assertEqual(layouts.loads_in(trace, 0x1000, 4096), {(0, 4): 1, (8, 8): 1})


    def test_one_run_a_variant_split_at_its_marks(self):
        trace = (" L 00001000,4\n S 00002000,1\n L 00001000,4\n S 00002001,1\n"
                 " S 00002100,1\n S 00002002,1\n L 00001008,8\n M 00001008,8\n"
                 " S 00002003,1\n L 00001000,4\n")
        parts = layouts.segments(trace, 0x2000, 2)
        self.assertEqual([layouts.loads_in(x, 0x1000, 4096) for x in parts],
                         [{(0, 4): 1}, {(8, 8): 2}])  # the store at +0x100 is no mark
        for bad in (trace.replace(" S 00002001,1\n", ""),
                    trace.replace("00002002", "00002004")):
            with self.assertRaisesRegex(Failure, "marks .* not 0 to 3 in order"):
                layouts.segments(bad, 0x2000, 2)

    def test_an_images_loads_in_the_rebuilds_frame(self):
        # an image keeps the data at 128 of its vvar page and the namespace's
        # page fourth (6.12's vvar, pvclock, hvclock, timens): read as the
        # rebuilds' two pages, with the data at 0
        loads = {(128, 4): 2, (184, 8): 1, (3 * 4096 + 128, 4): 2, (64, 8): 1,
                 (4096 + 130, 4): 1}
        self.assertEqual(layouts.in_frame(loads, (128, 3)),
                         {(0, 4): 2, (56, 8): 1, (4096, 4): 2})
        self.assertIs(layouts.in_frame(loads, None), loads)
        self.assertIsNone(layouts.image_frame({"inline": "always", "layout": "kernel:x"}))

    def test_what_the_driver_says_it_traced_is_checked(self):
        # the driver links the trees' code: its output is read as hostile
        paths = {GTOD: [{"clock": "realtime", "mode": "hot"}]}
        segs = [{"clock": "realtime", "mode": "hot", "iterations": n, "syscalls": 0}
                for n in layouts.ITERATIONS]
        trace = "".join(f" S {0x2000 + k:08x},1\n" for k in range(4))
        patcher = mock.patch.object(layouts.tools, "path", return_value="/usr/bin/valgrind")
        patcher.start()
        self.addCleanup(patcher.stop)
        for given in (segs[:1], [dict(segs[0], clock="tai"), segs[1]],
                      [segs[0], dict(segs[1], syscalls="0")], "x"):
            out = json.dumps({"vvar": "0x1000", "vvar_size": 4096, "marks": "0x2000",
                              "measured_as": "x86_gtod+fake+always", "segments": given})
            done = subprocess.CompletedProcess([], 0, out + "\n", trace)
            with self.subTest(given=given), \
                    mock.patch.object(layouts.lifecycle, "run", return_value=done), \
                    self.assertRaisesRegex(Failure, "not the paths asked for"):
                layouts.Tracer("driver", "/tmp", paths)(GTOD)
        out = json.dumps({"vvar": "0x1000", "vvar_size": 4096, "marks": "0x2000",
                          "measured_as": "x86_gtod+fake+always", "segments": segs})
        with mock.patch.object(layouts.lifecycle, "run",
                               return_value=subprocess.CompletedProcess([], 0, out, trace)):
            (lo, hi), = layouts.Tracer("driver", "/tmp", paths)(GTOD)
        self.assertEqual((lo[0]["iterations"], hi[0]["iterations"]), layouts.ITERATIONS)


class CliTest(unittest.TestCase):
    def test_diff_reproduces_seed_000(self):
        with mock.patch.object(layouts, "measure", from_cache):  # the same traces, made once
            rc, out, err = cli("--diff", "x86_gtod", "x86_gtod_ts_multshift")
        self.assertEqual(rc, 0, err)
        row = next(x for x in out.splitlines() if "basetime[CLOCK_MONOTONIC]" in x)
        self.assertIn("48..63", row)
        self.assertIn("48..71", row)
        self.assertIn("straddles in B", row)
        mono = next(x for x in out.splitlines() if x.strip().startswith("monotonic "))
        self.assertIn("1 line more in B", mono)

    def out_file(self, fmt, *names):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(layouts, "measure", from_cache):
            path = os.path.join(tmp, f"map.{fmt}")
            rc, out, err = cli(*names, "--format", fmt, "--out", path)
            self.assertEqual((rc, out), (0, ""), err)
            self.assertEqual(os.listdir(tmp), [f"map.{fmt}"])  # no temp file left
            with open(path, "rb") as f:
                return f.read()

    def test_png(self):
        data = self.out_file("png", "x86_gtod", "x86_gtod_ts_multshift", "generic_timens")
        self.assertEqual(data[:8], PNG_MAGIC)
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        self.assertGreater(width, 1000)
        self.assertGreater(height, 600)
        self.assertGreater(len(data), 20_000)

    def test_json(self):
        obj = json.loads(self.out_file("json", "--diff", "x86_gtod", "x86_gtod_ts_multshift"))
        self.assertEqual([m["variant"] for m in obj["variants"]], [GTOD, MULTSHIFT])
        self.assertEqual(obj["diff"]["b"], MULTSHIFT)
        mono = next(p for p in obj["variants"][1]["paths"] if p["path"] == "monotonic")
        self.assertEqual(mono["line_count"], 2)

    def test_text_to_a_file(self):
        text = self.out_file("text", "generic_timens").decode()
        self.assertIn("monotonic in a time namespace (timens): timens page line 0, "
                      "data page line 0 (2 lines)", text)
        self.assertIn("line 7 (bytes 448..511)", text)


class BadInputTest(unittest.TestCase):
    def one_line(self, *argv, needles=()):
        with tempfile.TemporaryDirectory() as tmp:
            rc, out, err = cli(*[a.replace("TMP", tmp) for a in argv])
            self.assertEqual(os.listdir(tmp), [])  # nothing left behind
        self.assertEqual(rc, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertTrue(err.startswith("vdsobench: error: "), err)
        self.assertNotIn("Traceback", err)
        for needle in needles:
            self.assertIn(needle, err)

    def test_unknown_variant(self):
        self.one_line("nosuch", "--out", "TMP/map.txt", needles=("'nosuch'", "x86_gtod"))

    def test_diff_needs_two(self):
        self.one_line("--diff", "x86_gtod", needles=("--diff",))
        self.one_line("--diff", "x86_gtod", "x86_gtod", needles=("names 1",))

    def test_diff_or_variants(self):
        self.one_line("generic_5_3", "--diff", "x86_gtod", "generic_5_3", needles=("not both",))

    def test_png_needs_out(self):
        self.one_line("x86_gtod", "--format", "png", needles=("--out",))

    def test_unwritable_out(self):
        self.one_line("x86_gtod", "--out", "TMP/no/such/dir/map.txt", needles=("no directory",))
        self.one_line("x86_gtod", "--out", "TMP", needles=("is a directory",))
        with tempfile.NamedTemporaryFile() as f:
            self.one_line("x86_gtod", "--format", "png", "--out", f"{f.name}/map.png",
                          needles=("cannot write",))

    def test_bad_jobs(self):
        self.one_line("x86_gtod", "--jobs", "0", needles=("--jobs",))

    def test_valgrind_missing(self):
        with support.missing_tool("valgrind"):
            self.one_line("x86_gtod", needles=("valgrind not found", "Debian's valgrind"))

    def test_a_failed_write_leaves_nothing(self):
        def half(f):
            f.write(b"partial")
            raise OSError(28, "No space left on device")

        def broken(f):
            f.write(b"partial")
            raise RuntimeError("drawing failed")

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "map.png")
            with self.assertRaisesRegex(UsageError, "No space left"):
                layout.write_atomic(path, half)
            with self.assertRaises(RuntimeError):
                layout.write_atomic(path, broken)
            self.assertEqual(os.listdir(tmp), [])


if __name__ == "__main__":
    unittest.main()
