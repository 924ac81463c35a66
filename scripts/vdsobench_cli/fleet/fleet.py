"""`fleet`: the same measurement on every CPU model of a Slurm cluster.

    fleet run [--partition P] [--constraint F] (--nodes N|all | --one-per-feature)
              [--no-exclusive] [--timeout S] -- COMMAND ARGS...
    fleet status JOB
    fleet collect JOB --out DIR
    fleet features
    fleet local-cluster up|down          (fleet_local.py)

How a job runs. `fleet run` builds a bundle (`vdsobench bundle`, or takes
--bundle), appends it to a short shell script (PAYLOAD: the payload) and
submits one batch job, held, for the nodes it chose: one task a node,
--exclusive by default, --no-kill (a node that fails does not end the job for
the others), --no-requeue. Once the job's directory holds the payload, the
job is released; its batch script runs `srun --bcast=/tmp/ payload ...`, so
Slurm's broadcast (sbcast's tree) copies the payload once per node to local
disk and runs it there: nodes need neither Bazel nor the suite's libraries,
and N nodes do not unpack and import from a shared file system at once.
Each node unpacks the bundle, runs the same command with the same
arguments, pinned as `run` pins (its default CPU is the last one the task
may use; the step gets the whole node, --whole --cpu-bind=none), and writes
into the job's directory (<jobs-dir>/<job>/, which must be on a file system
the nodes share with the submit host, as Slurm's own --output files are):

    <job>-<node>.json      the results file (run, compare) or nothing
    <job>-<node>.out/.err  the command's output and errors
    <job>-<node>.cpuinfo   the node's first /proc/cpuinfo block (its CPU model)
    <job>-<node>.exit      last: exit status, phase, times, kernel, CPUs allowed

A node's failure is that file's exit status and the last line of its .err;
a node with no .exit file gets its reason from srun's lines in the batch
output ("n2: task 1: Exited with exit code 3", "Node failure on n2") and the
job's state and reason as `scontrol show job` gave them (kept in job.json
when the job ended, since the controller forgets a job MinJobAge after it
ends; no sacct: accounting is often not configured, and the local cluster
has none).

`fleet collect` copies what came back into one directory, keyed by job,
node, CPU model and kernel, writes the merged table and plots (`report`,
for run) and a one-screen summary: which nodes answered, which failed and
why, which nodes of one CPU model agreed and which differed, and for
compare the verdict per CPU model.
"""

import argparse
import contextlib
import datetime
import functools
import io
import json
import math
import os
import re
import shlex
import shutil
import stat
import statistics
import sys
import tarfile
import zlib
import time
from pathlib import Path

from vdsobench_cli.cli import (atomic, build, errors, labels, lifecycle, ranged, safe_read,
                               targets)
from vdsobench_cli.fleet import bundle, fleet_local, fleet_slurm
from vdsobench_cli.measure import report
from vdsobench_cli.cli.errors import Failure, UsageError

from vdsobench_cli.core import hostlist, uarch

FORMAT = "vdsobench-fleet-job/1"
JOB_RECORD = "job.json"
PAYLOAD = "payload.run"
BATCH = "batch.sh"
BATCH_OUT = "batch.out"
# What a node runs: the bundle's commands. Those writing a file get --out.
FILE_OUTPUT = ("run", "compare", "review-node")
OUTPUTS = ("file", "none")  # the payload's OUTPUT argument
TIMEOUT = ranged.number(1, 7 * 86400)  # seconds a job may stay pending
TOLERANCE = ranged.number(0, 10)  # a fraction: 0.1 is 10%
DEFAULT_TIMEOUT_S = 600
DEFAULT_TOLERANCE = 0.10
POLL_S = (0.5, 5.0)  # first and longest wait between two questions to the controller
FILE_POLL_S = 0.2  # between two looks at the job's directory
SUMMARY_ROWS = 12  # benchmarks shown across CPU models in the summary
SUMMARY_ROWS_LEAST = 3  # ... and no fewer where the summary would pass SUMMARY_LINES
SUMMARY_LINES = 40  # the summary's lines: one screen (the table rows give way)
SUMMARY_NODES = 20  # up to this many nodes the summary has a line for each
SUMMARY_DIFFERS = 8  # departing nodes named per CPU model
SUMMARY_FAILED = 8  # failed nodes with a line each; beyond, a line per reason
REPORT_ALL_MAX = 16  # up to this many nodes the report has a column for each


def default_jobs_dir():
    return build.ROOT / "results" / "fleet"


# ---- the payload and the batch script -------------------------------------------------------

PAYLOAD_HEAD = """\
#!/bin/sh
# vdsobench fleet payload: these lines run one node's share of a Slurm job;
# after them, from line {first} on, a vdsobench bundle (tar.gz).
# Run by the job's srun on every node: payload DIR OUTPUT COMMAND [ARGS...]
# DIR: the job's directory (shared with the submit host); OUTPUT: file or none.
dir=$1 output=$2
shift 2
job=${{SLURM_JOB_ID:-0}} node=${{SLURMD_NODENAME:-$(hostname -s)}}
# both become file names in the shared directory: only what Slurm's names hold
case "$job" in ''|*[!0-9]*) job=bad ;; esac
case "$node" in ''|.*|*[!A-Za-z0-9._-]*) job=bad ;; esac
if [ "$job" = bad ]; then
	echo "vdsobench fleet: job id or node name not of letters, digits, '.', '_', '-'" >&2
	exit 95
fi
base="$dir/$job-$node" self=$0 work=
if [ ! -d "$dir" ]; then
	echo "vdsobench fleet: node $node: the job directory $dir is not there:" \
		"it must be on a file system the nodes share with the submit host" >&2
	exit 97
fi
exec >"$base.out" 2>"$base.err" </dev/null
cleanup() {{
	[ -n "$work" ] && rm -rf "$work"
	case "${{self##*/}}" in slurm_bcast_*) rm -f "$self" ;; esac
}}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
started=$(date +%s.%N)
awk 'NF == 0 {{ exit }} {{ print }}' /proc/cpuinfo >"$base.cpuinfo"
phase=unpack rc=96
if work=$(mktemp -d "${{self%/*}}/vdsobench-fleet-$job-$node.XXXXXX") &&
	tail -n +{first} "$self" | tar -xzf - -C "$work"; then
	top=$(ls -d "$work"/vdsobench-*/ | head -n 1)
	if [ "$output" = file ]; then
		set -- "$@" --out "$base.json"
	fi
	phase=run
	"${{top}}vdsobench" "$@"
	rc=$?
else
	echo "vdsobench fleet: node $node: could not unpack the bundle into ${{self%/*}}" >&2
fi
ended=$(date +%s.%N)
# the exit record is JSON: its strings keep to characters JSON and a terminal take as they are
clean() {{ printf '%s' "$1" | tr -c 'A-Za-z0-9._:,+=@/ -' '?' | cut -c 1-200; }}
number() {{ case "$1" in ''|*[!0-9.]*) echo 0 ;; *) echo "$1" ;; esac; }}
cpus=$(awk '/^Cpus_allowed_list/ {{ print $2 }}' /proc/self/status)
format='{{"job": "%s", "node": "%s", "host": "%s", "kernel": "%s", "cpus_allowed": "%s",'
format="$format"' "phase": "%s", "rc": %d, "started": %s, "ended": %s}}\\n'
printf "$format" "$job" "$node" "$(clean "$(hostname)")" "$(clean "$(uname -r)")" \\
	"$(clean "$cpus")" "$phase" "$rc" "$(number "$started")" "$(number "$ended")" \\
	>"$base.exit.tmp" && mv "$base.exit.tmp" "$base.exit"
exit $rc
"""

# No value goes into a comment: a newline would end it (and sbatch reads
# "#SBATCH" lines); each is checked (fleet_slurm's grammars) and quoted.
BATCH_SCRIPT = """\
#!/bin/sh
# vdsobench fleet job: every node of the allocation runs the same command from
# the payload, which srun --bcast copies to each node's local directory
# (fleet run --node-tmp); job.json beside this file says what was asked.
dir={jobs_dir}/$SLURM_JOB_ID
srun --kill-on-bad-exit=0 --ntasks-per-node=1 --nodes="$SLURM_JOB_NUM_NODES" --whole \\
	--cpu-bind=none --bcast={node_tmp}/ "$dir/{payload}" "$dir" {output} {command}
rc=$?
rm -f "$dir/{payload}"
echo "vdsobench fleet: srun exit $rc"
exit $rc
"""


