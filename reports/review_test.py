"""patch-review's row statistic and stopping rule, on synthetic rounds only."""

import random
import unittest

from reports import review
from vdsobench_cli.core import stats


def two_stage(rng, effect, sigma, outliers=0.02, target=review.TARGET, max_rounds=400):
    """One review of one row: a pilot, the planned second stage (fresh
    rounds), and the row computed from the second stage alone."""
    pilot = stats.simulate_rounds(rng, review.PILOT_ROUNDS, effect, sigma, outliers)
    n = review.plan({"row": pilot}, target, max_rounds=max_rounds)["rounds"]
    before, after = stats.simulate_rounds(rng, n, effect, sigma, outliers)
    return review.row(before, after, target)


class RowTest(unittest.TestCase):
    def test_a_row_cannot_contradict_itself(self):
        # the medians say "no change" (20 -> 20), the paired rounds say +10%:
        # the row prints one statistic, the paired one, and after follows it
        before = [10, 10, 10, 30, 30, 30, 30, 10, 10, 30, 20, 20]
        after = [11, 11, 11, 33, 33, 33, 33, 11, 11, 33, 22, 22]
        self.assertEqual(sorted(before)[6], sorted(after)[6] - 2)
        r = review.row(before, after, target=0.01)
        self.assertAlmostEqual(r["ratio"], 1.1)
        self.assertEqual(r["before"], 20)
        self.assertAlmostEqual(r["after"], 22.0)
        self.assertAlmostEqual(r["after"] / r["before"], r["ratio"])
        self.assertEqual(r["verdict"], "slower")
        self.assertTrue(r["complete"])

    def test_medians_disagreeing_with_the_pairs(self):
        # before's median 25.5, after's 27.7 taken alone; paired ratio ~0.998
        rng = random.Random(3)
        before = [rng.uniform(20, 31) for _ in range(40)]
        after = [b * rng.choice((0.997, 0.998, 0.999)) for b in before]
        r = review.row(before, after, target=0.01)
        self.assertLess(r["ratio"], 1)
        self.assertLess(r["after"], r["before"])
        self.assertAlmostEqual(r["after"] / r["before"], r["ratio"], places=12)

    def test_a_wide_interval_has_no_verdict(self):
        rng = random.Random(1)
        before, after = stats.simulate_rounds(rng, 12, 1.0, 0.05, 0.0)
        r = review.row(before, after, target=0.005)
        self.assertFalse(r["complete"])
        self.assertEqual(r["verdict"], review.INCOMPLETE)
        self.assertIn("wider than +-0.5%", r["reason"])
        self.assertIsNotNone(r["detectable"])
        self.assertGreater(r["detectable"], 1.0)

    def test_refused_rounds_have_no_verdict(self):
        before = [10.0] * 20
        after = [12.0] * 20
        r = review.row(before, after, refused="lost the CPU in 9 of 20 rounds")
        self.assertFalse(r["complete"])
        self.assertEqual(r["reason"], "lost the CPU in 9 of 20 rounds")

    def test_too_few_rounds(self):
        r = review.row([1.0, 1.0], [1.0, 1.0])
        self.assertFalse(r["complete"])
        self.assertIn("too few", r["reason"])


class ResolutionTest(unittest.TestCase):
    """The smallest detectable change is never finer than the rounds' own
    step: times quantised to 0.5 ns around 20 ns tie most ratios at 1."""

    @staticmethod
    def quantised(seed, n=365, step=0.5):
        rng = random.Random(seed)

        def draw():
            return 20.0 + step * rng.choice((-1, 0, 0, 0, 0, 0, 0, 1))
        return [draw() for _ in range(n)], [draw() for _ in range(n)]

    def test_quantised_rounds_detect_no_finer_than_a_step(self):
        before, after = self.quantised(3)
        ratios = review.ratios(before, after)
        self.assertGreater(sum(r == 1 for r in ratios), len(ratios) / 3)
        sigma = stats.robust_sigma_log(ratios)
        # what the noise alone claims: far below one step (0.5 / 20 = 2.5%)
        unfloored = stats.minimum_detectable_effect(len(ratios), max(sigma, 1e-9))
        self.assertLess(unfloored, 1.001)
        self.assertAlmostEqual(stats.resolution(before, after), 0.5 / 20.0)
        self.assertAlmostEqual(review.row(before, after)["detectable"], 1 + 0.5 / 20.0)

    def test_continuous_rounds_keep_their_noise(self):
        rng = random.Random(5)
        before, after = stats.simulate_rounds(rng, 200, 1.0, 0.03, 0.0)
        r = review.row(before, after)
        sigma = stats.robust_sigma_log(review.ratios(before, after))
        self.assertEqual(r["detectable"], stats.minimum_detectable_effect(r["n"], sigma))
        self.assertLess(stats.resolution(before, after), 0.001)

    def test_resolution_of_degenerate_sides(self):
        self.assertEqual(stats.resolution([20.0] * 5, [21.0] * 5), 0.0)
        self.assertEqual(stats.resolution([], []), 0.0)
        self.assertAlmostEqual(stats.resolution([10.0, 10.0, 11.0], [20.0, 20.5, 21.0]),
                               1.0 / 10.0)


