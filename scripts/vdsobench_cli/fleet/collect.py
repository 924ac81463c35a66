"""`fleet collect` as a library: each node's files copied into one directory
(keyed by job, node, CPU model and kernel), the results loaded, the merged
report written (measure/report.py) and the summary made
(reports/fleet_summary.py); collect() returns what the command prints."""

import dataclasses
import functools
import json
import os
import re
import shutil
import stat
from pathlib import Path

from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.fleet import (collect_out, fleet_slurm, options, outcomes as outcomes_mod,
                                 records, submit)
from vdsobench_cli.measure import comparison_io, report

from reports import fleet_summary as summary

REPORT_ALL_MAX = 16  # up to this many nodes the report has a column for each


def slug_text(text, fallback="unknown"):
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text or "")).strip("-.") or fallback


def collected_name(job, o):
    """<job>-<node>-<cpu model>-<kernel>.json: the key of a node's results."""
    model = fleet_slurm.feature_of(o.get("cpu")) or slug_text(
        "-".join(str(o["cpu"].get(k)) for k in ("vendor", "family", "model"))
        if o.get("cpu") else None)
    return f"{job}-{slug_text(o['node'])}-{model}-{slug_text(o.get('kernel'))}.json"


def copy_left(src, dst):
    """A node's file src copied to the new file dst (open_left's rules)."""
    f = fleet_slurm.open_left(src, "node's file")
    if f is None:
        raise UsageError(f"{src}: gone while it was collected")
    with f, open(dst, "xb") as out:
        shutil.copyfileobj(f, out)


def load_outputs(outcomes, kind):
    """{node: object} of the results files that load as `kind` ("results" or
    "comparison") of the nodes that answered (a malformed or running node's file
    is collected, not counted); a node whose file does not load is marked failed."""
    loaded = {}
    for o in outcomes:
        if not o.get("collected") or o["state"] != "ok":
            continue
        try:
            got, obj = comparison_io.load_input(o.get("read_from") or o["collected"])
        except UsageError as e:
            # named where it will be: the stage it was read from goes away
            why = str(e).replace(o.get("read_from") or o["collected"], o["collected"])
            o["state"], o["reason"] = "failed", f"its results file is unusable: {why}"
            continue
        if got != kind:
            o["state"], o["reason"] = "failed", f"its file is a {got}, not a {kind}"
            continue
        loaded[o["node"]] = obj
    return loaded


def plan_copies(target, d, job, outcomes):
    """[(source, name under out)] of the copies to write; each outcome's
    "collected" (where its results are under out) and "read_from" (where they
    are read now)."""
    copies = []
    for o in outcomes:
        for ext in ("out", "err", "exit", "cpuinfo"):
            src = d / f"{job}-{o['node']}.{ext}"
            mode = collect_out.lstat_mode(src)
            if mode is not None and stat.S_ISREG(mode):
                name = target.copy_name(f"logs/{src.name}", src)
                if name:
                    copies.append((src, name))
        if o["results"]:
            wanted = collected_name(job, o)
            name = target.copy_name(wanted, o["results"])
            if name:
                copies.append((o["results"], name))
            o["collected"] = str(target.out / (name or wanted))
    return copies


def relocate(path, stage, out):
    """The report names the files it was made from: the staged copies; after the
    stage is published they are under out."""
    old, new = json.dumps(str(stage))[1:-1], json.dumps(str(out))[1:-1]
    text = path.read_text()
    if old in text:
        path.write_text(text.replace(old, new))


@dataclasses.dataclass(frozen=True)
class CollectRequest:
    """fleet collect's options: the job, where to collect it, how (report:
    auto, all or per-model; tolerance: None for DEFAULT_TOLERANCE)."""
    job: str
    out: str
    jobs_dir: str = None
    slurm_conf: str = None
    force: bool = False
    report: str = "auto"
    tolerance: float = None
    argv: tuple = ("fleet", "collect")

    @classmethod
    def from_args(cls, args):
        return cls(args.job, args.out, args.jobs_dir, args.slurm_conf,
                   getattr(args, "force", False), args.report, args.tolerance,
                   tuple(getattr(args, "argv", cls.argv)))


@dataclasses.dataclass(frozen=True)
class Collected:
    """What collect did: the summary's text (also in summary-JOB.txt), the
    nodes' outcomes, the directory."""
    text: str
    outcomes: list
    out: Path

    def failed(self):
        return [o for o in self.outcomes if o["state"] != "ok"]


def stage_copies(target, d, job, outcomes):
    """Each node's files copied into the stage; "read_from": where each node's
    results are read now (its staged copy, or the copy already under out)."""
    for src, name in plan_copies(target, d, job, outcomes):
        copy_left(src, target.path(name))
    for o in outcomes:
        if o.get("collected"):
            rel = os.path.relpath(o["collected"], target.out)
            staged = target.stage / rel if target.stage else None
            o["read_from"] = str(staged if staged and staged.exists() else o["collected"])


