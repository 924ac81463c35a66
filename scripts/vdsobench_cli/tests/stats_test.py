"""The statistics keep their promises: false alarms, power, drift, duality.

Synthetic runs only (seeded), so every number here is the same on every
machine; nothing is timed. The noise is a noisy VM's: 3% lognormal per batch
plus 2% of batches slowed 1.2-2x.
"""

import functools
import math
import random
import statistics
import sys
import unittest

from vdsobench_cli.core import stats

ROUNDS = 30
TRIALS = 1000
NOISE = dict(rounds=ROUNDS, sigma=0.03, outlier_rate=0.02)


def runs(seed, trials=TRIALS, **overrides):
    """trials synthetic (base, other) runs from one seed."""
    sample = functools.partial(stats.simulate_rounds, **dict(NOISE, **overrides))
    return stats.draws(sample, trials, random.Random(seed))


def four_se(p, trials):
    """4 binomial standard errors: the tolerance of a rate measured over trials."""
    return 4 * math.sqrt(p * (1 - p) / trials)


def noise_sigma_log():
    """The per-round log-ratio noise of NOISE as compare would estimate it from
    an A/A run: robustly, from many rounds."""
    base, other = stats.simulate_rounds(random.Random(99), **dict(NOISE, rounds=5000))
    return stats.robust_sigma_log([o / b for b, o in zip(base, other)])


class AATest(unittest.TestCase):
    def test_false_alarms_at_most_alpha(self):
        fa = stats.false_alarm_rate(runs(seed=1))
        print(f"A/A false alarms: {fa['count']} of {fa['trials']} ({fa['rate']:.1%})",
              file=sys.stderr)
        self.assertEqual(fa["trials"], TRIALS)
        self.assertLessEqual(fa["rate"], 0.05)
        # and at the level the method claims: the sign test's exact size at n=30
        # (4.3%, below 5% because the binomial moves in whole steps)
        nominal = stats.sign_test_power(ROUNDS, 1.0, 0.04)
        self.assertLess(nominal, 0.05)
        self.assertLessEqual(fa["ci_low"], nominal)
        self.assertLessEqual(nominal, fa["ci_high"])

    def test_noise_estimate_is_robust(self):
        # per-batch sigma 3% gives sqrt(2) x 3% per log ratio; the 2% outliers
        # would double a plain standard deviation but barely move the MAD
        sigma = noise_sigma_log()
        self.assertAlmostEqual(sigma, 0.03 * math.sqrt(2), delta=0.003)
        base, other = stats.simulate_rounds(random.Random(99), **dict(NOISE, rounds=5000))
        self.assertGreater(statistics.pstdev(math.log(o / b) for b, o in zip(base, other)),
                           1.5 * sigma)
        self.assertIsNone(stats.robust_sigma_log([1.0, 1.1]))


class PowerTest(unittest.TestCase):
    def test_detection_rate_is_the_claimed_power(self):
        sigma = noise_sigma_log()
        lines = ["shift  claimed  observed  (30 rounds, 1000 trials, sigma_log "
                 f"{sigma:.4f})"]
        for seed, shift in enumerate((1.01, 1.02, 1.05), start=10):
            counts = stats.verdict_counts(runs(seed, effect_ratio=shift))
            observed = (counts["slower"] + counts["faster"]) / TRIALS
            claimed = stats.sign_test_power(ROUNDS, shift, sigma)
            lines.append(f"{shift - 1:>5.0%}  {claimed:7.3f}  {observed:8.3f}")
            self.assertLessEqual(abs(observed - claimed), four_se(claimed, TRIALS),
                                 f"shift {shift}")
            self.assertLessEqual(counts["faster"], 0.01 * TRIALS, "wrong direction")
        print("\n".join(lines), file=sys.stderr)

    def test_minimum_detectable_effect_and_rounds_needed(self):
        sigma = 0.03 * math.sqrt(2)
        mde = stats.minimum_detectable_effect(ROUNDS, sigma)
        self.assertGreater(mde, 1.0)
        self.assertAlmostEqual(stats.sign_test_power(ROUNDS, mde, sigma), 0.8, places=6)
        self.assertLess(stats.sign_test_power(ROUNDS, mde * 0.999, sigma), 0.8)
        self.assertIsNone(stats.minimum_detectable_effect(5, sigma))
        self.assertGreater(stats.minimum_detectable_effect(ROUNDS, sigma, comparisons=10), mde)
        n = stats.rounds_needed(1.02, sigma)
        self.assertGreaterEqual(stats.sign_test_power(n, 1.02, sigma), 0.8)
        self.assertTrue(all(stats.sign_test_power(k, 1.02, sigma) < 0.8 for k in range(1, n)))
        self.assertEqual(stats.rounds_needed(1 / 1.02, sigma), n, "a speed-up is symmetric")
        self.assertGreater(stats.rounds_needed(1.02, sigma, comparisons=10), n)
        self.assertIsNone(stats.rounds_needed(1.0, sigma))
        self.assertIsNone(stats.rounds_needed(1.001, sigma, max_rounds=100))


