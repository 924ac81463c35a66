"""The patch-review table's statistics: one statistic per row, and when to stop.

A row of the cover-letter table says before, after, the ratio with its
interval, and a verdict. Printed as three separate estimates (two medians and
the median of paired ratios) they can disagree: 25.5 -> 27.7 beside -0.2%.
Here every number of a row comes from the same paired rounds: the ratio is
the median of the per-round ratios after_i / before_i with its order-statistic
interval (stats.paired), before is the median of before's rounds, and after
is *defined* as before x ratio, so after / before is the ratio to the digit.

When to stop: a two-stage design (Stein's). A pilot of PILOT_ROUNDS paired
rounds estimates the noise of the log ratios (robustly, stats.robust_sigma_log);
from it comes the number of second-stage rounds whose interval is expected to
be within +-target of the ratio. The verdict uses the second stage's rounds
only: their number depends on the pilot alone, so the interval is a fixed-n
interval of fresh data and keeps its coverage (the sign-test interval is
distribution-free). Looking at the data as it arrives and stopping once the
interval excludes 1 ("peeking") would not: review_test.py shows both on
synthetic data.

A row is complete when its interval excludes 1 (faster, slower), or when it
contains 1 and is at most +-target wide (no difference, and one of about
twice the target would have been seen). Otherwise it has no verdict, and the
block says "incomplete".
"""

import math
import statistics

from vdsobench_cli.core import limits, stats

# The interval half-width a row must reach to say "no difference": +-0.5%.
TARGET = 0.005
PILOT_ROUNDS = 20
# The interval is random and the pilot's noise estimate too: with 2.5x the
# normal-theory rounds, 85-90% of rows reach +-target (20-round pilot, 2%
# lognormal noise with 2% outliers; review_test.py).
INFLATE = 2.5
INCOMPLETE = "incomplete"
# the reason a row without a verdict gives in the block (the record's
# refused() has the whole sentence)
LOST = "lost the CPU too often"


def _z(alpha, comparisons):
    return statistics.NormalDist().inv_cdf(1 - alpha / (2 * max(1, comparisons)))


def rounds_for(sigma_log, target=TARGET, alpha=limits.ALPHA, comparisons=1):
    """Rounds whose median-ratio interval is expected to be +-target wide at
    this noise: the median's standard error is sqrt(pi/2) sigma / sqrt(n) for
    normal log ratios, inflated by INFLATE. At least stats.min_rounds()."""
    if target <= 0:
        raise ValueError(f"target {target}: must be > 0")
    least = stats.min_rounds(stats.corrected_confidence(alpha, comparisons))
    if sigma_log is None:
        return least
    half = math.log1p(target)
    n = math.ceil(INFLATE * (_z(alpha, comparisons) * math.sqrt(math.pi / 2) * sigma_log
                             / half) ** 2)
    return max(least, n)


def ratios(before, after):
    return [stats._ratio(float(b), float(a)) for b, a in zip(before, after)]


def plan(pilots, target=TARGET, alpha=limits.ALPHA, comparisons=None, max_rounds=400):
    """The second stage's size for a set of rows measured together, from each
    row's pilot rounds {key: (before, after)}: the largest any row needs,
    capped at max_rounds (the time budget). Returns {"rounds", "capped",
    "sigma_log": {key: sigma}, "needed": {key: n}}."""
    m = comparisons or max(1, len(pilots))
    sigma = {k: stats.robust_sigma_log(ratios(b, a)) for k, (b, a) in pilots.items()}
    needed = {k: rounds_for(s, target, alpha, m) for k, s in sigma.items()}
    want = max(needed.values(), default=stats.min_rounds())
    return {"rounds": min(want, max_rounds), "capped": want > max_rounds, "sigma_log": sigma,
            "needed": needed}