def head_lines(record):
    return [f"fleet job {record['job']}: {' '.join(record['command'])}",
            f"cluster {record.get('conf')}, partition {record.get('partition')}"
            + (f", constraint {record['constraint']}" if record.get("constraint") else "")
            + (", exclusive nodes" if record.get("exclusive") else ", shared nodes")
            + f"; Slurm: {(record.get('slurm') or {}).get('JobState', 'state unknown')}"]


def run_body(request, target, job, outcomes, models, tolerance):
    """(summary lines, fit: the lines at n table rows or None, report paths) of
    a `run` job: the agreement per CPU model and the merged report."""
    loaded = load_outputs(outcomes, "results")
    if not loaded:
        return ["no node's results came back: nothing to merge"], None, []
    own = summary.own_counters(loaded)
    values = {n: summary.node_values(obj, n, own.get(n)) for n, obj in loaded.items()}
    groups = summary.agreement(values, models, tolerance)
    body = summary.run_summary(groups, tolerance, own)
    fit = functools.partial(summary.run_summary, groups, tolerance, own)
    shown = [o["node"] for o in outcomes if o["node"] in loaded]
    if request.report == "per-model" or (request.report == "auto"
                                         and len(shown) > REPORT_ALL_MAX):
        chosen = {summary.representative(g, values): g["model"] for g in groups}
        shown = [n for n in shown if n in chosen]
        body += ["", "report: one node per CPU model (the nearest its model's "
                     "medians; --report all charts every node): "
                 + "; ".join(f"{chosen[n].split(' (')[0]} {n}" for n in shown)]
    files = {o["node"]: o.get("read_from") for o in outcomes}
    report_dir = target.path(f"report-{job}/index.md").parent
    paths = report.write([files[n] for n in shown], report_dir, list(request.argv))
    relocate(report_dir / "merged.json", target.stage, target.out)
    return body, fit, paths


def body_lines(request, target, record, outcomes, tolerance):
    """(summary lines, fit, report paths) for the job's command."""
    models = {o["node"]: summary.cpu_name(o) for o in outcomes}
    command = record["command"][0]
    if command == "run":
        return run_body(request, target, record["job"], outcomes, models, tolerance)
    if command == "compare":
        loaded = load_outputs(outcomes, "comparison")
        return (summary.compare_summary(summary.verdicts(loaded, models))
                or ["no comparison came back"]), None, []
    for o in outcomes:
        if o["state"] == "ok":
            o["last_out"] = outcomes_mod.last_line(o["out"])
    return summary.other_summary(outcomes), None, []


def collect(request):
    """The job's files, report and summary written under request.out, all or
    none: Collected."""
    jobs_dir = options.jobs_path(request.jobs_dir)
    record = records.read_record(jobs_dir, request.job)
    job = record["job"]
    target = collect_out.CollectOut(request.out, request.force)
    out = target.out
    # every fixed target before anything is asked or written
    target.check_file(f"nodes-{job}.json", "node table")
    target.check_file(f"summary-{job}.txt", "summary")
    target.check_dir("logs")
    if record["command"][0] == "run":
        target.check_files_in(f"report-{job}", "report")
    tolerance = (request.tolerance if request.tolerance is not None
                 else options.DEFAULT_TOLERANCE)
    record, _ = submit.refresh(jobs_dir, record, request.slurm_conf)
    outcomes = outcomes_mod.node_outcomes(jobs_dir, record)
    stage_copies(target, records.job_dir(jobs_dir, job), job, outcomes)
    lines = head_lines(record)
    body, fit, report_paths = body_lines(request, target, record, outcomes, tolerance)
    ok = [o for o in outcomes if o["state"] == "ok"]
    lines.append(f"nodes: {len(ok)} of {len(outcomes)} answered"
                 + ("; skipped at submission: "
                    + ", ".join(f"{n} ({w})" for n, w in record.get("skipped", []))
                    if record.get("skipped") else ""))
    lines += summary.outcome_lines(outcomes, summary.SUMMARY_NODES)
    ending = ["", f"report: {plot_path(out / f'report-{job}' / 'index.md')}"] \
        if report_paths else []
    over = len(lines) + 1 + len(body) + len(ending) - summary.SUMMARY_LINES
    if fit and over > 0:
        # one screen: the table across the models gives up rows, down to a few
        table = fit(summary.SUMMARY_ROWS)
        body = (fit(max(summary.SUMMARY_ROWS_LEAST, summary.SUMMARY_ROWS - over))
                + body[len(table):])
    text = "\n".join(lines + [""] + body + ending) + "\n"
    nodes_json = {"job": job, "command": record["command"], "slurm": record.get("slurm"),
                  "tolerance": tolerance,
                  "nodes": [{k: v for k, v in o.items()
                             if k not in ("err", "out", "read_from", "last_out")}
                            for o in outcomes]}
    target.path(f"nodes-{job}.json").write_text(json.dumps(nodes_json, indent=1) + "\n")
    target.path(f"summary-{job}.txt").write_text(text)
    target.publish()
    return Collected(text, outcomes, out)


def plot_path(path):
    """path as the summary names it: relative below the working directory."""
    rel = os.path.relpath(path)
    return str(Path(path).resolve()) if rel.startswith("..") else rel
