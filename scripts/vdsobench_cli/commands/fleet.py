"""`fleet`: the same measurement on every CPU model of a Slurm cluster.

    fleet run [--partition P] [--constraint F] (--nodes N|all | --one-per-feature)
              [--no-exclusive] [--timeout S] -- COMMAND ARGS...
    fleet status JOB
    fleet collect JOB --out DIR
    fleet features
    fleet local-cluster up|down          (fleet/fleet_local.py)

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

This module parses and prints; the work is fleet/'s (options, batch,
records, node_choice, bundle_check, submit, outcomes, collect_out, collect,
features, fleet_local) and the summaries reports/fleet_summary.py's.
"""

import argparse
import sys
import time

from vdsobench_cli.cli import labels
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.fleet import (batch, collect as collect_mod, features as features_mod,
                                 fleet_local, node_choice, options, outcomes,
                                 records, submit)

from reports import fleet_summary as summary


def run_fleet(args):
    command, output = batch.node_command(args.command, args.parser)
    request = options.JobRequest.from_args(args)
    jobs_dir, cluster = node_choice.check_request(request)
    job, record, d = submit.submit(request, cluster, jobs_dir, command, output)
    print(f"fleet: job {job} submitted: {' '.join(command)} on "
          + (", ".join(record["nodes"]) if record["nodes"]
             else f"{record['requested']['count']} nodes")
          + f" ({'exclusive' if args.exclusive else 'shared'}); files in {d}", flush=True)
    if args.no_wait:
        print(f"fleet: follow it with `scripts/vdsobench fleet status {job}`; collect with "
              f"`scripts/vdsobench fleet collect {job} --out DIR`")
        return 0
    started = time.monotonic()
    record = submit.wait(cluster, jobs_dir, record, args.timeout)
    found = outcomes.node_outcomes(jobs_dir, record)
    for line in summary.outcome_lines(found, summary.SUMMARY_NODES):
        print(line)
    failed = [o for o in found if o["state"] != "ok"]
    print(f"fleet: job {job} {record.get('slurm', {}).get('JobState', 'ended')} in "
          f"{time.monotonic() - started:.1f} s: {len(found) - len(failed)} of "
          f"{len(found)} nodes ok; collect with `scripts/vdsobench fleet collect {job} "
          f"--out DIR`")
    return 1 if failed else 0


def status(args):
    jobs_dir = options.jobs_path(args.jobs_dir)
    record, info = submit.refresh(jobs_dir, records.read_record(jobs_dir, args.job),
                                  args.slurm_conf)
    slurm = record.get("slurm") or {}
    print(f"fleet: job {record['job']}: {' '.join(record['command'])}; "
          f"{slurm.get('JobState', 'PENDING' if info else 'state unknown')}"
          + (f" ({slurm['Reason']})" if slurm.get("Reason") not in (None, "None") else "")
          + (f"; {record['cancelled']}" if record.get("cancelled") else ""))
    found = outcomes.node_outcomes(jobs_dir, record)
    for line in summary.outcome_lines(found, summary.SUMMARY_NODES):
        print(line)
    return 1 if any(o["state"] in summary.BAD_STATES for o in found) else 0


def collect(args):
    done = collect_mod.collect(collect_mod.CollectRequest.from_args(args))
    print(done.text, end="")
    bad = done.failed()
    if bad:
        print(f"fleet: {len(bad)} of {len(done.outcomes)} nodes gave no usable result "
              f"({summary.hosts([o['node'] for o in bad])}); what came back is in "
              f"{collect_mod.plot_path(done.out)}", file=sys.stderr)
        return 1
    return 0


def features(args):
    cluster = node_choice.cluster_of(args.slurm_conf)
    nodes = cluster.nodes()
    choice = node_choice.choose(nodes, cluster.partitions(), args.partition, None, "all")
    for name, why in choice["skipped"]:
        print(f"# skipping {name}: {why}", file=sys.stderr)
    names = choice["nodelist"]
    probed = features_mod.probe(cluster, choice, int(args.timeout or 60))
    print("# vdsobench fleet features: each node's CPU model as a Slurm feature (the")
    print("# microarchitecture its results fingerprint names). Merge each line into the")
    print("# node's line in slurm.conf, then `scontrol reconfigure`; select with")
    print("# --constraint, e.g. zen5|sapphirerapids, or run on one of each: --one-per-feature.")
    for line in features_mod.feature_lines([n for n in nodes if n.get("NodeName") in names],
                                           probed):
        print(line)
    missing = [n for n in names if n not in probed]
    if missing:
        print(f"fleet: no answer from {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


def local_cluster(args):
    if args.action == "up":
        fleet_local.up(args.dir)
        return 0
    return fleet_local.down(args.dir)


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
    options.add_job_options(r)
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
    options.add_cluster_options(s)
    s.add_argument("job", metavar="JOB", type=options.JOB, help="the job id fleet run printed")
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
    options.add_cluster_options(c)
    c.add_argument("job", metavar="JOB", type=options.JOB, help="the job id fleet run printed")
    c.add_argument("--out", required=True, metavar="DIR", help="the directory to collect into")
    c.add_argument("--force", action="store_true",
                   help="replace the job's summary, node table and report from an earlier "
                        "collect (regular files only; node copies are still never replaced)")
    c.add_argument("--report", choices=("auto", "all", "per-model"), default="auto",
                   help=f"the report's columns: every node, or the node of each CPU model "
                        f"nearest its model's medians (auto: every node up to "
                        f"{collect_mod.REPORT_ALL_MAX}, else per model)")
    c.add_argument("--tolerance", metavar="F", type=options.TOLERANCE,
                   help=f"nodes of one CPU model agree when each median is within this "
                        f"fraction of the model's (default {options.DEFAULT_TOLERANCE}; "
                        f"{options.TOLERANCE.valid})")
    c.set_defaults(func=collect)

    f = fs.add_parser("features",
                      help="print each node's CPU model as a Features= line for slurm.conf",
                      description="Ask every usable node of the partition for its /proc/cpuinfo "
                                  "(srun) and print, per node, the feature naming its CPU model "
                                  "(core/uarch.py, as results files name it) with the node's "
                                  "other features, as a line to merge into slurm.conf.")
    options.add_cluster_options(f)
    f.add_argument("--partition", metavar="P", type=options.PARTITION,
                   help="the partition (default: the cluster's)")
    f.add_argument("--timeout", metavar="S", type=options.TIMEOUT,
                   help="give up when the nodes are not free within S seconds (default 60)")
    f.set_defaults(func=features)

    add_local_cluster_parser(fs)
    p.set_defaults(func=lambda args: dispatch(args, p))


def add_local_cluster_parser(sub):
    p = sub.add_parser(
        "local-cluster", help="a real two-node Slurm on this machine, for tests and trying fleet",
        description="up: munged, slurmctld and two slurmd (n1, n2) on the loopback, each node "
                    "with a CPU of its own and features <this CPU model>,local_<node>; all "
                    "state in one directory; prints the `export SLURM_CONF=...` line. down: "
                    "cancels its jobs, stops its daemons and removes the directory. Needs root; "
                    "installs slurmctld, slurmd, slurm-client and munge when missing.")
    p.add_argument("action", choices=("up", "down"), help="start or stop the cluster")
    p.add_argument("--dir", metavar="DIR",
                   help=f"the cluster's directory (default {fleet_local.default_dir()})")
    p.set_defaults(func=local_cluster)


def dispatch(args, parser):
    if getattr(args, "fleet_command", None) is None:
        raise UsageError("fleet: an action is required: run, status, collect, features, "
                         "local-cluster (see fleet --help)")
    return args.func(args)