def payload_head():
    """The payload's shell lines, with the line its bundle starts on."""
    first = PAYLOAD_HEAD.format(first=0).count("\n") + 1
    return PAYLOAD_HEAD.format(first=first)


def write_payload(path, bundle_path):
    """The payload: payload_head() then the bundle's bytes, executable."""
    def write(f):
        f.write(payload_head().encode())
        with open(bundle_path, "rb") as src:
            shutil.copyfileobj(src, f)
    atomic.write_stream_atomic(path, write, what="payload")
    os.chmod(path, 0o755)


def batch_script(jobs_dir, command, output, node_tmp="/tmp"):
    """The batch script; UsageError for a value that is not what its place holds."""
    jobs_dir = fleet_slurm.checked(fleet_slurm.shared_path, "--jobs-dir", str(jobs_dir))
    node_tmp = fleet_slurm.checked(fleet_slurm.node_path, "--node-tmp", str(node_tmp))
    words = [fleet_slurm.checked(fleet_slurm.command_word, "the node command", w)
             for w in command]
    if output not in OUTPUTS:
        raise ValueError(f"output {output!r}")
    return BATCH_SCRIPT.format(
        jobs_dir=shlex.quote(jobs_dir), node_tmp=shlex.quote(node_tmp.rstrip("/")),
        payload=PAYLOAD, output=output, command=" ".join(map(shlex.quote, words)))


def node_command(words, parser):
    """(command words, output kind) for what every node runs; UsageError for a
    command the bundle cannot run or options fleet sets itself. parser: the
    whole command line's (main.parser(), handed down as args.parser), which
    checks the command's own options as a node would."""
    words = list(words)
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UsageError(f"fleet run: give the command after --, e.g. `fleet run --nodes all "
                         f"-- run --clocks monotonic` (valid: {', '.join(labels.BUNDLE_COMMANDS)})")
    for w in words:
        fleet_slurm.checked(fleet_slurm.command_word, "fleet run: the node command", w)
    if words[0] not in labels.BUNDLE_COMMANDS:
        why = (" (a recipe needs the repository: run `recipe` on each machine, or `compare` "
               "with its variants here)" if words[0] == "recipe" else "")
        raise UsageError(f"fleet run: {words[0]!r} cannot run from the bundle on the nodes"
                         f"{why} (valid: {', '.join(labels.BUNDLE_COMMANDS)})")
    for w in words[1:]:
        if w in ("--out", "--plot", "--force") or w.startswith(("--out=", "--plot=")):
            raise UsageError(f"fleet run: leave out {w.split('=')[0]}: fleet names each node's "
                             "output itself (<job>-<node>.json in the job's directory)")
    # the command's own options checked here, as the nodes would: one line now
    # rather than the same error from every node after the queue
    parser.parse_args(words)
    return words, "file" if words[0] in FILE_OUTPUT else "none"


# ---- choosing the nodes ---------------------------------------------------------------------


def choose(nodes, partitions, partition=None, constraint=None, count=None,
           one_per_feature=False, arch=None):
    """Which nodes a job asks for. nodes and partitions: records of `scontrol
    show node|partition -o`. count: an int or "all". Returns {"partition",
    "nodelist" (names, or None: Slurm picks `count`), "count", "skipped":
    [(node, why)], "groups": {feature: [nodes]} with one_per_feature}.
    UsageError for an unknown partition or feature, or too few nodes."""
    names = [p.get("PartitionName") for p in partitions if p.get("PartitionName")]
    if partition is None:
        default = [p["PartitionName"] for p in partitions if p.get("Default") == "YES"]
        if not default:
            raise UsageError(f"the cluster has no default partition: choose one with "
                             f"--partition (valid: {', '.join(names) or 'none'})")
        partition = default[0]
    elif partition not in names:
        raise UsageError(f"--partition {partition!r} is not a partition of this cluster "
                         f"(valid: {', '.join(names) or 'none'})")
    record = next(p for p in partitions if p.get("PartitionName") == partition)
    try:
        members = set(hostlist.expand(record.get("Nodes")))
    except ValueError as e:
        raise UsageError(f"partition {partition}: Slurm's list of its nodes is {e}") from None
    inside = [n for n in nodes if n.get("NodeName") in members]
    known = sorted({f for n in inside for f in fleet_slurm.features(n)})
    if constraint:
        unknown = [w for w in fleet_slurm.constraint_words(constraint) if w not in known]
        if unknown:
            raise UsageError(f"--constraint {constraint!r}: no node of partition {partition} "
                             f"has the feature {unknown[0]!r} (valid: {', '.join(known) or 'none'}"
                             "; `fleet features` prints the CPU-model features to add)")
    simple = fleet_slurm.simple_constraint(constraint) if constraint else ("&", [])
    if simple is None and (count == "all" or one_per_feature):
        raise UsageError(f"--constraint {constraint!r}: with --nodes all or --one-per-feature "
                         "give features joined by & or by | (no brackets, counts or "
                         "parentheses; fleet picks the nodes itself)")
    skipped, candidates = [], []
    for n in sorted(inside, key=lambda n: hostlist.natural(n.get("NodeName"))):
        name = n.get("NodeName")
        if constraint and simple and not fleet_slurm.matches(fleet_slurm.features(n), constraint):
            continue
        ok, why = fleet_slurm.usable(n)
        if not is_name(name):  # it would go to sbatch's --nodelist
            ok, why, name = False, "not a Slurm node name", fleet_slurm.shown(name)
        if ok and arch and n.get("Arch") not in (None, "", "(null)", arch):
            ok, why = False, f"its architecture is {n.get('Arch')}, the bundle's {arch}"
        if ok:
            candidates.append(n)
        else:
            skipped.append((name, fleet_slurm.printable(why, 500)))  # a node's own words
    out = {"partition": partition, "skipped": skipped, "groups": None}
    if one_per_feature:
        groups = {}
        cpu_words = fleet_slurm.cpu_features()
        for n in candidates:
            model = [f for f in fleet_slurm.features(n) if f in cpu_words]
            groups.setdefault(",".join(model) or "(no CPU-model feature)", []).append(n)
        # an idle node of each model where there is one, else the first
        chosen = [min(g, key=lambda n: fleet_slurm.state_words(n.get("State"))[0] != "IDLE")
                  for g in groups.values()]
        out["groups"] = {k: [n["NodeName"] for n in g] for k, g in groups.items()}
        candidates = chosen
    if not candidates:
        raise UsageError(f"no usable node in partition {partition}"
                         + (f" with --constraint {constraint!r}" if constraint else "")
                         + (": " + "; ".join(f"{n} {w}" for n, w in skipped) if skipped else ""))
    if count == "all" or one_per_feature:
        out["nodelist"] = [n["NodeName"] for n in candidates]
        out["count"] = len(candidates)
        return out
    if count > len(candidates):
        raise UsageError(f"--nodes {count}: partition {partition} has {len(candidates)} usable "
                         f"node{'s' if len(candidates) != 1 else ''}"
                         + (f" with --constraint {constraint!r}" if constraint else "")
                         + f" (valid: 1 to {len(candidates)}, or all)")
    out["nodelist"], out["count"] = None, count
    return out


node_count = ranged.number(1, 100000, whole=True, words=("all",))
PARTITION = fleet_slurm.argtype(fleet_slurm.slurm_name, "partition")
JOB = fleet_slurm.argtype(fleet_slurm.job_id)


# ---- job records ----------------------------------------------------------------------------


def job_dir(jobs_dir, job):
    return Path(jobs_dir) / str(job)


# ---- what is read back: each field checked before it is used -------------------------------

def is_text(v, limit=4096):
    return isinstance(v, str) and len(v) <= limit and v.isprintable()


def is_whole(v, low, high):
    return isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def is_number(v):
    return (isinstance(v, float) and math.isfinite(v)) or is_whole(v, -2 ** 63, 2 ** 63)


