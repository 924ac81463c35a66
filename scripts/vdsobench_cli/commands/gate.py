"""`gate`: did this change regress anything, against a committed baseline.

Two kinds of check, both recorded in the baseline file:

- deterministic (`sim`): instructions and simulated L1D misses per call under
  valgrind, identical run to run on the same build; any increase beyond the
  stated tolerance (default: none) is a regression. This is what CI gates on:
  it has no PMU and its timings are noise.
- timing: each variant's time as a ratio to a reference variant measured in
  the same interleaved rounds, so a faster or slower machine does not trip it;
  a regression only when the confidence interval's lower bound of the
  slowdown against the recorded ratio exceeds the threshold. Refused on
  another CPU model unless --allow-other-machine, and always for rows
  measured under emulation (qemu-user: the emulator's times, not a CPU's).

Exit 0: no regression; 1: a regression (with the table); 2: bad usage or input.
"""

import argparse
import datetime
import os
import sys

from vdsobench_cli.cli import (arch, build, inputs, ranged, targets, tools,
                               variants as variants_mod)
from vdsobench_cli.measure import fingerprint, rounds
from vdsobench_cli.measure.harness import Selection
from vdsobench_cli.kimport import names as names_mod
from vdsobench_cli.cli.errors import Failure, UsageError

from vdsobench_cli.core import emulation, limits, stats, uarch

SCHEMA = "vdsobench-baseline/1"
DEFAULT_BASELINE = "results/baselines/ci.json"
# the slowdown that fails, as a fraction (not a test level: core/limits.ALPHA is)
DEFAULT_THRESHOLD = 0.05
SCHEMA_PATH = build.ROOT / "results" / "schema" / "baseline-v1.schema.json"
SIM_METRICS = (("instructions", "instructions_per_call"), ("l1d_misses", "l1d_misses_per_call"))
NEW_DEFAULTS = {"variants": None,  # arch.default_variants(), once --arch is known
                "clocks": ["monotonic", "monotonic_raw", "realtime_coarse"],
                "modes": ["hot", "pressure"]}


def machine_of(fp):
    """The machine a timing baseline was recorded on: the CPU's ids (same_cpu
    matches vendor/family/model and model name), its uarch.label() to show
    ("Zen 3 (AMD EPYC, 25/1/1)"), kernel, hypervisor."""
    m = uarch.machine(fp)
    return {k: m[k] for k in ("vendor", "family", "model", "stepping", "model_name", "label",
                              "kernel", "hypervisor")}


def emulated_timing(baseline):
    """The emulation label if the baseline's timing rows were measured under
    emulation (its machine, its timing section or a row says so), else None.
    Such times are the emulator's (core/emulation.py), not a CPU's."""
    t = baseline.get("timing") or {}
    marks = [(baseline.get("machine") or {}).get("emulated"), t.get("emulated")]
    marks += [r.get("emulated") for r in t.get("rows", [])]
    found = [m for m in marks if m]
    if not found:
        return None
    return found[0] if isinstance(found[0], str) else emulation.LABEL


def same_cpu(a, b):
    keys = ("vendor", "family", "model", "model_name")
    return all(a.get(k) == b.get(k) for k in keys)


def load_baseline(path):
    """The baseline, checked (inputs.read, then results/schema/baseline-v1.schema.json,
    then each row once) before anything is measured; one line and exit 2 for
    anything wrong with it."""
    data = inputs.read(path, "baseline",
                       missing=f"{path}: no such baseline (create one with --update-baseline)")
    check_baseline(data, path)
    return data


def check_baseline(data, path):
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not a baseline (expected a JSON object)")
    if data.get("schema") != SCHEMA:
        raise UsageError(f"{path}: schema {data.get('schema')!r}, expected {SCHEMA!r}")
    if "sim" not in data and "timing" not in data:
        raise UsageError(f"{path}: the baseline records neither sim nor timing rows")
    inputs.check(data, SCHEMA_PATH, path, "baseline")
    for part in ("sim", "timing"):
        seen = {}
        for i, row in enumerate(data.get(part, {}).get("rows", [])):
            key = (row["variant"], row["clock"], row["mode"])
            if key in seen:
                raise UsageError(f"{path}: {part}.rows[{i}]: {'/'.join(key)} appears twice "
                                 f"(also {part}.rows[{seen[key]}])")
            seen[key] = i


