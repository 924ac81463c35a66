"""`list`: every variant with its axes, userspace clocks and source."""

import json

from . import packages, variants as variants_mod


def clocks(v):
    def join(key):
        return ",".join(v.get(key) or []) or "-"
    return f"hres={join('hres_clocks')} coarse={join('coarse_clocks')} raw={join('raw_clocks')}"


def table(variants):
    rows = [[v["name"], str(v.get("layout", "?")), str(v.get("counter", "?")),
             str(v.get("inline", "?")), clocks(v),
             "KNOWN-BAD" if v.get("known_bad") else "", str(v.get("source", ""))]
            for v in variants]
    widths = [max((len(r[i]) for r in rows), default=0) for i in range(len(rows[0]))] if rows else []
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    counts = [len(variants_mod.axis_values(variants, key)) for key, _ in variants_mod.AXES]
    lines.append(f"{len(variants)} variants: {counts[0]} layouts x {counts[1]} counters "
                 f"x {counts[2]} inline")
    return lines


def run(args):
    packages.ensure_setup()
    _, chosen = variants_mod.choose(None if args.variants is None else [args.variants],
                                    "--variants")
    if args.json:
        print(json.dumps(chosen, indent=2))
    else:
        print("\n".join(table(chosen)))
    return 0


def add_parser(sub):
    p = sub.add_parser("list", help="list the variants with their axes and source",
                       description="List every variant: name, layout, counter, inline, "
                                   "userspace clocks, known-bad marker, source.")
    p.add_argument("--json", action="store_true", help="print the full JSON array")
    p.add_argument("--variants", metavar="PATTERNS",
                   help="comma-separated exact names or globs, e.g. 'generic_*+rdtscp+*'")
    p.set_defaults(func=run)
