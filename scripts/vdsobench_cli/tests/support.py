"""Shared test fixtures and helpers: a small variant list as vdsobench_verify
--list-json prints it, what a live compare may end with, the CLI run in this
process or as its own, the recorded rounds, made-up machine trees, a throwaway
imports table, a made-up Slurm cluster. Test modules import helpers from here,
from the helpers of one area (vvar_support.py: the recorded [vvar] page;
fleet_support.py, import_attacks.py, git_support.py: a git tree made and made
hostile) or reports/testsupport.py, never from each
other: import_graph_test checks."""

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from reports import tables
from vdsobench_cli.core import vocab
from reports.testsupport import png_size, svg_size
from vdsobench_cli import main
from vdsobench_cli.cli import arch, build, errors, packages, tools
from vdsobench_cli.commands import merge, plot, testrun
from vdsobench_cli.kimport import bazel_sync, store
from vdsobench_cli.measure import rounds

TESTDATA = Path(__file__).resolve().parent / "testdata"

# A live compare is a timing, so a test of its plumbing takes any of these:
# exit 1 is a live "slower", or no verdict because the CPU was lost (another
# process ran on it, say a second suite on a 2-CPU machine), which is the
# lost-CPU check working, never a failure of the test.
LIVE_COMPARE_EXITS = (0, 1)
LIVE_VERDICTS = ("faster", "slower", "no significant difference", tables.NO_VERDICT)


def variant(name, known_bad=None, hres=("realtime", "monotonic", "tai"), raw=()):
    layout, counter, inline = vocab.split_variant(name)
    return {"name": name, "layout": layout, "counter": counter, "inline": inline,
            "source": f"impls/layouts/{layout}.c", "summary": "", "known_bad": known_bad,
            "hres_clocks": list(hres), "coarse_clocks": ["realtime_coarse", "monotonic_coarse"],
            "raw_clocks": list(raw), "has_getres": True, "has_timens": False,
            "real_counter": counter != "fake", "data_size": 64, "vvar_size": 4096,
            "fields": [{"name": "seq", "offset": 0, "size": 4}]}


VARIANTS = [
    variant("generic_5_3+rdtscp+always"),
    variant("generic_5_3+rdtsc+always"),
    variant("x86_4_19+rdtscp+always", raw=("monotonic_raw",)),
    variant("torn_read+fake+always", known_bad="reads the seqcount once"),
]
LIST_JSON = json.dumps(VARIANTS)


def block_modules(directory, modules=("numpy", "scipy", "matplotlib", "jsonschema")):
    """Make `directory` a path entry that hides these modules: each becomes a
    package whose import raises ImportError, as on a machine without them.
    Put it first on PYTHONPATH; returns the directory."""
    from pathlib import Path
    for m in modules:
        pkg = Path(directory, m)
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text(
            f'raise ImportError("{m} is blocked: this test plays a machine without it")\n')
    return str(directory)


# ---- the CLI, in this process and as its own ---------------------------------------------

def vdsobench(*argv):
    """(exit status, stdout, stderr) of `scripts/vdsobench ARGV`."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main.main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def cli(*argv):
    """(exit status, stdout, stderr) of scripts/vdsobench as its own process: verify
    prints its driver's lines straight to the terminal, past sys.stdout."""
    r = subprocess.run([sys.executable, str(build.ROOT / "scripts" / "vdsobench"), *argv],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return r.returncode, r.stdout, r.stderr


def ok(test, argv, rc_want=0):
    rc, out, err = cli(*argv)
    test.assertEqual(rc, rc_want, f"{' '.join(argv)}: {err}{out[-3000:]}")
    return out


def default_dispositions():
    """A child's preexec_fn: the signals as a command started from a terminal
    finds them. A suite started in the background or under nohup ignores
    SIGINT or SIGHUP, the child inherits that, and lifecycle rightly leaves an
    ignored signal ignored: the command would then never see the test's."""
    import signal
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGTSTP):
        signal.signal(s, signal.SIG_DFL)


