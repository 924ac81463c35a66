"""`merge` and `report`: results from several machines and cores as one table and one plot.

`merge` prints the merged table (reports/merge.py: a column per machine and
CPU, keyed by CPU model, microcode, kernel and hypervisor; a row per
benchmark; the median and its 95% interval; with --reference, each cell's
ratio to that variant on the same CPU) and writes it as JSON with --out.
`report` writes the table as Markdown (index.md, which embeds the charts),
the JSON, the per-CPU chart and each machine's bars into a directory. Both
call out differences between the runs that are not the machine: project
commit, build flags, compiler, clocksource, pinning.
"""

import argparse
import sys
from pathlib import Path

from vdsobench_cli.cli import atomic
from vdsobench_cli.cli.chart_options import add_filters, patterns, print_paths, shown_path
from vdsobench_cli.measure import charts, report
from vdsobench_cli.cli.errors import UsageError

from reports import merge


def merged(args):
    variants, clocks, modes = patterns(args)
    return report.table(args.files, args.command, args.reference, variants, clocks, modes)


def run_merge(args):
    if args.format not in merge.FORMATS:
        raise UsageError(f"--format: {args.format!r} is not a format "
                         f"(valid: {', '.join(merge.FORMATS)})")
    if args.out:
        # before the work, and again (atomically) when writing
        atomic.refuse_existing(Path(args.out), args.force)
        charts.check_out_dir(Path(args.out).parent)
    _, table = merged(args)
    text = merge.render_merge(table, args.format)
    if args.out:
        atomic.write_atomic(args.out, table, force=args.force)
    print(text, end="")
    if args.out:
        print(f"merged: {shown_path(args.out)}", file=sys.stderr)
    return 0


def run_report(args):
    variants, clocks, modes = patterns(args)
    print_paths(report.write(args.files, args.out, getattr(args, "argv", ["report"]),
                                  args.format, args.reference, variants, clocks, modes))
    return 0


def add_parser(sub):
    p = sub.add_parser(
        "merge", help="results from several machines and CPUs as one table",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="One table across machines and cores: a column per machine and CPU\n"
                    "(keyed by CPU model, microcode, kernel, hypervisor), a row per\n"
                    "benchmark, the median ns per call and its 95% interval; differing\n"
                    "project commits, build flags, compilers are called out. With\n"
                    "--reference, each cell also shows its ratio to that variant on the same\n"
                    "CPU, so machines of different speed compare.")
    p.add_argument("files", nargs="+", metavar="FILE", help="results files from `run`")
    p.add_argument("--out", metavar="FILE", help="also write the merged table (JSON) here")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    p.add_argument("--format", default="table", metavar="FMT",
                   help=f"one of {', '.join(merge.FORMATS)} (default table)")
    p.add_argument("--reference", metavar="VARIANT",
                   help="show each cell's ratio to this variant on the same machine and CPU")
    add_filters(p)
    p.set_defaults(func=run_merge)

    r = sub.add_parser(
        "report", help="the merged table (Markdown) and its charts in a directory",
        description="Write into DIR: index.md (machines, differences between the runs, the "
                    "merged table, the charts embedded), merged.json, the per-CPU chart and "
                    "each file's bars, as PNG and SVG. All are written, or none. "
                    + charts.chart_limit())
    r.add_argument("files", nargs="+", metavar="FILE", help="results files from `run`")
    r.add_argument("--out", required=True, metavar="DIR", help="directory for the report")
    r.add_argument("--format", metavar="LIST", help="chart formats: png, svg or both "
                                                   "(default png,svg)")
    r.add_argument("--reference", metavar="VARIANT",
                   help="ratios to this variant on the same CPU, in the table and the chart")
    add_filters(r)
    r.set_defaults(func=run_report)
