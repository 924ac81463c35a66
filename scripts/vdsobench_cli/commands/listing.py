"""`list`: every variant with its axes, userspace clocks and source."""

import json

from vdsobench_cli.cli import arch, packages, variants as variants_mod
from vdsobench_cli.core import vocab


def clocks(v):
    def join(key):
        return ",".join(v.get(key) or []) or "-"
    return f"hres={join('hres_clocks')} coarse={join('coarse_clocks')} raw={join('raw_clocks')}"


def known_bad(v):
    """KNOWN-BAD, in the one clock mode it is broken in where it names one."""
    if not v.get("known_bad"):
        return ""
    mode = v.get("known_bad_clock_mode")
    return f"KNOWN-BAD ({mode})" if mode else "KNOWN-BAD"


def table(variants):
    rows = [[v["name"], str(v.get("layout", "?")), str(v.get("counter", "?")),
             str(v.get("inline", "?")), clocks(v),
             known_bad(v), str(v.get("source", ""))]
            for v in variants]
    widths = [max((len(r[i]) for r in rows), default=0) for i in range(len(rows[0]))] if rows else []
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    counts = [len(variants_mod.axis_values(variants, key)) for key, _ in variants_mod.AXES]
    lines.append(f"{len(variants)} variants: {counts[0]} layouts x {counts[1]} counters "
                 f"x {counts[2]} inline")
    return lines


# what the harness measures besides the variants (names from vdsobench_bench)
REFERENCES = {
    "sys/syscall": "the clock_gettime syscall itself",
    "sys/libc": "glibc's clock_gettime: the PLT, then glibc's call into the vDSO",
    "sys/vdso": "the kernel's own __vdso_clock_gettime, found in the vDSO's ELF image",
    "sys/vdso_gettime64": "a 32-bit vDSO's __vdso_clock_gettime64 (64-bit time_t, what a "
                          "y2038-safe libc calls; --arch i386)",
    "floor/empty": "the timed loop with nothing in it: the harness's overhead per call",
}


def reference_lines(subjects, skipped):
    """The system references and floors, each with what it measures."""
    why = {line.split(" ", 1)[1].split(":", 1)[0]: line for line in skipped}
    lines = ["system references and floors (run and compare measure them too):"]
    width = max((len(s) for s in subjects + list(why)), default=0)
    for name in subjects + [n for n in why if n not in subjects]:
        text = REFERENCES.get(name) or f"the {name.split('/', 1)[1]} counter read alone"
        if name in why:
            text += f" ({why[name].split(': ', 1)[1]})"
        lines.append(f"  {name.ljust(width)}  {text}")
    return lines


def references():
    from vdsobench_cli.measure import harness, rounds

    names, skipped = harness.planned(rounds.binary(), ["--variants", "sys/*,floor/*"])
    subjects = list(dict.fromkeys(map(vocab.subject, names)))
    return reference_lines(subjects, skipped)


def run(args):
    packages.ensure_setup()
    _, chosen = variants_mod.choose(None if args.variants is None else [args.variants],
                                    "--variants")
    if args.json:
        print(json.dumps(chosen, indent=2))
        return 0
    print("\n".join(table(chosen)))
    if args.variants is None:
        print("\n".join(references()))
    return 0


def add_parser(sub):
    p = sub.add_parser("list", help="list the variants with their axes and source",
                       description="List every variant: name, layout, counter, inline, "
                                   "userspace clocks, known-bad marker, source; then the "
                                   "system references and floors the harness measures.")
    p.add_argument("--json", action="store_true", help="print the full JSON array")
    p.add_argument("--variants", metavar="PATTERNS",
                   help="comma-separated exact names or globs, e.g. 'generic_*+rdtscp+*'")
    arch.add_argument(p, "list the variants of this architecture's build")
    p.set_defaults(func=run)
