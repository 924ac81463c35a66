"""Interleaved rounds: run the harness with --rounds and read its JSON lines.

Shared by `compare`, `gate` and `selftest-stats`: every subject of a clock x
mode x CPU group runs once per round (Williams order, same iteration count),
so round i of A pairs with round i of B.
"""

import io
import json
import os
import subprocess

from vdsobench_cli.cli import arch, build, confine, inputs, labels, lifecycle, safe_read
from vdsobench_cli.measure import cpu_lock, harness
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.core import limits, vocab

from reports import run_table

ROUNDS_LIMIT = inputs.LIMITS["results file"]


class Series:
    """One group's measurements: per (subject, copy), the values of each round."""

    def __init__(self, key, iterations):
        self.key = key  # a vocab.GroupKey
        self.iterations = iterations
        self.ns = {}  # (subject, copy) -> {round: ns/call}
        self.counters = {}  # (subject, copy) -> {round: {event: per call}}
        self.errors = {}  # (subject, copy) -> first error
        # the rounds' lost-CPU check (bench/lost_cpu.h): per (subject, copy),
        # {round: retries} and the rounds whose batch lost the CPU even so
        self.retries = {}
        self.disturbed = {}
        # the cold modes (bench/cold.h): per (subject, copy), {round: the batch's
        # "cold" record}: raw_ns (the calls with the bracket), bracket_ns (floor/empty
        # in the same round; ns = raw - bracket), the single calls' spread
        self.cold = {}
        # the footprint mode (bench/footprint.h): per (subject, copy), {round: the
        # batch's "footprint" record} (lines_displaced, line_ns, the chain's sets)
        self.footprint = {}

    @property
    def clock(self):
        return self.key.clock

    @property
    def mode(self):
        return self.key.mode

    @property
    def cpu(self):
        return self.key.cpu

    def subjects(self):
        return list(dict.fromkeys(s for s, _ in self.ns))

    def paired(self, a, b):
        """Per-round values of a and b, for the rounds where both ran."""
        sa, sb = self.ns.get(a, {}), self.ns.get(b, {})
        common = sorted(set(sa) & set(sb))
        return [sa[r] for r in common], [sb[r] for r in common]

    def paired_counter(self, a, b, event):
        ca, cb = self.counters.get(a, {}), self.counters.get(b, {})
        common = sorted(r for r in set(ca) & set(cb) if event in ca[r] and event in cb[r])
        return [ca[r][event] for r in common], [cb[r][event] for r in common]

    def lost(self, *who):
        """(batches retried, rounds disturbed) of these subjects over the rounds
        where all ran: a round is disturbed if any of their batches still lost
        the CPU."""
        common = set.intersection(*(set(self.ns.get(w, {})) for w in who)) if who else set()
        retried = sum(1 for w in who for r in common if self.retries.get(w, {}).get(r))
        disturbed = {r for w in who for r in common & self.disturbed.get(w, set())}
        return retried, len(disturbed)

    def rounds_lost(self):
        """(rounds measured, rounds in which some batch still lost the CPU)."""
        measured = set().union(*self.ns.values()) if self.ns else set()
        return len(measured), len(set().union(*self.disturbed.values()) & measured)

    def events(self):
        names = set()
        for per_round in self.counters.values():
            for counts in per_round.values():
                names |= set(counts)
        return sorted(names - set(run_table.HARNESS_COUNTERS))


def records(lines):
    """(line number, record) for each line of the harness's --rounds output."""
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as e:
            raise Failure(f"the harness's rounds output, line {n}: not JSON: {e}") from None