def check_line(baseline, path):
    """A baseline holds counts and times of one compile line (one recorded
    before lines were recorded is the plain line's): gating another line's
    build against it would report the flags as a regression."""
    recorded, here = baseline.get("line", "plain"), arch.layouts_line()
    if recorded != here:
        raise UsageError(f"{path}: recorded with the {recorded} compile line, this build "
                         f"uses the {here} line (run with {arch.LINE_ENV}={recorded}, or "
                         "record it again with --update-baseline)")


def check_variants_exist(names, path):
    known = {v["name"] for v in variants_mod.load()}
    for name in names:
        if name not in known:
            raise UsageError(f"{path}: variant {name!r} is in the baseline but not in this "
                             "build (update the baseline with --update-baseline)")


def need_valgrind():
    tools.path("valgrind", "the deterministic gate")


def select_rows(rows, args):
    """The baseline's rows, narrowed by --variants/--clocks/--modes; each filter
    value must be in the baseline (a typo must not shrink the gate silently)."""
    for key, label in (("variant", "variants"), ("clock", "clocks"), ("mode", "modes")):
        wanted = variants_mod.split_patterns(getattr(args, label) or [])
        recorded = list(dict.fromkeys(r[key] for r in rows))
        for w in wanted:
            if w not in recorded:
                raise UsageError(f"--{label}: {w!r} is not in the baseline "
                                 f"(it records: {', '.join(recorded)})")
        if wanted:
            rows = [r for r in rows if r[key] in wanted]
    return rows


def unrecorded_checks(baseline, part, args):
    """A check per variant that the baseline's own selection patterns match in
    today's table but that has no rows: a layout or counter added since the
    baseline was recorded is not gated silently as if it were not there.
    Baselines recorded before selections were kept have nothing to expand."""
    patterns = (baseline.get("selection") or {}).get("variants")
    if not patterns or args.variants:
        return []
    recorded = {r["variant"] for r in baseline[part]["rows"]}
    now = baseline_variants(patterns, "the baseline's selection")
    return [{"kind": part, "variant": v["name"], "clock": "-", "mode": "-",
             "metric": f"matches {','.join(patterns)}", "baseline": None, "now": None,
             "limit": None, "status": "unrecorded"}
            for v in now if v["name"] not in recorded]


def baseline_variants(patterns, label):
    """The variants a baseline's patterns name today. Imported kernel trees
    (kernel:NAME, `vdsobench import`) live in one machine's cache, not in the
    project: a glob does not reach them, only a pattern that names them, so a
    committed baseline means the same on every clone."""
    _, chosen = variants_mod.choose(patterns, label)
    if any(names_mod.is_import(p) for p in patterns):
        return chosen
    return [v for v in chosen if not names_mod.is_import(v["name"])]


def sim_checks(baseline, rows):
    from vdsobench_cli.measure import sim

    tol = baseline["sim"].get("tolerance", {})
    measured = sim.measure(sorted({r["variant"] for r in rows}), sorted({r["clock"] for r in rows}),
                           sorted({r["mode"] for r in rows}))
    now = {(m["variant"], m["clock"], m["mode"]): m for m in measured}
    checks = []
    for r in rows:
        m = now.get((r["variant"], r["clock"], r["mode"]))
        for metric, key in SIM_METRICS:
            old, new = r[key], (m or {}).get(key)
            limit = old + float(tol.get(metric, 0))
            status = ("missing" if new is None else "REGRESSION" if new > limit + 1e-9
                      else "improved" if new < old - 1e-9 else "ok")
            checks.append({"kind": "sim", "variant": r["variant"], "clock": r["clock"],
                           "mode": r["mode"], "metric": metric, "baseline": old, "now": new,
                           "limit": limit, "status": status})
    return checks


