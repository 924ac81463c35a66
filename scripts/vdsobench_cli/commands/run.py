"""`run`: benchmark a selection on pinned CPUs; write a results file; print the table.

The harness (//bench:vdsobench_bench) does the measuring and writes Google
Benchmark JSON; this command checks the output path first, collects the
machine fingerprint and the warnings, runs it, and writes the results file
(that JSON plus context.vdsobench) atomically.
"""

import datetime
import json
import os
import re
import sys

from vdsobench_cli.cli import (arch, atomic, build, confine, inputs, labels, packages, ranged,
                              safe_read, targets)
from vdsobench_cli.measure import (abi, clocksource, cpu_lock, fingerprint, machine_warnings,
                                   results)
from vdsobench_cli.measure.harness import DEFAULTS, VALUED, call, option_args, planned
from vdsobench_cli.kimport import bazel_sync
from vdsobench_cli.cli.errors import Failure, UsageError

from reports import run_table
from vdsobench_cli.core import vocab

SCHEMA = "vdsobench-results/1"


def harness_args(args):
    return option_args(args, VALUED, DEFAULTS)


def cpus_of(names):
    return sorted({key[3] for key in map(run_table.split_name, names) if key})


def git_short_hash():
    info = fingerprint.build_info(build.ROOT)
    return info, (info.get("short") or "nogit")


def output_path(args, build_info_short, emulation=None):
    if args.out:
        return args.out  # as given: "-" is refused by name
    now = datetime.datetime.now()
    # an emulated run's file says so in its name too: <host>-aarch64-emulated-...
    host = fingerprint.short_host()
    if emulation:
        host += f"-{emulation['guest']}-emulated"
    return str(results.default_path(build.ROOT, host, now, build_info_short))


def vdsobench_context(args, argv, harness, fp, build_info, warnings, names, cpus):
    fp = dict(fp)
    fp.setdefault("kernel", {})["vdso"] = harness.get("vdso")
    build_info = dict(build_info, compiler=harness.get("compiler"),
                      optimized=harness.get("optimized"))
    fp["build"] = build_info
    return {
        "schema": SCHEMA,
        "abi": abi.record(harness, arch.current().name),
        "fingerprint": fp,
        "warnings": warnings,
        "pinning": harness.get("pinning", {}),
        "counters": harness.get("counters", {}),
        "selection": {
            "variants": args.variants or None, "clocks": args.clocks or None,
            "modes": args.modes or None, "cpus": cpus,
            "min_time": str(args.min_time or DEFAULTS["min_time"]),
            "repetitions": int(args.repetitions or DEFAULTS["repetitions"]),
            "benchmarks": len(names),
            "interleaved": not args.sequential,
        },
        "harness": {k: v for k, v in harness.items()
                    if k not in ("pinning", "counters", "vdso", "compiler", "optimized",
                                 "abi")},
        "command": ["scripts/vdsobench", *argv],
        # the harness ran as the sandbox user (cli/confine.py), and how
        "confinement": confine.record(),
        # what each imported tree measured was (the commit alone does not say)
        **imports_context(names),
        # how the transcribed layouts were compiled ($VDSOBENCH_LINE)
        "line": line_context(),
    }


def line_context():
    """{"layouts": plain|kernel, "families": {family: where its line came from}}:
    the kernel line's provenance (impls/kernel_lines/lines.bzl) when it is used."""
    which = arch.layouts_line()
    if which == "plain":
        return {"layouts": "plain", "families": {}}
    from vdsobench_cli.kimport import kernel_lines
    return {"layouts": which,
            "families": {f: e["provenance"] for f, e in kernel_lines.read().items()}}


def imports_context(names):
    """{"imports": {kernel:NAME: its tree's key, source, patches, ...}} for the
    imported variants among the benchmark names; {} when there are none."""
    imports = bazel_sync.identities(map(vocab.layout_of, names))
    return {"imports": imports} if imports else {}


# what Google Benchmark adds to the name of a benchmark with a fixed iteration count
# and manual time, as the harness registers the cold modes' (their reported time is
# the calls' alone, net of the bracket, not the loop's)
GB_SUFFIX = re.compile(r"/iterations:\d+|/manual_time")


def plain_names(data):
    """Every benchmark named <subject>/<clock>/<mode>/cpu<N>, as planned: the cold
    modes' Google Benchmark suffixes taken off name and run_name."""
    for b in data.get("benchmarks", []):
        for key in ("name", "run_name"):
            if isinstance(b.get(key), str):
                b[key] = GB_SUFFIX.sub("", b[key])
    return data


