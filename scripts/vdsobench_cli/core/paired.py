"""One row's paired rounds, from the harness's output to the block, the
comparison's file and a cluster node's: one record, one rule, one statistic.

A PairedRounds holds what two subjects (before, after: copy 0 each) of one
group (a vocab.GroupKey) measured in the rounds both ran: the round numbers,
ints always and ascending, each side's ns per call, the rounds in which a
batch of either still lost the CPU (bench/lost_cpu.h), the batches retried,
and the iteration count. It is built once from a measure/rounds.py Series
(from_series reads its fields: core imports no measure), grows a chunk at a
time (extend: the chunk's rounds renumbered after ours), and refused() is
the lost-CPU rule (core/limits.py) over every round it holds, the rounds a
verdict uses, never per chunk. Its row, the statistic once per verdict, is
reports/review.py's paired_row(rec) (core imports no reports).

to_json()/from_json() are its file form (patch-review.json, a node's review
file): from_json is the one validator of it, and a file's record is
hostile input (one line, UsageError: exit 2 at a command). comparison-v1's
"rounds" part ({"clock/mode/cpuN": {"subject#0": {round: ns}}}) and each
ns/call row's "lost", "retries", "refused" and "disturbed" are written by
comparison_part()/row_part() and read back by from_comparison() alone.
"""

import dataclasses
import math
import re
from typing import Optional

from vdsobench_cli.core import limits, vocab
from vdsobench_cli.core.errors import UsageError
from vdsobench_cli.core.text import printable

# a round's number as a comparison's file spells it: a few plain digits (int()
# takes " 1", "1_0" and "٣", and a 5000-digit key raises past Python's limit)
ROUND = re.compile(r"(0|[1-9][0-9]{0,8})")
MAX_ROUND = 10 ** 9 - 1
# a clock's or a mode's name in a file (vocab.CLOCKS, vocab.BENCH_MODES and
# the harness's others: "time", "cold-l2")
WORD = re.compile(r"[a-z][a-z0-9_-]{0,39}")
FIELDS = ("key", "before", "after", "rounds", "before_ns", "after_ns", "disturbed",
          "retried", "iterations")
NAME_LIMIT = 200


@dataclasses.dataclass(frozen=True)
class PairedRounds:
    key: vocab.GroupKey
    before: str
    after: str
    rounds: tuple = ()
    before_ns: tuple = ()
    after_ns: tuple = ()
    disturbed: frozenset = frozenset()
    retried: int = 0
    iterations: Optional[int] = None

    @classmethod
    def from_series(cls, series, before, after):
        """The record of subjects before and after in a rounds.Series."""
        a, b = series.ns.get((before, 0), {}), series.ns.get((after, 0), {})
        common = sorted(set(a) & set(b))
        both = set(common)
        disturbed = frozenset(r for who in ((before, 0), (after, 0))
                              for r in both & series.disturbed.get(who, set()))
        retried, _ = series.lost((before, 0), (after, 0))
        return cls(series.key, before, after, tuple(common), tuple(a[r] for r in common),
                   tuple(b[r] for r in common), disturbed, retried, series.iterations)

    @property
    def lost(self):
        """Rounds in which a batch of either side still lost the CPU."""
        return len(self.disturbed)

    def extend(self, more):
        """This record with another chunk's rounds appended, renumbered after
        ours (each chunk numbers its rounds from 0); ValueError for another
        row's record."""
        if (more.key, more.before, more.after) != (self.key, self.before, self.after):
            raise ValueError(f"{more.key} {more.before} -> {more.after}: not the rounds of "
                             f"{self.key} {self.before} -> {self.after}")
        offset = self.rounds[-1] + 1 if self.rounds else 0
        return dataclasses.replace(
            self, rounds=self.rounds + tuple(offset + r for r in more.rounds),
            before_ns=self.before_ns + more.before_ns, after_ns=self.after_ns + more.after_ns,
            disturbed=self.disturbed | {offset + r for r in more.disturbed},
            retried=self.retried + more.retried)

    def refused(self, max_lost=limits.MAX_LOST, retries=limits.RETRIES):
        """Why these rounds get no verdict (the CPU lost in too many of
        them), or None."""
        return limits.lost_reason(self.key, self.lost, len(self.rounds), retries, max_lost)

    def to_json(self):
        return {"key": str(self.key), "before": self.before, "after": self.after,
                "rounds": list(self.rounds), "before_ns": list(self.before_ns),
                "after_ns": list(self.after_ns), "disturbed": sorted(self.disturbed),
                "retried": self.retried, "iterations": self.iterations}

    @classmethod
    def from_json(cls, obj, where="paired rounds"):
        """The record to_json() wrote, checked: UsageError, one line, for
        anything else."""
        if not isinstance(obj, dict) or set(obj) != set(FIELDS):
            raise UsageError(f"{where}: not a record of paired rounds (the fields "
                             f"{', '.join(FIELDS)})")
        key = _key(obj["key"], where)
        where = f"{where} {key}"
        rounds = _rounds(obj["rounds"], where)
        before_ns = _times(obj["before_ns"], len(rounds), f"{where}: before_ns")
        after_ns = _times(obj["after_ns"], len(rounds), f"{where}: after_ns")
        disturbed = _rounds(obj["disturbed"], f"{where}: disturbed")
        if not set(disturbed) <= set(rounds):
            raise UsageError(f"{where}: disturbed: a round it did not measure")
        return cls(key, _name(obj["before"], f"{where}: before"),
                   _name(obj["after"], f"{where}: after"), rounds, before_ns, after_ns,
                   frozenset(disturbed), _count(obj["retried"], f"{where}: retried"),
                   _iterations(obj["iterations"], where))

    def comparison_part(self):
        """comparison-v1's "rounds" of this row: {key: {subject#0: {round: ns}}}."""
        return {str(self.key): {subject_key(self.before): dict(zip(self.rounds, self.before_ns)),
                                subject_key(self.after): dict(zip(self.rounds, self.after_ns))}}

    def row_part(self):
        """What an ns/call row of comparison-v1 says of its rounds beside the
        statistic: batches retried, rounds lost, the lost rule's reason."""
        return {"retries": self.retried, "lost": self.lost, "refused": self.refused(),
                "disturbed": sorted(self.disturbed)}

    @classmethod
    def from_comparison(cls, c, row, where="comparison"):
        """The record of an ns/call row of comparison c (a dict as compare
        wrote it, or as read back from its file: round numbers then text)."""
        key = vocab.GroupKey.of_row(row)
        before, after = row["baseline"], row["variant"]
        by = (c.get("rounds") or {}).get(str(key)) or {}
        if not isinstance(by, dict):
            raise UsageError(f"{where} {key}: not a mapping of subjects")
        a = _by_round(by.get(subject_key(before), {}), f"{where} {key}")
        b = _by_round(by.get(subject_key(after), {}), f"{where} {key}")
        common = sorted(set(a) & set(b))
        disturbed = row.get("disturbed") or []
        if not isinstance(disturbed, list) or not all(
                isinstance(r, int) and not isinstance(r, bool) for r in disturbed):
            raise UsageError(f"{where} {key}: disturbed: not a list of rounds")
        return cls.from_json({"key": str(key), "before": before, "after": after,
                              "rounds": common, "before_ns": [a[r] for r in common],
                              "after_ns": [b[r] for r in common],
                              "disturbed": sorted(set(disturbed) & set(common)),
                              "retried": row.get("retries") or 0,
                              "iterations": _meta_iterations(c, key)}, where)


