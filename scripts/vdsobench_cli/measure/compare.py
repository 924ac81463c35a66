"""A paired comparison as data: the library behind `compare`, the recipes,
patch-review and a cluster node (commands/compare.py parses and prints).

Paired: the variants run in one process in interleaved rounds (rounds.py);
measure() runs them and returns the rounds alone (Measured: no statistic),
records() gives each row's PairedRounds (core/paired.py), and
comparison() makes the comparison-v1 dict tables.render() and the plots
read: one ns/call row per record with its statistic computed once
(stats.paired), the counters' rows, the lost-CPU rule by GroupKey
(rounds.lost_cpu: no verdict, and the row's "refused" says why), and the
per-round times under "rounds" written by the records.
review_comparison() is the same dict from records a caller grew chunk by
chunk and the rows it judged (patch-review): the block and the file say
the same. Unpaired: unpaired_comparison() of two saved runs.
"""

import dataclasses
import os

from vdsobench_cli.cli import arch, confine
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import bazel_sync
from vdsobench_cli.measure import abi as abi_mod, cpu_lock, fingerprint, footprint, results, rounds

from reports import review, run_table, tables
from vdsobench_cli.core import (emulation as emulation_mod, limits, paired, run_abi, stats,
                                uarch, vocab)

NS = "ns/call"


@dataclasses.dataclass
class Measured:
    """One run of interleaved rounds: the harness's context, its groups
    (rounds.Series), the baseline subject and the others, and what was asked."""
    context: dict
    groups: list
    baseline: str
    others: list
    rounds: int
    batch_ms: float

    def records(self, other=None):
        """{GroupKey: PairedRounds} of the baseline and other (the first
        other by default), in the harness's group order."""
        other = other or self.others[0]
        return {g.key: paired.PairedRounds.from_series(g, self.baseline, other)
                for g in self.groups}


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


def metric_row(key, metric, baseline, subject, res):
    return {"clock": key.clock, "mode": key.mode, "cpu": key.cpu, "metric": metric,
            "baseline": baseline, "variant": subject, "base": res["base_median"],
            "value": res["other_median"], "ratio": res["ratio"], "ci_low": res["ci_low"],
            "ci_high": res["ci_high"], "p": res["p"], "p_adjusted": res["p_adjusted"],
            "verdict": res["verdict"], "n": res["n"]}


def paired_rows(m, alpha):
    """Every variant against the baseline, per group: time (from its
    record, the statistic once), then each counter."""
    comparisons = max(1, len(m.others) * len(m.groups))
    rows, method = [], None
    for g in m.groups:
        base = (m.baseline, 0)
        for other in m.others:
            first = len(rows)
            rec = paired.PairedRounds.from_series(g, m.baseline, other)
            res = stats.paired(list(rec.before_ns), list(rec.after_ns), alpha=alpha,
                               comparisons=comparisons)
            method = res["method"]
            rows.append(metric_row(g.key, NS, m.baseline, other, res))
            for event in g.events():
                ca, cb = g.paired_counter(base, (other, 0), event)
                if ca:
                    res = stats.paired(ca, cb, alpha=alpha, comparisons=comparisons,
                                       lower_is_better=True, kind="count")
                    rows.append(metric_row(g.key, event + "/call", m.baseline, other, res))
            # batches retried after losing the CPU, and rounds that lost it even so
            for row in rows[first:]:
                row.update(rec.row_part())
    return rows, method, comparisons


def refuse_lost(rows, refused):
    """No verdict for the rows of a group that lost the CPU too often
    ({GroupKey: reason}); every time row says whether, and why."""
    for row in rows:
        if str(row.get("metric")).startswith("sim:"):
            continue
        row["refused"] = refused.get(vocab.GroupKey.of_row(row))
        if row["refused"]:
            row["verdict"] = tables.NO_VERDICT


def sim_rows(variants, clocks, modes, baseline):
    """Simulated counts (deterministic) compared exactly: no rounds needed."""
    from vdsobench_cli.measure import sim

    simulated = [m for m in modes if m in sim.ALL_MODES]
    if not simulated:
        return []
    return sim_compared(sim.measure(variants, clocks, simulated), baseline)


def sim_compared(measured, baseline):
    """sim_rows()'s rows from sim.measure()'s records (of one call or of
    several, the baseline's among them)."""
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


def prepare():
    """Build the harness now (a Bazel build: minutes after an import), so that
    a caller timing measure() times the rounds alone."""
    rounds.binary()


def measure(patterns, options, rounds_n=limits.ROUNDS, batch_ms=limits.BATCH_MS, quiet=True):
    """Run the patterns (the first names the baseline) in interleaved rounds:
    the rounds alone (Measured), no statistic. options: an object with the
    harness's selection attributes (clocks, modes, cpus, ...; see
    rounds.harness_args)."""
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
    return Measured(context, groups, baseline, others, rounds_n, batch_ms)


def paired_comparison(patterns, options, rounds_n=limits.ROUNDS, batch_ms=limits.BATCH_MS,
                      alpha=limits.ALPHA, sim=False, quiet=True):
    """measure() and comparison(): the comparison dict, with the per-round
    times under "rounds"."""
    return comparison(measure(patterns, options, rounds_n, batch_ms, quiet), alpha, sim)


