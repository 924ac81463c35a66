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

Python's standard library only, and one implementation of each method: a
relocatable bundle runs `compare` and `selftest-stats` on machines without
numpy or scipy, and a second, scipy-backed path used "when available" would
make the same data give different verdicts at home and in the bundle, and
leave one of the two paths untested wherever the other one runs. The
sign test's null distribution, the ranks of the median's interval and the
exact Mann-Whitney distribution are computed in integers (exact); the rest
in floating point from the largest term outward. stats_reference_test.py
checks every piece against scipy wherever scipy is installed (CI).
"""

import collections
import collections.abc
import math
import statistics

from vdsobench_cli.core import bootstrap, distributions, limits

NO_DIFFERENCE = "no significant difference"
SAME = "same"
# the words for (ratio surely below 1, ratio surely above 1), by the metric's kind
LABELS = {"time": ("faster", "slower"), "count": ("lower", "higher")}
# Phi^-1(3/4): the median absolute deviation of Normal(0, 1), as scipy's
# median_abs_deviation(scale="normal") divides by it (x 1.482602218505602)
NORMAL_MAD = 0.6744897501960817


def labels_for(kind="time", lower_is_better=True):
    """(below, above): for time, a ratio below 1 is "faster"; for a metric where
    higher is better (calls per second) the words swap; counts are just
    "lower"/"higher", since fewer cache misses is not "faster" by itself."""
    if kind not in LABELS:
        raise ValueError(f"kind {kind!r}: valid are {', '.join(LABELS)}")
    below, above = LABELS[kind]
    return (below, above) if lower_is_better or kind != "time" else (above, below)


def corrected_confidence(alpha=limits.ALPHA, comparisons=1, paired=True):
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


# ---- the tests ----------------------------------------------------------------------------


def min_rounds(confidence=0.95):
    """The fewest rounds for which a distribution-free interval of the median at
    this confidence exists at all (6 at 95%: with 5, even 5 of 5 ratios on one
    side happen by chance with probability 2/32 > 5%)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence}: must be in (0, 1)")
    tail = (1 - confidence) / 2
    n = 1
    while distributions.depth(n, tail) < 0:
        n += 1
    return n


def _values(xs, name):
    try:
        a = [float(x) for x in xs]
    except (TypeError, ValueError):
        raise ValueError(f"{name}: values must be numbers") from None
    if not all(math.isfinite(x) and x >= 0 for x in a):
        raise ValueError(f"{name}: values must be finite and >= 0")
    return a


def _ratio(base, other):
    """other/base; 0/0 is 1 (both did nothing), x/0 is infinite."""
    if base == 0:
        return 1.0 if other == 0 else math.inf
    return other / base


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


def paired(base, other, alpha=limits.ALPHA, comparisons=1, lower_is_better=True, kind="time"):
    """Paired per-round values (round i of base with round i of other).

    The estimate is the median of the per-round ratios r_i = other_i / base_i,
    with the order-statistic interval [r(j+1), r(n-j)] at confidence
    1 - alpha/comparisons. The p-value is the two-sided sign test of
    "median ratio = 1" (scipy's binomtest, computed exactly). A ratio of
    exactly 1 (a tie, common for counters) counts against a difference, on
    whichever side is being tested: the interval does the same (a tie at the
    boundary keeps 1 inside), so interval and test stay dual even with ties;
    with no ties this is the textbook sign test. Dropping ties instead would
    let 3 rounds out of 30 with a changed count and 27 equal ones give a
    verdict of "lower" for a median ratio of exactly 1.

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
    r = sorted(map(_ratio, base, other))
    # one-sided sign tests: "ratio < 1" is supported by few rounds with r >= 1,
    # "ratio > 1" by few with r <= 1; the two-sided p doubles the smaller
    against = min(sum(x >= 1 for x in r), sum(x <= 1 for x in r))
    p = min(1.0, 2 * distributions.sign_cdf(against, n))
    j = distributions.depth(n, tail)
    ci_low, ci_high, note = None, None, None
    if j >= 0:
        ci_low, ci_high = r[j], r[n - 1 - j]
    else:
        note = (f"{n} rounds are too few for a {_percent(confidence)} interval; "
                f"{min_rounds(confidence)} are needed")
    return _result(n=n, base_median=float(statistics.median(base)),
                   other_median=float(statistics.median(other)),
                   ratio=float(statistics.median(r)), ci_low=ci_low, ci_high=ci_high,
                   confidence=confidence, p=p, p_adjusted=min(1.0, p * comparisons),
                   verdict=_verdict(ci_low, ci_high, labels), method=method, note=note)


def _percent(fraction):
    return f"{fraction * 100:.4g}%"


def unpaired(base, other, alpha=limits.ALPHA, comparisons=1, seed=0, lower_is_better=True, kind="time",
             margin=0.0, n_resamples=9999):
    """Independent samples, e.g. the repetitions of two saved runs.

    p: Mann-Whitney U, two-sided (as scipy.stats.mannwhitneyu's defaults, see
    distributions.mann_whitney_p). Interval: ratio of medians (other/base) by
    a percentile bootstrap of n_resamples resamples of each side, drawn from
    random.Random(seed): the same data give the same interval.

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
    base_median, other_median = float(statistics.median(base)), float(statistics.median(other))
    p = distributions.mann_whitney_p(other, base)
    ci_low, ci_high = _bootstrap_ratio_ci(base, other, confidence, n_resamples, seed)
    p_adjusted = min(1.0, p * comparisons)
    verdict = _verdict(ci_low, ci_high, labels, margin) if p_adjusted < alpha else NO_DIFFERENCE
    return _result(**fields, base_median=base_median, other_median=other_median,
                   ratio=_ratio(base_median, other_median),
                   ci_low=ci_low, ci_high=ci_high, p=p, p_adjusted=p_adjusted, verdict=verdict)


