"""selftest-stats' resampling keeps a compare's ABBA balance; the command's
parts run on synthetic pairs (the real-machine run is a benchmark, not a test)."""

import math
import random
import unittest

from . import selftest_stats


def pairs_with_position_effect(rounds, cost=1.05):
    """A/A pairs where the second batch of a round is `cost` slower: copy 0
    runs first in even rounds (Williams order for two), second in odd ones."""
    return [(30.0, 30.0 * cost) if r % 2 == 0 else (30.0 * cost, 30.0) for r in range(rounds)]


class BalancedResamplerTest(unittest.TestCase):
    def test_half_of_each_order(self):
        sample = selftest_stats.balanced_resampler(pairs_with_position_effect(100), 40)
        a, b = sample(random.Random(3))
        self.assertEqual(len(a), 40)
        self.assertEqual(sum(y > x for x, y in zip(a, b)), 20,
                         "copy 1 second in exactly half the rounds")

    def test_odd_trial_length(self):
        a, _ = selftest_stats.balanced_resampler(pairs_with_position_effect(10), 7)(
            random.Random(0))
        self.assertEqual(len(a), 7)

    def test_position_effect_is_seen_and_cancelled(self):
        pairs = pairs_with_position_effect(40)
        first, second = selftest_stats.position_effect(pairs)
        self.assertAlmostEqual(first, 1.05)
        self.assertAlmostEqual(second, 1 / 1.05)
        contiguous, resampled = selftest_stats.aa(pairs, 20, 200, 0.05, random.Random(1))
        self.assertEqual(resampled["count"], 0, "balanced trials see no difference")
        self.assertEqual(contiguous["trials"], 2)

    def test_injected_shift_is_found(self):
        rng = random.Random(2)
        noise = [tuple(30 * math.exp(rng.gauss(0, 0.02)) for _ in range(2)) for _ in range(200)]
        shifts = selftest_stats.power(noise, 40, 200, 0.05, 0.028, rng)
        by_shift = {round(s, 2): (claimed, observed) for s, claimed, observed in shifts}
        self.assertGreater(by_shift[1.05][1], 0.95)
        self.assertLess(by_shift[1.01][1], by_shift[1.05][1])


if __name__ == "__main__":
    unittest.main()
