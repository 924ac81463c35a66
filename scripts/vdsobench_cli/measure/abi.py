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

    record(harness, arch_name)   {"name", "bits", "left_out": [{"what", "why"}]}
    rounds_results(lines)        (harness context, benchmarks, left out)
"""

from vdsobench_cli.cli.errors import Failure
from vdsobench_cli.measure import rounds

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


def _benchmark(rec):
    name = str(rec.get("benchmark"))
    out = {"name": name, "run_name": name, "run_type": "iteration"}
    if "error" in rec:
        return dict(out, error_occurred=True, error_message=str(rec["error"]))
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
    context, benchmarks, lost, left = None, [], 0, {}
    for n, rec in rounds.records(lines):
        if not isinstance(rec, dict):
            raise Failure(f"the harness's rounds output, line {n}: not an object")
        if "context" in rec:
            context = rec["context"]
        elif "round" in rec and "benchmark" in rec:
            if rec.get("disturbed") is True:
                lost += 1
                left.setdefault(str(rec["benchmark"]), None)
                continue
            benchmarks.append(_benchmark(rec))
    if not isinstance(context, dict):
        raise Failure("the harness's rounds output has no context line")
    kept = {b["name"] for b in benchmarks}
    benchmarks += [_benchmark({"benchmark": name, "error": LOST})
                   for name in left if name not in kept]
    return context, benchmarks, lost
