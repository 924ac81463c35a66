"""patch-review's timed rounds: one PairedRounds per row (core/paired.py)
from the pilot to the block and comparison.json.

A pilot of review.PILOT_ROUNDS paired rounds (or --quick's) gives each row's
noise to review.plan, which sizes the second stage; the second stage runs in
a few chunks so that the time budget holds on a machine slower than the
pilot said, each chunk's records appended to the rows' (extend(): renumbered
after the ones before). Only then is each row judged, once: its lost-CPU
rule over every round the verdict uses (refused()) and its statistic
(row()). The block's rows and comparison.json's ns/call rows are made from
those same judgements (Timed), so the two never disagree.

A chunk measures rounds only (measure/compare.py measure(): no statistic),
and the verdict uses the second stage's rounds alone (reports/review.py: the
pilot sizes it, so its interval keeps its coverage).
"""

import dataclasses
import time

from vdsobench_cli.cli import ranged
from vdsobench_cli.core import limits
from vdsobench_cli.measure import compare

from reports import review

# Timed: hot only (patch_review.py says why pressure is not)
MODES = ("hot",)
# seconds the timed rounds may take, pilot included; --quick's is for CI
BUDGET_S, QUICK_BUDGET_S = 900, 60


def add_budget_argument(p):
    """--budget, for recipe patch-review and review-node alike."""
    p.add_argument("--budget", type=ranged.BUDGET_S, metavar="SECONDS",
                   help=f"patch-review: the seconds its timed rounds may take, pilot "
                        f"included, builds not; the vdso32's, timed natively, as many "
                        f"again (default {BUDGET_S}, with --quick "
                        f"{QUICK_BUDGET_S}; valid: {ranged.BUDGET_S.valid})")


@dataclasses.dataclass(frozen=True)
class Selection:
    """The harness's selection of a review's rounds (rounds.harness_args
    reads these attributes, lists as run's options are; the others are the
    harness's defaults)."""
    clocks: list
    modes: list = dataclasses.field(default_factory=lambda: list(MODES))


@dataclasses.dataclass
class Timed:
    """The second stage, judged: the first chunk (its machine and groups),
    each row's record of every round and its row from review.row."""
    first: compare.Measured
    records: dict
    rows: dict
    comparisons: int
    rounds: int
    alpha: float = limits.ALPHA

    def comparison(self):
        """comparison.json: the block's numbers and verdicts, row for row."""
        return compare.review_comparison(self.first, self.records, self.rows, self.alpha,
                                         self.comparisons, self.rounds)

    def block_rows(self):
        """[(clock, mode, review row)] for the block (reports/cover_letter.py)."""
        return [(*key.row, self.rows[key]) for key in self.records]

    def lost(self):
        """[(rounds lost, rounds)] of each row, for the block's notes."""
        return [(rec.lost, len(rec.rounds)) for rec in self.records.values()]


def measure(s, variants, clocks, n):
    """n paired rounds of before and after on clocks: (Measured, {GroupKey:
    PairedRounds})."""
    m = compare.measure(variants, Selection(list(clocks)), n, s.batch_ms)
    return m, m.records()


def extended(records, more):
    """Each row's record with a chunk's appended (a row the chunk lacks
    keeps what it has)."""
    out = dict(records)
    for key, rec in more.items():
        out[key] = out[key].extend(rec) if key in out else rec
    return out


def staged_rounds(s, variants, clocks, p, deadline, progress_fn, chunks=4):
    """The second stage's rounds, in a few chunks so that the time budget is
    kept on a machine slower than the pilot said: when the deadline passes
    the rounds measured so far are the stage. Stopping on the clock, never on
    what the rounds say, keeps the interval's coverage. (first chunk's
    Measured, {GroupKey: PairedRounds})."""
    want = p["rounds"]
    step = max(1, -(-want // chunks))
    first, records, done = None, {}, 0
    while done < want:
        n = min(step, want - done)
        m, more = measure(s, variants, clocks, n)
        first = first or m
        records = extended(records, more)
        done += n
        progress_fn(f"{done} of {want} rounds")
        if done < want and time.monotonic() > deadline:
            p["stopped"] = f"the time budget ran out after {done} of {want} rounds"
            p["capped"] = True
            progress_fn(p["stopped"])
            break
    p["rounds"] = done
    return first, records


def judged(records, target=review.TARGET, alpha=limits.ALPHA):
    """{GroupKey: review row}: each row's lost rule and statistic, once,
    over all its rounds; corrected over the rows."""
    comparisons = max(1, len(records))
    return {key: review.paired_row(rec, target, alpha, comparisons) for key, rec in records.items()}


def timed_rounds(s, before, after, clocks, progress_fn):
    """The two-stage measurement (what a cluster's node runs too: no
    valgrind there); (Timed, plan, seconds). s: what it needs of a session:
    quick, rounds and batch_ms."""
    budget = s.budget_s or (QUICK_BUDGET_S if s.quick else BUDGET_S)
    pilot_n = s.rounds if s.quick else review.PILOT_ROUNDS
    # the build is not the pilot's time, nor the budget's: counted, it made
    # a 152 s pilot after an import, and 1 round of the 7 wanted
    compare.prepare()
    progress_fn(f"pilot: {pilot_n} paired rounds of {len(clocks) * len(MODES)} rows")
    t0 = time.monotonic()
    _, pilot = measure(s, [before, after], clocks, pilot_n)
    spent = time.monotonic() - t0
    per_round = max(spent / max(1, pilot_n), 1e-3)
    room = max(0, int((budget - spent) / per_round))
    pilots = {"/".join(k.row): (list(r.before_ns), list(r.after_ns)) for k, r in pilot.items()}
    p = review.plan(pilots, review.TARGET, limits.ALPHA, max(1, len(pilot)),
                    max_rounds=max(room, 1))
    p["pilot_rounds"], p["budget_s"] = pilot_n, budget
    progress_fn(f"pilot took {spent:.0f} s; the target +-{review.TARGET * 100:g}% needs "
                f"{max(p['needed'].values())} rounds; measuring {p['rounds']}"
                + (" (the time budget's limit)" if p["capped"] else ""))
    first, records = staged_rounds(s, [before, after], clocks, p, t0 + budget, progress_fn)
    t = Timed(first, records, judged(records), max(1, len(records)), p["rounds"])
    return t, p, time.monotonic() - t0