def is_name(v):
    return isinstance(v, str) and fleet_slurm.NAME.fullmatch(v) is not None


def list_of(test, least=0):
    return lambda v: isinstance(v, list) and len(v) >= least and all(map(test, v))


def optional(test):
    return lambda v: v is None or test(v)


def brief(value, limit=60):
    """A JSON value as a message quotes it: escaped to ASCII, cut to limit."""
    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def field_problem(obj, fields):
    """(field, what is wrong) of the first of fields that obj does not hold as it
    should, or None. fields: (name, required, test, what it must be)."""
    for name, required, test, valid in fields:
        if name not in obj:
            if required:
                return name, f"is missing (it is {valid})"
        elif not test(obj[name]):
            return name, f"is {brief(obj[name])}, not {valid}"
    return None


RECORD_MAX = 16 << 20  # a 100000-node job's record is about 5 MB
RECORD_FIELDS = (
    ("job", True, lambda v: isinstance(v, str) and fleet_slurm.JOB_ID.fullmatch(v),
     "a job id (digits, as text)"),
    ("command", True,
     lambda v: list_of(is_text, 1)(v) and v[0] in labels.BUNDLE_COMMANDS,
     f"the node command (a list of words, the first one of {', '.join(labels.BUNDLE_COMMANDS)})"),
    ("output", True, lambda v: v in OUTPUTS, " or ".join(OUTPUTS)),
    ("nodes", True, list_of(is_name), "a list of node names"),
    ("conf", False, optional(is_text), "a path or null"),
    ("partition", False, optional(is_name), "a partition name or null"),
    ("constraint", False, optional(is_text), "a constraint or null"),
    ("exclusive", False, lambda v: isinstance(v, bool), "true or false"),
    ("requested", False, optional(lambda v: isinstance(v, dict)), "an object"),
    ("skipped", False, list_of(lambda x: isinstance(x, list) and len(x) == 2
                               and all(map(is_text, x))), "a list of [node, reason]"),
    ("submitted", False, optional(is_text), "a time or null"),
    ("bundle", False, optional(lambda v: isinstance(v, dict)), "an object"),
    ("fleet", False, list_of(is_text), "a list of words"),
    ("slurm", False, optional(lambda v: isinstance(v, dict) and all(
        is_text(k, 64) and (x is None or is_text(x)) for k, x in v.items())),
     "an object of Slurm's fields or null"),
    ("cancelled", False, is_text, "text"),
)


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
        raise UsageError(f"{path}: not a fleet job record ({FORMAT}): {brief(record, 30)} "
                         "is not a JSON object")
    if record.get("format") != FORMAT:
        raise UsageError(f"{path}: not a fleet job record ({FORMAT}): 'format' is "
                         f"{brief(record.get('format')) if 'format' in record else 'missing'}")
    problem = field_problem(record, RECORD_FIELDS)
    if problem:
        raise UsageError(f"{path}: damaged job record: {problem[0]!r} {problem[1]}")
    if record["job"] != job:
        raise UsageError(f"{path}: damaged job record: 'job' is {brief(record['job'])}, "
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
    if nodes and all(map(is_name, nodes)):
        record["nodes"] = nodes
    return record


# ---- run ------------------------------------------------------------------------------------


def cluster_of(args):
    fleet_slurm.check_clients()
    return fleet_slurm.Cluster(fleet_slurm.conf_path(getattr(args, "slurm_conf", None)))


BUNDLE_MAX = 1 << 30  # a bundle is tens of MB
MANIFEST_MAX = 1 << 20  # its BUNDLE.json, a few KB
MEMBERS_MAX = 100_000  # members looked at for it (a bundle has a few thousand)
UNPACKED_MAX = 2 << 30  # bytes unpacked to reach it (BUNDLE.json is last; a bundle
#                         unpacks to about 100 MB): a gzip bomb is refused, not inflated


def bundle_facts(name, data):
    """BUNDLE.json of a bundle's bytes, its fields as fleet uses them checked:
    UsageError (one line) for anything else."""
    def bad(why):
        return UsageError(f"--bundle {name}: not a vdsobench bundle ({why}; make one with "
                          "`scripts/vdsobench bundle --out FILE.tar.gz`)")
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for n, m in enumerate(tar):
                if n >= MEMBERS_MAX:
                    raise bad(f"no BUNDLE.json in its first {MEMBERS_MAX} members")
                if m.offset_data + max(m.size, 0) > UNPACKED_MAX:
                    raise bad(f"it unpacks to over {UNPACKED_MAX >> 30} GiB")
                if m.name.count("/") == 1 and m.name.endswith("/BUNDLE.json"):
                    break
            else:
                raise bad("no BUNDLE.json")
            if not m.isfile():
                raise bad(f"{fleet_slurm.printable(m.name)} is not a regular file")
            if m.size > MANIFEST_MAX:
                raise bad(f"its BUNDLE.json is over {MANIFEST_MAX // 1024} KB")
            raw = tar.extractfile(m).read(MANIFEST_MAX + 1)
    except (OSError, EOFError, tarfile.TarError, zlib.error) as e:
        raise bad(fleet_slurm.printable(str(e))) from None
    try:
        facts = json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise bad(f"its BUNDLE.json is not JSON: {fleet_slurm.printable(str(e))}") from None
    if not isinstance(facts, dict) or not facts:
        raise bad("its BUNDLE.json is not a JSON object")
    arch = facts.get("arch")
    if arch is not None and not (isinstance(arch, str) and arch in ("x86_64", "aarch64")):
        raise bad(f"its BUNDLE.json's arch is {brief(arch, 30)}, not x86_64 or aarch64")
    b = facts.get("build")
    if b is not None and not isinstance(b, dict):
        raise bad(f"its BUNDLE.json's build is {brief(b, 30)}, not an object")
    b = b or {}
    if b.get("short") is not None and not (is_text(b["short"], 64)
                                           and re.fullmatch(r"[0-9a-f]{1,64}", b["short"])):
        raise bad(f"its BUNDLE.json's build.short is {brief(b['short'], 30)}, not a commit")
    if b.get("dirty") is not None and not isinstance(b["dirty"], bool):
        raise bad(f"its BUNDLE.json's build.dirty is {brief(b['dirty'], 30)}, not "
                  "true or false")
    return facts


def bundle_for(args, tmp):
    """A bundle to stage: --bundle as given (read once by the safe reader, a regular
    file within BUNDLE_MAX, checked and copied into tmp: what is staged is what
    was checked), else one built now into tmp."""
    if args.bundle:
        data = safe_read.read_regular(args.bundle, "bundle", BUNDLE_MAX, prefix="--bundle ")
        facts = bundle_facts(args.bundle, data)
        path = Path(tmp) / "given.tar.gz"
        path.write_bytes(data)
        return path, facts
    return built_bundle(tmp)


def built_bundle(tmp):
    """A bundle of this build, made now in tmp: (path, its BUNDLE.json)."""
    path = Path(tmp) / "vdsobench.tar.gz"
    bundle.make(str(path))
    with tarfile.open(path) as tar:
        manifest = next(m for m in tar.getmembers() if m.name.endswith("/BUNDLE.json"))
        return path, json.load(tar.extractfile(manifest))


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


def sbatch_options(choice, args, jobs_dir):
    """sbatch's options, each value checked (Slurm expands % in --output; a
    comma or bracket in a name is a list)."""
    s = fleet_slurm
    partition = s.checked(s.slurm_name, "--partition", choice["partition"], "partition")
    jobs_dir = s.checked(s.shared_path, "--jobs-dir", str(jobs_dir))
    opts = ["--hold", "--job-name=vdsobench-fleet", f"--partition={partition}",
            f"--nodes={int(choice['count'])}", "--ntasks-per-node=1", "--no-kill",
            "--no-requeue", f"--chdir={jobs_dir}", f"--output={jobs_dir}/%j/{BATCH_OUT}"]
    if choice["nodelist"]:
        names = [s.checked(s.slurm_name, "--nodelist", n, "node name")
                 for n in choice["nodelist"]]
        opts.append(f"--nodelist={','.join(names)}")
    if args.constraint:
        opts.append(f"--constraint={s.checked(s.constraint, '--constraint', args.constraint)}")
    if args.exclusive:
        opts.append("--exclusive")
    if args.time:
        opts.append(f"--time={s.checked(s.time_limit, '--time', args.time)}")
    return opts


def check_request(args, who="fleet run"):
    """The nodes asked for and the directories, before anything is built:
    (jobs_dir, cluster)."""
    if args.nodes is None and not args.one_per_feature:
        raise UsageError(f"{who}: say which nodes: --nodes N, --nodes all or "
                         "--one-per-feature")
    if args.nodes is not None and args.one_per_feature:
        raise UsageError(f"{who}: --nodes and --one-per-feature exclude each other")
    jobs_dir = Path(args.jobs_dir or default_jobs_dir()).resolve()
    fleet_slurm.checked(fleet_slurm.shared_path, "--jobs-dir", str(jobs_dir))
    fleet_slurm.checked(fleet_slurm.node_path, "--node-tmp", args.node_tmp)
    targets.check_out_dir(jobs_dir)
    cluster = cluster_of(args)
    # the nodes first: a wrong partition or feature costs no bundle build
    choose(cluster.nodes(), cluster.partitions(), args.partition, args.constraint, args.nodes,
           args.one_per_feature)
    return jobs_dir, cluster


def run_fleet(args):
    command, output = node_command(args.command, args.parser)
    jobs_dir, cluster = check_request(args)
    job, record, d = submit(args, cluster, jobs_dir, command, output)
    print(f"fleet: job {job} submitted: {' '.join(command)} on "
          + (", ".join(record["nodes"]) if record["nodes"]
             else f"{record['requested']['count']} nodes")
          + f" ({'exclusive' if args.exclusive else 'shared'}); files in {d}", flush=True)
    if args.no_wait:
        print(f"fleet: follow it with `scripts/vdsobench fleet status {job}`; collect with "
              f"`scripts/vdsobench fleet collect {job} --out DIR`")
        return 0
    started = time.monotonic()
    record = wait(cluster, jobs_dir, record, args.timeout)
    outcomes = node_outcomes(jobs_dir, record)
    for line in outcome_lines(outcomes, SUMMARY_NODES):
        print(line)
    failed = [o for o in outcomes if o["state"] != "ok"]
    print(f"fleet: job {job} {record.get('slurm', {}).get('JobState', 'ended')} in "
          f"{time.monotonic() - started:.1f} s: {len(outcomes) - len(failed)} of "
          f"{len(outcomes)} nodes ok; collect with `scripts/vdsobench fleet collect {job} "
          f"--out DIR`")
    return 1 if failed else 0


def submit(args, cluster, jobs_dir, command, output, bundle_path=None, facts=None):
    """Submit the job (held until its directory holds the payload, then
    released): (job, its record, its directory). The bundle: bundle_path and
    its facts (BUNDLE.json) when given, else bundle_for(args)."""
    nodes, partitions = cluster.nodes(), cluster.partitions()
    with lifecycle.temp_dir(prefix="vdsobench-fleet-") as tmp:
        if bundle_path is None:
            bundle_path, facts = bundle_for(args, tmp)
        choice = choose(nodes, partitions, args.partition, args.constraint, args.nodes,
                        args.one_per_feature, arch=facts.get("arch"))
        for name, why in choice["skipped"]:
            print(f"fleet: skipping {name}: {why}", file=sys.stderr)
        if choice["groups"]:
            for model, members in choice["groups"].items():
                print(f"fleet: {model}: {len(members)} node{'s' if len(members) != 1 else ''} "
                      f"({', '.join(members)})", file=sys.stderr)
        jobs_dir.mkdir(parents=True, exist_ok=True)
        script = Path(tmp) / BATCH
        fleet_argv = [fleet_slurm.printable(a) for a in getattr(args, "argv", [])[1:]]
        script.write_text(batch_script(jobs_dir, command, output, args.node_tmp))
        options = sbatch_options(choice, args, jobs_dir)
        # written before sbatch: a submit that fails, or is killed, leaves a record
        attempt = submission(jobs_dir, command, choice)
        try:
            job = cluster.submit(options, script)
        except BaseException as e:
            attempt(state="submit failed",
                    reason=fleet_slurm.printable(str(e) or type(e).__name__))
            raise
        try:
            d = job_dir(jobs_dir, job)
            try:
                d.mkdir(parents=True, exist_ok=False)
            except FileExistsError:
                raise UsageError(f"fleet: {d} is there from an earlier job with the same id (a "
                                 "cluster whose job ids started again); move it away or give "
                                 "another --jobs-dir. The new job is cancelled") from None
            shutil.copy(script, d / BATCH)
            write_payload(d / PAYLOAD, bundle_path)
            record = {"format": FORMAT, "job": job, "conf": str(cluster.conf),
                      "partition": choice["partition"], "constraint": args.constraint,
                      "exclusive": args.exclusive,
                      "requested": {"nodes": args.nodes, "one_per_feature": args.one_per_feature,
                                    "nodelist": choice["nodelist"], "count": choice["count"]},
                      "skipped": [list(s) for s in choice["skipped"]],
                      "command": command, "output": output, "submitted": now_text(),
                      "bundle": {"arch": facts.get("arch"),
                                 "commit": (facts.get("build") or {}).get("short"),
                                 "dirty": (facts.get("build") or {}).get("dirty")},
                      "nodes": choice["nodelist"] or [], "fleet": fleet_argv}
            save_record(jobs_dir, record)
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
                    save_record(jobs_dir, remember(record, info))
            if state in fleet_slurm.FINISHED:
                save_record(jobs_dir, remember(record, info))
                return record
            if state == "PENDING" and time.monotonic() - submitted > timeout:
                cluster.cancel(job)
                record = remember(record, info)
                record["cancelled"] = f"pending after {timeout:g} s ({info.get('Reason')})"
                save_record(jobs_dir, record)
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
    return len(list(job_dir(jobs_dir, record["job"]).glob(f"{record['job']}-*.exit")))


# ---- what each node left ----------------------------------------------------------------------

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
EXIT_FIELDS = (
    ("rc", True, lambda v: is_whole(v, 0, 255), "a whole number 0 to 255"),
    ("phase", True, lambda v: v in ("unpack", "run"), "unpack or run"),
    ("job", True, is_text, "the job id"),
    ("node", True, is_text, "the node's name"),
    ("started", True, is_number, "a time in seconds"),
    ("ended", True, is_number, "a time in seconds"),
    ("kernel", False, lambda v: is_text(v, 256), "a kernel release"),
    ("cpus_allowed", False, lambda v: is_text(v, 4096), "a CPU list"),
    ("host", False, lambda v: is_text(v, 256), "a host name"),
)


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
        obj = load_json(name, data, "node exit record")
    except UsageError as e:
        return None, str(e)
    if not isinstance(obj, dict):
        return None, f"{name}: {brief(obj)} is not a JSON object"
    problem = field_problem(obj, EXIT_FIELDS)
    if problem:
        return None, f"{name}: {problem[0]!r} {problem[1]}"
    if (obj["job"], obj["node"]) != (job, node):
        return None, (f"{name}: the record of node {brief(obj['node'])} of job "
                      f"{brief(obj['job'])}")
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
    return sorted(set(record.get("nodes") or []) | {n for n in found if is_name(n)},
                  key=hostlist.natural)


BAD_STATES = ("failed", "malformed")  # a node that gave no usable result


def node_outcomes(jobs_dir, record):
    """One dict per node: node, state ("ok", "failed", "malformed": its exit
    record is not what the payload writes, "running", "waiting"), rc, reason,
    results (path or None), cpu (fingerprint-like dict), kernel, cpus_allowed,
    seconds."""
    d = job_dir(jobs_dir, record["job"])
    slurm = record.get("slurm") or {}
    job_state = fleet_slurm.state_words(slurm.get("JobState") or "PENDING")[0]
    ended = job_state in fleet_slurm.FINISHED or "cancelled" in record
    try:
        batch = read_text_left(d / BATCH_OUT, "batch output", BATCH_TAIL, tail=True) or ""
    except UsageError:
        batch = ""
    from_srun = srun_reasons(batch)
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


def cpu_name(o):
    return uarch.label(o["cpu"]) if o.get("cpu") else "CPU unknown (no cpuinfo came back)"


def outcome_lines(outcomes, most=None):
    """A line per node; beyond `most` nodes, a line per CPU model and state
    (with the nodes as a host list) and a line per failed node."""
    if most is not None and len(outcomes) > most:
        groups = {}
        for o in outcomes:
            if o["state"] not in BAD_STATES:
                groups.setdefault((o["state"], cpu_name(o), o.get("kernel")), []).append(
                    o["node"])
        lines = [f"  {state:7} {len(names)} x {model}" + (f", kernel {kernel}" if kernel else "")
                 + f": {hosts(names)}" for (state, model, kernel), names in groups.items()]
        bad = [o for o in outcomes if o["state"] in BAD_STATES]
        if len(bad) <= SUMMARY_FAILED:
            return lines + outcome_lines(bad)
        # many failed: a line per state and reason (the node's own name in it
        # aside), the commonest first
        why = {}
        for o in bad:
            reason = (o.get("reason") or "no reason").replace(o.get("collected") or "\0",
                                                               "<its copy>")
            reason = re.sub(rf"(?<![A-Za-z0-9]){re.escape(o['node'])}(?![A-Za-z0-9])",
                            "<node>", reason)
            why.setdefault((o["state"].upper(), reason), []).append(o["node"])
        ranked = sorted(why.items(), key=lambda kv: -len(kv[1]))
        lines += [f"  {state:7} {len(names)} x {reason}: {hosts(names)}"
                  for (state, reason), names in ranked[:SUMMARY_FAILED]]
        rest = [n for _, names in ranked[SUMMARY_FAILED:] for n in names]
        if rest:
            lines.append(f"  and {len(rest)} more failed for other reasons: {hosts(rest)}")
        return lines
    lines = []
    for o in outcomes:
        where = f"{o['node']}: {cpu_name(o)}"
        if o.get("kernel"):
            where += f", kernel {o['kernel']}"
        if o.get("cpus_allowed"):
            where += f", CPUs {o['cpus_allowed']}"
        if o["state"] == "ok":
            lines.append(f"  ok      {where}" + (f", {o['seconds']:.1f} s"
                                                  if o.get("seconds") is not None else ""))
        elif o["state"] == "failed":
            lines.append(f"  FAILED  {where}: {o['reason']}")
        elif o["state"] == "malformed":
            lines.append(f"  MALFORMED {where}: {o['reason']}")
        else:
            lines.append(f"  {o['state']:7} {where}")
    return lines


def refresh(jobs_dir, record, args):
    """(record, Slurm's record of the job or None): the job's latest state while
    it has not ended, asked of the cluster it ran on; from its files alone,
    with a line saying so, when the cluster cannot answer."""
    if (record.get("slurm") or {}).get("JobState") in fleet_slurm.FINISHED:
        return record, None
    try:
        fleet_slurm.check_clients(["scontrol"])
        conf = getattr(args, "slurm_conf", None) or record.get("conf")
        info = fleet_slurm.Cluster(fleet_slurm.conf_path(conf)).job(record["job"])
    except (UsageError, Failure) as e:
        print(f"fleet: cannot ask Slurm ({e}); from the job's files only", file=sys.stderr)
        return record, None
    if info:
        record = remember(record, info)
        save_record(jobs_dir, record)
    return record, info


# ---- status ---------------------------------------------------------------------------------


def status(args):
    jobs_dir = Path(args.jobs_dir or default_jobs_dir()).resolve()
    record, info = refresh(jobs_dir, read_record(jobs_dir, args.job), args)
    slurm = record.get("slurm") or {}
    print(f"fleet: job {record['job']}: {' '.join(record['command'])}; "
          f"{slurm.get('JobState', 'PENDING' if info else 'state unknown')}"
          + (f" ({slurm['Reason']})" if slurm.get("Reason") not in (None, "None") else "")
          + (f"; {record['cancelled']}" if record.get("cancelled") else ""))
    outcomes = node_outcomes(jobs_dir, record)
    for line in outcome_lines(outcomes, SUMMARY_NODES):
        print(line)
    return 1 if any(o["state"] in BAD_STATES for o in outcomes) else 0


# ---- collect --------------------------------------------------------------------------------


def slug_text(text, fallback="unknown"):
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text or "")).strip("-.") or fallback


