"""core/stats.py gives scipy's answers without scipy.

Every piece is checked against scipy on the same data, and the verdicts of
paired() and unpaired() against the scipy implementation they replaced (kept
here, as the reference). Those tests are skipped, saying why, where numpy or
scipy is not installed; CI installs both. The last test needs neither: it
runs stats in a child interpreter where importing numpy or scipy fails.
Synthetic, seeded data only; nothing is timed.
"""

import itertools
import json
import math
import random
import subprocess
import unittest

from vdsobench_cli.cli import build
from vdsobench_cli.core import distributions, stats

try:
    import numpy as np
    from scipy import optimize
    from scipy import stats as sps
    MISSING = None
except ImportError as e:  # a machine without them: the stdlib tests still run
    MISSING = f"needs numpy and scipy for the reference ({e})"

ROOT = str(build.ROOT)


def close(a, b, rel, floor=0.0):
    """|a - b| <= rel |b| + floor."""
    return abs(a - b) <= rel * abs(b) + floor


# ---- the scipy implementation stats.py replaced (stats.py before it
# became standard-library only), as the reference --------------------------------------


def ref_depths(n, tail):
    n = np.asarray(n)
    j = sps.binom.ppf(tail, n, 0.5).astype(int)
    j = np.where(sps.binom.cdf(j, n, 0.5) > tail, j - 1, j)
    return np.where(sps.binom.cdf(j + 1, n, 0.5) <= tail, j + 1, j)


def ref_depth(n, tail):
    return int(ref_depths(n, tail)) if n > 0 else -1


def ref_ratios(base, other):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = other / base
    return np.where((base == 0) & (other == 0), 1.0, r)


def ref_paired(base, other, alpha=0.05, comparisons=1):
    base, other = np.asarray(base, dtype=float), np.asarray(other, dtype=float)
    n = len(base)
    r = np.sort(ref_ratios(base, other))
    p_below = sps.binomtest(int(np.sum(r >= 1)), n, 0.5, alternative="less").pvalue
    p_above = sps.binomtest(int(np.sum(r <= 1)), n, 0.5, alternative="less").pvalue
    p = min(1.0, 2 * min(p_below, p_above))
    j = ref_depth(n, stats._tail(alpha, comparisons))
    ci_low, ci_high = (float(r[j]), float(r[n - 1 - j])) if j >= 0 else (None, None)
    return {"p": p, "ratio": float(np.median(r)), "ci_low": ci_low, "ci_high": ci_high,
            "verdict": stats._verdict(ci_low, ci_high, stats.labels_for())}


def ref_median_ratio(base, other, axis=-1):
    return ref_ratios(np.median(base, axis=axis), np.median(other, axis=axis))


def ref_unpaired(base, other, alpha=0.05, comparisons=1, seed=0, margin=0.0, n_resamples=9999):
    base, other = np.asarray(base, dtype=float), np.asarray(other, dtype=float)
    confidence = stats.corrected_confidence(alpha, comparisons, paired=False)
    p = float(sps.mannwhitneyu(other, base, alternative="two-sided").pvalue)
    ci = sps.bootstrap((base, other), ref_median_ratio, vectorized=True, paired=False,
                       confidence_level=confidence, n_resamples=n_resamples,
                       method="percentile", random_state=np.random.default_rng(seed))
    ci_low, ci_high = float(ci.confidence_interval.low), float(ci.confidence_interval.high)
    p_adjusted = min(1.0, p * comparisons)
    verdict = (stats._verdict(ci_low, ci_high, stats.labels_for(), margin)
               if p_adjusted < alpha else stats.NO_DIFFERENCE)
    return {"p": p, "ci_low": ci_low, "ci_high": ci_high, "verdict": verdict}


def ref_power(n, effect_ratio, sigma_log, alpha=0.05, comparisons=1):
    q = sps.norm.cdf(abs(math.log(effect_ratio)) / sigma_log)
    n = np.asarray(n)
    j = ref_depths(np.maximum(n, 1), stats._tail(alpha, comparisons))
    power = sps.binom.cdf(j, n, q) + sps.binom.sf(n - 1 - j, n, q)
    power = np.where(j >= 0, power, 0.0)
    return float(power) if power.ndim == 0 else power


