"""`compare`: is my variant faster, by how much, how sure are we.

Paired (the default): the variants run in one process in interleaved rounds
(see rounds.py), and each round gives one ratio per variant against the
first (the baseline); the verdict comes from those paired ratios. Unpaired
(`--results OLD NEW`): two saved runs, repetitions against repetitions;
drift between the runs is not cancelled, so it says so and is stricter.
"""

import argparse
import os
import sys

from vdsobench_cli.cli import arch, confine, ranged, targets
from vdsobench_cli.measure import cpu_lock, fingerprint, footprint, results, rounds
from vdsobench_cli.kimport import bazel_sync
from vdsobench_cli.cli.errors import Failure, UsageError

from reports import run_table, tables
from vdsobench_cli.core import emulation as emulation_mod, limits, stats, uarch, vocab

FORMATS = ("table", "lkml", "markdown", "csv", "json")


def machine_meta(fp, emulation=None):
    """The machine for a comparison's caption: the CPU named by its
    microarchitecture ("Zen 3 (AMD EPYC, 25/1/1)"), kernel, hypervisor; and,
    measured under emulation (arch.emulation()), the emulation record, which
    every table and plot of the comparison shows."""
    m = uarch.machine(fp)
    return {"cpu_model": m["label"], "kernel": m["kernel"], "hypervisor": m["hypervisor"],
            "emulation": emulation}


def label_emulated(rows, emulation):
    """Each time row measured under emulation says so (the csv and json rows, the
    table's metric column); simulated counts are the host's valgrind's, not
    timings, and stay as they are."""
    if emulation:
        for row in rows:
            if not str(row.get("metric")).startswith("sim:"):
                row["emulated"] = emulation_mod.label(emulation)
    return rows


def metric_row(series, metric, baseline, subject, base_vals, vals, res):
    return {"clock": series.clock, "mode": series.mode, "cpu": series.cpu, "metric": metric,
            "baseline": baseline, "variant": subject, "base": res["base_median"],
            "value": res["other_median"], "ratio": res["ratio"], "ci_low": res["ci_low"],
            "ci_high": res["ci_high"], "p": res["p"], "p_adjusted": res["p_adjusted"],
            "verdict": res["verdict"], "n": res["n"]}


def paired_rows(groups, baseline, others, alpha):
    """Every variant against the baseline, per group: time, then each counter."""
    comparisons = max(1, len(others) * len(groups))
    rows, method = [], None
    for g in groups:
        base = (baseline, 0)
        for other in others:
            first = len(rows)
            a, b = g.paired(base, (other, 0))
            res = stats.paired(a, b, alpha=alpha, comparisons=comparisons)
            method = res["method"]
            rows.append(metric_row(g, "ns/call", baseline, other, a, b, res))
            for event in g.events():
                ca, cb = g.paired_counter(base, (other, 0), event)
                if ca:
                    res = stats.paired(ca, cb, alpha=alpha, comparisons=comparisons,
                                       lower_is_better=True, kind="count")
                    rows.append(metric_row(g, event + "/call", baseline, other, ca, cb, res))
            # batches retried after losing the CPU, and rounds that lost it even so
            retries, lost = g.lost(base, (other, 0))
            for row in rows[first:]:
                row.update(retries=retries, lost=lost)
    return rows, method, comparisons


def refuse_lost(rows, refused):
    """No verdict for the rows of a group that lost the CPU too often."""
    for row in rows:
        if f"{row['clock']}/{row['mode']}/cpu{row.get('cpu')}" in refused:
            row["verdict"] = tables.NO_VERDICT


def sim_rows(variants, clocks, modes, baseline):
    """Simulated counts (deterministic) compared exactly: no rounds needed."""
    from vdsobench_cli.commands import sim

    simulated = [m for m in modes if m in sim.ALL_MODES]
    if not simulated:
        return []
    measured = sim.measure(variants, clocks, simulated)
    by_key = {(m["variant"], m["clock"], m["mode"]): m for m in measured}
    rows = []
    for (variant, clock, mode), m in by_key.items():
        base = by_key.get((baseline, clock, mode))
        if variant == baseline or base is None:
            continue
        for metric, key in (("sim:instructions", "net_instructions_per_call"),
                            ("sim:l1d_misses", "net_l1d_misses_per_call")):
            res = stats.exact(base[key], m[key])
            rows.append({"clock": clock, "mode": mode, "metric": metric, "baseline": baseline,
                         "variant": variant, "base": base[key], "value": m[key],
                         "ratio": res["ratio"], "ci_low": res["ci_low"],
                         "ci_high": res["ci_high"], "p": None, "p_adjusted": None,
                         "verdict": res["verdict"], "n": 1})
    return rows


def write_out(target, comparison):
    """--out, checked before the work (check_outputs): a failed write keeps the
    comparison in a recovery file and says where (exit 1)."""
    if target:
        path = target.write_json(comparison)
        print(f"comparison: {os.path.relpath(path)}", file=sys.stderr)