def timing_checks(baseline, rows, args):
    t = baseline["timing"]
    reference = t["reference"]
    threshold = args.threshold if args.threshold is not None else t.get("threshold", DEFAULT_THRESHOLD)
    variants = [reference] + sorted({r["variant"] for r in rows} - {reference})
    binary = rounds.binary()
    chosen = Selection(clocks=sorted({r["clock"] for r in rows}),
                       modes=sorted({r["mode"] for r in rows}), cpus=args.cpus)
    hargs = rounds.harness_args(variants, chosen)
    context, groups = rounds.measure(binary, hargs, args.rounds or t.get("rounds", limits.ROUNDS),
                                     args.batch_ms, quiet=args.quiet)
    by = {(g.clock, g.mode): g for g in groups}
    # rounds that lost the CPU pull every ratio toward 1: no verdict from them
    refused = rounds.lost_cpu(context, groups)
    for why in refused.values():
        print(f"gate: {why}", file=sys.stderr)
    checks = []
    for r in rows:
        g = by.get((r["clock"], r["mode"]))
        if g is not None and g.key in refused:
            checks.append({"kind": "timing", "variant": r["variant"], "clock": r["clock"],
                           "mode": r["mode"], "metric": "ratio", "baseline":
                           r["ratio_to_reference"], "now": None, "limit": None,
                           "status": "disturbed"})
            continue
        ref, var = g.paired((reference, 0), (r["variant"], 0)) if g else ([], [])
        if not ref:
            checks.append({"kind": "timing", "variant": r["variant"], "clock": r["clock"],
                           "mode": r["mode"], "metric": "ratio", "baseline":
                           r["ratio_to_reference"], "now": None, "limit": None,
                           "status": "missing"})
            continue
        # the reference's time scaled by the recorded ratio is what the
        # variant should take; the paired ratio to it is the slowdown
        expected = [x * r["ratio_to_reference"] for x in ref]
        res = stats.paired(expected, var, alpha=args.alpha, comparisons=len(rows))
        status = ("REGRESSION" if res["ci_low"] is not None and res["ci_low"] > 1 + threshold
                  else "improved" if res["verdict"] == "faster" else "ok")
        checks.append({"kind": "timing", "variant": r["variant"], "clock": r["clock"],
                       "mode": r["mode"], "metric": f"time / {reference}",
                       "baseline": r["ratio_to_reference"],
                       "now": res["ratio"] * r["ratio_to_reference"],
                       "limit": r["ratio_to_reference"] * (1 + threshold),
                       "ci": [res["ci_low"], res["ci_high"]], "status": status})
    return checks


def fmt(x):
    if x is None:
        return "-"
    return f"{x:.3f}" if isinstance(x, float) and x != int(x) else f"{x:g}"


def change(old, new):
    if new is None or old is None:
        return "-"
    if old == 0:
        return "0%" if new == 0 else f"+{new:g}"
    return f"{(new / old - 1) * 100:+.1f}%"


def print_checks(checks, out=None):
    out = out or sys.stdout
    head = ["status", "variant", "clock", "mode", "metric", "baseline", "now", "change",
            "limit"]
    body = [[c["status"], c["variant"], c["clock"], c["mode"], c["metric"], fmt(c["baseline"]),
             fmt(c["now"]), change(c["baseline"], c["now"]), fmt(c["limit"])] for c in checks]
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
    for row in [head] + body:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip(), file=out)


