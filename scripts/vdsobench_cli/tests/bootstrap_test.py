"""bootstrap.py: its draws have the distribution of a resample's median, its
percentile is distributions.percentile of what its counts stand for, and its work
does not grow with the resamples or with the rows of a compare."""

import collections
import itertools
import random
import statistics
import unittest
from unittest import mock

from vdsobench_cli.core import bootstrap, distributions, stats


def exact_median_indices(n):
    """{(i, j): probability} of the sorted-order indices whose mean is the median
    of a resample of n (every one of the n^n resamples, counted)."""
    counts = collections.Counter()
    for resample in itertools.product(range(n), repeat=n):
        s = sorted(resample)
        counts[(s[(n - 1) // 2], s[n // 2])] += 1
    return {k: v / n ** n for k, v in counts.items()}


class DrawTest(unittest.TestCase):
    def test_draws_have_the_resampled_medians_distribution(self):
        resamples = 40000
        for n in (2, 3, 4, 5, 6):
            with self.subTest(n=n):
                want = exact_median_indices(n)
                got = collections.Counter()
                for (base, _), count in bootstrap.draws(n, 2, resamples, 1):
                    got[base] += count
                self.assertLessEqual(set(got), set(want), "an index pair no resample has")
                for pair, p in want.items():
                    self.assertAlmostEqual(got[pair] / resamples, p, delta=0.01,
                                           msg=f"n {n}, order statistics {pair}")

    def test_large_samples_draw_near_the_middle(self):
        n = 10001
        for (base, other), _ in bootstrap.draws(n, n + 1, 500, 2):
            self.assertEqual(base[0], base[1])
            self.assertLessEqual(other[0], other[1])
            for i in base + other:
                self.assertLess(abs(i - n // 2), n // 20)


class PercentileTest(unittest.TestCase):
    def test_weighted_percentile_is_numpys_of_the_expanded_values(self):
        rng = random.Random(3)
        for _ in range(300):
            counts = collections.Counter(rng.choice([0.5, 1.0, 1.25, 2.0, 3.0, 7.5])
                                         for _ in range(rng.randint(1, 40)))
            ordered = sorted(counts.items())
            expanded = sorted(counts.elements())
            for fraction in (0.0, 0.0125, 0.025, 0.3, 0.5, 0.975, 0.9875, 1.0):
                self.assertEqual(
                    bootstrap.weighted_percentile(ordered, len(expanded), fraction),
                    distributions.percentile(expanded, fraction), (ordered, fraction))


class ShapeTest(unittest.TestCase):
    def test_work_grows_with_the_distinct_ratios_not_the_resamples(self):
        ratios = []

        def ratio(b, o):
            ratios.append((b, o))
            return o / b
        bootstrap.ratio_ci([1.0, 2.0, 3.0], [2.0, 3.0, 4.0], 0.95, 9999, 0, ratio)
        self.assertLessEqual(len(ratios), 9, "a ratio per resample, not per distinct pair")

    def test_draws_are_made_once_for_many_comparisons_of_one_size(self):
        rng = random.Random(4)
        with mock.patch.object(bootstrap, "_median_indices",
                               wraps=bootstrap._median_indices) as drawn:
            bootstrap.draws.cache_clear()
            for _ in range(50):
                stats.unpaired([rng.uniform(10, 11) for _ in range(3)],
                               [rng.uniform(10, 11) for _ in range(3)], comparisons=50)
        self.assertEqual(drawn.call_count, 2 * 9999, "the draws were made again per row")

    def test_same_seed_same_interval_other_seed_close(self):
        base = [10.0 + 0.1 * (i % 7) for i in range(30)]
        other = [x * 1.04 for x in base]
        first = bootstrap.ratio_ci(base, other, 0.975, 9999, 0, stats._ratio)
        bootstrap.draws.cache_clear()
        self.assertEqual(bootstrap.ratio_ci(base, other, 0.975, 9999, 0, stats._ratio), first)
        again = bootstrap.ratio_ci(base, other, 0.975, 9999, 1, stats._ratio)
        self.assertAlmostEqual(again[0], first[0], delta=0.01)
        self.assertAlmostEqual(again[1], first[1], delta=0.01)
        self.assertLess(first[0], statistics.median(other) / statistics.median(base))
        self.assertGreater(first[1], statistics.median(other) / statistics.median(base))


if __name__ == "__main__":
    unittest.main()
