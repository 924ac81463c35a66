"""`compare`: is my variant faster, by how much, how sure are we.

Paired (the default): the variants run in one process in interleaved rounds
(see rounds.py), and each round gives one ratio per variant against the
first (the baseline); the verdict comes from those paired ratios. Unpaired
(`--results OLD NEW`): two saved runs, repetitions against repetitions;
drift between the runs is not cancelled, so it says so and is stricter.
The comparison itself is measure/compare.py's; this module parses, prints
and writes.
"""

import argparse
import os
import sys

from vdsobench_cli.cli import arch, ranged, targets
from vdsobench_cli.measure import compare as library, cpu_lock
from vdsobench_cli.cli.errors import Failure, UsageError

from reports import tables
from vdsobench_cli.core import limits

FORMATS = ("table", "lkml", "markdown", "csv", "json")


def write_out(target, comparison):
    """--out, checked before the work (check_outputs): a failed write keeps the
    comparison in a recovery file and says where (exit 1)."""
    if target:
        path = target.write_json(comparison)
        print(f"comparison: {os.path.relpath(path)}", file=sys.stderr)


def write_plots(plot_dir, comparison):
    if plot_dir:
        from vdsobench_cli.measure import charts
        for path in charts.plot_comparison(comparison, plot_dir):
            print(f"plot: {os.path.relpath(path)}", file=sys.stderr)


def check_outputs(args):
    """Before a run: a bad --out or --plot must fail in a second, not after it. The
    --out Target, or None."""
    if args.plot:
        targets.check_out_dir(args.plot)
    if args.out:
        return targets.check_writable(args.out, args.force, what="the comparison")
    return None


def compare_paired(args):
    target = check_outputs(args)
    comparison = library.paired_comparison(args.variants, args, args.rounds, args.batch_ms,
                                           args.alpha, sim=args.sim, quiet=args.quiet)
    print(tables.render(comparison, args.format, calls_per=args.calls_per), end="")
    write_out(target, comparison)
    write_plots(args.plot, comparison)
    if comparison["meta"]["refused"]:
        raise Failure("; ".join(comparison["meta"]["refused"]))
    return 0


def compare_results(args, target=None):
    old_path, new_path = args.results
    comparison = library.unpaired_comparison(old_path, new_path, args.alpha)
    print(tables.render(comparison, args.format, calls_per=args.calls_per), end="")
    write_out(target, comparison)
    write_plots(args.plot, comparison)
    return 0


def run_compare(args):
    if args.format not in FORMATS:
        raise UsageError(f"--format: {args.format!r} is not a format "
                         f"(valid: {', '.join(FORMATS)})")
    if args.results:
        if args.variants:
            raise UsageError("compare: give variants or --results OLD NEW, not both")
        return compare_results(args, check_outputs(args))
    from vdsobench_cli.cli import packages
    packages.ensure_setup()
    return compare_paired(args)


def add_parser(sub):
    p = sub.add_parser(
        "compare", help="paired, interleaved A/B: ratio with confidence interval, verdict",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run the variants in one process in interleaved rounds (a balanced\n"
                    "order, the same iteration count for all in a round) and compare each\n"
                    "with the first, per clock x mode: medians, the ratio with its\n"
                    "confidence interval from the paired per-round ratios (sign test,\n"
                    "Bonferroni-corrected for the number of comparisons), a p-value and a\n"
                    "verdict: faster, slower or no significant difference.\n"
                    "A batch that lost its CPU to another task (it ran < 98% of its time)\n"
                    "is retried up to 3 times; each row shows the batches retried and the\n"
                    "rounds lost even so, and a group with more than 10% such rounds gets\n"
                    "no verdict (exit 1, saying why).\n"
                    "--results OLD.json NEW.json compares two saved runs instead (unpaired).")
    p.add_argument("variants", nargs="*", metavar="VARIANT",
                   help="the baseline first, then the others (names or globs)")
    p.add_argument("--results", nargs=2, metavar=("OLD", "NEW"),
                   help="compare two results files from `run` (unpaired)")
    p.add_argument("--clocks", action="append", metavar="LIST",
                   help="as for run (default: the suite's clocks)")
    p.add_argument("--modes", action="append", metavar="LIST", help="as for run (default hot)")
    p.add_argument("--cpus", metavar="LIST", help="as for run")
    p.add_argument("--writer-cpu", metavar="N", type=ranged.CPU, help="as for run")
    p.add_argument("--hz", metavar="N|max", type=ranged.HZ, help="as for run")
    p.add_argument("--events", metavar="LIST", help="as for run")
    p.add_argument("--no-pin", action="store_true", help="as for run")
    cpu_lock.add_argument(p)
    p.add_argument("--rounds", type=ranged.ROUNDS, default=limits.ROUNDS, metavar="N",
                   help=f"interleaved rounds (default {limits.ROUNDS}; {ranged.ROUNDS.valid})")
    p.add_argument("--batch-ms", type=ranged.BATCH_MS, default=limits.BATCH_MS, metavar="MS",
                   help=f"the slowest variant's batch per round (default {limits.BATCH_MS}; "
                        f"{ranged.BATCH_MS.valid})")
    p.add_argument("--alpha", type=ranged.ALPHA, default=limits.ALPHA, metavar="A",
                   help=f"significance level before correction (default {limits.ALPHA}; "
                        f"{ranged.ALPHA.valid})")
    p.add_argument("--sim", action="store_true",
                   help="also compare simulated instructions and L1D misses (valgrind), "
                        "for the modes cachegrind runs: hot, pressure, cold")
    p.add_argument("--format", default="table", metavar="FMT",
                   help=f"one of {', '.join(FORMATS)} (default table)")
    p.add_argument("--calls-per", metavar="SECONDS", type=ranged.CALLS_PER,
                   help="show calls per duration instead of ns/call (e.g. 10s, as in seed 000)")
    p.add_argument("--out", metavar="FILE",
                   help="also write the comparison (JSON) here; checked before measuring, "
                        "kept in a recovery file if it still cannot be written; '-' is "
                        "refused")
    p.add_argument("--force", action="store_true",
                   help="replace --out if it exists (a regular file only, as for run)")
    p.add_argument("--plot", metavar="DIR",
                   help="also draw the comparison (ratios with intervals; PNG and SVG) here")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    arch.add_argument(p, "compare in this architecture's build")
    p.set_defaults(func=run_compare)