class DriftTest(unittest.TestCase):
    def test_interleaving_cancels_a_ramp_back_to_back_does_not(self):
        # the machine gets 6% slower from the first batch to the last; A == B truly
        interleaved = stats.false_alarm_rate(runs(seed=20, drift=0.06))
        back_to_back = stats.false_alarm_rate(
            runs(seed=21, trials=200, drift=0.06, order="back_to_back"),
            test=stats.unpaired, n_resamples=999)
        paired_back_to_back = stats.false_alarm_rate(
            runs(seed=22, drift=0.06, order="back_to_back"))
        print(f"6% drift: interleaved paired {interleaved['rate']:.1%} false alarms, "
              f"back-to-back unpaired {back_to_back['rate']:.1%}, "
              f"back-to-back paired {paired_back_to_back['rate']:.1%}", file=sys.stderr)
        self.assertLessEqual(interleaved["rate"], 0.05)
        self.assertGreater(back_to_back["rate"], 0.5)
        # it is the interleaving that helps: pairing rounds that ran apart does not
        self.assertGreater(paired_back_to_back["rate"], 0.5)


class PairedTest(unittest.TestCase):
    def test_interval_and_p_value_agree(self):
        rng = random.Random(30)
        verdicts = 0
        for _ in range(1500):
            n = rng.randint(1, 44)
            comparisons = rng.randint(1, 7)
            base = [rng.gauss(100, 2) for _ in range(n)]
            shift = rng.uniform(0.97, 1.03)
            other = [b * rng.gauss(shift, 0.02) for b in base]
            if rng.random() < 0.5:  # counts: whole numbers, so ties happen
                base, other = ([round(b) for b in base],
                               [round(b + round(o - b)) for b, o in zip(base, other)])
            r = stats.paired(base, other, comparisons=comparisons)
            significant = r["verdict"] != stats.NO_DIFFERENCE
            verdicts += significant
            self.assertEqual(significant, r["p_adjusted"] <= 0.05, r)
            if significant:
                self.assertLess(r["p_adjusted"], 0.05)
                self.assertTrue(r["ci_low"] <= r["ratio"] <= r["ci_high"])
        self.assertGreater(verdicts, 300, "both outcomes must be exercised")

    def test_ties_count_against_a_difference(self):
        # 27 rounds equal, 3 lower: the median ratio is 1, so no verdict
        base = [100.0] * 30
        other = [100.0] * 27 + [90.0] * 3
        r = stats.paired(base, other, kind="count")
        self.assertEqual(r["ratio"], 1.0)
        self.assertEqual(r["verdict"], stats.NO_DIFFERENCE)
        self.assertEqual(r["p"], 1.0)
        # all 30 lower, 0 equal: as the textbook sign test
        r = stats.paired(base, [90.0] * 30, kind="count")
        self.assertEqual(r["verdict"], "lower")
        self.assertAlmostEqual(r["p"], 2 * 0.5 ** 30)

    def test_few_rounds(self):
        self.assertEqual(stats.min_rounds(0.95), 6)
        self.assertEqual(stats.min_rounds(1 - 0.05 / 10), 9)
        r = stats.paired([10.0] * 5, [9.0] * 5)
        self.assertEqual((r["ci_low"], r["ci_high"]), (None, None))
        self.assertEqual(r["verdict"], stats.NO_DIFFERENCE)
        self.assertIn("6 are needed", r["note"])
        self.assertGreater(r["p_adjusted"], 0.05)
        r = stats.paired([10.0] * 6, [9.0] * 6)
        self.assertEqual(r["verdict"], "faster")
        self.assertAlmostEqual(r["p"], 2 / 64)
        self.assertIsNone(r["note"])
        r = stats.paired([], [])
        self.assertEqual((r["n"], r["verdict"]), (0, stats.NO_DIFFERENCE))

    def test_bonferroni_widens_and_detects_less(self):
        base, other = next(iter(runs(seed=40, trials=1, effect_ratio=1.03)))
        one, ten = stats.paired(base, other), stats.paired(base, other, comparisons=10)
        self.assertAlmostEqual(ten["confidence"], 0.995)
        self.assertLessEqual(ten["ci_low"], one["ci_low"])
        self.assertGreaterEqual(ten["ci_high"], one["ci_high"])
        self.assertLess(ten["ci_low"] - ten["ci_high"], one["ci_low"] - one["ci_high"])
        self.assertEqual(ten["p_adjusted"], min(1.0, 10 * one["p"]))
        self.assertIn("Bonferroni over 10 comparisons", ten["method"])
        detected = [sum(stats.verdict_counts(runs(seed=41, trials=300, effect_ratio=1.02),
                                             comparisons=m)[w] for w in ("faster", "slower"))
                    for m in (1, 10)]
        self.assertLess(detected[1], detected[0])

    def test_labels(self):
        base, other = [10.0] * 10, [12.0] * 10
        self.assertEqual(stats.paired(base, other)["verdict"], "slower")
        self.assertEqual(stats.paired(other, base)["verdict"], "faster")
        self.assertEqual(stats.paired(base, other, lower_is_better=False)["verdict"], "faster")
        self.assertEqual(stats.paired(base, other, kind="count")["verdict"], "higher")
        self.assertEqual(stats.paired(other, base, kind="count")["verdict"], "lower")
        with self.assertRaisesRegex(ValueError, "time, count"):
            stats.paired(base, other, kind="cycles")
        with self.assertRaisesRegex(ValueError, "10 base rounds but 9"):
            stats.paired(base, other[1:])
        with self.assertRaisesRegex(ValueError, ">= 0"):
            stats.paired(base, [-1.0] * 10)
        with self.assertRaisesRegex(ValueError, "alpha"):
            stats.paired(base, other, alpha=0)

    def test_zero_counts(self):
        # no misses in either round is a tie, not a division by zero
        r = stats.paired([0.0] * 10, [0.0] * 10, kind="count")
        self.assertEqual((r["ratio"], r["verdict"]), (1.0, stats.NO_DIFFERENCE))
        r = stats.paired([0.0] * 10, [1.0] * 10, kind="count")
        self.assertEqual(r["verdict"], "higher")

    def test_same_seed_same_result(self):
        first = [stats.paired(b, o) for b, o in runs(seed=50, trials=5, effect_ratio=1.02)]
        again = [stats.paired(b, o) for b, o in runs(seed=50, trials=5, effect_ratio=1.02)]
        self.assertEqual(first, again)
        base, other = next(iter(runs(seed=51, trials=1)))
        self.assertEqual(stats.unpaired(base, other, seed=3), stats.unpaired(base, other, seed=3))