def parse(lines):
    """(harness context, [Series]) from the harness's --rounds output."""
    context, groups = None, {}
    for n, rec in records(lines):
        if "context" in rec:
            context = rec["context"]
        elif "round" not in rec:
            groups[rec["group"]] = Series(group_key(rec["group"], n), rec["iterations"])
        else:
            g = groups[rec["group"]]
            who = (rec["subject"], rec.get("copy", 0))
            if "error" in rec:
                g.errors.setdefault(who, rec["error"])
                continue
            g.ns.setdefault(who, {})[rec["round"]] = rec["ns_per_call"]
            if "cold" in rec:
                g.cold.setdefault(who, {})[rec["round"]] = rec["cold"]
            if "footprint" in rec:
                g.footprint.setdefault(who, {})[rec["round"]] = rec["footprint"]
            g.counters.setdefault(who, {})[rec["round"]] = rec.get("counters", {})
            # absent in rounds recorded before the check: nothing known lost
            g.retries.setdefault(who, {})[rec["round"]] = rec.get("retries", 0)
            if rec.get("disturbed"):
                g.disturbed.setdefault(who, set()).add(rec["round"])
    if context is None:
        raise Failure("the harness's rounds output has no context line")
    return context, list(groups.values())



def group_key(text, n):
    """The GroupKey of a group line's "group"; Failure for one the harness
    would not write."""
    try:
        return vocab.GroupKey.parse(text)
    except vocab.BadName as e:
        raise Failure(f"the harness's rounds output, line {n}: {e}") from None


def lost_cpu(context, groups, max_lost=limits.MAX_LOST):
    """{GroupKey: reason} for each group whose rounds lost the CPU too often to
    be believed (every batch of a round absorbs another task's time slices
    alike, so each ratio is pulled toward 1); empty when all may have verdicts."""
    retries = ((context or {}).get("lost_cpu") or {}).get("retries", limits.RETRIES)
    out = {}
    for g in groups:
        measured, disturbed = g.rounds_lost()
        why = limits.lost_reason(g.key, disturbed, measured, retries, max_lost)
        if why:
            out[g.key] = why
    return out


def subjects_of(binary, hargs):
    """The subjects a selection expands to, in the harness's order."""
    names, _ = harness.planned(binary, hargs)
    return list(dict.fromkeys(map(vocab.subject, names)))


def harness_args(patterns, args):
    """The harness's selection options: the variants, then args's (a
    harness.Selection, or compare's parsed options)."""
    return ["--variants", ",".join(patterns)] + harness.option_args(args, harness.SELECTION)


def measure(binary, hargs, rounds, batch_ms, copies=1, quiet=False):
    """Run the rounds; (harness context, [Series])."""
    with confine.scratch(prefix="vdsobench-rounds-") as tmp:
        out = os.path.join(tmp, "rounds.jsonl")
        cmd, env = cpu_lock.confined(
            [*binary, *hargs, "--rounds", str(rounds), "--batch-ms", str(batch_ms),
             "--copies", str(copies), "--out", out] + (["--quiet"] if quiet else []),
            write=[tmp])
        try:
            r = lifecycle.run(cmd, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE if quiet else None, text=True,
                              errors="replace", env=env)
        except OSError as e:
            raise Failure(f"cannot run {binary[-1]}: {e.strerror}") from None
        if r.returncode == 2:
            raise UsageError((r.stderr or "bad usage").strip().splitlines()[-1]
                             .removeprefix("vdsobench_bench: "))
        try:
            # the harness ran the trees' code: what it left is read as hostile
            with safe_read.open_regular(out, "the harness's rounds", ROUNDS_LIMIT,
                                        follow=False) as f:
                return parse(io.TextIOWrapper(f, errors="replace"))
        except (OSError, UsageError) as e:
            # its own line says why (a CPU held under --cpu-lock=fail, ...)
            said = (r.stderr or "").strip().splitlines()[-1:]
            raise Failure(said[0].removeprefix("vdsobench_bench: ") if r.returncode and said
                          else f"the harness wrote no rounds (exit {r.returncode}): "
                               f"{getattr(e, 'strerror', None) or e}") from None


def binary():
    """The harness's command line (build.program: under qemu-user for an emulated
    --arch; the i386 build's natively or not at all); callers put its options
    after it."""
    arch.timed_natively("this command")
    build.build([labels.BENCH])
    return build.program(labels.BENCH)