def snapshot(root):
    """{path: (type, mode, mtime, content or link target)} of everything below root:
    a file rewritten in place, even with the same bytes, shows."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    body = hashlib.sha256(f.read()).hexdigest()
            else:
                body = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
            out[os.path.relpath(path, root)] = (
                stat.S_IFMT(st.st_mode), st.st_mode & 0o7777,
                st.st_mtime_ns if not stat.S_ISDIR(st.st_mode) else None, body)
    return out


def assert_one_miss_more(test, before, after, clock="realtime", mode="pressure"):
    """sim's net L1D misses per call: after's one more than before's (a field
    the patch moved onto a line the path did not load)."""
    sim = json.loads(ok(test, ["sim", before, after, "--clocks", clock, "--modes", mode,
                               "--format", "json"]))
    misses = {r["variant"]: r["net_l1d_misses_per_call"] for r in sim}
    test.assertEqual(misses[after], misses[before] + 1, sim)


def one_line(test, rc, err, *needles):
    test.assertEqual(rc, 2, err)
    test.assertEqual(len(err.strip().splitlines()), 1, err)
    for needle in needles:
        test.assertIn(needle, err)


# Set in the copy of the project new_variant_test builds and tests: a test that
# cannot hold there (it names the variants, it re-imports worlds) skips.
NESTED = "VDSOBENCH_IN_NEW_VARIANT_COPY"
# `test --long` sets it: the tier past CI's 30 minutes (testrun.LONG: which, why)
LONG_ENV = testrun.LONG_ENV


def long_tier(what):
    return unittest.skipUnless(os.environ.get(LONG_ENV), f"{what}: `test --long` runs it")


# patch-review's timed rounds in the tests that run a review end to end: a
# smoke run, any verdict accepted (--quick's own budget is 60 s)
TEST_BUDGET_S = "15"


# ---- plot and merge on the committed fixtures (reports/testdata) -------------------------

REPORTS_TESTDATA = build.ROOT / "reports" / "testdata"
AMD, INTEL, COMPARISON = (str(REPORTS_TESTDATA / n) for n in ("amd-epyc.json", "intel-xeon.json",
                                                              "compare.json"))


def plot_parser():
    """The commands of plot.py and merge.py, as main.py registers them."""
    p = main.Parser(prog="vdsobench")
    sub = p.add_subparsers(dest="command")
    plot.add_parser(sub)
    merge.add_parser(sub)
    return p


def plot_dispatch(argv):
    args = plot_parser().parse_args(argv)
    args.argv = list(argv)
    return args.func(args)


def plot_vdsobench(*argv):
    """(exit status, stdout, stderr) of `scripts/vdsobench ARGV` for plot and merge
    alone (plot_parser), each argument made a string."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = errors.guard(plot_dispatch, [str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


class TempDir(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="vdsobench-plot-test-")
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def assert_refused(self, *argv, needle=""):
        """Exit 2, one line naming the problem, no output, no new file anywhere in self.dir."""
        before = sorted(str(p) for p in self.dir.rglob("*"))
        rc, out, err = plot_vdsobench(*argv)
        self.assertEqual(rc, 2, err)
        self.assertEqual(out, "")
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertTrue(err.startswith("vdsobench: error: "), err)
        self.assertIn(needle, err)
        self.assertEqual(sorted(str(p) for p in self.dir.rglob("*")), before)
        return err

    def assert_charts(self, paths):
        for path in paths:
            self.assertTrue(path.exists(), path)
            if path.suffix == ".png":
                w, h = png_size(path)
                self.assertEqual(w, 1050, f"{path}: 7 in at 150 dpi")
                # the SVG twin is the same figure: points * 150/72 = pixels
                sw, sh = svg_size(path.with_suffix(".svg"))
                self.assertEqual((round(sw * 150 / 72), round(sh * 150 / 72)), (w, h))


def many_results(copies):
    """results_small.json with its benchmarks (repetitions and aggregates) copied
    under `copies` more variant names each: a large results file of the real
    shape (compare --results of 3 x copies rows)."""
    data = json.loads((TESTDATA / "results_small.json").read_text())
    runs = data["benchmarks"]
    data["benchmarks"] = []
    for i in range(copies):
        for b in runs:
            clock_mode_cpu = "/".join(b["run_name"].split("/")[-3:])
            layout = b["run_name"][:-len(clock_mode_cpu) - 1].replace("/", "_").split("+")[0]
            run_name = f"{layout}_c{i}+rdtscp+always/{clock_mode_cpu}"
            data["benchmarks"].append(dict(b, run_name=run_name,
                                           name=run_name + b["name"][len(b["run_name"]):]))
    return data