def paired_comparison(patterns, options, rounds_n=limits.ROUNDS, batch_ms=limits.BATCH_MS,
                      alpha=limits.ALPHA, sim=False, quiet=True):
    """Run the patterns (the first names the baseline) in interleaved rounds and
    compare; the comparison dict tables.render() and the plots read, with the
    per-round times under "rounds". options: an object with the harness's
    selection attributes (clocks, modes, cpus, ...; see rounds.harness_args)."""
    if len(patterns) < 2:
        raise UsageError("compare: give at least two variants (the first is the baseline), "
                         "or --results OLD.json NEW.json")
    binary = rounds.binary()
    hargs = rounds.harness_args(patterns, options)
    base_subjects = rounds.subjects_of(binary, rounds.harness_args(patterns[:1], options))
    if len(base_subjects) != 1:
        raise UsageError(f"compare: the baseline {patterns[0]!r} must name one subject; "
                         f"it matches {len(base_subjects)}: {', '.join(base_subjects[:5])}")
    baseline = base_subjects[0]
    others = [s for s in rounds.subjects_of(binary, hargs) if s != baseline]
    if not others:
        raise UsageError("compare: nothing to compare the baseline with")
    context, groups = rounds.measure(binary, hargs, rounds_n, batch_ms, quiet=quiet)
    rows, method, m = paired_rows(groups, baseline, others, alpha)
    refused = rounds.lost_cpu(context, groups)
    refuse_lost(rows, refused)
    if sim:
        rows += sim_rows([baseline] + others, sorted({g.clock for g in groups}),
                         sorted({g.mode for g in groups}), baseline)
    fp = fingerprint.collect(sorted({g.cpu for g in groups}))
    emulation = arch.emulation()
    label_emulated(rows, emulation)
    return {
        "meta": dict(machine_meta(fp, emulation), method=method, alpha=alpha, comparisons=m,
                     rounds=rounds_n, paired=True, batch_ms=batch_ms,
                     iterations={g.key: g.iterations for g in groups},
                     counters=context.get("counters", {}).get("events", []),
                     refused=list(refused.values()),
                     notes=[f"{k[0]}: {e}" for g in groups for k, e in g.errors.items()]
                     + list(refused.values())
                     + [w["message"] for w in cpu_lock.warnings(context)],
                     confinement=confine.record(), **imports_meta([baseline] + others)),
        "rows": rows,
        "rounds": {g.key: {f"{s}#{c}": v for (s, c), v in g.ns.items()} for g in groups},
        **footprint.comparison_part(groups),
    }


def imports_meta(subjects):
    """{"imports": ...} naming the imported trees among the subjects ({} if none)."""
    imports = bazel_sync.identities(map(vocab.layout_of, subjects))
    return {"imports": imports} if imports else {}


def write_plots(plot_dir, comparison):
    if plot_dir:
        from vdsobench_cli.commands import plot
        for path in plot.plot_comparison(comparison, plot_dir):
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
    comparison = paired_comparison(args.variants, args, args.rounds, args.batch_ms, args.alpha,
                                   sim=args.sim, quiet=args.quiet)
    print(tables.render(comparison, args.format, calls_per=args.calls_per), end="")
    write_out(target, comparison)
    write_plots(args.plot, comparison)
    if comparison["meta"]["refused"]:
        raise Failure("; ".join(comparison["meta"]["refused"]))
    return 0


def repetition_times(data):
    """{run_name: [ns per repetition]} from a results file's iteration runs."""
    out = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "iteration" and not b.get("error_occurred"):
            out.setdefault(b["run_name"], []).append(
                run_table.to_ns(b["real_time"], b.get("time_unit", "ns")))
    return out


def compare_results(args, target=None):
    old_path, new_path = args.results
    old, new = results.load(old_path), results.load(new_path)
    old_t, new_t = repetition_times(old), repetition_times(new)
    common = [n for n in old_t if n in new_t]
    if not common:
        raise UsageError(f"compare --results: {old_path} and {new_path} have no benchmark "
                         "in common")
    notes = ["unpaired: the two runs were measured at different times, so drift between "
             "them is not cancelled; verdicts need more evidence than paired rounds"]
    fps = [d["context"]["vdsobench"]["fingerprint"] for d in (old, new)]
    emus = [emulation_mod.of_results(d) for d in (old, new)]
    metas = [machine_meta(fp, emu) for fp, emu in zip(fps, emus)]
    if metas[0]["cpu_model"] != metas[1]["cpu_model"]:
        notes.append(f"different CPUs: {metas[0]['cpu_model']} vs {metas[1]['cpu_model']}")
    for path, emu in zip((old_path, new_path), emus):
        if emu:
            notes.append(f"{os.path.basename(path)}: {emulation_mod.describe(emu)}")
    rows, method = [], None
    for name in common:
        variant, clock, mode, cpu = results.benchmark_key(name)
        res = stats.unpaired(old_t[name], new_t[name], alpha=args.alpha,
                             comparisons=len(common))
        method = res["method"]
        rows.append({"clock": clock, "mode": mode, "cpu": cpu, "metric": "ns/call",
                     "baseline": f"{variant} (old)", "variant": f"{variant} (new)",
                     "base": res["base_median"], "value": res["other_median"],
                     "ratio": res["ratio"], "ci_low": res["ci_low"], "ci_high": res["ci_high"],
                     "p": res["p"], "p_adjusted": res["p_adjusted"], "verdict": res["verdict"],
                     "n": res["n"]})
    # either run emulated: its times, and so every ratio, are the emulator's
    label_emulated(rows, emus[1] or emus[0])
    comparison = {"meta": dict(metas[1], emulation=emus[1] or emus[0], method=method,
                               alpha=args.alpha,
                               comparisons=len(common), rounds=None, paired=False,
                               notes=notes),
                  "rows": rows}
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
                   help="as for run (default: the seven clocks)")
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

