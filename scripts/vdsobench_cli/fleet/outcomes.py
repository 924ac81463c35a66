"""What each node of a fleet job left in the job's directory, read as
hostile (a node writes those files: none is trusted to be small, regular or
well formed): one outcome per node, with its state, exit status, reason,
CPU model, kernel and the last line of its output. Where a node left no
exit record, srun's lines in the batch output and Slurm's state of the job
give the reason."""

import os
import re
from pathlib import Path

from vdsobench_cli.cli import build, inputs
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.core import hostlist
from vdsobench_cli.fleet import batch, fleet_slurm, records

SRUN_TASK = re.compile(r"srun: error: (\S+): tasks? [\d,\-]+: (.*)$")
SRUN_NODE = re.compile(r"srun: error: Node failure on (\S+)")


def srun_reasons(text):
    """{node: reason} from srun's lines in the batch output."""
    out = {}
    for line in (text or "").splitlines():
        m = SRUN_TASK.search(line)
        if m:
            out.setdefault(fleet_slurm.printable(m.group(1), 100),
                           fleet_slurm.printable(m.group(2).strip(), 500))
        m = SRUN_NODE.search(line)
        if m:
            out[fleet_slurm.printable(m.group(1), 100)] = "node failure (srun: Node failure)"
    return out


# What fleet reads of each node's files, at most: a node writes them, so
# none is trusted to be small, regular or well formed.
EXIT_MAX = 64 << 10
CPUINFO_MAX = 1 << 20
LOG_TAIL = 64 << 10  # the end of .err and .out: their last line
BATCH_TAIL = 4 << 20  # the end of batch.out: srun's lines about the nodes
EXIT_SCHEMA = build.ROOT / "results" / "schema" / "fleet-exit-v1.schema.json"


def read_text_left(path, what, limit, tail=False):
    """A node's file as text (None if there is none); UsageError if it is not a
    regular file or (not tail) larger than limit."""
    data = fleet_slurm.read_left(path, what, limit, tail)
    return None if data is None else data.decode(errors="replace")


def last_line(path):
    """The last line of a node's log, printable; what is wrong with the file, if it is."""
    try:
        text = read_text_left(path, "node's log", LOG_TAIL, tail=True)
    except UsageError as e:
        return f"(unreadable: {e})"
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return fleet_slurm.printable(lines[-1], 500) if lines else None


def read_exit(path, job, node):
    """(the node's exit record, None); (None, why it is malformed); (None, None)
    when the node left none."""
    name = Path(path).name
    try:
        data = fleet_slurm.read_left(path, "node exit record", EXIT_MAX)
        if data is None:
            return None, None
        obj = records.load_json(name, data, "node exit record")
    except UsageError as e:
        return None, str(e)
    if not isinstance(obj, dict):
        return None, f"{name}: {inputs.brief(obj)} is not a JSON object"
    problem = inputs.field_problem(obj, EXIT_SCHEMA)
    if problem:
        return None, f"{name}: {problem[0]!r} {problem[1]}"
    if (obj["job"], obj["node"]) != (job, node):
        return None, (f"{name}: the record of node {inputs.brief(obj['node'])} of job "
                      f"{inputs.brief(obj['job'])}")
    return obj, None


def left_problem(path, what):
    """None if path is a regular file or nothing; else what it is instead."""
    try:
        f = fleet_slurm.open_left(path, what)
    except UsageError as e:
        return str(e)
    if f is not None:
        f.close()
    return None


def node_names(record, d):
    """The job's nodes: as Slurm placed it, else as asked, plus any that left files
    (named as Slurm names nodes: another name is not a node's)."""
    found = {p.name[len(record["job"]) + 1:].rsplit(".", 1)[0]
             for p in Path(d).glob(f"{record['job']}-*.*")}
    return sorted(set(record.get("nodes") or []) | {n for n in found if fleet_slurm.is_name(n)},
                  key=hostlist.natural)


def node_outcomes(jobs_dir, record):
    """One dict per node: node, state ("ok", "failed", "malformed": its exit
    record is not what the payload writes, "running", "waiting"), rc, reason,
    results (path or None), cpu (fingerprint-like dict), kernel, cpus_allowed,
    seconds."""
    d = records.job_dir(jobs_dir, record["job"])
    slurm = record.get("slurm") or {}
    job_state = fleet_slurm.state_words(slurm.get("JobState") or "PENDING")[0]
    ended = job_state in fleet_slurm.FINISHED or "cancelled" in record
    try:
        said = read_text_left(d / batch.BATCH_OUT, "batch output", BATCH_TAIL, tail=True) or ""
    except UsageError:
        said = ""
    from_srun = srun_reasons(said)
    out = []
    for node in node_names(record, d):
        base = d / f"{record['job']}-{node}"
        exit_info, malformed = read_exit(f"{base}.exit", record["job"], node)
        try:
            cpuinfo = read_text_left(f"{base}.cpuinfo", "cpuinfo copy", CPUINFO_MAX) or ""
        except UsageError:
            cpuinfo = ""
        res = Path(f"{base}.json")
        res_problem = left_problem(res, "results file")
        o = {"node": node, "rc": None, "reason": None,
             "results": str(res) if os.path.lexists(res) and not res_problem else None,
             "cpu": fleet_slurm.cpu_of(cpuinfo), "kernel": None, "cpus_allowed": None,
             "seconds": None, "err": str(base) + ".err", "out": str(base) + ".out"}
        if malformed:
            o["state"], o["reason"] = "malformed", f"its exit record is malformed: {malformed}"
        elif exit_info is not None:
            o["rc"] = exit_info.get("rc")
            o["kernel"] = exit_info.get("kernel")
            o["cpus_allowed"] = exit_info.get("cpus_allowed")
            o["seconds"] = float(exit_info["ended"]) - float(exit_info["started"])
            if o["rc"] == 0 and (record.get("output") != "file" or o["results"]):
                o["state"] = "ok"
            else:
                o["state"] = "failed"
                why = last_line(f"{base}.err") or "no message on stderr"
                if o["rc"] == 0:
                    o["reason"] = "exit 0 but no results file" + (
                        f" ({res_problem}: not taken)" if res_problem else "")
                else:
                    o["reason"] = f"exit {o['rc']}" + (
                        " while unpacking the bundle" if exit_info.get("phase") == "unpack"
                        else "") + f": {why}"
        elif not ended:
            o["state"] = "running" if job_state == "RUNNING" else "waiting"
        else:
            o["state"] = "failed"
            reasons = [r for r in (from_srun.get(node), last_line(f"{base}.err")) if r]
            if not reasons:
                reasons.append(f"job {job_state}"
                               + (f" ({slurm['Reason']})" if slurm.get("Reason")
                                  not in (None, "None") else "")
                               + (f", {record['cancelled']}" if record.get("cancelled") else ""))
            if not os.path.lexists(f"{base}.cpuinfo"):
                reasons.append("the node left no file in the job directory (did the payload "
                               "start there? is the directory shared with it?)")
            o["reason"] = "no results: " + "; ".join(reasons)
        out.append(o)
    return out
