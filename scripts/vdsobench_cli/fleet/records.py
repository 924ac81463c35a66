"""A fleet job's records in its directory (<jobs-dir>/<job>/): job.json, what
was asked and what Slurm said of it, read back with every field checked
against results/schema/fleet-job-v1.schema.json;
and the submission record written before sbatch (jobs-dir/submission-*.json),
so that a submit that fails or is killed leaves a trace."""

import contextlib
import datetime
import json
import os
import stat
from pathlib import Path

from vdsobench_cli.cli import atomic, build, errors, inputs
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.core import hostlist
from vdsobench_cli.fleet import fleet_slurm

FORMAT = "vdsobench-fleet-job/1"
JOB_RECORD = "job.json"


def job_dir(jobs_dir, job):
    return Path(jobs_dir) / str(job)


RECORD_MAX = 16 << 20  # a 100000-node job's record is about 5 MB
SCHEMA = build.ROOT / "results" / "schema" / "fleet-job-v1.schema.json"


def load_json(path, data, what):
    """The JSON value of a file's bytes, or UsageError naming the file."""
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text: not a {what}") from None
    except ValueError as e:  # a JSONDecodeError, or an integer of more than 4300 digits
        raise UsageError(f"{path}: not valid JSON ({errors.one_line(e)}): not a {what}") \
            from None
    except RecursionError:
        raise UsageError(f"{path}: nested too deep: not a {what}") from None


def no_job(jobs_dir, job):
    there = sorted((p.parent.name for p in Path(jobs_dir).glob(f"*/{JOB_RECORD}")
                    if fleet_slurm.JOB_ID.fullmatch(p.parent.name)), key=hostlist.natural)
    return UsageError(f"no fleet job {job} in {jobs_dir} (jobs there: "
                      f"{', '.join(there) or 'none'}; another --jobs-dir?)")


def read_record(jobs_dir, job):
    """The job's job.json, every field checked: UsageError naming the file and the
    field for a damaged one, or naming the jobs there for a job that is not."""
    try:
        job = fleet_slurm.job_id(str(job))
    except fleet_slurm.BadValue as e:
        raise UsageError(str(e)) from None
    d = job_dir(jobs_dir, job)
    try:
        mode = os.lstat(d).st_mode
    except OSError:
        raise no_job(jobs_dir, job) from None
    if not stat.S_ISDIR(mode):
        raise UsageError(f"{d}: is {atomic.kind_of(mode)}; a fleet job's directory must be "
                         "a directory")
    path = d / JOB_RECORD
    data = fleet_slurm.read_left(path, "job record", RECORD_MAX)
    if data is None:
        raise no_job(jobs_dir, job)
    record = load_json(path, data, "fleet job record")
    if not isinstance(record, dict):
        raise UsageError(f"{path}: not a fleet job record ({FORMAT}): {inputs.brief(record, 30)} "
                         "is not a JSON object")
    if record.get("format") != FORMAT:
        raise UsageError(f"{path}: not a fleet job record ({FORMAT}): 'format' is "
                         + (inputs.brief(record.get('format')) if 'format' in record
                            else 'missing'))
    problem = inputs.field_problem(record, SCHEMA)
    if problem:
        raise UsageError(f"{path}: damaged job record: {problem[0]!r} {problem[1]}")
    if record["job"] != job:
        raise UsageError(f"{path}: damaged job record: 'job' is {inputs.brief(record['job'])}, "
                         f"not {job}, the job of its directory")
    return record


def save_record(jobs_dir, record):
    atomic.write_atomic(job_dir(jobs_dir, record["job"]) / JOB_RECORD, record, force=True,
                         what="job record")


def now_text():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def remember(record, info):
    """Keep what `scontrol show job` said of the job in its record."""
    if not info:
        return record
    # as read_record will check them: text a terminal takes, node names
    record["slurm"] = {k: None if info.get(k) is None else fleet_slurm.printable(info[k])
                       for k in ("JobState", "Reason", "ExitCode", "NodeList", "StartTime",
                                 "EndTime", "BatchHost", "RunTime")}
    try:
        nodes = hostlist.expand(info.get("NodeList"))
    except ValueError:
        nodes = []
    if nodes and all(map(fleet_slurm.is_name, nodes)):
        record["nodes"] = nodes
    return record


SUBMISSION = "submission-{stamp}-{pid}.json"


def submission(jobs_dir, command, choice):
    """A record of a submission about to be made (jobs_dir/submission-*.json),
    written now; returns update(**fields) to say how it ended, or update() to
    remove it once the job's own record is written."""
    path = Path(jobs_dir) / SUBMISSION.format(
        stamp=datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S%f"),
        pid=os.getpid())
    record = {"format": FORMAT, "state": "submitting", "started": now_text(),
              "command": command, "partition": choice["partition"],
              "nodes": choice["nodelist"] or [], "count": choice["count"]}
    atomic.write_atomic(path, record, what="submission record")

    def update(**more):
        if not more:
            with contextlib.suppress(OSError):
                path.unlink()
            return
        record.update(more, ended=now_text())
        with contextlib.suppress(errors.CliError, OSError):  # the error itself is the line
            atomic.write_atomic(path, record, force=True, what="submission record")
    return update