def collected_name(job, o):
    """<job>-<node>-<cpu model>-<kernel>.json: the key of a node's results."""
    model = fleet_slurm.feature_of(o.get("cpu")) or slug_text(
        "-".join(str(o["cpu"].get(k)) for k in ("vendor", "family", "model"))
        if o.get("cpu") else None)
    return f"{job}-{slug_text(o['node'])}-{model}-{slug_text(o.get('kernel'))}.json"


def same_bytes(a, b):
    """Whether the regular files a and b hold the same bytes (open_left's rules)."""
    fa, fb = fleet_slurm.open_left(a, "file"), fleet_slurm.open_left(b, "file")
    with contextlib.ExitStack() as stack:
        for f in (fa, fb):
            if f is not None:
                stack.enter_context(f)
        if fa is None or fb is None or (os.fstat(fa.fileno()).st_size
                                        != os.fstat(fb.fileno()).st_size):
            return False
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def numbered(name):
    """name, then name-2, name-3... (before the extension)."""
    stem, dot, ext = name.rpartition(".") if "." in Path(name).name else (name, "", "")
    yield name
    for n in range(2, 1000):
        yield f"{stem}-{n}{dot}{ext}"


def lstat_mode(path):
    try:
        return os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as e:
        raise atomic.cannot(path, e, "files") from None