def _bootstrap_ratio_ci(base, other, confidence, n_resamples, seed):
    """Percentile bootstrap interval of median(other) / median(base): each
    resample draws len(base) of base and len(other) of other with replacement
    (bootstrap.py draws which order statistics the medians are, once per size)."""
    return bootstrap.ratio_ci(base, other, confidence, n_resamples, seed, _ratio)


def median_ci(values, confidence=0.95):
    """The distribution-free interval of the median of values (e.g. a
    benchmark's repetitions): (x(j+1), x(n-j)) of the sorted values, j the
    largest rank with P(Binomial(n, 1/2) <= j) <= (1 - confidence)/2, so it
    covers the true median with probability >= confidence whatever the
    distribution. None with fewer than min_rounds(confidence) values (6 at 95%):
    no interval exists; the caller shows the range and says so."""
    x = sorted(_values(values, "values"))
    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence}: must be in (0, 1)")
    j = distributions.depth(len(x), (1 - confidence) / 2)
    if j < 0:
        return None
    return x[j], x[len(x) - 1 - j]


def exact(base, other):
    """Deterministic counts (simulated instructions, L1D misses per call): no
    noise, so no test; the ratio is its own interval and any difference is
    "lower" or "higher", none is "same"."""
    b, o = _values([base], "base")[0], _values([other], "other")[0]
    ratio = _ratio(b, o)
    verdict = SAME if ratio == 1 else LABELS["count"][0] if ratio < 1 else LABELS["count"][1]
    return _result(n=1, base_median=b, other_median=o, ratio=ratio, ci_low=ratio,
                   ci_high=ratio, verdict=verdict, method="exact: deterministic counts")


# ---- what the method can detect ----------------------------------------------------------


def _sides(effect_ratio, sigma_log):
    """(q, 1 - q): the probability that a round's log ratio, Normal(log
    effect_ratio, sigma_log), falls on the side of the effect, and on the other."""
    if sigma_log <= 0:
        raise ValueError(f"sigma_log {sigma_log}: must be > 0")
    d = abs(math.log(effect_ratio)) / sigma_log
    return distributions.norm_cdf(d), distributions.norm_cdf(-d)


def sign_test_power(n, effect_ratio, sigma_log, alpha=limits.ALPHA, comparisons=1):
    """The probability that paired() gives a verdict with n rounds when the
    per-round log ratios are Normal(log(effect_ratio), sigma_log): each round's
    sign is positive with P = Phi(|log effect| / sigma), and the test rejects
    when at most j rounds (the critical count) fall on one side. n may be a
    sequence (a list of powers, one per n)."""
    q, q_against = _sides(effect_ratio, sigma_log)
    tail = _tail(alpha, comparisons)

    def power(n):
        n = int(n)
        j = distributions.depth(max(n, 1), tail)
        # at most j rounds against the effect, or at most j with it
        if j < 0:
            return 0.0
        return distributions.binom_cdf(j, n, q_against) + distributions.binom_cdf(j, n, q)
    if isinstance(n, collections.abc.Iterable):
        return [power(k) for k in n]
    return power(n)


def minimum_detectable_effect(n, sigma_log, alpha=limits.ALPHA, comparisons=1, power=0.8):
    """The smallest ratio > 1 that n rounds detect with the given power at this
    noise (a slowdown; the same ratio inverted is the speed-up), or None when
    n is below min_rounds and nothing can be detected."""
    if not 0 < power < 1:
        raise ValueError(f"power {power}: must be in (0, 1)")
    if distributions.depth(int(n), _tail(alpha, comparisons)) < 0:
        return None

    def short(log_effect):
        return sign_test_power(n, math.exp(log_effect), sigma_log, alpha, comparisons) - power

    hi = sigma_log
    while short(hi) < 0:
        hi *= 2
    return math.exp(distributions.bisect(short, 0.0, hi, xtol=1e-12))


