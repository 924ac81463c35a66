"""Is B faster than A, by how much, how sure: the statistics behind `compare`.

Why these methods:

- paired(): the variants run in interleaved rounds in one process, so round i
  of A and round i of B share the machine's state at that moment; their ratio
  cancels the drift (~6% between runs on our VMs) that swamps the effects
  people argue about. The per-round ratios are neither normal nor free of
  outliers (an interrupt lands in one batch), so the test is the sign test and
  the confidence interval of the median ratio comes from order statistics with
  binomial ranks: distribution-free, and exactly dual, so the verdict read off
  the interval and the p-value can never disagree.
- unpaired(): two saved runs, so nothing pairs; Mann-Whitney U for the
  p-value, a seeded bootstrap for the interval of the ratio of medians, and a
  stricter verdict, because the runs may have drifted apart.
- exact(): simulated counts are deterministic; any difference is real.
- sign_test_power() and friends: what the method can detect with n rounds at
  a given noise, so a report can say "no difference down to 2%" rather than
  just "no difference".
- simulate_rounds(), false_alarm_rate() ...: the checks that the method
  keeps its promises, on synthetic data (the tests) or on a real A/A run
  (`vdsobench selftest-stats`).

Every confidence is corrected for the number of comparisons (Bonferroni),
because a compare of 3 variants x 7 clocks makes 14 claims at once.
"""

import collections
import functools
import math

import numpy as np
from scipy import optimize
from scipy import stats as sps

NO_DIFFERENCE = "no significant difference"
SAME = "same"
# the words for (ratio surely below 1, ratio surely above 1), by the metric's kind
LABELS = {"time": ("faster", "slower"), "count": ("lower", "higher")}


def labels_for(kind="time", lower_is_better=True):
    """(below, above): for time, a ratio below 1 is "faster"; for a metric where
    higher is better (calls per second) the words swap; counts are just
    "lower"/"higher", since fewer cache misses is not "faster" by itself."""
    if kind not in LABELS:
        raise ValueError(f"kind {kind!r}: valid are {', '.join(LABELS)}")
    below, above = LABELS[kind]
    return (below, above) if lower_is_better or kind != "time" else (above, below)


def corrected_confidence(alpha=0.05, comparisons=1, paired=True):
    """The confidence of each interval: 1 - alpha/comparisons (Bonferroni), and
    for unpaired samples half that alpha again (see unpaired())."""
    return 1 - _tail(alpha, comparisons, paired) * 2


def _tail(alpha, comparisons, paired=True):
    """The probability allowed in each tail of one interval."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha {alpha}: must be in (0, 1)")
    if int(comparisons) != comparisons or comparisons < 1:
        raise ValueError(f"comparisons {comparisons}: must be a whole number >= 1")
    return alpha / comparisons / (2 if paired else 4)


def _depths(n, tail):
    """Largest j with P(Binomial(n, 1/2) <= j) <= tail, elementwise; -1 where
    none. It is both the sign test's critical count and the rank that bounds
    the median's interval: [x(j+1), x(n-j)] covers the median with
    probability >= 1 - 2 tail, and excludes a value exactly when the sign
    test rejects it."""
    n = np.asarray(n)
    j = sps.binom.ppf(tail, n, 0.5).astype(int)
    j = np.where(sps.binom.cdf(j, n, 0.5) > tail, j - 1, j)
    return np.where(sps.binom.cdf(j + 1, n, 0.5) <= tail, j + 1, j)


@functools.lru_cache(maxsize=None)
def _depth(n, tail):
    return int(_depths(n, tail)) if n > 0 else -1


def min_rounds(confidence=0.95):
    """The fewest rounds for which a distribution-free interval of the median at
    this confidence exists at all (6 at 95%: with 5, even 5 of 5 ratios on one
    side happen by chance with probability 2/32 > 5%)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence}: must be in (0, 1)")
    tail = (1 - confidence) / 2
    n = 1
    while _depth(n, tail) < 0:
        n += 1
    return n


def _values(xs, name):
    a = np.asarray(xs, dtype=float).ravel()
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"{name}: values must be finite and >= 0")
    return a