class CollectOut:
    """Everything collect writes under --out: every target checked before
    anything is written, then written into a stage (a hidden directory in out)
    and published at once, with signals held off: all of it or none. A file
    there is replaced only with force and only if it is a regular file; a
    node's copy is never written over a different file (it is named -2, -3...),
    never through a link; a directory on the way must be one, not a link."""

    def __init__(self, out, force):
        targets.check_out_dir(out)
        self.out, self.force = Path(out), force
        self.before = {}  # relative name -> lstat of the file there at the check, or None
        self.stage = None

    def check_dir(self, rel):
        path = self.out / rel
        mode = lstat_mode(path)
        if mode is not None and not stat.S_ISDIR(mode):
            raise UsageError(f"cannot write files to {path}: it is {atomic.kind_of(mode)}")
        return mode is not None

    def check_file(self, rel, what):
        """A file written whole (a table, the summary): new, or replaced with force."""
        if "/" in rel:
            self.check_dir(rel.rsplit("/", 1)[0])
        self.before[rel] = atomic.refuse_existing(self.out / rel, self.force, what)

    def check_files_in(self, rel, what):
        """A directory whose files are written whole (the report): every file
        there is replaced only with force, and it holds nothing but regular files."""
        if not self.check_dir(rel):
            return
        with os.scandir(self.out / rel) as entries:
            for entry in entries:
                self.check_file(f"{rel}/{entry.name}", what)

    def copy_name(self, rel, src):
        """Where src's copy goes: rel, else rel-2, rel-3...: the first that is free
        or already holds its bytes (nothing to write then: None)."""
        if "/" in rel:
            self.check_dir(rel.rsplit("/", 1)[0])
        for name in numbered(rel):
            if name in self.before:
                continue
            path = self.out / name
            mode = lstat_mode(path)
            if mode is None:
                self.before[name] = None
                return name
            if not stat.S_ISREG(mode):
                raise UsageError(f"cannot copy {Path(src).name} to {path}: it is "
                                 f"{atomic.kind_of(mode)}; collect writes no copy through "
                                 "a link or over anything but a regular file")
            if same_bytes(src, path):
                return None
        raise UsageError(f"cannot copy {Path(src).name} into {self.out}: 999 other copies")

    def path(self, rel):
        """Where rel is written now: in the stage (made when first asked)."""
        if self.stage is None:
            atomic.make_parent(self.out / "x", "files")
            try:
                self.stage = Path(lifecycle.new_temp_dir(self.out, ".collect-"))
            except OSError as e:
                raise atomic.cannot(self.out, e, "files") from None
        path = self.stage / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def staged(self):
        if self.stage is None:
            return []
        return sorted(str(p.relative_to(self.stage)) for p in self.stage.rglob("*")
                      if p.is_file())

    def publish(self):
        """Give every staged file its name under out, over only what the check saw."""
        names = self.staged()
        with lifecycle.critical():
            lifecycle.check()
            for rel in names:
                final = self.out / rel
                try:
                    if "/" in rel:
                        make_dir(final.parent)
                    atomic.publish(self.stage / rel, final, self.before.get(rel), "files")
                except OSError as e:
                    raise atomic.cannot(final, e, "files") from None
                lifecycle.written(final)
        if self.stage is not None:
            lifecycle.discard(self.stage, "dir")


