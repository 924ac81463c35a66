"""Reading results files and comparisons back: what `plot`, `merge`, `report`,
the fleet's collect and patch-review read, each file through cli/inputs (one
read, its size and depth bounded), then its schema and what the schema cannot
say. load_input() tells a results file (`run`) from a comparison (`compare
--out`); every failure is a UsageError of one line naming the file.
"""

from vdsobench_cli.cli import inputs
from vdsobench_cli.cli.build import ROOT
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.measure import results

COMPARISON_SCHEMA = ROOT / "results" / "schema" / "comparison-v1.schema.json"


def comparison_inf(parts, token, parent):
    """Where a comparison may hold Infinity: a ratio (or its interval) of a
    count that was 0 at the baseline and is not now (core/stats.py: x/0)."""
    return (token == "Infinity" and len(parts) == 3 and parts[0] == "rows"
            and parts[2] in ("ratio", "ci_low", "ci_high") and parent.get("base") == 0)


def plot_input_constant(parts, token, parent):
    return results.gbench_nan(parts, token, parent) or comparison_inf(parts, token, parent)


def check_comparison(obj, path):
    """The schema (results/schema/comparison-v1.schema.json), then what it
    cannot say: each row once, and its ratio inside its interval."""
    inputs.check(obj, COMPARISON_SCHEMA, path, "comparison")
    seen = {}
    for i, row in enumerate(obj["rows"]):
        key = tuple(row.get(k) for k in ("clock", "mode", "cpu", "metric", "baseline", "variant"))
        if key in seen:
            raise UsageError(f"{path}: rows[{i}]: {row['variant']} against {row['baseline']}, "
                             f"{row['metric']} on {row['clock']}/{row['mode']} appears twice "
                             f"(also rows[{seen[key]}])")
        seen[key] = i
        lo, ratio, hi = row.get("ci_low"), row["ratio"], row.get("ci_high")
        if None not in (lo, ratio, hi) and not lo <= ratio <= hi:
            raise UsageError(f"{path}: rows[{i}]: ratio {ratio:g} is outside its interval "
                             f"[{lo:g}, {hi:g}]")


def why_not_results(path, obj, error):
    """results.validate's error, said more plainly for the cases people hit."""
    ctx = obj.get("context") if isinstance(obj, dict) else None
    schema = ((ctx or {}).get("vdsobench") or {}).get("schema") if isinstance(ctx, dict) else None
    if isinstance(schema, str) and schema != results.SCHEMA_ID:
        return UsageError(f"{path}: results schema {schema!r}, but this vdsobench reads "
                          f"{results.SCHEMA_ID!r}: mixed schema versions cannot be plotted or "
                          "merged together")
    if isinstance(obj, dict) and obj.get("benchmarks") == []:
        return UsageError(f"{path}: no benchmarks (the run measured nothing)")
    return error


def load_input(path, what="results file or comparison"):
    """("results" or "comparison", the object), or UsageError naming what is
    wrong; read once, through inputs.read (what: its kind in inputs.LIMITS)."""
    obj = inputs.read(path, what, allow=plot_input_constant)
    if isinstance(obj, dict) and "rows" in obj and "benchmarks" not in obj:
        check_comparison(obj, path)
        return "comparison", obj
    if not isinstance(obj, dict):
        raise UsageError(f"{path}: expected a JSON object at the top, found "
                         f"{inputs.TYPE_WORDS[inputs.json_type(obj)]}: not a results file "
                         "(run) or a comparison (compare --out)")
    try:
        results.validate(obj, path)
    except UsageError as e:
        raise why_not_results(path, obj, e) from None
    return "results", obj


def load_results(paths, command):
    """[(path, results)]; a comparison file is refused."""
    out = []
    for path in paths:
        kind, obj = load_input(path, "results file")
        if kind != "results":
            raise UsageError(f"{command}: {path} is a comparison; {command} takes results "
                             "files from `run` (plot takes comparisons)")
        out.append((path, obj))
    return out