def rounds_args(args):
    """The i386 harness has no Google Benchmark (arch.NO_GBENCH): --repetitions
    rounds of batches of --min-time each (the harness takes at most 3600 ms)."""
    reps = int(args.repetitions or DEFAULTS["repetitions"])
    batch_ms = min(float(args.min_time or DEFAULTS["min_time"]) * 1000, 3600)
    return ["--rounds", str(reps), "--batch-ms", f"{batch_ms:g}"]


def from_rounds(text, executable=""):
    """The rounds' lines as a results file's data (measure/abi.py), with Google
    Benchmark's context fields, which every reader of the file requires."""
    context, benchmarks, lost = abi.rounds_results(text.splitlines())
    if lost:
        print(f"run: {lost} batches lost their CPU after every retry and are left out",
              file=sys.stderr)
    return {"context": {**abi.gbench_context(executable, context),
                        "vdsobench_harness": json.dumps(context)},
            "benchmarks": benchmarks}


def expected_size(benchmarks, repetitions):
    """Bytes a results file may take: about 500 per repetition and aggregate (mean,
    median, stddev, cv) of each benchmark, doubled, plus the context."""
    return 64 * 1024 + benchmarks * (repetitions + 4) * 1024


def run(args):
    argv = getattr(args, "argv", sys.argv[1:])
    arch.timed_natively("run")
    if getattr(args, "sequential", False) and arch.current().name in arch.NO_GBENCH:
        # its harness times interleaved rounds whatever it is told: the results
        # would say "interleaved": false of rounds that were interleaved
        raise UsageError(f"--sequential with --arch {arch.current().name}: its harness has "
                         "no Google Benchmark and times interleaved rounds only (leave "
                         "--sequential out)")
    packages.ensure_setup()
    # a global setting to switch: refused before anything is built or measured
    if args.clocksource and arch.current().emulated:
        raise UsageError(f"--clocksource with --arch {arch.current().name}: its times are "
                         "the emulator's, not this kernel's vDSO's (run it natively)")
    d = clocksource.directory()
    sources = clocksource.chosen(args.clocksource, d) if args.clocksource else None
    build.build([labels.BENCH])
    binary = build.program(labels.BENCH)
    hargs = harness_args(args)
    if sources:
        # every CPU's lock is held for the switch: the harness takes none
        hargs = option_args(args, tuple(k for k in VALUED if k != "cpu_lock"), DEFAULTS)
        hargs += ["--cpu-lock", "off"]
        if not args.variants:
            hargs += ["--variants", clocksource.subjects(arch.current().name)]
    names, skipped = planned(binary, hargs)
    if args.list:
        for line in skipped:
            print(line)
        for name in names:
            print(name)
        print(f"{len(names)} benchmarks", file=sys.stderr)
        return 0

    info, short = git_short_hash()
    repetitions = int(args.repetitions or DEFAULTS["repetitions"])
    emulation = arch.emulation()  # None natively
    # before measuring: a full disk or a taken name must not cost the whole run
    path = output_path(args, short, emulation)
    need = expected_size(len(names), repetitions)
    if not sources:
        target = targets.check_writable(path, args.force, need=need)
        return measure(args, argv, binary, hargs, names, skipped, target, info, emulation)
    if args.out:
        # the files are named after --out: one that names a device, a FIFO, a
        # folder or a link is refused as run without --clocksource refuses it
        # (--out /dev/null must not become a file /dev/null-tsc)
        atomic.refuse_existing(args.out, True)
    outs = {cs: targets.check_writable(clocksource.out_path(path, cs), args.force, need=need)
            for cs in sources}
    listed = clocksource.available(d)
    rc = 0
    locks = None if args.cpu_lock == "off" else clocksource.lock_dir()
    if locks is None and args.cpu_lock != "off":
        print("run: no folder for the CPU locks could be made: the clocksource is switched "
              "without them, and another vdsobench measurement here may run under it",
              file=sys.stderr, flush=True)
    with clocksource.Switch(d, range(os.cpu_count() or 1), locks=locks,
                            fail=args.cpu_lock == "fail",
                            say=lambda line: print(line, file=sys.stderr, flush=True)) as sw:
        print(f"run: the clocksource is {sw.original}; it is put back at the end (if this "
              f"process is killed: echo {sw.original} > {d}/{clocksource.CURRENT})",
              file=sys.stderr, flush=True)
        for cs in sources:
            sw.to(cs)
            print(f"run: clocksource {cs}", file=sys.stderr, flush=True)
            rc = max(rc, measure(args, argv, binary, hargs, names, skipped, outs[cs], info,
                                 emulation, switched={"clocksource": cs,
                                                      "original": sw.original,
                                                      "available": listed}))
    return rc