def make_dir(path):
    """path as a directory: made, or one already there (not a link to one)."""
    try:
        os.mkdir(path)
    except FileExistsError:
        mode = lstat_mode(path)
        if mode is None or not stat.S_ISDIR(mode):
            raise UsageError(f"cannot write files to {path}: it is "
                             f"{atomic.kind_of(mode) if mode else 'gone'}") from None


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
    from vdsobench_cli.commands import plot
    loaded = {}
    for o in outcomes:
        if not o.get("collected") or o["state"] != "ok":
            continue
        try:
            got, obj = plot.load_input(o.get("read_from") or o["collected"])
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


def node_values(obj, source, own=None):
    """{(variant, clock, mode): (ns, low, high)} of one results file; a node
    measured on several CPUs counts with the median over them. own: the node's
    own counter read on a cluster whose nodes' differ (own_counters()): a
    variant read with it is keyed <layout>+default+<inline>, so that the rows
    line up across the nodes (reports/merge.py row_variant)."""
    from reports import merge
    per = {}
    for r in merge.records(obj, source):
        per.setdefault((merge.row_variant(r["variant"], own), r["clock"], r["mode"]),
                       []).append(r)
    return {k: (statistics.median(r["ns"] for r in rs), min(r["low"] for r in rs),
                max(r["high"] for r in rs)) for k, rs in per.items()}


def own_counters(loaded):
    """{node: its own counter read} (reports/merge.py own_counter) of the loaded
    results where the nodes' differ; {} where they are all the same or unknown."""
    from reports import merge
    own = {n: merge.own_counter(obj) for n, obj in loaded.items()}
    return own if len({c for c in own.values() if c}) > 1 else {}


def agreement(values, models, tolerance):
    """values: {node: {key: (ns, low, high)}}; models: {node: model label}.
    Per model, the consensus (median over its nodes) of each benchmark, and each
    node's departures from it: more than tolerance away, with the consensus
    outside the node's own interval. Returns [{"model", "nodes", "consensus":
    {key: ns}, "differs": {node: [(key, ns, consensus, deviation)]}}]."""
    out = []
    for model in dict.fromkeys(models[n] for n in values):
        members = [n for n in values if models[n] == model]
        keys = list(dict.fromkeys(k for n in members for k in values[n]))
        consensus = {k: statistics.median(values[n][k][0] for n in members if k in values[n])
                     for k in keys}
        differs = {}
        for n in members:
            for k in keys:
                if k not in values[n]:
                    continue
                ns, low, high = values[n][k]
                dev = ns / consensus[k] - 1 if consensus[k] else 0.0
                if abs(dev) > tolerance and not low <= consensus[k] <= high:
                    differs.setdefault(n, []).append((k, ns, consensus[k], dev))
        out.append({"model": model, "nodes": members, "consensus": consensus,
                    "differs": differs})
    return out


def key_text(key):
    return " ".join(key)


HOSTS_WIDTH = 60  # characters of a host list in the summary; nodes-JOB.json has them all


def hosts(names, width=HOSTS_WIDTH):
    return hostlist.fitting(names, width)


def representative(group, values):
    """The node of a CPU model nearest its model's medians (the smallest mean
    |log(ns / median)| over the benchmarks): the one the report shows for it."""
    def distance(node):
        ds = [abs(math.log(values[node][k][0] / c)) for k, c in group["consensus"].items()
              if k in values[node] and c > 0 and values[node][k][0] > 0]
        return (statistics.mean(ds) if ds else math.inf, hostlist.natural(node))
    return min(group["nodes"], key=distance)


def counter_text(nodes, own):
    """The own counter read of a group's nodes ("own counter rdtscp"; "own
    counters rdtscp n[1-2], lfence_rdtsc n3" where they differ)."""
    by = {}
    for n in nodes:
        by.setdefault(own.get(n) or "unknown", []).append(n)
    if len(by) == 1:
        return f"own counter {next(iter(by))}"
    return "own counters " + ", ".join(f"{c} {hosts(ns)}" for c, ns in by.items())


def run_summary(groups, tolerance, own=None, table_rows=SUMMARY_ROWS):
    """The summary's lines for `run`: per CPU model, which nodes agree; across
    models, the medians side by side (the first table_rows benchmarks). own: {node:
    own counter read} where the nodes' differ (own_counters()): each model's line
    names its nodes'."""
    lines = []
    for g in groups:
        n = len(g["nodes"])
        lines.append(f"{g['model']}: {n} node{'s' if n != 1 else ''} ({hosts(g['nodes'])})"
                     + (f"; {counter_text(g['nodes'], own)}" if own else ""))
        if n < 2:
            lines.append("  one node: nothing to agree with")
            continue
        agree = [x for x in g["nodes"] if x not in g["differs"]]
        if agree:
            lines.append(f"  agree within {tolerance:.0%} on all {len(g['consensus'])} "
                         f"benchmarks: {hosts(agree)}")
        if n == 2 and len(g["differs"]) == 2:
            # two nodes: the median is between them, so neither is the odd one out
            (a, rows_a), (b, rows_b) = g["differs"].items()
            worst = max(rows_a, key=lambda r: abs(r[3]))
            other = next((r for r in rows_b if r[0] == worst[0]), None)
            lines.append(f"  differ: {a} and {b} on {len(rows_a)} of {len(g['consensus'])}; "
                         f"most on {key_text(worst[0])}: {worst[1]:.2f} against "
                         + (f"{other[1]:.2f} ns ({other[1] / worst[1] - 1:+.0%} on {b})"
                            if other else "the other's"))
            continue
        # the furthest first; the rest counted (nodes-JOB.json has them all)
        far = sorted(g["differs"].items(), key=lambda kv: -max(abs(r[3]) for r in kv[1]))
        for node, rows in far[:SUMMARY_DIFFERS]:
            worst = max(rows, key=lambda r: abs(r[3]))
            lines.append(f"  differs: {node} on {len(rows)} of {len(g['consensus'])}; most on "
                         f"{key_text(worst[0])}: {worst[1]:.2f} ns against {worst[2]:.2f} "
                         f"({worst[3]:+.0%})")
        if len(far) > SUMMARY_DIFFERS:
            rest = [node for node, _ in far[SUMMARY_DIFFERS:]]
            lines.append(f"  and {len(rest)} more differ: {hosts(rest)}")
    if len(groups) > 1:
        keys = list(dict.fromkeys(k for g in groups for k in g["consensus"]))
        head = ["benchmark (ns/call, median of the model's nodes)"] + [g["model"].split(" (")[0]
                                                                       for g in groups]
        body = [[key_text(k)] + [f"{g['consensus'][k]:.2f}" if k in g["consensus"] else "-"
                                 for g in groups] for k in keys[:table_rows]]
        widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
        lines.append("")
        lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                            for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                  for r in [head] + body]
        if len(keys) > table_rows:
            lines.append(f"... and {len(keys) - table_rows} more benchmarks in the report")
    return lines


def verdicts(comparisons, models):
    """compare's verdicts per row and CPU model: [(row text, [(model, [(node,
    verdict, ratio)])])] for the ns/call rows of each node's comparison."""
    rows = {}
    for node, comp in comparisons.items():
        for r in comp.get("rows", []):
            if r.get("metric") != "ns/call":
                continue
            key = f"{r.get('variant')} vs {r.get('baseline')}, {r.get('clock')} {r.get('mode')}"
            rows.setdefault(key, {}).setdefault(models[node], []).append(
                (node, r.get("verdict"), r.get("ratio")))
    return [(k, list(v.items())) for k, v in rows.items()]


