"""What every node of a fleet job runs: the payload (a short shell script
with the bundle appended, which srun --bcast copies to each node), the batch
script sbatch runs, the node command and sbatch's options. Every value that
goes into a script or an option is checked by fleet_slurm's grammars first
and quoted."""

import os
import shlex
import shutil

from vdsobench_cli.cli import atomic, labels
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.fleet import fleet_slurm

PAYLOAD = "payload.run"
BATCH = "batch.sh"
BATCH_OUT = "batch.out"
# What a node runs: the bundle's commands. Those writing a file get --out.
FILE_OUTPUT = ("run", "compare", "review-node")
OUTPUTS = ("file", "none")  # the payload's OUTPUT argument


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


def sbatch_options(choice, request, jobs_dir):
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
    if request.constraint:
        opts.append(f"--constraint={s.checked(s.constraint, '--constraint', request.constraint)}")
    if request.exclusive:
        opts.append("--exclusive")
    if request.time:
        opts.append(f"--time={s.checked(s.time_limit, '--time', request.time)}")
    return opts
