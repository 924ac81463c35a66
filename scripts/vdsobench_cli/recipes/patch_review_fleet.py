"""`recipe patch-review --fleet`: the time on every chosen node of a Slurm
cluster, one column (or group of rows) per CPU model in the block.

The submit host has imported the tree and the patched tree (patch_review.py);
here it builds a bundle with both imports in it (`vdsobench bundle`: the
harness and verify carry every imported layout), submits one fleet job whose
nodes each run `review-node BEFORE AFTER` (commands/review_node.py: verify,
then the paired rounds with the node's own counter read; of kbuild's images
where the review measures those, --build image), waits for it, and
reads back each node's file. Those files are hostile input like any results
file: each is read by the safe reader within a cap, checked against
results/schema/review-node-v1 and the comparison schema, and must name the
layouts asked for; a node whose file fails any of that is a failed node,
named with why. reports/fleet_review.py pools the nodes of each CPU model and
says where the models disagree.
"""

import sys

from vdsobench_cli.cli import build, inputs, lifecycle
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.fleet import (batch, bundle_check, node_choice, options, outcomes as
                                 outcomes_mod, submit)
from vdsobench_cli.recipes import review_parts

from reports import fleet_review, fleet_summary, review as review_mod
from vdsobench_cli.core import limits, paired, text as text_mod

SCHEMA = build.ROOT / "results" / "schema" / "review-node-v1.schema.json"
WHO = "recipe patch-review --fleet"
# a node's exit status that still left a review: 0 (it passed verify and was
# timed) and 1 (the patched layout failed verify there: a finding, not a failure)
REVIEWED = (0, 1)


def check(args):
    """The cluster and the nodes asked for, before anything is imported or
    built: (jobs_dir, cluster); one line for a bad value."""
    return node_choice.check_request(options.JobRequest.from_args(args), WHO)


def progress(text):
    print(f"patch-review: {text}", file=sys.stderr, flush=True)


def node_command(before, after, args, parser, inline="always"):
    words = ["review-node", before, after]
    if inline != "always":  # kbuild's images of both trees, in the bundle
        words += ["--build", inline]
    if args.quick:
        words.append("--quick")
    if args.budget is not None:
        words += ["--budget", str(args.budget)]
    return batch.node_command(words, parser)


def make_bundle(tmp):
    """A bundle of this build, the imports in it; (path, its BUNDLE.json).
    bundle's line goes to stderr: stdout is the recipe's."""
    return bundle_check.built_bundle(tmp, say=sys.stderr)


def load_review(path, before, after, rc, inline="always"):
    """A node's review file as (review, comparison); UsageError saying what is
    wrong with it (inline: the build it was asked to review)."""
    from vdsobench_cli.measure import comparison_io
    problem = outcomes_mod.left_problem(path, "review file")  # a link or a FIFO a node left
    if problem:
        raise UsageError(problem)
    obj = inputs.read(path, "review file", allow=comparison_io.plot_input_constant)
    inputs.check(obj, SCHEMA, path, "review file")
    review, comparison = obj["review"], obj["comparison"]
    if (review["before"], review["after"]) != (before, after):
        raise UsageError(f"{path}: it reviews {review['before']} and {review['after']}, "
                         f"not {before} and {after}")
    if review.get("build", "always") != inline:
        raise UsageError(f"{path}: it reviews the {review.get('build', 'always')} build, "
                         f"not the {inline} one asked for")
    if bool(review["torn"]) != (rc == 1) or (comparison is None) != bool(review["torn"]):
        raise UsageError(f"{path}: its exit status ({rc}), verdict and rounds disagree")
    check_verify(review, path)
    if comparison is not None:
        comparison_io.check_comparison(comparison, path)
    return review, comparison


def check_verify(review, path):
    """The verify records are the four review-node writes (each tree with the
    fake counter and the node's own, nothing else), each a verdict, and the
    patched tree's fail exactly when the file says it tore: a file that says
    torn with every record PASS would show the patch as passing on that CPU."""
    from vdsobench_cli.core import vocab
    inline = review.get("build", "always")
    want = sorted((side, vocab.variant(review[side], c, inline))
                  for side in ("after", "before") for c in ("fake", review["counter"]))
    if sorted((r["side"], r["variant"]) for r in review["verify"]) != want:
        raise UsageError(f"{path}: its verify records are not each tree with the fake "
                         f"counter and {review['counter']}, once each")
    unjudged = next((r for r in review["verify"] if r["status"] not in review_parts.JUDGED),
                    None)
    if unjudged is not None:  # a verify that did not run is no tear
        raise UsageError(f"{path}: verify gave no verdict on {unjudged['variant']} "
                         f"({text_mod.printable(unjudged['status'], 40)})")
    torn = any(r["status"] in review_parts.TORE for r in review["verify"]
               if r["side"] == "after")
    if torn != bool(review["torn"]):
        raise UsageError(f"{path}: it says the patched tree "
                         f"{'tore' if review['torn'] else 'passed'}, its verify records "
                         f"that it {'tore' if torn else 'passed'}")


def verify_pair(review):
    """{"after": (ok, text), "before": (ok, text)} from a node's records: a
    side passes when every read of it does (the fake counter's and the
    node's own), with the checks either ran; else its first failure."""
    out = {}
    for side in ("after", "before"):
        recs = [r for r in review["verify"] if r["side"] == side]
        bad = next((r for r in recs if r["status"] != "PASS"), None)
        if bad is not None:
            out[side] = (False, text_mod.printable(bad["verdict"], 300))
        elif recs:
            ran = dict.fromkeys(c.get("name") for r in recs for c in r["checks"]
                                if c.get("ok") and not c.get("skipped"))
            out[side] = (True, text_mod.printable(f"PASS ({', '.join(map(str, ran))})", 300))
    return out