class UnpairedTest(unittest.TestCase):
    def test_more_cautious_than_paired(self):
        base, other = next(iter(runs(seed=60, trials=1, effect_ratio=1.04)))
        u, p = stats.unpaired(base, other), stats.paired(base, other)
        self.assertIn("unpaired", u["method"])
        self.assertAlmostEqual(u["confidence"], 0.975)
        self.assertGreater(u["confidence"], p["confidence"])
        self.assertEqual(u["verdict"], "slower")
        self.assertEqual((u["n"], u["n_base"], u["n_other"]), (30, 30, 30))
        self.assertAlmostEqual(u["ratio"], statistics.median(other) / statistics.median(base))
        # a margin for the machine's known run-to-run drift: 4% is not beyond 6%
        wide = stats.unpaired(base, other, margin=0.06)
        self.assertEqual(wide["verdict"], stats.NO_DIFFERENCE)
        self.assertIn("margin 0.06", wide["method"])

    def test_needs_both_interval_and_p(self):
        # a big shift but 10 comparisons x 3 rounds: U cannot reach p < 0.005
        r = stats.unpaired([10.0, 10.1, 10.2], [20.0, 20.1, 20.2], comparisons=10)
        self.assertGreater(r["ci_low"], 1)
        self.assertGreaterEqual(r["p_adjusted"], 0.05)
        self.assertEqual(r["verdict"], stats.NO_DIFFERENCE)

    def test_too_few(self):
        r = stats.unpaired([1.0], [2.0, 3.0])
        self.assertEqual(r["verdict"], stats.NO_DIFFERENCE)
        self.assertIsNone(r["p"])
        self.assertIn("at least 2", r["note"])


