"""core/paired.py: one row's paired rounds from a rounds.Series, grown a
chunk at a time, judged once (the lost rule over every round, the statistic
once), and its file forms read back by their one validator; hostile records
refused with one line. Synthetic rounds, nothing timed."""

import copy
import json
import unittest

from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.core import limits, paired, vocab
from vdsobench_cli.measure import rounds

from reports import review

KEY = vocab.GroupKey("monotonic", "hot", 1)


def series(before_ns, after_ns, disturbed=(), retries=None, start=0):
    """A Series of subjects a and b over rounds start, start + 1, ..."""
    g = rounds.Series(KEY, 1000)
    for who, values in ((("a", 0), before_ns), (("b", 0), after_ns)):
        g.ns[who] = {start + i: v for i, v in enumerate(values)}
        g.retries[who] = {start + i: 0 for i in range(len(values))}
    for who, r in disturbed:
        g.disturbed.setdefault((who, 0), set()).add(r)
    for (who, r), n in (retries or {}).items():
        g.retries[(who, 0)][r] = n
    return g


def record(n, lost=0, base=10.0):
    return paired.PairedRounds.from_series(
        series([base + i % 3 * 0.01 for i in range(n)], [base * 1.02] * n,
               [("b", r) for r in range(lost)]), "a", "b")