def _powers(effect_ratio, sigma_log, tail, max_rounds):
    """(n, power) for n = 1 .. max_rounds, as sign_test_power(n) to about
    1e-10, in O(1) per n: the critical count j (it grows by 0 or 1 from n to
    n + 1) and the two tails are carried along rather than recomputed. Where
    the carried P(B <= j + 1) is too close to tail to decide by floating point,
    j comes from the exact distributions.depth and the tails start afresh."""
    q, q_against = _sides(effect_ratio, sigma_log)
    n0 = 1
    while distributions.depth(n0, tail) < 0 and n0 <= max_rounds:
        yield n0, 0.0
        n0 += 1
    tails = [distributions.LowerTail(0, n0, p) for p in (0.5, q_against, q)]
    for n in range(n0, max_rounds + 1):
        if n > n0:
            for t in tails:
                t.grow()
            half = tails[0]
            next_cdf = half.cdf + half.pmf * (n - half.k) / (half.k + 1)
            if abs(next_cdf - tail) <= 1e-9 * tail:
                j = distributions.depth(n, tail)
                tails = [distributions.LowerTail(j, n, p) for p in (0.5, q_against, q)]
            elif next_cdf <= tail:
                for t in tails:
                    t.advance()
        yield n, tails[1].cdf + tails[2].cdf


def rounds_needed(effect_ratio, sigma_log, alpha=limits.ALPHA, comparisons=1, power=0.8,
                  max_rounds=100000):
    """The fewest rounds with at least this power for this effect, or None if
    more than max_rounds would be needed. The sign test's power is a sawtooth
    in n (the critical count moves in whole steps), so n+1 can have slightly
    less; round up a little in practice."""
    if effect_ratio == 1:
        return None
    tail = _tail(alpha, comparisons)
    for n, approximate in _powers(effect_ratio, sigma_log, tail, max_rounds):
        # the one-pass power decides, except within its error of the target
        if approximate >= power - 1e-8 and sign_test_power(
                n, effect_ratio, sigma_log, alpha, comparisons) >= power:
            return n
    return None


def robust_sigma_log(ratios):
    """The noise of per-round log ratios, as a standard deviation, estimated
    from the median absolute deviation (scaled to agree with the standard
    deviation for normal data) so that a few outlier rounds do not inflate the
    claimed minimum detectable effect. None with fewer than 3 ratios."""
    logs = [math.log(r) for r in map(float, ratios) if math.isfinite(r) and r > 0]
    if len(logs) < 3:
        return None
    middle = statistics.median(logs)
    return statistics.median([abs(x - middle) for x in logs]) / NORMAL_MAD


def resolution(before, after):
    """The smallest relative change paired rounds can show: each side's
    smallest step between two of its distinct times, over its median, the
    coarser side's. Times quantised to a few steps (a coarse timer over few
    calls) tie most ratios at exactly 1, their spread (robust_sigma_log)
    near 0, and a detectable change claimed from it would be finer than any
    round could show. 0.0 without two distinct times on a side."""
    worst = 0.0
    for side in (before, after):
        values = sorted({float(v) for v in side if math.isfinite(v)})
        if len(values) < 2:
            continue
        step = min(b - a for a, b in zip(values, values[1:]))
        middle = statistics.median(float(v) for v in side)
        if middle > 0:
            worst = max(worst, step / middle)
    return worst


# ---- checking the method: synthetic runs and A/A trials ---------------------------------


def simulate_rounds(rng, rounds=30, effect_ratio=1.0, sigma=0.03, outlier_rate=0.01,
                    drift=0.0, order="interleaved", base_ns=30.0):
    """One synthetic run on a noisy VM: per-round ns/call of base and of other
    (two lists), drawn from rng (a random.Random).

    Each batch gets lognormal noise (sigma, per batch) and, with probability
    outlier_rate, a slowdown of 1.2x to 2x (an interrupt or a steal period).
    The machine slows down linearly by `drift` from the first batch to the last.
    order "interleaved" runs A,B then B,A in alternate rounds (ABBA, as compare
    does), so both see almost the same drift; "back_to_back" runs all of A's
    rounds, then all of B's (as google/benchmark's compare.py does with two
    runs). other is truly effect_ratio times base.
    """
    if order == "interleaved":
        a_slot = [2 * i + i % 2 for i in range(rounds)]
        b_slot = [2 * i + 1 - i % 2 for i in range(rounds)]
    elif order == "back_to_back":
        a_slot, b_slot = list(range(rounds)), list(range(rounds, 2 * rounds))
    else:
        raise ValueError(f"order {order!r}: valid are interleaved, back_to_back")
    slots = 2 * rounds
    t = []
    for s in range(slots):
        slowdown = 1 + drift * s / max(1, slots - 1)
        noise = math.exp(rng.gauss(0.0, sigma))
        outlier = rng.uniform(1.2, 2.0) if rng.random() < outlier_rate else 1.0
        t.append(base_ns * slowdown * noise * outlier)
    return [t[s] for s in a_slot], [t[s] * effect_ratio for s in b_slot]