def record(args, target, old):
    """--update-baseline: measure the selection (or what the baseline had) and
    write it atomically to the checked target: over the baseline as it was when
    the command started, not over one another command wrote meanwhile (then, as
    when the write fails, the new baseline is kept in a recovery file)."""
    fp = fingerprint.collect([])
    sel = {k: variants_mod.split_patterns(getattr(args, k) or []) for k in NEW_DEFAULTS}
    if old:
        # the patterns the old baseline was recorded from, expanded again
        # over today's table: a layout added since is recorded too (its
        # variant names would freeze the old set). Older baselines kept no
        # patterns: their clocks and modes, the default variant pattern.
        kept = old.get("selection") or {}
        recorded = old.get("sim", old.get("timing", {})).get("rows", [])
        for key, label in (("variant", "variants"), ("clock", "clocks"), ("mode", "modes")):
            sel[label] = (sel[label] or kept.get(label)
                          or ([] if key == "variant" else
                              list(dict.fromkeys(r[key] for r in recorded))))
    sel = {k: v or NEW_DEFAULTS[k] or [arch.default_variants()] for k, v in sel.items()}
    names = [v["name"] for v in baseline_variants(sel["variants"], "--variants")]
    if not names:
        raise UsageError(f"--variants: {','.join(sel['variants'])} names only imported "
                         "trees; name them (kernel:NAME+...) to record them")
    baseline = {"schema": SCHEMA,
                "created": datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds"),
                "command": ["scripts/vdsobench", *getattr(args, "argv", [])],
                "selection": sel,
                "machine": machine_of(fp), "build": fingerprint.build_info(build.ROOT),
                # how the transcribed layouts were compiled: counts differ between lines
                "line": arch.layouts_line()}
    if args.only != "timing":
        from vdsobench_cli.measure import sim
        need_valgrind()
        measured = sim.measure(names, sel["clocks"], [m for m in sel["modes"] if m in sim.MODES])
        baseline["sim"] = {
            "geometry": measured[0]["geometry"] if measured else None,
            "tolerance": {"instructions": args.tolerance_instructions,
                          "l1d_misses": args.tolerance_misses},
            "rows": [{k: m[k] for k in ("variant", "clock", "mode", "measured_as")
                      + tuple(k for _, k in SIM_METRICS)
                      + ("net_instructions_per_call", "net_l1d_misses_per_call")}
                     for m in measured]}
    if args.only == "timing" or args.with_timing:
        baseline["timing"] = record_timing(args, names, sel)
    check_baseline(baseline, target.path)  # what gate will read back
    path = target.write_json(baseline)
    print(f"gate: baseline written: {os.path.relpath(path)} "
          f"({len(baseline.get('sim', {}).get('rows', []))} sim rows, "
          f"{len(baseline.get('timing', {}).get('rows', []))} timing rows)")
    return 0


def record_timing(args, names, sel):
    reference = args.reference or names[0]
    variants = [reference] + [n for n in names if n != reference]
    chosen = Selection(clocks=sel["clocks"], modes=sel["modes"], cpus=args.cpus)
    binary = rounds.binary()
    context, groups = rounds.measure(binary, rounds.harness_args(variants, chosen),
                                     args.rounds or limits.ROUNDS, args.batch_ms, quiet=args.quiet)
    refused = rounds.lost_cpu(context, groups)
    if refused:
        # a baseline is what later runs are held to: never record a disturbed one
        raise Failure("gate: not recording timing rows: " + "; ".join(refused.values()))
    rows = []
    for g in groups:
        for v in variants:
            ref, var = g.paired((reference, 0), (v, 0))
            if ref:
                res = stats.paired(ref, var)
                rows.append({"variant": v, "clock": g.clock, "mode": g.mode,
                             "ratio_to_reference": res["ratio"],
                             "ci": [res["ci_low"], res["ci_high"]]})
    return {"reference": reference, "threshold": args.threshold or DEFAULT_THRESHOLD,
            "rounds": args.rounds or limits.ROUNDS, "rows": rows}


def run_gate(args):
    path = args.baseline
    if args.update_baseline:
        # before reading or measuring: the baseline must be a regular file (or
        # absent) in a writable directory with room for it
        target = targets.check_writable(path, force=True, what="the baseline")
        old = load_baseline(path) if os.path.exists(path) else None
        from vdsobench_cli.cli import packages
        packages.ensure_setup()
        return record(args, target, old)
    baseline = load_baseline(path)
    check_line(baseline, path)
    from vdsobench_cli.cli import packages
    packages.ensure_setup()
    checks, notes = [], []
    here = machine_of(fingerprint.collect([]))
    if baseline.get("sim") and args.only != "timing":
        rows = select_rows(baseline["sim"]["rows"], args)
        check_variants_exist({r["variant"] for r in rows}, path)
        need_valgrind()
        checks += unrecorded_checks(baseline, "sim", args)
        checks += sim_checks(baseline, rows)
    if baseline.get("timing") and args.only != "sim":
        there = baseline.get("machine", {})
        emulated = emulated_timing(baseline)
        if emulated:
            # no option overrides this one: there is no CPU to compare with
            line = (f"timing gate refused: {path}'s timing rows were measured {emulated}, "
                    "so they time the emulator, not a CPU (record them on the machine "
                    "itself)")
            if args.only == "timing":
                raise UsageError(line)
            print(f"warning: {line}", file=sys.stderr)
            notes.append(line)
        elif not same_cpu(there, here) and not args.allow_other_machine:
            line = (f"timing gate refused: the baseline was recorded on "
                    f"{uarch.label(there)!r}, this is {here['label']!r} "
                    "(--allow-other-machine to gate anyway)")
            if args.only == "timing":
                raise UsageError(line)
            print(f"warning: {line}", file=sys.stderr)
            notes.append(line)
        else:
            rows = select_rows(baseline["timing"]["rows"], args)
            check_variants_exist({r["variant"] for r in rows} | {baseline["timing"]["reference"]},
                                 path)
            checks += timing_checks(baseline, rows, args)
    elif args.only == "timing":
        raise UsageError(f"{path}: the baseline records no timing rows")
    if not checks:
        raise UsageError(f"{path}: nothing to gate with these options")
    bad = [c for c in checks
           if c["status"] in ("REGRESSION", "missing", "unrecorded", "disturbed")]
    if bad or args.verbose:
        print_checks(checks if args.verbose else bad)
    improved = sum(c["status"] == "improved" for c in checks)
    unrecorded = sum(c["status"] == "unrecorded" for c in checks)
    print(f"gate: {len(checks)} checks against {os.path.relpath(path)}: "
          f"{len(bad) - unrecorded} regressed, {improved} improved"
          + (" (record them with --update-baseline)" if improved else "")
          + (f"; {unrecorded} variants the baseline's selection names have no rows "
             "(new since it was recorded: record them with --update-baseline)"
             if unrecorded else ""))
    return 1 if bad else 0


