"""The ABI a results file's times are of (context.vdsobench.abi), and the i386
harness's rounds as the benchmarks a results file holds.

A 32-bit build of the harness says so in its context: "abi", its name, its
bits and what the build leaves out and why (bench/left_out.h: Google
Benchmark, libpfm4, hwloc). A 64-bit build's context says nothing: it is
its architecture's own ABI and leaves nothing out.

The i386 harness has no Google Benchmark, so `run --arch i386` times with
its interleaved rounds (--rounds) and each round's batch becomes one
repetition of its benchmark, the shape run_table and the results readers
know: real_time is the batch's ns per call. A batch that lost its CPU
after every retry ("disturbed") is left out, as the rounds' statistics
leave it out; a batch that failed is the benchmark's error, and so is a
benchmark whose every batch was left out (LOST), so that a busy machine
never makes a row vanish from the results.

Google Benchmark's own context fields (date, host_name, executable, ...),
which the results schema requires and every reader of a results file
(compare --results, merge, report, plot) checks, are made here for the
i386 harness's file, from this machine as Google Benchmark reads them.

    record(harness, arch_name)   {"name", "bits", "left_out": [{"what", "why"}]}
    rounds_results(lines)        (harness context, benchmarks, left out)
    gbench_context(executable, harness)
                                 Google Benchmark's context fields
"""

import datetime
import os

from vdsobench_cli.cli.errors import Failure
from vdsobench_cli.measure import rounds

CACHES = "/sys/devices/system/cpu/cpu0/cache"

BITS = {"x86_64": 64, "arm64": 64, "i386": 32, "arm": 32}
LOST = "lost its CPU in every round, after every retry: not timed (other work ran on its CPU)"


def record(harness, arch_name):
    own = harness.get("abi") if isinstance(harness, dict) else None
    if not isinstance(own, dict):
        return {"name": arch_name, "bits": BITS.get(arch_name), "left_out": []}
    left = own.get("left_out") if isinstance(own.get("left_out"), list) else []
    return {"name": str(own.get("name")),
            "bits": own.get("bits") if isinstance(own.get("bits"), int) else None,
            "left_out": [{"what": str(e.get("what")), "why": str(e.get("why"))}
                         for e in left if isinstance(e, dict)]}


def _benchmark(rec, repetitions=1):
    name = str(rec.get("benchmark"))
    out = {"name": name, "run_name": name, "run_type": "iteration",
           "repetitions": repetitions, "threads": 1}
    if "error" in rec:
        # as Google Benchmark writes a benchmark that failed: nothing measured
        return dict(out, repetition_index=0, iterations=0, real_time=0, cpu_time=0,
                    time_unit="ns", error_occurred=True, error_message=str(rec["error"]))
    ns = rec.get("ns_per_call")
    if not isinstance(ns, (int, float)) or isinstance(ns, bool):
        raise Failure(f"the harness's rounds: {name}: ns_per_call is not a number")
    out.update(repetition_index=rec.get("round"), iterations=rec.get("iterations"),
               real_time=ns, cpu_time=ns, time_unit="ns")
    counters = rec.get("counters") if isinstance(rec.get("counters"), dict) else {}
    out.update({str(k): v for k, v in counters.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)})
    return out


def rounds_results(lines):
    """(the harness's context, benchmarks, how many batches lost their CPU and
    were left out) from the harness's --rounds output."""
    context, records, lost, left, reps = None, [], 0, {}, 1
    for n, rec in rounds.records(lines):
        if not isinstance(rec, dict):
            raise Failure(f"the harness's rounds output, line {n}: not an object")
        if "context" in rec:
            context = rec["context"]
            if isinstance(rec.get("rounds"), int) and rec["rounds"] >= 1:
                reps = rec["rounds"]
        elif "round" in rec and "benchmark" in rec:
            if rec.get("disturbed") is True:
                lost += 1
                left.setdefault(str(rec["benchmark"]), None)
                continue
            records.append(rec)
    if not isinstance(context, dict):
        raise Failure("the harness's rounds output has no context line")
    benchmarks = [_benchmark(rec, reps) for rec in records]
    kept = {b["name"] for b in benchmarks}
    benchmarks += [_benchmark({"benchmark": name, "error": LOST}, reps)
                   for name in left if name not in kept]
    return context, benchmarks, lost


def _caches():
    """CPU 0's caches as Google Benchmark lists them (sysfs), [] where unknown."""
    out = []
    try:
        names = sorted(n for n in os.listdir(CACHES) if n.startswith("index"))
    except OSError:
        return out
    for name in names:
        def read(field, d=os.path.join(CACHES, name)):
            with open(os.path.join(d, field)) as f:
                return f.read().strip()
        try:
            size, kind, level = read("size"), read("type"), int(read("level"))
            shared = read("shared_cpu_list")
        except (OSError, ValueError):
            continue
        scale = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}.get(size[-1:], 1)
        digits = size.rstrip("KMG")
        if not digits.isdigit():
            continue
        sharing = 0
        for part in filter(None, shared.split(",")):
            lo, _, hi = part.partition("-")
            if lo.isdigit() and (hi or lo).isdigit():
                sharing += int(hi or lo) - int(lo) + 1
        out.append({"type": kind, "level": level, "size": int(digits) * scale,
                    "num_sharing": max(sharing, 1)})
    return out


def gbench_context(executable, harness):
    """The context fields Google Benchmark writes (the results schema's), for a
    harness without it: this machine's, read as Google Benchmark reads them;
    mhz_per_cpu the harness's counter's rate, library_build_type the harness's
    own build (there is no library)."""
    hz = harness.get("counter_hz") if isinstance(harness, dict) else None
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") as f:
            scaling = f.read().strip() != "performance"
    except OSError:
        scaling = False
    return {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "host_name": os.uname().nodename,
            "executable": str(executable),
            "num_cpus": os.cpu_count() or 1,
            "mhz_per_cpu": round(hz / 1e6) if isinstance(hz, (int, float))
            and not isinstance(hz, bool) and hz > 0 else 0,
            "cpu_scaling_enabled": scaling,
            "caches": _caches(),
            "load_avg": list(os.getloadavg()),
            # no library here: the harness's own build (its context's "optimized")
            "library_build_type": ("release" if isinstance(harness, dict)
                                   and harness.get("optimized") is True else "debug")}