class ExactTest(unittest.TestCase):
    def test_labels(self):
        self.assertEqual(stats.exact(100, 95)["verdict"], "lower")
        self.assertEqual(stats.exact(100, 105)["verdict"], "higher")
        same = stats.exact(7, 7)
        self.assertEqual((same["verdict"], same["ratio"], same["p"]), ("same", 1.0, None))
        r = stats.exact(200, 50)
        self.assertEqual((r["ratio"], r["ci_low"], r["ci_high"]), (0.25, 0.25, 0.25))
        self.assertEqual(stats.exact(0, 0)["verdict"], "same")
        self.assertEqual(stats.exact(0, 3)["verdict"], "higher")


class MedianCITest(unittest.TestCase):
    def test_order_statistics(self):
        # n = 6 at 95%: j = 0 (P(B <= 0) = 1/64 <= 2.5%), so the whole range
        self.assertEqual(stats.median_ci([5, 1, 4, 2, 6, 3]), (1.0, 6.0))
        # n = 20: j = 5 (P(B <= 5) = 2.07% <= 2.5% < P(B <= 6) = 5.8%)
        values = list(range(20, 0, -1))
        self.assertEqual(stats.median_ci(values), (6.0, 15.0))
        # at 50%: j = 7 (P(B <= 7) = 13.2% <= 25% < P(B <= 8) = 25.2%)
        self.assertEqual(stats.median_ci(values, confidence=0.5), (8.0, 13.0))

    def test_too_few_for_an_interval(self):
        self.assertIsNone(stats.median_ci([1, 2, 3, 4, 5]))
        self.assertIsNone(stats.median_ci([]))
        self.assertEqual(stats.median_ci([1, 2, 3, 4, 5], confidence=0.9), (1.0, 5.0))

    def test_coverage(self):
        rng = random.Random(3)
        hits = 0
        for _ in range(2000):
            lo, hi = stats.median_ci([rng.lognormvariate(0.0, 0.5) for _ in range(9)])
            hits += lo <= 1.0 <= hi
        self.assertGreaterEqual(hits / 2000, 0.95 - four_se(0.95, 2000))

    def test_bad_values(self):
        for bad in ([1, float("nan")], [-1, 2]):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                stats.median_ci(bad)


class RealAATest(unittest.TestCase):
    """The helpers selftest-stats uses on measured A/A pairs."""

    def test_resample_and_split(self):
        base, other = stats.simulate_rounds(random.Random(70), **dict(NOISE, rounds=200))
        pairs = list(zip(base, other))
        chunks = stats.split_pairs(pairs, 30)
        self.assertEqual(len(chunks), 6)
        self.assertTrue(all(len(b) == len(o) == 30 for b, o in chunks))
        self.assertEqual(list(chunks[1][0]), list(base[30:60]))
        fa = stats.false_alarm_rate(chunks)
        self.assertEqual(fa["trials"], 6)
        sample = stats.resample_pairs(pairs, 30)
        b, o = sample(random.Random(1))
        self.assertEqual(len(b), 30)
        self.assertTrue(all((x, y) in pairs for x, y in zip(b, o)), "pairs stay together")
        first = stats.false_alarm_rate(stats.draws(sample, 50, random.Random(2)))
        again = stats.false_alarm_rate(stats.draws(sample, 50, random.Random(2)))
        self.assertEqual(first, again)
        self.assertEqual(set(first), {"count", "trials", "rate", "ci_low", "ci_high"})


if __name__ == "__main__":
    unittest.main()
