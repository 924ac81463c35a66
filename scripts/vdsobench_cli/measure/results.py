"""Results files: Google Benchmark JSON plus context.vdsobench (written by
cli/targets.py and cli/atomic.py).

The schema is results/schema/results-v1.schema.json. Benchmark names are
<variant>/<clock>/<mode>/cpu<N> (variants may contain "/", e.g. sys/vdso);
aggregates are named <run_name>_<aggregate>, as Google Benchmark names them.
"""

from pathlib import Path

from vdsobench_cli.cli import inputs
from vdsobench_cli.cli.build import ROOT
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.core import vocab

SCHEMA_ID = "vdsobench-results/1"
SCHEMA_PATH = ROOT / "results" / "schema" / "results-v1.schema.json"


def default_path(repo_root, host, when, short_hash):
    """repo_root/results/runs/<host>-<YYYYMMDD-HHMMSS>-<short hash>.json.

    Seconds are in the name so that two runs a minute apart do not collide; `when`
    is used as given (pass an aware UTC datetime to make names comparable).
    """
    return (Path(repo_root) / "results" / "runs"
            / f"{host}-{when:%Y%m%d-%H%M%S}-{short_hash or 'nocommit'}.json")


def benchmark_key(name):
    """'sys/vdso/monotonic/hot/cpu0' -> ('sys/vdso', 'monotonic', 'hot', 0).

    For an aggregate, pass its run_name (its name has an _<aggregate> suffix).
    """
    try:
        return vocab.parse_benchmark(name)
    except vocab.BadName as e:
        raise UsageError(str(e)) from None


# ---- reading and validating -------------------------------------------------------------

# the fields Google Benchmark writes for every run; any other is a user counter
RUN_FIELDS = ("name", "run_name", "family_index", "per_family_instance_index", "run_type",
              "repetitions", "repetition_index", "threads", "iterations", "real_time",
              "cpu_time", "time_unit", "aggregate_name", "aggregate_unit", "label",
              "error_occurred", "error_message")


def gbench_nan(parts, token, parent):
    """Where a results file may hold NaN: Google Benchmark writes it for the cv
    (stddev / mean) of a counter that was 0 in every repetition (0/0), e.g.
    "cpu" on CPU 0. Nowhere else, and never Infinity."""
    return (token == "NaN" and len(parts) == 3 and parts[0] == "benchmarks"
            and parent.get("aggregate_name") == "cv" and parts[2] not in RUN_FIELDS)


def check_runs(obj, where):
    """What the schema cannot say: each repetition of a benchmark once, and its
    index below its repetitions. Two identical entries are refused, never
    counted as two repetitions."""
    seen = {}
    for i, b in enumerate(obj["benchmarks"]):
        iteration = b["run_type"] == "iteration"
        key = (b["name"], b.get("repetition_index") if iteration else None)
        if key in seen:
            what = f"repetition {key[1]}" if iteration else "aggregate"
            raise UsageError(f"{where}: benchmarks[{i}]: {b['name']!r} {what} appears twice "
                             f"(also benchmarks[{seen[key]}]); each is recorded once")
        seen[key] = i
        if iteration and b["repetition_index"] >= b["repetitions"]:
            raise UsageError(f"{where}: benchmarks[{i}].repetition_index: "
                             f"{b['repetition_index']} of {b['repetitions']} repetitions "
                             f"(0..{b['repetitions'] - 1})")


def validate(obj, where):
    """Raise UsageError "WHERE: <what is wrong>" unless obj is a valid results object."""
    inputs.check(obj, SCHEMA_PATH, where, "results file")
    check_runs(obj, where)


def load(path):
    """The results file at path as a dict, validated (inputs.read, then the
    schema, then check_runs); UsageError naming the file and what is wrong."""
    obj = inputs.read(path, "results file", allow=gbench_nan)
    validate(obj, path)
    return obj