def add_parser(sub):
    p = sub.add_parser(
        "gate", help="fail on a real regression against a committed baseline",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n\n", 1)[1])
    p.add_argument("--baseline", default=DEFAULT_BASELINE, metavar="FILE",
                   help=f"the baseline (default {DEFAULT_BASELINE})")
    p.add_argument("--only", choices=("sim", "timing"),
                   help="gate on one kind of check only")
    p.add_argument("--threshold", type=ranged.THRESHOLD, metavar="F",
                   help="timing: the slowdown that fails, as a fraction (default the "
                        f"baseline's, else {DEFAULT_THRESHOLD})")
    p.add_argument("--alpha", type=ranged.ALPHA, default=limits.ALPHA, metavar="A",
                   help=f"timing: significance before correction (default {limits.ALPHA}; "
                        f"{ranged.ALPHA.valid})")
    p.add_argument("--allow-other-machine", action="store_true",
                   help="timing: gate even if the baseline's CPU model differs")
    p.add_argument("--variants", action="append", metavar="LIST",
                   help="only these (they must be in the baseline); with --update-baseline, "
                        f"what to record (default {arch.default_variants()!r})")
    p.add_argument("--clocks", action="append", metavar="LIST",
                   help="likewise (new baselines: monotonic,monotonic_raw,realtime_coarse)")
    p.add_argument("--modes", action="append", metavar="LIST",
                   help="likewise (new baselines: hot,pressure)")
    p.add_argument("--cpus", metavar="N", type=ranged.CPU, help="timing: the CPU to run on")
    p.add_argument("--rounds", type=ranged.PAIRED_ROUNDS, metavar="N",
                   help=f"timing: interleaved rounds ({ranged.PAIRED_ROUNDS.valid})")
    p.add_argument("--batch-ms", type=ranged.BATCH_MS, default=10, metavar="MS",
                   help=f"timing: the slowest variant's batch per round (default 10; "
                        f"{ranged.BATCH_MS.valid})")
    p.add_argument("--reference", metavar="VARIANT",
                   help="--update-baseline: the timing reference (default the first variant)")
    p.add_argument("--with-timing", action="store_true",
                   help="--update-baseline: record timing rows too (machine-specific)")
    p.add_argument("--tolerance-instructions", type=ranged.TOLERANCE, default=0, metavar="N",
                   help="--update-baseline: instructions per call allowed above the "
                        "baseline (default 0: exact)")
    p.add_argument("--tolerance-misses", type=ranged.TOLERANCE, default=0, metavar="N",
                   help="--update-baseline: simulated L1D misses per call allowed above "
                        "(default 0)")
    p.add_argument("--update-baseline", action="store_true",
                   help="measure and rewrite the baseline (atomically); only when asked")
    p.add_argument("--verbose", action="store_true", help="print every check, not only failures")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=run_gate)
