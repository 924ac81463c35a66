"""selftest-stats' resampling keeps a compare's ABBA balance; the command's
parts run on synthetic pairs (the real-machine run is a benchmark, not a test)."""

import math
import os
import random
import unittest

from vdsobench_cli.commands import selftest_stats


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


def paired(ratio, low, high):
    return {"ratio": ratio, "ci_low": low, "ci_high": high}


class BusyLoopTest(unittest.TestCase):
    """The busy-loop check's decision on made-up results (the floors' ratio
    idle and beside a busy loop, as measured on a KVM guest), and the loop
    itself stopped on the way out."""

    IDLE = paired(0.613, 0.612, 0.614)

    def test_a_loss_not_noticed_fails(self):
        ok, why = selftest_stats.busy_verdict(self.IDLE, paired(0.787, 0.778, 0.788), None)
        self.assertFalse(ok)
        self.assertIn("NOT NOTICED", why)

    def test_a_loss_noticed_passes_and_says_so(self):
        reason = "none/hot/cpu1: 40 of 40 rounds lost the CPU even after 3 retries"
        ok, why = selftest_stats.busy_verdict(self.IDLE, paired(0.787, 0.778, 0.788), reason)
        self.assertTrue(ok)
        self.assertEqual(why, f"noticed: cannot measure here ({reason})")

    def test_unharmed_within_the_widened_interval(self):
        # 0.612 / 1.03 = 0.5942 .. 0.614 * 1.03 = 0.6324
        for ratio, ok in ((0.613, True), (0.595, True), (0.632, True), (0.594, False),
                          (0.633, False)):
            self.assertEqual(selftest_stats.busy_verdict(
                self.IDLE, paired(ratio, ratio, ratio), None)[0], ok, ratio)

    def test_the_loop_is_stopped_on_every_way_out(self):
        cpu = max(os.sched_getaffinity(0))
        with self.assertRaises(KeyError):
            with selftest_stats.busy_loop(cpu) as proc:
                self.assertIsNotNone(proc, "started and pinned")
                self.assertIsNone(proc.poll(), "spinning")
                raise KeyError("a failure inside the block")
        self.assertIsNotNone(proc.poll(), "stopped after the failure")
        with selftest_stats.busy_loop(cpu) as proc:
            pass
        self.assertIsNotNone(proc.poll(), "stopped after the block")

    def test_a_cpu_it_may_not_use_gives_no_loop(self):
        with selftest_stats.busy_loop(1 << 20) as proc:
            self.assertIsNone(proc)


if __name__ == "__main__":
    unittest.main()