def tool_at(name, path):
    """cli/tools.py's `name` found at path for the length of a with block: a
    missing tool (a path that is not there), or a fake one."""
    return mock.patch.dict(tools.TOOLS, {name: ((str(path),), tools.TOOLS[name][1])})


def missing_tool(name):
    return tool_at(name, f"/nonexistent/{name}")


# ---- a command under a seccomp filter that refuses perf_event_open ------------------------

# Run argv[2:] with a seccomp filter that makes perf_event_open fail with the
# errno argv[1] (as Docker's and systemd's filters do): ctypes prctl, a
# classic BPF program on seccomp_data's arch and nr, then exec.
SECCOMP_EXEC = r"""
import ctypes, os, platform, sys
ARCH = {"x86_64": (0xC000003E, 298), "aarch64": (0xC00000B7, 241)}[platform.machine()]
class Insn(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint)]
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Insn))]
ALLOW, ERRNO = 0x7FFF0000, 0x00050000
code = [(0x20, 0, 0, 4), (0x15, 1, 0, ARCH[0]), (0x06, 0, 0, ALLOW), (0x20, 0, 0, 0),
        (0x15, 0, 1, ARCH[1]), (0x06, 0, 0, ERRNO | int(sys.argv[1])), (0x06, 0, 0, ALLOW)]
insns = (Insn * len(code))(*[Insn(*i) for i in code])
prog = Prog(len(code), insns)
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(prog), 0, 0):
    sys.exit(f"seccomp: {os.strerror(ctypes.get_errno())}")
os.execvp(sys.argv[2], sys.argv[2:])
"""


def seccomp_cmd(err):
    """The argv prefix that runs a command with perf_event_open failing with err."""
    return ["/usr/bin/python3", "-c", SECCOMP_EXEC, str(err)]


# ---- Google Benchmark's tools/compare.py reading our files -------------------------------
# A re-statement of what tools/gbench/util.py (load_benchmark_results,
# sort_benchmark_results) and report.py (partition_benchmarks, get_difference_report,
# print_difference_report's aggregates-only filter, the geomean of non-aggregates) read
# from each benchmark entry. Fields compare.py requires are indexed, so a missing one fails.
# (results_test has the sort and the geomean.)

def gbench_load(path, benchmark_filter=None):
    with open(path) as f:
        data = json.load(f)
    if benchmark_filter is not None:
        data["benchmarks"] = [b for b in data["benchmarks"]
                              if re.search(benchmark_filter, b.get("run_name") or b["name"])]
    return data


def unique_names(data):
    return list(dict.fromkeys(b["name"] for b in data["benchmarks"]))


def partitions(json1, json2):
    names = [n for n in unique_names(json1) if n in unique_names(json2)]
    found = []
    for name in names:
        unit = next((b["time_unit"] for b in json1["benchmarks"] if b["name"] == name
                     and {"time_unit", "real_time", "cpu_time"} <= set(b)), None)
        if unit is None:
            continue
        found.append([[b for b in data["benchmarks"] if b["name"] == name
                       and b["time_unit"] == unit] for data in (json1, json2)])
    return found


def change(old, new):
    return (new - old) / abs(old) if old else 0.0


def difference_report(json1, json2):
    report = []
    for lhs, rhs in partitions(json1, json2):
        measurements = [{"time": change(a["real_time"], b["real_time"]),
                         "cpu": change(a["cpu_time"], b["cpu_time"])} for a, b in zip(lhs, rhs)]
        run_type = lhs[0].get("run_type", "")
        report.append({"name": lhs[0]["name"], "time_unit": lhs[0]["time_unit"],
                       "run_type": run_type, "measurements": measurements,
                       "aggregate_name": lhs[0]["aggregate_name"] if run_type == "aggregate"
                       else "", "iterations": [b["iterations"] for b in lhs]})
    return report


# ---- the recorded rounds (compare, gate, the lost-CPU check) ------------------------------