class PlanTest(unittest.TestCase):
    def test_more_noise_more_rounds(self):
        a = review.rounds_for(0.01)
        b = review.rounds_for(0.02)
        self.assertGreater(b, 3 * a)
        self.assertEqual(review.rounds_for(None), stats.min_rounds())

    def test_the_largest_row_decides_and_the_budget_caps(self):
        rng = random.Random(5)
        quiet = stats.simulate_rounds(rng, 12, 1.0, 0.002, 0.0)
        noisy = stats.simulate_rounds(rng, 12, 1.0, 0.05, 0.0)
        p = review.plan({"q": quiet, "n": noisy}, max_rounds=100000)
        self.assertEqual(p["rounds"], p["needed"]["n"])
        self.assertGreater(p["needed"]["n"], p["needed"]["q"])
        capped = review.plan({"q": quiet, "n": noisy}, max_rounds=50)
        self.assertEqual(capped["rounds"], 50)
        self.assertTrue(capped["capped"])


class CoverageTest(unittest.TestCase):
    """The procedure's promise: the row's interval holds the true ratio in at
    least 95% of reviews, and rows mostly reach a verdict."""

    TRIALS = 300

    def test_two_stage_covers_the_true_ratio(self):
        rng = random.Random(20261202)
        for effect in (1.0, 1.01):
            rows = [two_stage(rng, effect, 0.02, target=0.01) for _ in range(self.TRIALS)]
            missed = sum(not (r["ci_low"] <= effect <= r["ci_high"]) for r in rows)
            low, _ = stats.clopper_pearson(missed, self.TRIALS)
            self.assertLess(low, 0.05, f"effect {effect}: {missed} of {self.TRIALS} missed")
            complete = sum(r["complete"] for r in rows)
            self.assertGreater(complete, 0.8 * self.TRIALS)

    def test_no_difference_means_smaller_than_the_target(self):
        rng = random.Random(7)
        rows = [two_stage(rng, 1.02, 0.01, target=0.01) for _ in range(self.TRIALS)]
        wrong = sum(r["verdict"] == stats.NO_DIFFERENCE for r in rows)
        self.assertLess(wrong, 0.05 * self.TRIALS)

    def test_peeking_is_caught(self):
        # the negative control: the same check fails for the invalid rule
        rng = random.Random(11)
        alarms = 0
        for _ in range(self.TRIALS):
            before, after = stats.simulate_rounds(rng, 100, 1.0, 0.02, 0.0)
            res = review.peeking(lambda n: (before[:n], after[:n]))
            alarms += res["verdict"] != stats.NO_DIFFERENCE
        low, _ = stats.clopper_pearson(alarms, self.TRIALS)
        self.assertGreater(low, 0.05, f"peeking: {alarms} of {self.TRIALS} false alarms")


if __name__ == "__main__":
    unittest.main()


class ShownTest(unittest.TestCase):
    """A tiny but significant change keeps its sign in the text."""

    def test_digits(self):
        tiny = {"ratio": 1.0003, "ci_low": 1.0001, "ci_high": 1.0005}
        self.assertEqual(review.digits(tiny), 2)
        self.assertEqual(review.percent(tiny["ratio"], review.digits(tiny)), "+0.03%")
        self.assertEqual(review.interval(tiny), "[+0.01,+0.05]")
        wide = {"ratio": 1.012, "ci_low": 0.998, "ci_high": 1.03}
        self.assertEqual(review.digits(wide), 1)
        self.assertEqual(review.interval(wide), "[-0.2,+3.0]")
        self.assertEqual(review.interval({"ci_low": None, "ci_high": None}), "-")