def compare_summary(table):
    lines = []
    for key, per_model in table:
        lines.append(key)
        for model, seen in per_model:
            kinds = {v for _, v, _ in seen}
            ratios = ", ".join(f"{n} {r:.3f}" if isinstance(r, (int, float)) else f"{n} -"
                               for n, _, r in seen)
            if len(kinds) == 1:
                lines.append(f"  {model}: {kinds.pop()} ({ratios})")
            else:
                lines.append(f"  {model}: nodes disagree: " + "; ".join(
                    f"{n} {v} ({r:.3f})" if isinstance(r, (int, float)) else f"{n} {v}"
                    for n, v, r in seen))
    return lines


def other_summary(outcomes):
    lines = []
    for o in outcomes:
        if o["state"] == "ok":
            lines.append(f"{o['node']} ({cpu_name(o)}): exit 0: "
                         f"{last_line(o['out']) or 'no output'}")
    return lines


def plan_copies(target, d, job, outcomes):
    """[(source, name under out)] of the copies to write; each outcome's
    "collected" (where its results are under out) and "read_from" (where they
    are read now)."""
    copies = []
    for o in outcomes:
        for ext in ("out", "err", "exit", "cpuinfo"):
            src = d / f"{job}-{o['node']}.{ext}"
            if lstat_mode(src) is not None and stat.S_ISREG(lstat_mode(src)):
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


def collect(args):
    jobs_dir = Path(args.jobs_dir or default_jobs_dir()).resolve()
    record = read_record(jobs_dir, args.job)
    job = record["job"]
    target = CollectOut(args.out, getattr(args, "force", False))
    out = target.out
    # every fixed target before anything is asked or written
    target.check_file(f"nodes-{job}.json", "node table")
    target.check_file(f"summary-{job}.txt", "summary")
    target.check_dir("logs")
    if record["command"][0] == "run":
        target.check_files_in(f"report-{job}", "report")
    tolerance = args.tolerance if args.tolerance is not None else DEFAULT_TOLERANCE
    record, _ = refresh(jobs_dir, record, args)
    outcomes = node_outcomes(jobs_dir, record)
    copies = plan_copies(target, job_dir(jobs_dir, job), job, outcomes)
    for src, name in copies:
        copy_left(src, target.path(name))
    for o in outcomes:
        if o.get("collected"):
            rel = os.path.relpath(o["collected"], out)
            staged = target.stage / rel if target.stage else None
            o["read_from"] = str(staged if staged and staged.exists() else o["collected"])
    models = {o["node"]: cpu_name(o) for o in outcomes}
    lines = [f"fleet job {job}: {' '.join(record['command'])}",
             f"cluster {record.get('conf')}, partition {record.get('partition')}"
             + (f", constraint {record['constraint']}" if record.get("constraint") else "")
             + (", exclusive nodes" if record.get("exclusive") else ", shared nodes")
             + f"; Slurm: {(record.get('slurm') or {}).get('JobState', 'state unknown')}"]
    report_paths, fit = [], None
    if record["command"][0] == "run":
        loaded = load_outputs(outcomes, "results")
        if loaded:
            own = own_counters(loaded)
            values = {n: node_values(obj, n, own.get(n)) for n, obj in loaded.items()}
            groups = agreement(values, models, tolerance)
            body = run_summary(groups, tolerance, own)
            fit = functools.partial(run_summary, groups, tolerance, own)
            shown = [o["node"] for o in outcomes if o["node"] in loaded]
            if args.report == "per-model" or (args.report == "auto"
                                              and len(shown) > REPORT_ALL_MAX):
                chosen = {representative(g, values): g["model"] for g in groups}
                shown = [n for n in shown if n in chosen]
                body += ["", f"report: one node per CPU model (the nearest its model's "
                             f"medians; --report all charts every node): "
                         + "; ".join(f"{chosen[n].split(' (')[0]} {n}" for n in shown)]
            files = {o["node"]: o.get("read_from") for o in outcomes}
            report_dir = target.path(f"report-{job}/index.md").parent
            report_paths = write_report([files[n] for n in shown], report_dir,
                                        getattr(args, "argv", ["fleet", "collect"]))
            relocate(report_dir / "merged.json", target.stage, out)
        else:
            body = ["no node's results came back: nothing to merge"]
    elif record["command"][0] == "compare":
        loaded = load_outputs(outcomes, "comparison")
        body = compare_summary(verdicts(loaded, models)) or ["no comparison came back"]
    else:
        body = other_summary(outcomes)
    ok = [o for o in outcomes if o["state"] == "ok"]
    lines.append(f"nodes: {len(ok)} of {len(outcomes)} answered"
                 + (f"; skipped at submission: "
                    + ", ".join(f"{n} ({w})" for n, w in record.get("skipped", []))
                    if record.get("skipped") else ""))
    lines += outcome_lines(outcomes, SUMMARY_NODES)
    ending = ["", f"report: {plot_path(out / f'report-{job}' / 'index.md')}"] \
        if report_paths else []
    over = len(lines) + 1 + len(body) + len(ending) - SUMMARY_LINES
    if fit and over > 0:
        # one screen: the table across the models gives up rows, down to a few
        table = fit(SUMMARY_ROWS)
        body = fit(max(SUMMARY_ROWS_LEAST, SUMMARY_ROWS - over)) + body[len(table):]
    lines += [""] + body + ending
    text = "\n".join(lines) + "\n"
    nodes_json = {"job": job, "command": record["command"], "slurm": record.get("slurm"),
                  "tolerance": tolerance,
                  "nodes": [{k: v for k, v in o.items() if k not in ("err", "out", "read_from")}
                            for o in outcomes]}
    target.path(f"nodes-{job}.json").write_text(json.dumps(nodes_json, indent=1) + "\n")
    target.path(f"summary-{job}.txt").write_text(text)
    target.publish()
    print(text, end="")
    bad = [o for o in outcomes if o["state"] != "ok"]
    if bad:
        print(f"fleet: {len(bad)} of {len(outcomes)} nodes gave no usable result "
              f"({hosts([o['node'] for o in bad])}); what came back is in {plot_path(out)}",
              file=sys.stderr)
        return 1
    return 0


def plot_path(path):
    rel = os.path.relpath(path)
    return str(Path(path).resolve()) if rel.startswith("..") else rel


def write_report(files, out_dir, argv):
    """`report` over the collected results files: the paths it wrote."""
    return report.write(files, out_dir, argv)


# ---- features -------------------------------------------------------------------------------

FEATURE_PROBE = ('echo "@node $SLURMD_NODENAME"; echo "@kernel $(uname -r)"; '
                 "awk 'NF == 0 { exit } { print }' /proc/cpuinfo")


def parse_probe(text):
    """{node: {"kernel", "cpuinfo"}} from `srun -l` output of FEATURE_PROBE
    (each line prefixed with its task number)."""
    tasks = {}
    for line in text.splitlines():
        label, sep, rest = line.partition(": ")
        if sep and label.strip().isdigit():
            tasks.setdefault(label.strip(), []).append(rest)
    out = {}
    for lines in tasks.values():
        node = next((x[6:].strip() for x in lines if x.startswith("@node ")), None)
        if not node:
            continue
        kernel = next((x[8:].strip() for x in lines if x.startswith("@kernel ")), None)
        out[node] = {"kernel": kernel,
                     "cpuinfo": "\n".join(x for x in lines if not x.startswith("@"))}
    return out


def feature_lines(nodes, probed):
    """The Features= line of each node: its features with the CPU-model one
    replaced by what its cpuinfo says (uarch.slug), and a comment naming the CPU."""
    cpu_words = fleet_slurm.cpu_features()
    lines = []
    for n in sorted(nodes, key=lambda n: hostlist.natural(n.get("NodeName"))):
        name = n.get("NodeName")
        have = fleet_slurm.features(n)
        if name not in probed:
            lines.append(f"# NodeName={name}: not probed (not usable or did not answer)")
            continue
        cpu = fleet_slurm.cpu_of(probed[name]["cpuinfo"])
        slug = fleet_slurm.feature_of(cpu)
        kept = [f for f in have if f not in cpu_words]
        new = ([slug] if slug else []) + kept
        label = uarch.label(cpu) if cpu else "no /proc/cpuinfo"
        note = "" if slug else "; unknown to core/uarch.py: no CPU-model feature"
        lines.append(f"NodeName={name} Features={','.join(new) or '(none)'}"
                     f"    # {label}, kernel {probed[name].get('kernel')}{note}"
                     + ("" if set(new) == set(have) else f" (now: {','.join(have) or 'none'})"))
    return lines