def comparison(m, alpha=limits.ALPHA, sim=False):
    """The comparison of one Measured: a row per record and counter, the
    lost rule applied, the records' rounds."""
    rows, method, comparisons = paired_rows(m, alpha)
    refused = rounds.lost_cpu(m.context, m.groups)
    refuse_lost(rows, refused)
    if sim:
        rows += sim_rows([m.baseline] + m.others, sorted({g.clock for g in m.groups}),
                         sorted({g.mode for g in m.groups}), m.baseline)
    records = [paired.PairedRounds.from_series(g, m.baseline, other)
               for g in m.groups for other in m.others]
    return assembled(m, rows, records, list(refused.values()), method, alpha, comparisons)


def assembled(m, rows, records, refused, method, alpha, comparisons, rounds_n=None):
    """The comparison dict around its rows: the machine and method (meta),
    the rows, the records' rounds and the footprint mode's part."""
    fp = fingerprint.collect(sorted({g.cpu for g in m.groups}))
    emulation = arch.emulation()
    label_emulated(rows, emulation)
    subjects = [m.baseline] + m.others
    return {
        "meta": dict(machine_meta(fp, emulation), method=method, alpha=alpha,
                     abi=run_abi.label(arch.current().name, abi_mod.BITS.get(arch.current().name)),
                     comparisons=comparisons, rounds=rounds_n or m.rounds, paired=True,
                     batch_ms=m.batch_ms,
                     iterations={str(g.key): g.iterations for g in m.groups},
                     counters=m.context.get("counters", {}).get("events", []),
                     refused=refused,
                     notes=[f"{k[0]}: {e}" for g in m.groups for k, e in g.errors.items()]
                     + refused + [w["message"] for w in cpu_lock.warnings(m.context)],
                     confinement=confine.record(), **imports_meta(subjects)),
        "rows": rows,
        "rounds": paired.comparison_rounds(records),
        **footprint.comparison_part(m.groups),
    }


def review_row(rec, r):
    """The ns/call row of a record that reports/review.row judged (r): the
    same numbers and verdict the block shows ("incomplete", or no verdict
    where the CPU was lost, when it has none)."""
    refused = rec.refused()
    verdict = (r["verdict"] if r["complete"]
               else tables.NO_VERDICT if refused else review.INCOMPLETE)
    return {"clock": rec.key.clock, "mode": rec.key.mode, "cpu": rec.key.cpu, "metric": NS,
            "baseline": rec.before, "variant": rec.after, "base": r["before"],
            "value": r["after"], "ratio": r["ratio"], "ci_low": r["ci_low"],
            "ci_high": r["ci_high"], "p": r["p"], "p_adjusted": r["p_adjusted"],
            "verdict": verdict, "n": r["n"], **rec.row_part(), "refused": refused}


def review_comparison(m, records, judged, alpha, comparisons, rounds_n):
    """The comparison of records grown over several runs of rounds_n rounds
    in all (m: the first run, for the machine and the groups) and their rows
    as review.row judged them ({GroupKey: row}): comparison.json says what
    the block says."""
    rows = [review_row(records[k], judged[k]) for k in records]
    refused = [why for why in (rec.refused() for rec in records.values()) if why]
    method = next((r["method"] for r in judged.values()), None)
    return assembled(m, rows, list(records.values()), refused, method, alpha, comparisons,
                     rounds_n)


def imports_meta(subjects):
    """{"imports": ...} naming the imported trees among the subjects ({} if none)."""
    imports = bazel_sync.identities(map(vocab.layout_of, subjects))
    return {"imports": imports} if imports else {}


def repetition_times(data):
    """{run_name: [ns per repetition]} from a results file's iteration runs."""
    out = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "iteration" and not b.get("error_occurred"):
            out.setdefault(b["run_name"], []).append(
                run_table.to_ns(b["real_time"], b.get("time_unit", "ns")))
    return out


def unpaired_comparison(old_path, new_path, alpha=limits.ALPHA):
    """Two saved runs compared, repetitions against repetitions (drift
    between the runs not cancelled: the notes say so)."""
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
    abis = [run_abi.of_results(d) for d in (old, new)]
    if abis[0] != abis[1]:
        notes.append(f"different ABIs: {abis[0] or 'unknown'} vs {abis[1] or 'unknown'}: "
                     "each run timed its own process's vDSO (a 32-bit process maps vdso32)")
    rows, method = [], None
    for name in common:
        variant, clock, mode, cpu = results.benchmark_key(name)
        res = stats.unpaired(old_t[name], new_t[name], alpha=alpha, comparisons=len(common))
        method = res["method"]
        rows.append(metric_row(vocab.GroupKey(clock, mode, cpu), NS, f"{variant} (old)",
                               f"{variant} (new)", res))
    # either run emulated: its times, and so every ratio, are the emulator's
    label_emulated(rows, emus[1] or emus[0])
    return {"meta": dict(metas[1], emulation=emus[1] or emus[0], abi=abis[1], method=method,
                         alpha=alpha,
                         comparisons=len(common), rounds=None, paired=False, notes=notes),
            "rows": rows}