def node_rounds(review, comparison, path="review file"):
    """{(clock, mode): PairedRounds} of a node's comparison: each ns/call
    row's record, read back by the record's own reader (core/paired.py: its
    round numbers, times and counts checked). A row the lost rule refuses
    over its rounds is kept: reports/fleet_review.py applies the rule
    (rec.refused()) and says how many rows it left out; a row the node
    refused for another reason, or with no rounds, is left out. UsageError
    for rows the node's review cannot have: another pair of variants, a
    clock or mode vdsobench does not have, a clock and mode twice (on two
    CPUs), or more rows than the host pools (each row's rounds are read
    once)."""
    if comparison is None:
        return {}
    from reports import fleet_review
    from vdsobench_cli.core import vocab
    inline = review.get("build", "always")
    before = vocab.variant(review["before"], review["counter"], inline)
    after = vocab.variant(review["after"], review["counter"], inline)
    refused = comparison["meta"].get("refused", [])
    if not isinstance(refused, list) or not all(isinstance(r, str) for r in refused):
        raise UsageError(f"{path}: meta.refused: not a list of rows")
    rows = [r for r in comparison["rows"] if r.get("metric") == "ns/call"]
    if len(rows) > fleet_review.MAX_KEYS:
        raise UsageError(f"{path}: {len(rows)} rows, more than {fleet_review.MAX_KEYS}")
    rounds, seen = {}, set()
    for r in rows:
        clock, mode = r["clock"], r["mode"]
        if (r["baseline"], r["variant"]) != (before, after):
            raise UsageError(f"{path}: a row of {text_mod.printable(r['variant'], 80)} "
                             f"against {text_mod.printable(r['baseline'], 80)}, not "
                             f"{after} against {before}")
        if clock not in vocab.CLOCKS or mode not in vocab.BENCH_MODES:
            raise UsageError(f"{path}: a row of '{text_mod.printable(clock, 40)}/"
                             f"{text_mod.printable(mode, 40)}', not a clock and mode "
                             "vdsobench times")
        if (clock, mode) in seen:
            raise UsageError(f"{path}: {clock}/{mode} timed twice")
        seen.add((clock, mode))
        # "rounds", not the path: the node's line names it, and the reason fits
        rec = paired.PairedRounds.from_comparison(comparison, r, "rounds")
        if (r.get("refused") and not rec.refused()) or not rec.rounds:
            continue
        rounds[(clock, mode)] = rec
    return rounds


def node_inputs(outcomes, before, after, placed=None, inline="always"):
    """reports/fleet_review.py's node list from the job's outcomes. placed:
    the nodes Slurm ran the job on, where known; files in the job directory
    under another name (a node can write there) are no node's."""
    nodes = []
    for o in outcomes:
        n = {"node": o["node"], "cpu": fleet_summary.cpu_name(o) if o.get("cpu") else None,
             "counter": None, "kernel": o.get("kernel"), "hypervisor": None,
             "verify": {}, "rounds": {}, "failed": None}
        path = o.get("results")
        rc = o.get("rc")
        if placed and o["node"] not in placed:
            n["cpu"] = None
            n["failed"] = "not a node of the job (Slurm ran it elsewhere): its files not read"
        elif o["state"] in ("ok", "failed") and type(rc) is int and rc in REVIEWED and path:
            try:
                review, comparison = load_review(path, before, after, o["rc"], inline)
                rounds = node_rounds(review, comparison, path)
            except UsageError as e:
                n["failed"] = f"its review file is unusable: {e}"
            else:
                n["counter"] = review["counter"]
                n["hypervisor"] = review.get("hypervisor")
                n["verify"] = verify_pair(review)
                n["rounds"] = rounds
                if comparison is not None and not n["hypervisor"]:
                    n["hypervisor"] = comparison["meta"].get("hypervisor")
        else:
            n["failed"] = o.get("reason") or f"no review ({o['state']})"
        nodes.append(n)
    return nodes


def review(s, args, before, after, inline="always"):
    """The fleet's part of the block: reports/fleet_review.reduce()'s dict,
    with the job's id, directory and what was asked. inline: what the nodes
    verify and time, the rebuilds ("always") or kbuild's images ("image")."""
    jobs_dir, cluster = check(args)
    command, output = node_command(before, after, args, args.parser, inline)
    with lifecycle.temp_dir(prefix="vdsobench-review-") as tmp:
        progress("building the bundle the nodes run (the imports in it)")
        path, facts = make_bundle(tmp)
        job, record, d = submit.submit(options.JobRequest.from_args(args), cluster, jobs_dir,
                                       command, output, path, facts)
    progress(f"job {job} submitted: {' '.join(command)}; files in {d}")
    record = submit.wait(cluster, jobs_dir, record, args.timeout)
    outcomes = outcomes_mod.node_outcomes(jobs_dir, record)
    for line in fleet_summary.outcome_lines(outcomes, fleet_summary.SUMMARY_NODES):
        progress(line.strip())
    nodes = node_inputs(outcomes, before, after, record.get("nodes"), inline)
    reduced = fleet_review.reduce(nodes, review_mod.TARGET, limits.ALPHA)
    reduced.update(job=job, job_dir=str(d), asked=len(outcomes),
                   command=command, bundle=(facts.get("build") or {}).get("short"))
    return reduced