def subject_key(subject, copy=0):
    """A subject's key in a comparison's "rounds" (and "footprint"): "name#copy"."""
    return f"{subject}#{copy}"


def group_in(part, clock, mode):
    """The first key of part (a comparison's "rounds" or "footprint":
    {"clock/mode/cpuN": ...}) whose group is clock x mode, or None."""
    for text in part:
        try:
            if vocab.GroupKey.parse(text).row == (clock, mode):
                return text
        except vocab.BadName:
            continue
    return None


def _meta_iterations(c, key):
    meta = c.get("meta") if isinstance(c.get("meta"), dict) else {}
    by = meta.get("iterations") if isinstance(meta.get("iterations"), dict) else {}
    return by.get(str(key))


def comparison_rounds(records):
    """comparison-v1's "rounds" of several records (a baseline shared by
    several rows is written once)."""
    out = {}
    for rec in records:
        for key, subjects in rec.comparison_part().items():
            out.setdefault(key, {}).update(subjects)
    return out


def _key(value, where):
    """A GroupKey from a file: the harness's form, its clock and mode plain
    words."""
    try:
        if isinstance(value, str):
            key = vocab.GroupKey.parse(value)
            if WORD.fullmatch(key.clock) and WORD.fullmatch(key.mode):
                return key
    except vocab.BadName:
        pass
    raise UsageError(f"{where}: key '{printable(value, 60)}' is not {vocab.GROUP_FORM}")


def _name(value, where):
    if not isinstance(value, str) or not value or len(value) > NAME_LIMIT:
        raise UsageError(f"{where}: not a subject's name")
    return value


def _count(value, where):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ROUND:
        raise UsageError(f"{where}: not a count")
    return value


def _iterations(value, where):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{where}: iterations: not a count of calls")
    return value


def _rounds(values, where):
    """Round numbers: ints, ascending, at most MAX_ROUNDS of them."""
    if not isinstance(values, (list, tuple)):
        raise UsageError(f"{where}: not a list of rounds")
    if len(values) > limits.MAX_ROUNDS:
        raise UsageError(f"{where}: {len(values)} rounds, more than {limits.MAX_ROUNDS}")
    for r in values:
        if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r <= MAX_ROUND:
            raise UsageError(f"{where}: round '{printable(r, 20)}' is not a round number")
    if any(a >= b for a, b in zip(values, values[1:])):
        raise UsageError(f"{where}: the rounds are not in ascending order, each once")
    return tuple(values)


def _times(values, n, where):
    """n times per call, each one a call can take."""
    if not isinstance(values, (list, tuple)):
        raise UsageError(f"{where}: not a list of times")
    if len(values) != n:
        raise UsageError(f"{where}: {len(values)} times for {n} rounds, not paired")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise UsageError(f"{where}: a time that is not a number")
        if not limits.MIN_NS <= v <= limits.MAX_NS:
            raise UsageError(f"{where}: a time that is not between {limits.MIN_NS:g} and "
                             f"{limits.MAX_NS:g} ns")
    return tuple(float(v) for v in values)


def _by_round(by_round, where):
    """{round: ns} of one subject, the round numbers ints (a file's are text)."""
    if not isinstance(by_round, dict):
        raise UsageError(f"{where}: not a mapping of rounds")
    if len(by_round) > limits.MAX_ROUNDS:
        raise UsageError(f"{where}: {len(by_round)} rounds, more than {limits.MAX_ROUNDS}")
    out = {}
    for k, v in by_round.items():
        if isinstance(k, str) and ROUND.fullmatch(k):
            k = int(k)
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= MAX_ROUND:
            raise UsageError(f"{where}: round '{printable(k, 20)}' is not a round number")
        out[k] = v
    return out