def ref_minimum_detectable_effect(n, sigma_log, alpha=0.05, comparisons=1, power=0.8):
    """scipy's brentq, bracketed by doubling from sigma_log; None below min_rounds."""
    def short(log_effect):
        return ref_power(n, math.exp(log_effect), sigma_log, alpha, comparisons) - power

    if ref_depth(int(n), stats._tail(alpha, comparisons)) >= 0:
        hi = next(sigma_log * 2 ** k for k in itertools.count() if short(sigma_log * 2 ** k) >= 0)
        return math.exp(optimize.brentq(short, 0.0, hi, xtol=1e-9))
    return None


def ref_rounds_needed(effect_ratio, sigma_log, alpha=0.05, comparisons=1, power=0.8,
                      max_rounds=100000):
    start = 1
    while start <= max_rounds:
        ns = np.arange(start, min(start * 2, max_rounds) + 1)
        hit = np.nonzero(ref_power(ns, effect_ratio, sigma_log, alpha, comparisons) >= power)[0]
        if len(hit):
            return int(ns[hit[0]])
        start = ns[-1] + 1
    return None


# ---- synthetic samples ---------------------------------------------------------------------


def sample_pair(rng, n_base, n_other, paired):
    """(base, other, what): noisy times with a random true ratio (none, small,
    large, either way), sometimes rounded to whole counts (ties), sometimes
    counts near zero (0/0 and x/0)."""
    shift = rng.choice((1.0, 1.0, 1.0, 1.005, 1.01, 1.02, 1 / 1.02, 1.05, 1.1, 1 / 1.1, 1.5))
    sigma = rng.choice((0.005, 0.02, 0.05))
    scale = rng.choice((30.0, 30.0, 300.0, 2.0))  # 2.0 rounded gives zeros and many ties
    base = [scale * math.exp(rng.gauss(0, sigma)) for _ in range(n_base)]
    if paired:
        other = [b * shift * math.exp(rng.gauss(0, sigma)) for b in base]
    else:
        other = [scale * shift * math.exp(rng.gauss(0, sigma)) for _ in range(n_other)]
    ties = rng.random() < 0.4
    if ties:
        base, other = [float(round(x)) for x in base], [float(round(x)) for x in other]
    return base, other, f"shift {shift:.4g}, sigma {sigma}, scale {scale}, ties {ties}"