def row(before, after, target=TARGET, alpha=limits.ALPHA, comparisons=1, refused=None):
    """One table row from paired rounds: {"before", "after", "ratio", "ci_low",
    "ci_high", "verdict", "complete", "reason", "n", "detectable", and the
    test's "p", "p_adjusted" and "method"}. before and
    after are the rounds' ns; refused, a reason the rounds cannot be trusted
    (the CPU was lost too often), makes the row incomplete whatever it says.
    detectable is the smallest slowdown (a ratio > 1) these rounds detect with
    80% power at their noise, never below their resolution (stats.resolution),
    or None."""
    res = stats.paired(before, after, alpha=alpha, comparisons=comparisons)
    ratio = res["ratio"]
    base = res["base_median"]
    out = {"before": base, "after": None if base is None or ratio is None else base * ratio,
           "ratio": ratio, "ci_low": res["ci_low"], "ci_high": res["ci_high"],
           "n": res["n"], "confidence": res["confidence"], "verdict": INCOMPLETE,
           "complete": False, "reason": None, "detectable": None, "p": res["p"],
           "p_adjusted": res["p_adjusted"], "method": res["method"]}
    sigma = stats.robust_sigma_log(ratios(before, after))
    if sigma is not None and res["n"]:
        mde = stats.minimum_detectable_effect(res["n"], max(sigma, 1e-9), alpha, comparisons)
        # never finer than a round can show (quantised times: most ratios 1)
        out["detectable"] = mde and max(mde, 1 + stats.resolution(before, after))
    lo, hi = res["ci_low"], res["ci_high"]
    if refused:
        out["reason"] = refused
    elif lo is None:
        out["reason"] = res["note"]
    elif res["verdict"] != stats.NO_DIFFERENCE:
        out.update(verdict=res["verdict"], complete=True)
    elif (hi - lo) / 2 <= target:
        out.update(verdict=stats.NO_DIFFERENCE, complete=True)
    else:
        out["reason"] = (f"interval {percent(lo)}..{percent(hi)} is wider than "
                         f"+-{target * 100:g}%")
    return out


def paired_row(rec, target=TARGET, alpha=limits.ALPHA, comparisons=1,
               max_lost=limits.MAX_LOST):
    """row() of one record's rounds (core/paired.py, a PairedRounds): the
    statistic, computed once for the verdict it gives; no verdict (LOST)
    when its lost rule refuses them."""
    return row(list(rec.before_ns), list(rec.after_ns), target, alpha, comparisons,
               LOST if rec.refused(max_lost) else None)


def percent(ratio, digits=1):
    """A ratio as a signed change: 1.012 -> '+1.2%'."""
    return f"{(ratio - 1) * 100:+.{digits}f}%"


def ns(x):
    """A row's ns/call as the block shows it: one decimal, '-' without one."""
    return "-" if x is None else f"{x:.1f}"


def change(r):
    """A row's change with digits(r) decimals, '-' without a ratio."""
    return "-" if r["ratio"] is None else percent(r["ratio"], digits(r))


def digits(r):
    """Decimals a row's change and interval are shown with: 1, or 2 where the
    interval lies within +-0.1% (so that a significant change of +0.03% is
    never shown as "+0.0% [+0.0,+0.0] slower")."""
    lo, hi = r.get("ci_low"), r.get("ci_high")
    if lo is None or hi is None:
        return 1
    return 2 if max(abs(lo - 1), abs(hi - 1)) < 0.001 else 1


def interval(r, n=None):
    """'[-0.3,+1.1]' in percent, with digits(r) decimals unless n; '-' without one."""
    if r.get("ci_low") is None:
        return "-"
    n = digits(r) if n is None else n
    return f"[{(r['ci_low'] - 1) * 100:+.{n}f},{(r['ci_high'] - 1) * 100:+.{n}f}]"


def peeking(sample, step=2, start=None, max_rounds=100, alpha=limits.ALPHA):
    """The invalid rule, kept as the coverage test's negative control: add
    `step` rounds at a time and stop as soon as the interval excludes 1.
    sample(n) -> (before, after) gives the first n rounds of one run."""
    n = start or stats.min_rounds()
    while True:
        b, a = sample(n)
        res = stats.paired(b, a, alpha=alpha)
        if res["verdict"] != stats.NO_DIFFERENCE or n >= max_rounds:
            return res
        n += step