def features_cmd(args):
    cluster = cluster_of(args)
    nodes, partitions = cluster.nodes(), cluster.partitions()
    choice = choose(nodes, partitions, args.partition, None, "all")
    for name, why in choice["skipped"]:
        print(f"# skipping {name}: {why}", file=sys.stderr)
    names = choice["nodelist"]
    timeout = int(args.timeout or 60)
    cmd = ["srun", f"--partition={choice['partition']}", f"--nodes={len(names)}",
           f"--nodelist={','.join(names)}", "--ntasks-per-node=1", "--cpu-bind=none",
           f"--immediate={timeout}", "--label", "--job-name=vdsobench-features",
           "sh", "-c", FEATURE_PROBE]
    text = cluster.call(cmd, timeout=timeout + 60)
    probed = parse_probe(text)
    print("# vdsobench fleet features: each node's CPU model as a Slurm feature (the")
    print("# microarchitecture its results fingerprint names). Merge each line into the")
    print("# node's line in slurm.conf, then `scontrol reconfigure`; select with")
    print("# --constraint, e.g. zen5|sapphirerapids, or run on one of each: --one-per-feature.")
    for line in feature_lines([n for n in nodes if n.get("NodeName") in names], probed):
        print(line)
    missing = [n for n in names if n not in probed]
    if missing:
        print(f"fleet: no answer from {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


# ---- the command line -----------------------------------------------------------------------


def add_cluster_options(p):
    p.add_argument("--slurm-conf", metavar="FILE",
                   help="the cluster's slurm.conf (default: $SLURM_CONF, else "
                        f"{fleet_slurm.DEFAULT_CONF})")
    p.add_argument("--jobs-dir", metavar="DIR",
                   help="where jobs keep their files, on a file system the nodes share with "
                        "this machine (default results/fleet in this clone)")


def add_job_options(p):
    """The cluster and the nodes a job asks for: fleet run's and
    recipe patch-review --fleet's."""
    add_cluster_options(p)
    p.add_argument("--partition", metavar="P", type=PARTITION,
                   help="the partition (default: the cluster's)")
    p.add_argument("--constraint", metavar="FEATURES", type=fleet_slurm.argtype(
                       fleet_slurm.constraint),
                   help="Slurm features the nodes must have: zen5, zen5|sapphirerapids, a&b")
    p.add_argument("--nodes", metavar="N|all", type=node_count,
                   help="how many nodes (Slurm picks them), or all usable ones")
    p.add_argument("--one-per-feature", action="store_true",
                   help="one node of each CPU model (the features `fleet features` names)")
    p.add_argument("--exclusive", action=argparse.BooleanOptionalAction, default=True,
                   help="whole nodes, nothing else on them (default; --no-exclusive shares)")
    p.add_argument("--timeout", metavar="S", type=TIMEOUT, default=DEFAULT_TIMEOUT_S,
                   help=f"cancel the job if still pending after S seconds (default "
                        f"{DEFAULT_TIMEOUT_S}; {TIMEOUT.valid})")
    p.add_argument("--time", metavar="LIMIT", type=fleet_slurm.argtype(fleet_slurm.time_limit),
                   help="Slurm's time limit for the job (sbatch --time; default the "
                        "partition's)")
    p.add_argument("--node-tmp", metavar="DIR", default="/tmp",
                   type=fleet_slurm.argtype(fleet_slurm.node_path),
                   help="node-local directory the payload is copied to and unpacked in "
                        "(default /tmp; an absolute path of letters, digits, . _ + - /)")


def add_parser(sub):
    p = sub.add_parser(
        "fleet", help="the same measurement on every node (CPU model) of a Slurm cluster",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run one vdsobench command on many machines through Slurm: exclusive "
                    "nodes,\nnode features as CPU models, results merged by microarchitecture."
                    "\nSee the README's section \"Fleet runs on Slurm\".")
    fs = p.add_subparsers(dest="fleet_command", metavar="ACTION", title="actions")

    r = fs.add_parser(
        "run", help="submit one job: every chosen node runs the same command",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Submit one Slurm job in which every chosen node runs the same vdsobench\n"
                    "command from a bundle staged by srun --bcast; wait for it (unless\n"
                    "--no-wait) and say how each node did.",
        epilog="example:\n  scripts/vdsobench fleet run --nodes all -- run --variants "
               "'generic_*+rdtscp+always' --clocks monotonic\n"
               f"commands: {', '.join(labels.BUNDLE_COMMANDS)} (with their own options)")
    add_job_options(r)
    r.add_argument("--bundle", metavar="FILE.tar.gz",
                   help="stage this bundle (`vdsobench bundle`) instead of building one")
    r.add_argument("--no-wait", action="store_true", help="submit and return")
    r.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS",
                   help="the vdsobench command every node runs")
    r.set_defaults(func=run_fleet)

    s = fs.add_parser("status", help="the job's state and each node's",
                      description="The job's state (from Slurm while it remembers the job, "
                                  "else as recorded) and each node's: ok, failed with the "
                                  "reason, running, waiting. Exit 1 if a node failed.")
    add_cluster_options(s)
    s.add_argument("job", metavar="JOB", type=JOB, help="the job id fleet run printed")
    s.set_defaults(func=status)

    c = fs.add_parser(
        "collect", help="bring the nodes' results into one directory; merged report, summary",
        description="Copy each node's results into DIR as <job>-<node>-<cpu model>-<kernel>.json "
                    "(never over a different file), its output into DIR/logs; for run, the "
                    "merged report (DIR/report-JOB, as `report`); a one-screen summary "
                    "(DIR/summary-JOB.txt): which nodes answered, which failed and why, which "
                    "agreed within --tolerance per CPU model, the verdicts of compare per CPU "
                    "model. All of it is written, or none. Exit 1 if a node gave no usable "
                    "result (what came back is kept).")
    add_cluster_options(c)
    c.add_argument("job", metavar="JOB", type=JOB, help="the job id fleet run printed")
    c.add_argument("--out", required=True, metavar="DIR", help="the directory to collect into")
    c.add_argument("--force", action="store_true",
                   help="replace the job's summary, node table and report from an earlier "
                        "collect (regular files only; node copies are still never replaced)")
    c.add_argument("--report", choices=("auto", "all", "per-model"), default="auto",
                   help=f"the report's columns: every node, or the node of each CPU model "
                        f"nearest its model's medians (auto: every node up to "
                        f"{REPORT_ALL_MAX}, else per model)")
    c.add_argument("--tolerance", metavar="F", type=TOLERANCE,
                   help=f"nodes of one CPU model agree when each median is within this "
                        f"fraction of the model's (default {DEFAULT_TOLERANCE}; "
                        f"{TOLERANCE.valid})")
    c.set_defaults(func=collect)

    f = fs.add_parser("features",
                      help="print each node's CPU model as a Features= line for slurm.conf",
                      description="Ask every usable node of the partition for its /proc/cpuinfo "
                                  "(srun) and print, per node, the feature naming its CPU model "
                                  "(core/uarch.py, as results files name it) with the node's "
                                  "other features, as a line to merge into slurm.conf.")
    add_cluster_options(f)
    f.add_argument("--partition", metavar="P", type=PARTITION,
                   help="the partition (default: the cluster's)")
    f.add_argument("--timeout", metavar="S", type=TIMEOUT,
                   help="give up when the nodes are not free within S seconds (default 60)")
    f.set_defaults(func=features_cmd)

    fleet_local.add_parser(fs)
    p.set_defaults(func=lambda args: dispatch(args, p))


def dispatch(args, parser):
    if getattr(args, "fleet_command", None) is None:
        raise UsageError("fleet: an action is required: run, status, collect, features, "
                         "local-cluster (see fleet --help)")
    return args.func(args)