def draws(sample_fn, trials, rng):
    """trials samples sample_fn(rng) -> (base, other), from one seeded rng (a
    random.Random), so a whole experiment is reproducible from one seed."""
    return (sample_fn(rng) for _ in range(trials))


def resample_pairs(pairs, rounds):
    """For a real-machine A/A: pairs are measured (a, b) per round of the SAME
    variant run twice; returns a sample_fn drawing `rounds` of those rounds
    with replacement, keeping each round's pair together (so a position bias
    of the harness, e.g. the first-run variant being slower, stays in)."""
    pairs = [(float(a), float(b)) for a, b in pairs]

    def sample(rng):
        pick = rng.choices(pairs, k=rounds)
        return [a for a, _ in pick], [b for _, b in pick]
    return sample


def null_pairs(pairs, rounds):
    """For a real-machine A/A whose rounds alternate the order, as ABBA does
    (pairs[0::2] ran copy 0 first, pairs[1::2] copy 1 first): a sample_fn
    drawing trials under the null itself. If the copies are the same, only
    the position is real and the copies' labels are exchangeable, so every
    measured pair is taken as (first, second), and a trial draws its rounds
    from all of them with replacement, half as (first, second) and half as
    (second, first): the machine's noise, ties and position effect stay
    (cancelled as ABBA cancels it), while a real difference between the two
    copies (their code's addresses) and the chance imbalance of the rounds
    measured, which resampling the pairs as they are tests as well, cannot
    be found. Its false-alarm rate is the test's level on this noise."""
    ordered = ([(float(a), float(b)) for a, b in pairs[0::2]]
               + [(float(b), float(a)) for a, b in pairs[1::2]])
    k0 = rounds // 2

    def sample(rng):
        one, two = rng.choices(ordered, k=k0), rng.choices(ordered, k=rounds - k0)
        return ([f for f, _ in one] + [s for _, s in two],
                [s for _, s in one] + [f for f, _ in two])
    return sample


def split_pairs(pairs, rounds):
    """For a real-machine A/A: independent trials of `rounds` consecutive rounds
    each (fewer trials than resample_pairs, but truly independent)."""
    pairs = [(float(a), float(b)) for a, b in pairs]
    return [([a for a, _ in pairs[k:k + rounds]], [b for _, b in pairs[k:k + rounds]])
            for k in range(0, len(pairs) - rounds + 1, rounds)]


def verdict_counts(samples, test=paired, **options):
    """How often each verdict comes out of test(base, other, **options) over an
    iterable of (base, other) samples."""
    return collections.Counter(test(b, o, **options)["verdict"] for b, o in samples)


def clopper_pearson(k, n, confidence=0.95):
    """The exact (Clopper-Pearson) interval of a binomial proportion, k of n:
    the p where seeing >= k (for the low end) or <= k (the high end) has
    probability (1 - confidence)/2, as scipy's binomtest(k, n).proportion_ci."""
    tail = (1 - confidence) / 2
    cdf = distributions.binom_cdf
    low = 0.0 if k == 0 else distributions.bisect(lambda p: 1 - cdf(k - 1, n, p) - tail,
                                                  0.0, 1.0, 1e-16)
    high = 1.0 if k == n else distributions.bisect(lambda p: tail - cdf(k, n, p), 0.0, 1.0, 1e-16)
    return low, high


def rate(counts, hits):
    """{"count", "trials", "rate", "ci_low", "ci_high"}: how many of the counted
    verdicts are in `hits`, with the Clopper-Pearson 95% interval of the rate,
    so a measured false-alarm rate says how sure it is."""
    trials = sum(counts.values())
    k = sum(counts[v] for v in hits)
    ci = clopper_pearson(k, trials) if trials else (None, None)
    return {"count": k, "trials": trials, "rate": k / trials if trials else None,
            "ci_low": ci[0], "ci_high": ci[1]}


def false_alarm_rate(samples, test=paired, **options):
    """On A/A samples (both sides the same variant) every verdict other than "no
    significant difference" is a false alarm; see rate() for the keys. E.g.
    false_alarm_rate(draws(resample_pairs(measured, 30), 1000, random.Random(1)))."""
    counts = verdict_counts(samples, test, **options)
    return rate(counts, [v for v in counts if v not in (NO_DIFFERENCE, SAME)])