@unittest.skipIf(MISSING, MISSING)
class BinomialTest(unittest.TestCase):
    def test_sign_test_null_is_binomtest(self):
        # the p-value of paired()'s sign test, every k for small n (exact here)
        for n in range(1, 61):
            for k in range(n + 1):
                ref = sps.binomtest(k, n, 0.5, alternative="less").pvalue
                self.assertTrue(close(distributions.sign_cdf(k, n), ref, 1e-12), (k, n))
        for n in (101, 500, 1001, 3000):
            ks = sorted({0, 1, n // 3, n // 2 - 30, n // 2, n - 1})
            for k, ref in zip(ks, sps.binom.cdf(ks, n, 0.5)):
                self.assertTrue(close(distributions.sign_cdf(k, n), ref, 1e-12), (k, n))

    def test_cdf_any_p(self):
        checked = 0
        for n in (1, 2, 5, 13, 30, 100, 1000, 10000, 100000):
            for p in (1e-6, 0.001, 0.02, 0.3, 0.5, 0.69, 0.97, 0.999, 1 - 1e-6):
                ks = sorted({0, 1, n // 10, int(n * p) - 1, int(n * p), int(n * p) + 1,
                             n // 2, n - 2, n - 1, n})
                for k in ks:
                    ref = sps.binom.cdf(k, n, p)
                    if ref < 1e-290:  # scipy's and ours both lose digits near underflow
                        continue
                    checked += 1
                    self.assertTrue(close(distributions.binom_cdf(k, n, p), ref, 1e-9),
                                    (k, n, p, distributions.binom_cdf(k, n, p), ref))
        self.assertGreater(checked, 400)

    def test_depth_is_the_scipy_formulation(self):
        # _depth is the binomial quantile (ppf, then the cdf's own side of it)
        tails = {alpha / m / 2 for alpha in (0.001, 0.01, 0.05, 0.1, 0.25, 0.5)
                 for m in (1, 2, 3, 5, 7, 10, 14)}
        tails |= {alpha / m / 4 for alpha in (0.05, 0.01) for m in (1, 3, 10)}
        tails |= {(1 - c) / 2 for c in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)}
        ns = list(range(1, 151)) + [400, 1000, 3000]
        for tail in sorted(tails):
            refs = ref_depths(ns, tail)
            for n, ref in zip(ns, refs):
                self.assertEqual(distributions.depth(n, tail), int(ref), (n, tail))
        # where the tail is itself a binomial probability, the definition's "<="
        self.assertEqual(distributions.depth(3, 0.125), 0)
        self.assertEqual(distributions.depth(4, 0.0625), 0)
        self.assertEqual(distributions.depth(5, 0.1875), 1)

    def test_sign_test_power(self):
        for n in (1, 5, 6, 10, 30, 100, 1000, 10000):
            for effect in (1.0, 1.001, 1.01, 1.05, 1 / 1.05, 1.5):
                for sigma in (0.01, 0.04, 0.2):
                    for alpha, m in ((0.05, 1), (0.01, 7)):
                        ours = stats.sign_test_power(n, effect, sigma, alpha, m)
                        ref = ref_power(n, effect, sigma, alpha, m)
                        self.assertTrue(close(ours, ref, 1e-9, 1e-300),
                                        (n, effect, sigma, alpha, m, ours, ref))
        ns = [3, 30, 300]
        self.assertEqual(len(stats.sign_test_power(ns, 1.02, 0.04)), 3)
        for ours, ref in zip(stats.sign_test_power(ns, 1.02, 0.04), ref_power(ns, 1.02, 0.04)):
            self.assertTrue(close(ours, ref, 1e-9))

    def test_rounds_needed(self):
        cases = [(1.02, 0.0424), (1.05, 0.1), (1.3, 0.05), (1.005, 0.02), (1 / 1.01, 0.03)]
        for effect, sigma in cases:
            for alpha, m, power in ((0.05, 1, 0.8), (0.01, 10, 0.9), (0.05, 3, 0.5)):
                with self.subTest(effect=effect, sigma=sigma, alpha=alpha, m=m, power=power):
                    self.assertEqual(stats.rounds_needed(effect, sigma, alpha, m, power),
                                     ref_rounds_needed(effect, sigma, alpha, m, power))
        # tens of thousands of rounds, carried from n to n + 1
        self.assertEqual(stats.rounds_needed(1.001, 0.0424), ref_rounds_needed(1.001, 0.0424))
        self.assertEqual(stats.rounds_needed(1.001, 0.0424, max_rounds=100),
                         ref_rounds_needed(1.001, 0.0424, max_rounds=100))

    def test_minimum_detectable_effect_is_brentqs(self):
        for n in (6, 10, 30, 40, 100, 1000):
            for sigma in (0.01, 0.0424, 0.1):
                for alpha, m in ((0.05, 1), (0.01, 10)):
                    ours = stats.minimum_detectable_effect(n, sigma, alpha, m)
                    ref = ref_minimum_detectable_effect(n, sigma, alpha, m)
                    if ref is None:
                        self.assertIsNone(ours)
                        continue
                    # brentq stopped within its xtol, 1e-9, of the log effect
                    self.assertLessEqual(abs(math.log(ours) - math.log(ref)), 2e-9,
                                         (n, sigma, alpha, m, ours, ref))


@unittest.skipIf(MISSING, MISSING)
class PiecesTest(unittest.TestCase):
    def test_norm_cdf(self):
        # (below -37.5 the value is subnormal and scipy's is 0)
        xs = [x / 50 for x in range(-1875, 451)] + [-8.3, -1e-9, 0.0, 1e-9, 8.3, 40.0]
        for x, ref in zip(xs, sps.norm.cdf(xs)):
            got = distributions.norm_cdf(x)
            self.assertTrue(close(got, ref, 1e-13), (x, got, ref))

    def test_clopper_pearson_is_binomtests(self):
        for n in (1, 2, 7, 50, 200, 1000, 5000):
            for k in sorted({0, 1, 2, n // 10, n // 2, n - 1, n} & set(range(n + 1))):
                ref = sps.binomtest(k, n).proportion_ci(0.95)
                low, high = stats.clopper_pearson(k, n)
                # scipy's brentq stops within 2e-12
                self.assertTrue(close(low, ref.low, 1e-9, 5e-12), (k, n, low, ref.low))
                self.assertTrue(close(high, ref.high, 1e-9, 5e-12), (k, n, high, ref.high))
        r = stats.rate({"slower": 44, stats.NO_DIFFERENCE: 956}, ["slower"])
        ref = sps.binomtest(44, 1000).proportion_ci(0.95)
        self.assertTrue(close(r["ci_low"], ref.low, 1e-9) and close(r["ci_high"], ref.high, 1e-9))

    def test_median_abs_deviation(self):
        rng = random.Random(4)
        for size in (3, 4, 9, 30, 31, 1000):
            ratios = [math.exp(rng.gauss(0, 0.03)) * (rng.uniform(1.2, 2) if rng.random() < 0.05
                                                      else 1) for _ in range(size)]
            ratios += [0.0, math.inf, -1.0][:size % 4]  # dropped by both
            r = np.asarray(ratios)
            r = r[np.isfinite(r) & (r > 0)]
            ref = sps.median_abs_deviation(np.log(r), scale="normal")
            self.assertTrue(close(stats.robust_sigma_log(ratios), ref, 1e-14), size)

    def test_mann_whitney(self):
        rng = random.Random(6)
        sizes = [(a, b) for a in range(1, 11) for b in range(1, 11)]
        # (one side of 8 and many on the other: scipy's exact path is slow, keep it modest)
        sizes += [(9, 9), (3, 200), (60, 8), (30, 30), (40, 25), (200, 300)]
        for n1, n2 in sizes:
            for ties in (False, True):
                x = [rng.gauss(0.3, 1) for _ in range(n1)]
                y = [rng.gauss(0, 1) for _ in range(n2)]
                if ties:
                    x, y = [round(v * 2) / 2 for v in x], [round(v * 2) / 2 for v in y]
                ref = sps.mannwhitneyu(x, y, alternative="two-sided").pvalue
                self.assertTrue(close(distributions.mann_whitney_p(x, y), ref, 1e-9),
                                (n1, n2, ties, distributions.mann_whitney_p(x, y), ref))
        # far apart (exact and normal tails), and all equal (no information)
        for n1, n2 in ((8, 8), (9, 9), (60, 60)):
            x, y = [float(i) for i in range(n1)], [1000.0 + i for i in range(n2)]
            ref = sps.mannwhitneyu(x, y).pvalue
            self.assertTrue(close(distributions.mann_whitney_p(x, y), ref, 1e-9), (n1, n2, ref))
        self.assertEqual(distributions.mann_whitney_p([5.0] * 10, [5.0] * 12),
                         sps.mannwhitneyu([5.0] * 10, [5.0] * 12).pvalue)


@unittest.skipIf(MISSING, MISSING)
class VerdictTest(unittest.TestCase):
    """The same verdicts as the scipy implementation, on thousands of samples."""

    def test_paired_verdicts_are_the_references(self):
        rng = random.Random(7)
        seen = {}
        for i in range(3000):
            n = rng.randint(1, 60)
            alpha, m = rng.choice((0.05, 0.01, 0.1)), rng.randint(1, 10)
            base, other, what = sample_pair(rng, n, n, paired=True)
            ours, ref = stats.paired(base, other, alpha, m), ref_paired(base, other, alpha, m)
            case = f"sample {i}: n {n}, alpha {alpha}, {m} comparisons, {what}"
            self.assertEqual(ours["verdict"], ref["verdict"], case)
            self.assertEqual((ours["ci_low"], ours["ci_high"], ours["ratio"]),
                             (ref["ci_low"], ref["ci_high"], ref["ratio"]), case)
            self.assertTrue(close(ours["p"], ref["p"], 1e-12), case)
            seen[ours["verdict"]] = seen.get(ours["verdict"], 0) + 1
        self.assertGreater(min(seen.get(v, 0) for v in ("faster", "slower", stats.NO_DIFFERENCE)),
                           300, seen)

    def test_unpaired_verdicts_are_the_references(self):
        # the bootstrap draws from another generator than scipy's, so an
        # interval end may differ by its Monte Carlo error; with 999 resamples
        # that stays under 25% of the interval's width (measured: 11% at most).
        # A verdict may differ only where the reference's end is that close to
        # the boundary; the p-value is the same to 1e-9.
        rng = random.Random(8)
        seen, borderline = {}, 0
        for i in range(400):
            n_base, n_other = rng.randint(2, 40), rng.randint(2, 40)
            alpha, m = rng.choice((0.05, 0.1)), rng.randint(1, 3)
            margin = rng.choice((0.0, 0.0, 0.02))
            base, other, what = sample_pair(rng, n_base, n_other, paired=False)
            options = dict(alpha=alpha, comparisons=m, seed=i, margin=margin, n_resamples=999)
            ours = stats.unpaired(base, other, **options)
            ref = ref_unpaired(base, other, **options)
            case = f"sample {i}: n {n_base}/{n_other}, alpha {alpha}, {m}, {margin}, {what}"
            self.assertTrue(close(ours["p"], ref["p"], 1e-9), case)
            seen[ours["verdict"]] = seen.get(ours["verdict"], 0) + 1
            if ours["verdict"] != ref["verdict"]:
                tolerance = 0.25 * (ref["ci_high"] - ref["ci_low"])
                near = min(abs(ref["ci_high"] - 1 / (1 + margin)), abs(ref["ci_low"] - 1 - margin))
                self.assertLessEqual(near, tolerance, case)
                borderline += 1
        self.assertLessEqual(borderline, 8, "verdicts differ beyond the odd borderline case")
        self.assertGreater(min(seen.get(v, 0) for v in ("faster", "slower", stats.NO_DIFFERENCE)),
                           40, seen)

    def test_unpaired_intervals_agree_when_the_answer_is_clear(self):
        # 9999 resamples, as compare uses: ends within 10% of the width
        # (measured: 4% at most), and the same verdict, on clearly-null (A/A)
        # and well-separated (+10%) data
        rng = random.Random(9)
        for shift, verdict in ((1.0, stats.NO_DIFFERENCE), (1.1, "slower"), (1 / 1.1, "faster")):
            for i in range(5):
                base, other = stats.simulate_rounds(rng, 30, shift, sigma=0.03, outlier_rate=0.02)
                if shift == 1.0:
                    base = base[:29]  # A/A, and sizes that differ
                ours, ref = stats.unpaired(base, other, seed=i), ref_unpaired(base, other, seed=i)
                case = f"shift {shift}, sample {i}: {ours['ci_low']}..{ours['ci_high']} vs " \
                       f"{ref['ci_low']}..{ref['ci_high']}"
                if shift == 1.0 and ref["verdict"] != verdict:
                    continue  # a real false alarm of both, not a clear answer
                self.assertEqual((ours["verdict"], ref["verdict"]), (verdict, verdict), case)
                width = ref["ci_high"] - ref["ci_low"]
                self.assertLessEqual(abs(ours["ci_low"] - ref["ci_low"]), 0.1 * width, case)
                self.assertLessEqual(abs(ours["ci_high"] - ref["ci_high"]), 0.1 * width, case)


BLOCKED = r"""
import importlib.abc, json, sys

class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("numpy", "scipy"):
            raise ImportError(f"{name} is blocked")

sys.meta_path.insert(0, Blocked())
for name in ("numpy", "scipy"):
    try:
        __import__(name)
        sys.exit(f"{name} imported despite the block")
    except ImportError:
        pass
started = set(sys.modules)  # with what site.py loads
sys.path.insert(0, ROOT + "/scripts")
from vdsobench_cli.core import stats
base = [30.0 + 0.1 * (i % 7) for i in range(30)]
other = [x * 1.05 for x in base]
out = {"paired": stats.paired(base, other), "unpaired": stats.unpaired(base, other),
       "median_ci": stats.median_ci(base), "rate": stats.rate({"a": 3, "b": 97}, ["a"]),
       "mde": stats.minimum_detectable_effect(30, 0.04)}
foreign = sorted({m.partition(".")[0] for m in set(sys.modules) - started}
                 - set(sys.stdlib_module_names) - {"vdsobench_cli"})
sys.path.insert(0, ROOT)  # the commands import reports/
from vdsobench_cli.commands import compare, selftest_stats  # the commands a bundle runs
print(json.dumps({"results": out, "foreign": foreign}))
"""


class WithoutNumpyTest(unittest.TestCase):
    def test_stats_runs_with_numpy_and_scipy_blocked(self):
        code = BLOCKED.replace("ROOT", repr(ROOT))
        r = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                           cwd="/", timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        self.assertEqual(got["foreign"], [], "stats imported modules outside the stdlib")
        res = got["results"]
        self.assertEqual(res["paired"]["verdict"], "slower")
        self.assertEqual(res["unpaired"]["verdict"], "slower")
        # the same answers as in this interpreter (where numpy may be loaded)
        base = [30.0 + 0.1 * (i % 7) for i in range(30)]
        other = [x * 1.05 for x in base]
        self.assertEqual(res["paired"], stats.paired(base, other))
        self.assertEqual(res["unpaired"], stats.unpaired(base, other))
        self.assertEqual(tuple(res["median_ci"]), stats.median_ci(base))
        self.assertEqual(res["mde"], stats.minimum_detectable_effect(30, 0.04))


if __name__ == "__main__":
    unittest.main()