def _ratios(base, other):
    """other/base per element; 0/0 is 1 (both did nothing), x/0 is infinite."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = other / base
    return np.where((base == 0) & (other == 0), 1.0, r)


def _verdict(ci_low, ci_high, labels, margin=0.0):
    """From the interval alone: below 1 (or below 1/(1+margin)), above, or neither."""
    if ci_high is not None and ci_high < 1 / (1 + margin):
        return labels[0]
    if ci_low is not None and ci_low > 1 + margin:
        return labels[1]
    return NO_DIFFERENCE


def _result(**fields):
    """Every test returns the same keys, so tables and the CLI treat them alike."""
    keys = ("n", "base_median", "other_median", "ratio", "ci_low", "ci_high", "confidence",
            "p", "p_adjusted", "verdict", "method", "note")
    return {k: fields.get(k) for k in keys} | {k: v for k, v in fields.items() if k not in keys}


def paired(base, other, alpha=0.05, comparisons=1, lower_is_better=True, kind="time"):
    """Paired per-round values (round i of base with round i of other).

    The estimate is the median of the per-round ratios r_i = other_i / base_i,
    with the order-statistic interval [r(j+1), r(n-j)] at confidence
    1 - alpha/comparisons. The p-value is the two-sided sign test of
    "median ratio = 1" (scipy's binomtest). A ratio of exactly 1 (a tie, common
    for counters) counts against a difference, on whichever side is being
    tested: the interval does the same (a tie at the boundary keeps 1 inside),
    so interval and test stay dual even with ties; with no ties this is the
    textbook sign test. Dropping ties instead would let 3 rounds out of 30
    with a changed count and 27 equal ones give a verdict of "lower" for a
    median ratio of exactly 1.

    The verdict: "faster"/"slower" for time ("lower"/"higher" for kind
    "count"; lower_is_better=False swaps the time words) when the interval
    excludes 1, which happens exactly when p_adjusted <= alpha; otherwise
    "no significant difference". With fewer than min_rounds(confidence)
    rounds no interval exists: ci_low, ci_high are None and `note` says how
    many rounds are needed.
    """
    base, other = _values(base, "base"), _values(other, "other")
    if len(base) != len(other):
        raise ValueError(f"paired: {len(base)} base rounds but {len(other)} other rounds")
    labels = labels_for(kind, lower_is_better)
    n = len(base)
    tail = _tail(alpha, comparisons)
    confidence = corrected_confidence(alpha, comparisons)
    method = (f"paired sign test on per-round ratios, order-statistic CI of the median "
              f"ratio, Bonferroni over {comparisons} comparison{'s' if comparisons > 1 else ''}")
    if n == 0:
        return _result(n=0, confidence=confidence, verdict=NO_DIFFERENCE, method=method,
                       note=f"no rounds; {min_rounds(confidence)} are needed")
    r = np.sort(_ratios(base, other))
    # one-sided sign tests: "ratio < 1" is supported by few rounds with r >= 1
    p_below = sps.binomtest(int(np.sum(r >= 1)), n, 0.5, alternative="less").pvalue
    p_above = sps.binomtest(int(np.sum(r <= 1)), n, 0.5, alternative="less").pvalue
    p = min(1.0, 2 * min(p_below, p_above))
    j = _depth(n, tail)
    ci_low, ci_high, note = None, None, None
    if j >= 0:
        ci_low, ci_high = float(r[j]), float(r[n - 1 - j])
    else:
        note = (f"{n} rounds are too few for a {_percent(confidence)} interval; "
                f"{min_rounds(confidence)} are needed")
    return _result(n=n, base_median=float(np.median(base)), other_median=float(np.median(other)),
                   ratio=float(np.median(r)), ci_low=ci_low, ci_high=ci_high,
                   confidence=confidence, p=p, p_adjusted=min(1.0, p * comparisons),
                   verdict=_verdict(ci_low, ci_high, labels), method=method, note=note)


def _percent(fraction):
    return f"{fraction * 100:.4g}%"


def unpaired(base, other, alpha=0.05, comparisons=1, seed=0, lower_is_better=True, kind="time",
             margin=0.0, n_resamples=9999):
    """Independent samples, e.g. the repetitions of two saved runs.

    p: Mann-Whitney U, two-sided. Interval: ratio of medians (other/base) by a
    percentile bootstrap (scipy.stats.bootstrap, seeded: the same data give
    the same interval).

    More cautious than paired(), because two runs measured at different times
    may differ by drift alone and nothing here can cancel it:
    - the interval is at 1 - alpha/(2 comparisons), i.e. wider than paired's;
    - a verdict needs BOTH that interval to exclude 1 AND p_adjusted < alpha;
    - margin (e.g. 0.06 for this machine's known run-to-run drift) further
      requires the interval to lie beyond 1 +- margin; 0 by default, since
      only the caller knows the machine.
    """
    base, other = _values(base, "base"), _values(other, "other")
    labels = labels_for(kind, lower_is_better)
    confidence = corrected_confidence(alpha, comparisons, paired=False)
    method = (f"unpaired: Mann-Whitney U, bootstrap CI of the ratio of medians at "
              f"alpha/2, Bonferroni over {comparisons} comparison{'s' if comparisons > 1 else ''}"
              + (f", margin {margin:g}" if margin else ""))
    fields = dict(n=min(len(base), len(other)), n_base=len(base), n_other=len(other),
                  confidence=confidence, method=method)
    if min(len(base), len(other)) < 2:
        return _result(**fields, verdict=NO_DIFFERENCE,
                       note="unpaired needs at least 2 values on each side")
    base_median, other_median = float(np.median(base)), float(np.median(other))
    p = float(sps.mannwhitneyu(other, base, alternative="two-sided").pvalue)
    ci = sps.bootstrap((base, other), _median_ratio, vectorized=True, paired=False,
                       confidence_level=confidence, n_resamples=n_resamples,
                       method="percentile", random_state=np.random.default_rng(seed))
    ci_low, ci_high = float(ci.confidence_interval.low), float(ci.confidence_interval.high)
    p_adjusted = min(1.0, p * comparisons)
    verdict = _verdict(ci_low, ci_high, labels, margin) if p_adjusted < alpha else NO_DIFFERENCE
    return _result(**fields, base_median=base_median, other_median=other_median,
                   ratio=float(_ratios(np.float64(base_median), np.float64(other_median))),
                   ci_low=ci_low, ci_high=ci_high, p=p, p_adjusted=p_adjusted, verdict=verdict)


def _median_ratio(base, other, axis=-1):
    return _ratios(np.median(base, axis=axis), np.median(other, axis=axis))


def median_ci(values, confidence=0.95):
    """The distribution-free interval of the median of values (e.g. a
    benchmark's repetitions): (x(j+1), x(n-j)) of the sorted values, j the
    largest rank with P(Binomial(n, 1/2) <= j) <= (1 - confidence)/2, so it
    covers the true median with probability >= confidence whatever the
    distribution. None with fewer than min_rounds(confidence) values (6 at 95%):
    no interval exists; the caller shows the range and says so."""
    x = np.sort(_values(values, "values"))
    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence}: must be in (0, 1)")
    j = _depth(len(x), (1 - confidence) / 2)
    if j < 0:
        return None
    return float(x[j]), float(x[len(x) - 1 - j])


def exact(base, other):
    """Deterministic counts (simulated instructions, L1D misses per call): no
    noise, so no test; the ratio is its own interval and any difference is
    "lower" or "higher", none is "same"."""
    b, o = _values([base], "base")[0], _values([other], "other")[0]
    ratio = float(_ratios(b, o))
    verdict = SAME if ratio == 1 else LABELS["count"][0] if ratio < 1 else LABELS["count"][1]
    return _result(n=1, base_median=float(b), other_median=float(o), ratio=ratio, ci_low=ratio,
                   ci_high=ratio, verdict=verdict, method="exact: deterministic counts")


# ---- what the method can detect ----------------------------------------------------------


def sign_test_power(n, effect_ratio, sigma_log, alpha=0.05, comparisons=1):
    """The probability that paired() gives a verdict with n rounds when the
    per-round log ratios are Normal(log(effect_ratio), sigma_log): each round's
    sign is positive with P = Phi(|log effect| / sigma), and the test rejects
    when at most j rounds (the critical count) fall on one side. n may be an
    array (one power per n)."""
    if sigma_log <= 0:
        raise ValueError(f"sigma_log {sigma_log}: must be > 0")
    q = sps.norm.cdf(abs(math.log(effect_ratio)) / sigma_log)
    n = np.asarray(n)
    j = _depths(np.maximum(n, 1), _tail(alpha, comparisons))
    power = sps.binom.cdf(j, n, q) + sps.binom.sf(n - 1 - j, n, q)
    power = np.where(j >= 0, power, 0.0)
    return float(power) if power.ndim == 0 else power


def minimum_detectable_effect(n, sigma_log, alpha=0.05, comparisons=1, power=0.8):
    """The smallest ratio > 1 that n rounds detect with the given power at this
    noise (a slowdown; the same ratio inverted is the speed-up), or None when
    n is below min_rounds and nothing can be detected."""
    if _depth(int(n), _tail(alpha, comparisons)) < 0:
        return None

    def short(log_effect):
        return sign_test_power(n, math.exp(log_effect), sigma_log, alpha, comparisons) - power

    hi = sigma_log
    while short(hi) < 0:
        hi *= 2
    return math.exp(optimize.brentq(short, 0.0, hi, xtol=1e-9))


def rounds_needed(effect_ratio, sigma_log, alpha=0.05, comparisons=1, power=0.8,
                  max_rounds=100000):
    """The fewest rounds with at least this power for this effect, or None if
    more than max_rounds would be needed. The sign test's power is a sawtooth
    in n (the critical count moves in whole steps), so n+1 can have slightly
    less; round up a little in practice."""
    if effect_ratio == 1:
        return None
    start = 1
    while start <= max_rounds:
        ns = np.arange(start, min(start * 2, max_rounds) + 1)
        hit = np.nonzero(sign_test_power(ns, effect_ratio, sigma_log, alpha, comparisons)
                         >= power)[0]
        if len(hit):
            return int(ns[hit[0]])
        start = ns[-1] + 1
    return None


def robust_sigma_log(ratios):
    """The noise of per-round log ratios, as a standard deviation, estimated
    from the median absolute deviation (scaled to agree with the standard
    deviation for normal data) so that a few outlier rounds do not inflate the
    claimed minimum detectable effect. None with fewer than 3 ratios."""
    r = np.asarray(ratios, dtype=float)
    r = r[np.isfinite(r) & (r > 0)]
    if len(r) < 3:
        return None
    return float(sps.median_abs_deviation(np.log(r), scale="normal"))


# ---- checking the method: synthetic runs and A/A trials ---------------------------------


def simulate_rounds(rng, rounds=30, effect_ratio=1.0, sigma=0.03, outlier_rate=0.01,
                    drift=0.0, order="interleaved", base_ns=30.0):
    """One synthetic run on a noisy VM: per-round ns/call of base and of other.

    Each batch gets lognormal noise (sigma, per batch) and, with probability
    outlier_rate, a slowdown of 1.2x to 2x (an interrupt or a steal period).
    The machine slows down linearly by `drift` from the first batch to the last.
    order "interleaved" runs A,B then B,A in alternate rounds (ABBA, as compare
    does), so both see almost the same drift; "back_to_back" runs all of A's
    rounds, then all of B's (as google/benchmark's compare.py does with two
    runs). other is truly effect_ratio times base.
    """
    i = np.arange(rounds)
    if order == "interleaved":
        a_slot, b_slot = 2 * i + i % 2, 2 * i + 1 - i % 2
    elif order == "back_to_back":
        a_slot, b_slot = i, rounds + i
    else:
        raise ValueError(f"order {order!r}: valid are interleaved, back_to_back")
    slots = 2 * rounds
    slowdown = 1 + drift * np.arange(slots) / max(1, slots - 1)
    noise = np.exp(rng.normal(0.0, sigma, slots))
    outliers = np.where(rng.random(slots) < outlier_rate, rng.uniform(1.2, 2.0, slots), 1.0)
    t = base_ns * slowdown * noise * outliers
    return t[a_slot], t[b_slot] * effect_ratio


def draws(sample_fn, trials, rng):
    """trials samples sample_fn(rng) -> (base, other), from one seeded rng, so a
    whole experiment is reproducible from one seed."""
    return (sample_fn(rng) for _ in range(trials))


def resample_pairs(pairs, rounds):
    """For a real-machine A/A: pairs are measured (a, b) per round of the SAME
    variant run twice; returns a sample_fn drawing `rounds` of those rounds
    with replacement, keeping each round's pair together (so a position bias
    of the harness, e.g. the first-run variant being slower, stays in)."""
    pairs = np.asarray(pairs, dtype=float)

    def sample(rng):
        pick = pairs[rng.integers(0, len(pairs), rounds)]
        return pick[:, 0], pick[:, 1]
    return sample


def split_pairs(pairs, rounds):
    """For a real-machine A/A: independent trials of `rounds` consecutive rounds
    each (fewer trials than resample_pairs, but truly independent)."""
    pairs = np.asarray(pairs, dtype=float)
    return [(pairs[k:k + rounds, 0], pairs[k:k + rounds, 1])
            for k in range(0, len(pairs) - rounds + 1, rounds)]


def verdict_counts(samples, test=paired, **options):
    """How often each verdict comes out of test(base, other, **options) over an
    iterable of (base, other) samples."""
    return collections.Counter(test(b, o, **options)["verdict"] for b, o in samples)


def rate(counts, hits):
    """{"count", "trials", "rate", "ci_low", "ci_high"}: how many of the counted
    verdicts are in `hits`, with the Clopper-Pearson 95% interval of the rate,
    so a measured false-alarm rate says how sure it is."""
    trials = sum(counts.values())
    k = sum(counts[v] for v in hits)
    ci = sps.binomtest(k, trials).proportion_ci(0.95) if trials else None
    return {"count": k, "trials": trials, "rate": k / trials if trials else None,
            "ci_low": ci.low if ci else None, "ci_high": ci.high if ci else None}


def false_alarm_rate(samples, test=paired, **options):
    """On A/A samples (both sides the same variant) every verdict other than "no
    significant difference" is a false alarm; see rate() for the keys. E.g.
    false_alarm_rate(draws(resample_pairs(measured, 30), 1000, rng))."""
    counts = verdict_counts(samples, test, **options)
    return rate(counts, [v for v in counts if v not in (NO_DIFFERENCE, SAME)])