class FromSeriesTest(unittest.TestCase):
    def test_the_rounds_both_ran(self):
        g = series([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [("a", 1), ("b", 1), ("b", 2)],
                   {("a", 0): 1, ("b", 2): 2})
        del g.ns[("a", 0)][0]  # round 0: only b ran it
        rec = paired.PairedRounds.from_series(g, "a", "b")
        self.assertEqual(rec.key, KEY)
        self.assertEqual(rec.rounds, (1, 2))
        self.assertEqual((rec.before_ns, rec.after_ns), ((2.0, 3.0), (5.0, 6.0)))
        self.assertEqual(rec.disturbed, frozenset({1, 2}))
        self.assertEqual(rec.lost, 2)
        self.assertEqual(rec.retried, 1)  # b's round 2; a's round 0 is not paired
        self.assertEqual(rec.iterations, 1000)
        self.assertTrue(all(type(r) is int for r in rec.rounds))


class ExtendTest(unittest.TestCase):
    def test_a_chunk_appended_and_renumbered(self):
        one = paired.PairedRounds.from_series(series([1.0, 2.0], [3.0, 4.0], [("a", 1)]),
                                              "a", "b")
        two = paired.PairedRounds.from_series(
            series([5.0, 6.0, 7.0], [8.0, 9.0, 10.0], [("b", 0)], {("b", 2): 3}), "a", "b")
        both = one.extend(two)
        self.assertEqual(both.rounds, (0, 1, 2, 3, 4))
        self.assertEqual(both.before_ns, (1.0, 2.0, 5.0, 6.0, 7.0))
        self.assertEqual(both.after_ns, (3.0, 4.0, 8.0, 9.0, 10.0))
        self.assertEqual(both.disturbed, frozenset({1, 2}))
        self.assertEqual(both.retried, 1)
        self.assertEqual(one.rounds, (0, 1))  # frozen: extend made a new one

    def test_another_rows_rounds_are_refused(self):
        other = paired.PairedRounds(vocab.GroupKey("realtime", "hot", 1), "a", "b")
        with self.assertRaises(ValueError):
            record(4).extend(other)


class RefusedTest(unittest.TestCase):
    def test_the_rule_over_every_round(self):
        """1 of 8 lost is more than 10% of a chunk, 1 of 20 is not: the rule
        judges the rounds the verdict uses, never a chunk alone."""
        first = record(8, lost=1)
        self.assertIn("1 of 8 rounds lost the CPU", first.refused())
        both = first.extend(record(12))
        self.assertIsNone(both.refused())
        self.assertEqual(both.lost, 1)
        worse = record(12).extend(record(8, lost=3))
        self.assertEqual(worse.refused(), limits.lost_reason(KEY, 3, 20))
        self.assertTrue(worse.refused().startswith("monotonic/hot/cpu1: 3 of 20 rounds"))

    def test_a_refused_row_has_no_verdict(self):
        r = review.paired_row(record(20, lost=5), review.TARGET, limits.ALPHA, 1)
        self.assertFalse(r["complete"])
        self.assertEqual(r["reason"], review.LOST)


class RowTest(unittest.TestCase):
    def test_the_statistic_of_its_rounds(self):
        rec = record(30)
        self.assertEqual(review.paired_row(rec, 0.005, 0.05, 3),
                         review.row(list(rec.before_ns), list(rec.after_ns), 0.005, 0.05, 3))
        self.assertEqual(review.paired_row(rec)["verdict"], "slower")


class JsonTest(unittest.TestCase):
    def test_round_trip_keeps_ints(self):
        rec = record(6, lost=1)
        back = paired.PairedRounds.from_json(json.loads(json.dumps(rec.to_json())))
        self.assertEqual(back, rec)
        self.assertTrue(all(type(r) is int for r in back.rounds))

    def hostile(self):
        good = record(4, lost=1).to_json()

        def edit(**fields):
            obj = copy.deepcopy(good)
            obj.update(fields)
            return obj
        yield "a list", []
        yield "a field missing", {k: v for k, v in good.items() if k != "retried"}
        yield "an extra field", edit(extra=1)
        yield "a key not a group", edit(key="monotonic/hot")
        yield "a key with a control character", edit(key="mono\x1b[2J/hot/cpu1")
        yield "a key not text", edit(key=["monotonic", "hot", 1])
        yield "a round as text", edit(rounds=["0", 1, 2, 3])
        yield "a round true", edit(rounds=[True, 1, 2, 3])
        yield "a negative round", edit(rounds=[-1, 1, 2, 3])
        yield "a huge round", edit(rounds=[0, 1, 2, 10 ** 400])
        yield "rounds twice", edit(rounds=[0, 1, 1, 3])
        yield "rounds out of order", edit(rounds=[0, 2, 1, 3])
        yield "unpaired", edit(after_ns=good["after_ns"][:3])
        yield "a time not a number", edit(before_ns=[1.0, "2", 3.0, 4.0])
        yield "a negative time", edit(before_ns=[-1.0, 2.0, 3.0, 4.0])
        yield "an infinite time", edit(before_ns=[float("inf"), 2.0, 3.0, 4.0])
        yield "a NaN", edit(after_ns=[float("nan"), 2.0, 3.0, 4.0])
        yield "a tiny time", edit(after_ns=[5e-324, 2.0, 3.0, 4.0])
        yield "too many rounds", edit(rounds=list(range(limits.MAX_ROUNDS + 1)))
        yield "a disturbed round not measured", edit(disturbed=[7])
        yield "a negative count", edit(retried=-1)
        yield "a count as text", edit(retried="1")
        yield "no iterations", edit(iterations=0)
        yield "an empty name", edit(before="")
        yield "a huge name", edit(after="x" * 100000)

    def test_hostile_records_one_line(self):
        for what, obj in self.hostile():
            with self.subTest(what):
                with self.assertRaises(UsageError) as e:
                    paired.PairedRounds.from_json(obj, "n1.json")
                self.assertNotIn("\n", str(e.exception))
                self.assertTrue(str(e.exception).startswith("n1.json"), str(e.exception))
                self.assertLess(len(str(e.exception)), 300)


class ComparisonTest(unittest.TestCase):
    def test_the_rounds_part_and_back(self):
        rec = record(5, lost=2)
        row = {"clock": "monotonic", "mode": "hot", "cpu": 1, "metric": "ns/call",
               "baseline": "a", "variant": "b", **rec.row_part()}
        c = json.loads(json.dumps({"meta": {"iterations": {str(KEY): 1000}},
                                   "rounds": paired.comparison_rounds([rec]), "rows": [row]}))
        self.assertEqual(list(c["rounds"]), ["monotonic/hot/cpu1"])
        self.assertEqual(set(c["rounds"]["monotonic/hot/cpu1"]), {"a#0", "b#0"})
        back = paired.PairedRounds.from_comparison(c, c["rows"][0])
        self.assertEqual(back, rec)
        self.assertEqual(row["lost"], 2)
        self.assertEqual(row["refused"], rec.refused())

    def test_hostile_round_numbers(self):
        rec = record(3)
        row = {"clock": "monotonic", "mode": "hot", "cpu": 1, "baseline": "a", "variant": "b"}
        for bad in (" 1", "1_0", "\u0663", "9" * 5000, "-1"):
            with self.subTest(bad=bad):
                c = {"rounds": paired.comparison_rounds([rec])}
                c["rounds"]["monotonic/hot/cpu1"]["a#0"][bad] = 1.0
                with self.assertRaises(UsageError) as e:
                    paired.PairedRounds.from_comparison(c, row, "n1.json")
                self.assertIn("is not a round number", str(e.exception))
                self.assertNotIn("\n", str(e.exception))

    def test_a_group_found_by_its_key(self):
        """A clock x mode's first group in a comparison part, by GroupKey: a
        prefix match took "monotonic/hot" for "monotonic/hotter" and a
        malformed key for a group."""
        part = {"monotonic/hotter/cpu0": 1, "bad key": 2, "monotonic/hot/cpu3": 3,
                "monotonic/hot/cpu1": 4}
        self.assertEqual(paired.group_in(part, "monotonic", "hot"), "monotonic/hot/cpu3")
        self.assertIsNone(paired.group_in(part, "realtime", "hot"))
        self.assertEqual(paired.subject_key("a+b+c"), "a+b+c#0")
        self.assertEqual(paired.subject_key("a+b+c", 2), "a+b+c#2")


if __name__ == "__main__":
    unittest.main()