BASE = "x86_gtod+lfence_rdtsc+always"
OTHER = "x86_gtod_raw_copy+lfence_rdtsc+always"
# Recorded on this project's machine (AMD EPYC under KVM) with
#   vdsobench_bench --variants BASE,OTHER --clocks monotonic_raw,monotonic
#     --modes hot --rounds 16 --batch-ms 10 --copies 1 --out FILE
# x86_gtod has no userspace MONOTONIC_RAW (a syscall), OTHER has: a
# structural difference; MONOTONIC is the same code in both.
RECORDED = os.path.join(TESTDATA, "rounds-gtod-raw-copy.jsonl")
# The subjects as recorded, with rdtscp; the commands under test ask the
# harness first whether a subject runs here, and a CPU without RDTSCP (some
# hypervisors mask it) runs none of those names, while every x86-64 CPU runs
# lfence; rdtsc. So the recorded rounds are handed over under BASE's and
# OTHER's names: only the names change, every time stays as recorded.
RECORDED_AS = {"x86_gtod+rdtscp+always": BASE, "x86_gtod_raw_copy+rdtscp+always": OTHER}


def recorded_records():
    """The recorded rounds' records, their subjects renamed as RECORDED_AS says."""
    with open(RECORDED) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    for r in recs:
        if r.get("subject") in RECORDED_AS:
            was, r["subject"] = r["subject"], RECORDED_AS[r["subject"]]
            if r.get("benchmark", "").startswith(was + "/"):
                r["benchmark"] = r["subject"] + r["benchmark"][len(was):]
    return recs


def recorded_rounds(scale=None, same=False):
    """A stand-in for rounds.measure() that returns the recorded rounds: with
    scale {clock: factor}, OTHER's times on that clock multiplied by factor;
    with same, OTHER's times replaced by BASE's (an A/A comparison)."""
    def measure(binary, hargs, rounds_n, batch_ms, copies=1, quiet=False):
        recs = recorded_records()
        base = {(r["group"], r["round"]): r["ns_per_call"] for r in recs
                if r.get("subject") == BASE}
        for r in recs:
            if r.get("subject") != OTHER:
                continue
            if same:
                r["ns_per_call"] = base[(r["group"], r["round"])]
            r["ns_per_call"] *= (scale or {}).get(r["group"].split("/")[0], 1)
        return rounds.parse(json.dumps(r) for r in recs)
    return mock.Mock(side_effect=measure)


# ---- kernel imports: Debian's tarballs, a throwaway imports table -------------------------

KERNEL_TESTDATA = build.ROOT / "kernel_import" / "testdata"
TORN_612 = str(KERNEL_TESTDATA / "6.12-torn-mult-shift.patch")