def measure(args, argv, binary, hargs, names, skipped, target, info, emulation,
            switched=None):
    """Measure names once, write target, print the table: run's exit status.
    switched: {"clocksource", "original", "available"} of run --clocksource."""
    cpus = cpus_of(names)
    fp = fingerprint.collect(cpus)
    warnings = arch.warnings(emulation) + machine_warnings.check(fp, not args.no_pin, cpus)
    for line in machine_warnings.format_warnings(warnings):
        print(line, file=sys.stderr)
    for line in skipped:
        print(line, file=sys.stderr)
    print(f"run: {len(names)} benchmarks on CPU {','.join(map(str, cpus))}, "
          f"{args.repetitions or DEFAULTS['repetitions']} repetitions of "
          f"{args.min_time or DEFAULTS['min_time']} s", file=sys.stderr, flush=True)

    with confine.scratch(prefix="vdsobench-run-") as tmp:
        raw = os.path.join(tmp, "gbench.json")
        rounds = arch.current().name in arch.NO_GBENCH
        cmd, env = cpu_lock.confined(
            [*binary, *hargs, *(rounds_args(args) if rounds else []), "--out", raw]
            + (["--quiet"] if args.quiet else []), write=[tmp])
        r = call(cmd, False, env)
        if r.returncode != 0 and not os.path.exists(raw):
            # refused before measuring (a CPU lock held, --cpu-lock=fail): the
            # harness said why on our stderr, in its one line
            return 1
        try:
            # the harness ran the trees' code: what it left is read as hostile
            text = safe_read.read_regular(
                raw, "the harness's results", inputs.LIMITS["results file"], follow=False)
            data = (from_rounds(text, binary[-1]) if rounds
                    else plain_names(json.loads(text)))
        except (UsageError, ValueError) as e:
            raise Failure(f"the harness wrote no usable results (exit {r.returncode}): "
                          f"{e}") from None
    context = data.setdefault("context", {})
    try:
        harness = json.loads(context.pop("vdsobench_harness", "{}"))
    except json.JSONDecodeError:
        raise Failure("the harness's context is not JSON") from None
    waited = cpu_lock.warnings(harness)  # known only after the harness ran
    for line in machine_warnings.format_warnings(waited):
        print(line, file=sys.stderr)
    warnings = warnings + waited
    context["vdsobench"] = vdsobench_context(args, argv, harness, fp, info, warnings,
                                             names, cpus)
    context["vdsobench"]["emulation"] = emulation
    rows = run_table.summarize(data.get("benchmarks", []), order=names)
    served = []
    if switched:
        served = clocksource.served(rows, switched["clocksource"])
        context["vdsobench"]["clocksource"] = dict(switched, served=served)
    path = target.write_json(data)  # not writable now: Failure naming a recovery file

    counters = context["vdsobench"]["counters"]
    if warnings:
        print(f"warnings (above, and in the results): "
              f"{', '.join(w['id'] for w in warnings)}")
    if not counters.get("available"):
        print(f"counters: unavailable ({counters.get('reason')}); time only")
    for line in run_table.format_table(rows, counters.get("events", []),
                                       context["vdsobench"]["pinning"].get("cpu_kinds"),
                                       emulation):
        print(line)
    for line in served:
        print(line)
    print(f"results: {os.path.relpath(path)}")
    failed = [row["name"] for row in rows if row["error"]]
    if failed or r.returncode != 0:
        print(f"run: {len(failed)} benchmarks failed", file=sys.stderr)
        return 1
    return 0


