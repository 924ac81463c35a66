"""`sim`: deterministic simulated metrics per variant x clock x mode, from cachegrind.

The command: it parses the variants, clocks and modes, calls measure/sim.py's
measure() (which says how the metrics are made: cachegrind at two iteration
counts, the floor subtracted, the fake-counter twin of each variant) and
prints its rows as a table or JSON.
"""

import json
import sys

from vdsobench_cli.cli import arch, ranged
from vdsobench_cli.core import vocab
from vdsobench_cli.measure import sim
from vdsobench_cli.measure.sim import ITERATIONS, SYS_NOTE, SYS_VDSO


def geometry_line(geometry):
    return (f"{geometry['tool']} (valgrind {geometry['valgrind']}), cache simulation: "
            f"I1 {geometry['I1']}, D1 {geometry['D1']}, LL {geometry['LL']} "
            "(bytes,ways,line); per call = difference of "
            f"{ITERATIONS[1]} and {ITERATIONS[0]} calls / {ITERATIONS[1] - ITERATIONS[0]}")


def format_table(results):
    head = ("variant", "clock", "mode", "instr/call", "L1D miss/call",
            "net instr", "net L1D miss")
    rows = [(r["variant"], r["clock"], r["mode"],
             f"{r['instructions_per_call']:g}", f"{r['l1d_misses_per_call']:g}",
             f"{r['net_instructions_per_call']:g}", f"{r['net_l1d_misses_per_call']:g}")
            for r in results]
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    lines = []
    for row in (head, *rows):
        lines.append("  ".join(x.ljust(w) if i < 3 else x.rjust(w)
                               for i, (x, w) in enumerate(zip(row, widths))).rstrip())
    if results:
        lines.append("measured as <layout>+fake+<inline> (same code, counter read from "
                     "TLS); net = minus floor/empty in the same mode")
        if results[0].get("clock_mode", "tsc") != "tsc":
            lines.append(f"clock mode: {results[0]['clock_mode']} (each call that reads the "
                         "counter reads the simulated host's page: vread_pvclock(), "
                         "vread_hvclock())")
        sys_rows = [r for r in results if r["variant"] == SYS_VDSO]
        if sys_rows:
            lines.append(SYS_NOTE)
        if sys_rows and sys_rows[0].get("copied"):
            lines.append(f"{SYS_VDSO}: {sys_rows[0]['copied']}")
        geometry = results[0]["geometry"]
        lines.append("geometry: " + geometry_line(geometry))
        if geometry["fake_counter_page_offset"] < geometry["evicted_span"]:
            lines.append("note: the fake counter's TLS line lies in the sets pressure evicts: "
                         "every variant's pressure misses include it")
    return lines


def run(args):
    results = sim.measure(args.variants or None,
                          args.clocks or sim.DEFAULT_CLOCKS, args.modes or sim.MODES, args.jobs,
                          clock_mode=args.clock_mode)
    if args.format == "json":
        json.dump(results, sys.stdout, indent=1)
        print()
    else:
        for line in format_table(results):
            print(line)
    return 0


def add_parser(sub):
    p = sub.add_parser(
        "sim", help="simulated instructions and L1D misses per call (cachegrind)",
        description="Deterministic simulated metrics per variant x clock x mode: "
                    "instructions and L1D misses per call from cachegrind's cache "
                    "simulation, identical from run to run on the same build, so a "
                    "machine without a PMU still sees a cache-line layout effect. "
                    "A variant <layout>+<counter>+<inline> is measured as "
                    "<layout>+fake+<inline> (same layout code and inlining; the fake "
                    "counter is a TLS load, so every call takes the same path).",
        epilog="modes: hot (back to back), pressure (2 x the simulated D1 read between "
               "calls at the data page's offsets, as `run` does), cold (the harness's "
               "cold loop: the data page's offsets read in 2 x the D1's ways of pages "
               "before each call), timens (generic_timens* only). "
               "Needs valgrind (scripts/vdsobench setup).")
    p.add_argument("variants", nargs="*", metavar="VARIANT",
                   help=f"names or globs (default {arch.default_variants()!r}: every layout in the "
                        f"table); {SYS_VDSO}: the running kernel's own vDSO, copied (x86-64, "
                        "hot and pressure)")
    p.add_argument("--clocks", action="append", metavar="LIST",
                   help="comma-separated (default the suite's clocks); also getres:<clock>, "
                        "gettimeofday, time")
    p.add_argument("--modes", action="append", metavar="LIST",
                   help="hot, pressure, cold, timens (default hot,pressure)")
    p.add_argument("--clock-mode", choices=vocab.CLOCK_MODES, default="tsc",
                   metavar="tsc|pvclock|hvclock",
                   help="the simulated clocksource (default tsc); pvclock: kvm-clock, each call "
                        "reading the simulated host's pvclock page; hvclock: Hyper-V's TSC "
                        "page (x86 layouts and imports only)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--jobs", type=ranged.JOBS, metavar="N",
                   help=f"valgrind runs in parallel (default: the number of CPUs; "
                        f"{ranged.JOBS.valid})")
    p.set_defaults(func=run)