class ImportsDir:
    """A throwaway imports table for a test class: the project's own table (and
    the gate's baseline, which knows no imports) stay as they are."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-imports-")
        self.saved = os.environ.get(store.DIR_ENV)
        os.environ[store.DIR_ENV] = self.tmp.name

    def close(self):
        if self.saved is None:
            os.environ.pop(store.DIR_ENV, None)
        else:
            os.environ[store.DIR_ENV] = self.saved
        bazel_sync.sync_env()
        self.tmp.cleanup()


def tarball(version):
    """The Debian tarball, installed now when missing and root; None (skip) when it
    cannot be."""
    path = Path(f"/usr/src/linux-source-{version}.tar.xz")
    if not path.exists() and os.geteuid() == 0:
        packages.ensure_group((f"linux-source-{version}",), "the import tests")
    return path if path.exists() else None


def tarball_or_skip(version):
    """tarball(version) for a class of real imports, or SkipTest: inside the
    new-variant test's copy (minutes each, and a layout added changes nothing
    an import does), or no tarball to be had."""
    if os.environ.get(NESTED):
        raise unittest.SkipTest("inside the new-variant test's copy of the project")
    path = tarball(version)
    if path is None:
        raise unittest.SkipTest(f"no /usr/src/linux-source-{version}.tar.xz (as root: "
                                "scripts/vdsobench setup --kernel-sources)")
    return path


def run_made_up_elf(test, runner, header, env=None):
    """The runner's CompletedProcess for a made-up ELF file (header: its first
    bytes, e_machine at byte 18) on a PATH with the runners' tools and no
    qemu; the file is removed with the test."""
    with tempfile.NamedTemporaryFile("wb", delete=False) as f:
        f.write(header + bytes(64 - len(header)))
    test.addCleanup(os.unlink, f.name)
    os.chmod(f.name, 0o755)
    with tempfile.TemporaryDirectory() as bin_dir:
        for tool in ("od", "tr", "dirname"):
            os.symlink(shutil.which(tool), os.path.join(bin_dir, tool))
        return subprocess.run([runner, f.name], capture_output=True, text=True,
                              env=dict(env or {}, PATH=bin_dir))


def cross_missing():
    """Why the arm64 import cannot run here, or None (arch.cannot_run)."""
    return arch.cannot_run("arm64")


def arm64_tarball_or_skip(version="6.12"):
    """Debian's tarball for a class that imports it for arm64 under qemu;
    unittest.SkipTest (saying why) inside new_variant_test's copy, without the
    cross tools or qemu-user, or without the tarball."""
    if os.environ.get(NESTED):
        raise unittest.SkipTest("inside the new-variant test's copy of the project")
    why = cross_missing()
    if why:
        raise unittest.SkipTest(why)
    src = tarball(version)
    if src is None:
        raise unittest.SkipTest(f"no /usr/src/linux-source-{version}.tar.xz (as root: "
                                "scripts/vdsobench setup --kernel-sources)")
    return src


# ---- made-up machines: the /proc and /sys trees fingerprint reads --------------------------

CPU = "sys/devices/system/cpu"
CLOCKSOURCE = "sys/devices/system/clocksource/clocksource0"


def cpuinfo_block(n, vendor, family, model, stepping, name, flags, microcode="0x1"):
    return (f"processor\t: {n}\nvendor_id\t: {vendor}\ncpu family\t: {family}\n"
            f"model\t\t: {model}\nmodel name\t: {name}\nstepping\t: {stepping}\n"
            f"microcode\t: {microcode}\nflags\t\t: {flags}\n\n")


def proc_stat(rows):
    """/proc/stat text; rows {cpu: (user, system, idle, iowait)}."""
    lines = ["cpu  1 2 3 4 5 6 7 8 0 0"]
    lines += [f"cpu{c} {u} 0 {s} {i} {w} 0 0 0 0 0" for c, (u, s, i, w) in sorted(rows.items())]
    return "\n".join(lines + ["intr 1 2 3", "ctxt 1234", "btime 1700000000"]) + "\n"


EPYC_FLAGS = "fpu tsc msr rdtscp lm constant_tsc nonstop_tsc tsc_known_freq hypervisor"
# A KVM guest: no cpufreq, the hypervisor flag, clocksource tsc, no SMT.
VM_TREE = {
    "proc/cpuinfo": "".join(cpuinfo_block(n, "AuthenticAMD", 25, 1, 1, "AMD EPYC", EPYC_FLAGS,
                                          "0x1000065") for n in (0, 1)),
    "proc/loadavg": "0.10 0.20 0.30 1/100 1234\n",
    "proc/stat": proc_stat({0: (100, 50, 1000, 5), 1: (100, 50, 1000, 5)}),
    "proc/sys/kernel/osrelease": "6.1.0-vm\n",
    "proc/sys/kernel/version": "#1 SMP PREEMPT_DYNAMIC\n",
    "proc/sys/kernel/arch": "x86_64\n",
    "proc/sys/kernel/hostname": "guest.example.org\n",
    f"{CLOCKSOURCE}/current_clocksource": "tsc\n",
    f"{CLOCKSOURCE}/available_clocksource": "tsc kvm-clock \n",
    f"{CPU}/online": "0-1\n",
    f"{CPU}/smt/active": "0\n",
    f"{CPU}/cpu0/topology/thread_siblings_list": "0\n",
    f"{CPU}/cpu1/topology/thread_siblings_list": "1\n",
}

I7_FLAGS = "fpu tsc msr rdtscp lm constant_tsc nonstop_tsc tsc_known_freq"
# A laptop: powersave, boost on, clocksource hpet, loaded, cpu0's sibling cpu2 busy.
LAPTOP_TREE = {
    "proc/cpuinfo": "".join(cpuinfo_block(n, "GenuineIntel", 6, 140, 1, "Intel(R) Core(TM) "
                                          "i7-1165G7 @ 2.80GHz", I7_FLAGS, "0xb4")
                            for n in range(4)),
    "proc/loadavg": "3.50 2.00 1.00 5/400 4321\n",
    "proc/stat": proc_stat({0: (100, 50, 1000, 5), 1: (100, 50, 1000, 5),
                            2: (100, 50, 1000, 5), 3: (100, 50, 1000, 5)}),
    "proc/sys/kernel/osrelease": "6.1.0-27-amd64\n",
    "proc/sys/kernel/version": "#1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1\n",
    "proc/sys/kernel/arch": "x86_64\n",
    "proc/sys/kernel/hostname": "laptop\n",
    f"{CLOCKSOURCE}/current_clocksource": "hpet\n",
    f"{CLOCKSOURCE}/available_clocksource": "tsc hpet acpi_pm \n",
    f"{CPU}/online": "0-3\n",
    f"{CPU}/smt/active": "1\n",
    f"{CPU}/cpufreq/boost": "1\n",
    "sys/class/dmi/id/sys_vendor": "LENOVO\n",
    **{f"{CPU}/cpu{c}/topology/thread_siblings_list": f"{c % 2},{c % 2 + 2}\n"
       for c in range(4)},
    **{f"{CPU}/cpu{c}/cpufreq/scaling_governor": "powersave\n" for c in range(4)},
    **{f"{CPU}/cpu{c}/cpufreq/scaling_driver": "intel_pstate\n" for c in range(4)},
}
# The second /proc/stat sample of the laptop: cpu2 ran 60 of 100 jiffies.
LAPTOP_STAT_LATER = proc_stat({0: (150, 50, 1050, 5), 1: (101, 50, 1099, 5),
                               2: (150, 60, 1040, 5), 3: (100, 51, 1099, 5)})


def write_tree(root, files):
    for rel, text in files.items():
        path = Path(root, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


class TreeTest(unittest.TestCase):
    tree = {}

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root = tmp.name
        write_tree(self.root, self.tree)


def garbage_tarballs(directory):
    """[(what, path, words the refusal must say)] of kernel "tarballs" that
    are none, written into directory: random bytes, an empty file, a valid xz
    of bytes that are no tar, random bytes under gzip's suffix and under
    plain tar's, an xz of a tar with no members, one whose files are under no
    top folder, and a real one cut short. import must refuse each in one line
    naming the file and what is wrong."""
    import io
    import lzma
    import os
    import tarfile
    from pathlib import Path

    def tar_xz(name, members):
        path = Path(directory, name)
        with tarfile.open(path, "w:xz") as tar:
            for member, body in members:
                member.size = len(body)
                tar.addfile(member, io.BytesIO(body))
        return path

    def raw(name, data):
        path = Path(directory, name)
        path.write_bytes(data)
        return path

    noise = os.urandom(4096)
    out = [
        ("random bytes", raw("x.tar.xz", noise),
         ("x.tar.xz: not an xz-compressed tar archive", "(xz: File format not recognized)")),
        ("an empty file", raw("empty.tar.xz", b""),
         ("empty.tar.xz: an empty file, not a tar archive",)),
        ("an xz of no tar", raw("data.tar.xz", lzma.compress(noise)),
         ("data.tar.xz: xz-compressed, but not a tar archive",
          "This does not look like a tar archive")),
        ("random bytes as .tar.gz", raw("x.tar.gz", noise),
         ("x.tar.gz: not a gzip-compressed tar archive", "(gzip: ")),
        ("random bytes as .tar", raw("x.tar", noise),
         ("x.tar: not a tar archive", "This does not look like a tar archive")),
        ("a tar with no members", tar_xz("none.tar.xz", []),
         ("none.tar.xz: a tar archive with no members",)),
        ("no top folder", tar_xz("flat.tar.xz", [(tarfile.TarInfo("Makefile"), b"x\n"),
                                                 (tarfile.TarInfo("lib/f"), b"x\n")]),
         ("flat.tar.xz: not a kernel source tarball", "'Makefile' is under no top folder")),
    ]
    whole = tar_xz("whole.tar.xz", [(tarfile.TarInfo("linux-x/Makefile"), os.urandom(1 << 20))])
    cut = raw("cut.tar.xz", whole.read_bytes()[:200000])
    whole.unlink()
    out.append(("a tarball cut short", cut,
                ("cut.tar.xz: an xz-compressed tar archive that is damaged",
                 "(xz: Unexpected end of input)")))
    return out