def add_parser(sub):
    modes = ("modes (what real effect each exposes):\n"
             "  hot       back-to-back calls (the seeds' microbenchmark)\n"
             "  pressure  an L1D-sized buffer read between calls evicts the data page:\n"
             "            each call pays for the cache lines its layout touches\n"
             "  compute   20 dependent multiply-adds between calls: out-of-order\n"
             "            overlap can hide a hot-loop advantage\n"
             "  writer    a thread on --writer-cpu runs update_vsyscall() at --hz:\n"
             "            invalidated lines and seqlock retries\n"
             "  timens    the reader is a task in a time namespace (generic_timens*)\n"
             "  pointer   calls through a function pointer, as glibc calls the vDSO\n"
             "  cold      before each call, evict the data page's lines from L1D\n"
             "            (2 x hwloc's L1D ways of loads in each of their sets) and\n"
             "            time the call alone between ordered counter reads: ns per\n"
             "            call net of that bracket (floor/empty cold), which holds\n"
             "            what the lines found in L2 cost the call\n"
             "  cold-l2   as cold, the lines evicted from L2 too (hwloc's L2)\n"
             "  warm      each call timed alone as in cold, nothing evicted: the\n"
             "            control (cold - warm: what the evicted lines cost)\n"
             "  footprint after each call, walk a chain of the caller's lines over the\n"
             "            L1D sets the call's data maps to: ns of call and walk net of\n"
             "            the walk alone, and the lines the call displaced\n"
             "\nsubjects: variants (LAYOUT+COUNTER+INLINE, real counters), sys/syscall,\n"
             "sys/libc, sys/vdso (the kernel's __vdso_clock_gettime), with --arch i386\n"
             "sys/vdso_gettime64 (__vdso_clock_gettime64, 64-bit time_t), floor/rdtsc,\n"
             "floor/lfence_rdtsc, floor/mfence_rdtsc, floor/rdtscp, floor/empty (the loop);\n"
             "on arm64 floor/isb_cntvct_isb, floor/isb_cntvct_dep, floor/cntvctss.\n"
             "Default: '*+C+always,sys/*,floor/*', C the kernel's own counter read here:\n"
             "rdtscp, or lfence_rdtsc on a CPU without RDTSCP (arm64: cntvctss with FEAT_ECV,\n"
             "else isb_cntvct_dep),\n"
             "the suite's clocks, hot, 3 x 0.1 s. Under emulation (--arch arm64 on x86-64)\n"
             "every time is the emulator's and is labelled 'emulated (qemu-user)'.\n"
             "--arch i386 times a 32-bit process on the CPU, or not at all: where the kernel\n"
             "runs no 32-bit program it is refused in one line. Its harness has no Google\n"
             "Benchmark, libpfm4 or hwloc: --repetitions interleaved rounds of --min-time\n"
             "batches, no counters, pinned by sched_setaffinity; context.vdsobench.abi says\n"
             "so (docs/benchmarks.md \"The i386 harness\").")
    p = sub.add_parser("run", help="benchmark variants next to the system's vDSO; write results",
                       formatter_class=__import__("argparse").RawDescriptionHelpFormatter,
                       description="Benchmark each <variant>/<clock>/<mode>/cpu<N> on pinned\n"
                                   "CPUs with Google Benchmark (perf counters where the machine\n"
                                   "has them), write the results file, print the table.",
                       epilog=modes)
    p.add_argument("--variants", action="append", metavar="LIST",
                   help="names or globs, comma-separated: 'generic_*+rdtscp+always,sys/vdso'")
    p.add_argument("--clocks", action="append", metavar="LIST",
                   help=f"{', '.join(vocab.CLOCKS)}, getres:<clock>, gettimeofday, time")
    p.add_argument("--modes", action="append", metavar="LIST",
                   help="hot, pressure, compute, writer, timens, pointer, cold, cold-l2, "
                        "warm, footprint (default hot)")
    p.add_argument("--cpus", metavar="LIST", help="CPUs, one at a time: 0,2 or 1-3 or all "
                                                  "(default: the last CPU allowed)")
    p.add_argument("--writer-cpu", metavar="N", type=ranged.CPU,
                   help="the writer's CPU (default: another core, else another PU)")
    p.add_argument("--hz", metavar="N|max", type=ranged.HZ,
                   help=f"writer updates per second (default 1000; {ranged.HZ.valid})")
    cpu_lock.add_argument(p)
    p.add_argument("--no-pin", action="store_true",
                   help="run unpinned (a warning); otherwise a refused binding is an error")
    p.add_argument("--events", metavar="LIST",
                   help="perf events by libpfm4 name (default cycles,instructions,"
                        "L1-dcache-load-misses; none to skip)")
    p.add_argument("--min-time", metavar="S", type=ranged.MIN_TIME,
                   help=f"seconds per benchmark run (default 0.1; {ranged.MIN_TIME.valid})")
    p.add_argument("--repetitions", metavar="N", type=ranged.REPETITIONS,
                   help=f"runs per benchmark (default 3; {ranged.REPETITIONS.valid})")
    p.add_argument("--out", metavar="FILE",
                   help="results file (default results/runs/<host>-<date>-<commit>.json); "
                        "checked before measuring (its directory, free space, an existing "
                        "file); if it still cannot be written, the results are kept in "
                        "$XDG_STATE_HOME/vdsobench/recovered-*.json; '-' is refused")
    p.add_argument("--force", action="store_true",
                   help="replace an existing results file: a regular file only, never a "
                        "directory, device, FIFO, socket or symbolic link (nor its target), "
                        "and only if no other run replaced it meanwhile")
    p.add_argument("--list", action="store_true",
                   help="print what the selection expands to, and run nothing")
    p.add_argument("--sequential", action="store_true",
                   help="run each benchmark's repetitions back to back (default: all "
                        "repetitions in random order, so drift does not favour one)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--clocksource", metavar="LIST|all",
                   help="time under each of these clocksources (a comma list, or all: "
                        "those the machine lists), switching clocksource0's "
                        "current_clocksource (root only; every CPU's lock held; the "
                        "original put back at the end, on an error or a signal); "
                        f"default subjects {clocksource.SUBJECTS}; one results file "
                        "each, FILE-<clocksource>.json")
    arch.add_argument(p, "benchmark this architecture's build")
    p.set_defaults(func=run)
