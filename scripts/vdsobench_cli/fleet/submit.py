"""A fleet job submitted, released and followed: one batch job, held until
its directory holds the payload and the record, then released; followed
until it ends (a line at each change of state), cancelled if it stays
pending past the request's timeout; refreshed from the cluster for status
and collect while it has not ended."""

import shutil
import sys
import time
from pathlib import Path

from vdsobench_cli.cli import lifecycle
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.fleet import batch, bundle_check, fleet_slurm, node_choice, records

POLL_S = (0.5, 5.0)  # first and longest wait between two questions to the controller
FILE_POLL_S = 0.2  # between two looks at the job's directory


def submit(request, cluster, jobs_dir, command, output, bundle_path=None, facts=None):
    """Submit the job (held until its directory holds the payload, then
    released): (job, its record, its directory). The bundle: bundle_path and
    its facts (BUNDLE.json) when given, else bundle_check.bundle_for(request)."""
    nodes, partitions = cluster.nodes(), cluster.partitions()
    with lifecycle.temp_dir(prefix="vdsobench-fleet-") as tmp:
        if bundle_path is None:
            bundle_path, facts = bundle_check.bundle_for(request, tmp)
        choice = node_choice.choose(nodes, partitions, request.partition, request.constraint,
                                    request.nodes, request.one_per_feature,
                                    arch=facts.get("arch"))
        for name, why in choice["skipped"]:
            print(f"fleet: skipping {name}: {why}", file=sys.stderr)
        if choice["groups"]:
            for model, members in choice["groups"].items():
                print(f"fleet: {model}: {len(members)} node{'s' if len(members) != 1 else ''} "
                      f"({', '.join(members)})", file=sys.stderr)
        jobs_dir.mkdir(parents=True, exist_ok=True)
        script = Path(tmp) / batch.BATCH
        fleet_argv = [fleet_slurm.printable(a) for a in request.argv[1:]]
        script.write_text(batch.batch_script(jobs_dir, command, output, request.node_tmp))
        sbatch = batch.sbatch_options(choice, request, jobs_dir)
        # written before sbatch: a submit that fails, or is killed, leaves a record
        attempt = records.submission(jobs_dir, command, choice)
        try:
            job = cluster.submit(sbatch, script)
        except BaseException as e:
            attempt(state="submit failed",
                    reason=fleet_slurm.printable(str(e) or type(e).__name__))
            raise
        try:
            d = records.job_dir(jobs_dir, job)
            try:
                d.mkdir(parents=True, exist_ok=False)
            except FileExistsError:
                raise UsageError(f"fleet: {d} is there from an earlier job with the same id (a "
                                 "cluster whose job ids started again); move it away or give "
                                 "another --jobs-dir. The new job is cancelled") from None
            shutil.copy(script, d / batch.BATCH)
            batch.write_payload(d / batch.PAYLOAD, bundle_path)
            record = {"format": records.FORMAT, "job": job, "conf": str(cluster.conf),
                      "partition": choice["partition"], "constraint": request.constraint,
                      "exclusive": request.exclusive,
                      "requested": {"nodes": request.nodes,
                                    "one_per_feature": request.one_per_feature,
                                    "nodelist": choice["nodelist"], "count": choice["count"]},
                      "skipped": [list(s) for s in choice["skipped"]],
                      "command": command, "output": output, "submitted": records.now_text(),
                      "bundle": {"arch": facts.get("arch"),
                                 "commit": (facts.get("build") or {}).get("short"),
                                 "dirty": (facts.get("build") or {}).get("dirty")},
                      "nodes": choice["nodelist"] or [], "fleet": fleet_argv}
            records.save_record(jobs_dir, record)
            cluster.release(job)
        except BaseException as e:
            cluster.cancel(job)
            attempt(state="cancelled", job=job,
                    reason=fleet_slurm.printable(str(e) or type(e).__name__))
            raise
        attempt()
    return job, record, d


def wait(cluster, jobs_dir, record, timeout):
    """Follow the job until it ends (a line at each change of state); cancel it
    if it is still pending after timeout seconds (Failure, with Slurm's reason)."""
    job = record["job"]
    submitted = time.monotonic()
    seen, pause = None, POLL_S[0]
    try:
        while True:
            info = cluster.job(job)
            if info is None:
                print(f"fleet: job {job}: the controller no longer knows it", file=sys.stderr)
                return record
            state = fleet_slurm.state_words(info.get("JobState"))[0]
            now = (state, info.get("Reason"))
            if now != seen:
                where = info.get("NodeList") if state != "PENDING" else None
                print(f"fleet: job {job} {state.lower()}"
                      + (f" on {where}" if where and where != "(null)" else "")
                      + (f" ({info['Reason']})" if info.get("Reason") not in (None, "None")
                         else ""), file=sys.stderr, flush=True)
                seen = now
                if state != "PENDING":
                    records.save_record(jobs_dir, records.remember(record, info))
            if state in fleet_slurm.FINISHED:
                records.save_record(jobs_dir, records.remember(record, info))
                return record
            if state == "PENDING" and time.monotonic() - submitted > timeout:
                cluster.cancel(job)
                record = records.remember(record, info)
                record["cancelled"] = f"pending after {timeout:g} s ({info.get('Reason')})"
                records.save_record(jobs_dir, record)
                raise Failure(f"fleet: job {job} was still pending after {timeout:g} s "
                              f"(Slurm's reason: {info.get('Reason')}) and is cancelled: the "
                              "nodes are busy or unavailable; wait longer with --timeout, or "
                              "ask for fewer or other nodes")
            # ask the controller again after `pause`, or as soon as every node has
            # left its exit record (then the job is ending): the files cost nothing
            asked, done_before = time.monotonic(), exits(jobs_dir, record)
            while time.monotonic() - asked < pause:
                time.sleep(FILE_POLL_S)
                done = exits(jobs_dir, record)
                if done != done_before and done >= max(len(record.get("nodes") or []), 1):
                    break
            pause = min(pause * 1.5, POLL_S[1])
    except lifecycle.Interrupted:
        print(f"fleet: job {job} goes on without us: `scripts/vdsobench fleet status {job}`, "
              f"or scancel {job}", file=sys.stderr)
        raise


def exits(jobs_dir, record):
    """How many nodes have left their exit record."""
    return len(list(records.job_dir(jobs_dir, record["job"]).glob(f"{record['job']}-*.exit")))


def refresh(jobs_dir, record, slurm_conf=None):
    """(record, Slurm's record of the job or None): the job's latest state while
    it has not ended, asked of the cluster it ran on; from its files alone,
    with a line saying so, when the cluster cannot answer."""
    if (record.get("slurm") or {}).get("JobState") in fleet_slurm.FINISHED:
        return record, None
    try:
        fleet_slurm.check_clients(["scontrol"])
        conf = slurm_conf or record.get("conf")
        info = fleet_slurm.Cluster(fleet_slurm.conf_path(conf)).job(record["job"])
    except (UsageError, Failure) as e:
        print(f"fleet: cannot ask Slurm ({e}); from the job's files only", file=sys.stderr)
        return record, None
    if info:
        record = records.remember(record, info)
        records.save_record(jobs_dir, record)
    return record, info
