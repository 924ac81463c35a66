"""Every format renders every shape of comparison; lkml fits mail; seed numbers survive."""

import csv
import io
import json
import unittest

from reports import tables
from vdsobench_cli.core import stats

BASELINE = "x86_gtod+rdtscp+always"
LONG = ("generic_timens_vvar_datapage_split+lfence_rdtsc+noinline_2",
        "x86_gtod_raw_copy_with_a_long_suffix+rdtscp+noinline")  # ~45+ characters
# seed 000: calls in 10 s before and after the CLOCK_MONOTONIC_RAW patch
SEED = (("monotonic", 355531720, 338039373, "-5%"),
        ("monotonic_raw", 44831738, 336064912, "+650%"),
        ("realtime", 347665133, 338102907, "-3%"))


def row(clock, base, value, variant="x86_gtod_raw_copy+rdtscp+always", mode="hot",
        verdict=None, metric="ns/call", **extra):
    ratio = value / base
    if verdict is None:
        verdict = "faster" if ratio < 1 else "slower"
    return dict(dict(clock=clock, mode=mode, metric=metric, baseline=BASELINE, variant=variant,
                     base=base, value=value, ratio=ratio, ci_low=ratio * 0.99,
                     ci_high=ratio * 1.01, p=1e-9, p_adjusted=3e-9, verdict=verdict, n=30),
                **extra)


def comparison(rows, **meta):
    return {"meta": dict({"cpu_model": "AMD EPYC 7B13 64-Core Processor", "kernel": "6.18.44",
                          "hypervisor": "KVM", "method": "paired sign test, Bonferroni",
                          "alpha": 0.05, "comparisons": len(rows), "rounds": 30,
                          "paired": True, "notes": ["counters: no PMU (ENOENT)"]}, **meta),
            "rows": rows}


def seed_comparison():
    """Seed 000's table as ns/call rows (10 s / calls), one not significant."""
    rows = [row(clock, 10e9 / before, 10e9 / after) for clock, before, after, _ in SEED]
    rows[2]["verdict"] = stats.NO_DIFFERENCE
    return comparison(rows)


def many_variants():
    """3 variants (two with long names) x 2 clocks x 2 modes, plus a counter, a
    simulated count and a row with too few rounds for a CI."""
    rows = [row(clock, 30.0, 30.0 * f, variant=v, mode=mode, cpu=3)
            for v, f in (("x86_gtod_raw_copy+rdtscp+always", 0.9),) + tuple(zip(LONG, (1.1, 1.0)))
            for clock in ("monotonic_coarse", "getres:monotonic_coarse")
            for mode in ("hot", "pressure")]
    rows[-1]["verdict"] = stats.NO_DIFFERENCE
    rows[0].update(ci_low=None, ci_high=None, n=4, note="4 rounds are too few; 6 are needed")
    rows.append(row("tai", 90.0, 80.0, metric="cycles/call", verdict="lower", cpu=3))
    rows.append(row("tai", 95.0, 95.0, metric="sim:instructions", verdict="same", p=None,
                    p_adjusted=None, n=1, cpu=3, ci_low=1.0, ci_high=1.0))
    return comparison(rows)


def unpaired_comparison():
    rows = [row("monotonic", 30.0, 29.0, variant=f"{v} (new)", baseline=f"{v} (old)",
                verdict=stats.NO_DIFFERENCE, confidence=0.9875)
            for v in ("sys/vdso", LONG[0])]
    return comparison(rows, paired=False, rounds=None)


def assert_contains(test, text, *parts):
    for part in parts:
        test.assertIn(part, text)


def cold_comparison():
    """The cold mode's time rows beside its simulated misses (multshift-in-base)."""
    rows = [row(clock, 24.7, 25.2, variant="x86_gtod_ts_multshift+rdtscp+always", mode="cold")
            for clock in ("monotonic", "realtime")]
    rows += [row(clock, 1.0, misses, variant="x86_gtod_ts_multshift+rdtscp+always",
                 mode="cold", metric="sim:l1d_misses", verdict="higher" if misses > 1 else "same",
                 p=None, p_adjusted=None, n=1, ci_low=misses, ci_high=misses)
             for clock, misses in (("monotonic", 2.0), ("realtime", 1.0))]
    return comparison(rows)


def simulated_only(comparison):
    """A recipe's simulated section: the comparison's sim rows alone."""
    return dict(comparison, rows=[r for r in comparison["rows"]
                                  if r["metric"].startswith("sim:")])


FIXTURES = {"seed": seed_comparison, "many": many_variants, "unpaired": unpaired_comparison,
            "cold": cold_comparison, "simulated": lambda: simulated_only(cold_comparison())}


class FormatsTest(unittest.TestCase):
    def test_every_format_renders_every_fixture(self):
        for name, make in FIXTURES.items():
            for fmt in tables.FORMATS:
                for calls_per in (None, 10.0):
                    with self.subTest(fixture=name, fmt=fmt, calls_per=calls_per):
                        out = tables.render(make(), fmt, calls_per=calls_per)
                        self.assertTrue(out.endswith("\n"))
                        if fmt not in ("csv", "json"):
                            self.assertIn("AMD EPYC", out)

    def test_unknown_format_names_the_valid_ones(self):
        with self.assertRaises(ValueError) as e:
            tables.render(seed_comparison(), "html")
        for fmt in tables.FORMATS:
            self.assertIn(fmt, str(e.exception))
        with self.assertRaisesRegex(ValueError, "calls_per"):
            tables.render(seed_comparison(), "lkml", calls_per=0)


class LkmlTest(unittest.TestCase):
    def test_every_line_fits_72_columns(self):
        for name, make in FIXTURES.items():
            for calls_per in (None, 10.0):
                for line in tables.render(make(), "lkml", calls_per=calls_per).splitlines():
                    self.assertLessEqual(len(line), 72, f"{name}: {line!r}")

    def test_seed_numbers_round_trip(self):
        out = tables.render(seed_comparison(), "lkml", calls_per=10.0)
        lines = out.splitlines()
        self.assertEqual(lines[0].split(), ["Clock", "Before", "After", "Diff"])
        cells = {line.split()[0]: line.split()[1:] for line in lines[2:5]}
        self.assertEqual(cells["CLOCK_MONOTONIC"], ["355.5M", "338.0M", "-5%"])
        self.assertEqual(cells["CLOCK_MONOTONIC_RAW"], ["44.8M", "336.1M", "+650%"])
        self.assertEqual(cells["CLOCK_REALTIME"], ["347.7M", "338.1M", "~-3%"])
        assert_contains(self, out, "~ = no significant difference", "CLOCK_MONOTONIC_RAW: 7.496 [",
                        "Before: x86_gtod+rdtscp+always",
                        "After: x86_gtod_raw_copy+rdtscp+always", "KVM", "30 interleaved rounds")

    def test_ns_per_call_without_calls_per(self):
        lines = tables.render(seed_comparison(), "lkml").splitlines()
        # time went down 87%: the same seed row, in ns/call
        self.assertEqual(lines[3].split(), ["CLOCK_MONOTONIC_RAW", "223.1", "29.8", "-87%"])

    def test_blocks_per_variant_with_modes_and_kernel_names(self):
        out = tables.render(many_variants(), "lkml")
        for name in LONG:
            self.assertIn(name, out.replace("\n", ""))
        self.assertEqual(out.count("Clock  "), 3 + 2, "3 variants' time, a counter, a sim")
        assert_contains(self, out, "getres(CLOCK_MONOTONIC_COARSE) pressure",
                        "CLOCK_MONOTONIC_COARSE hot", "no CI: too few rounds", "6 are needed",
                        "(exact)", "Bonferroni over 14")

    def test_a_label_too_long_for_its_column_gets_its_own_line(self):
        odd = "a_clock_name_nobody_has_heard_of_" * 3
        rows = [row("getres:monotonic_coarse", 10.0, 9.0, mode="pressure", cpu=12),
                row(odd, 10.0, 9.0, cpu=1)]
        lines = tables.render(comparison(rows), "lkml", calls_per=10.0).splitlines()
        self.assertTrue(all(len(line) <= 72 for line in lines))
        self.assertTrue(lines[2].startswith("getres(CLOCK_MONOTONIC_COARSE) pressure cpu12  "))
        self.assertEqual("".join(lines[3:5]), odd + " hot cpu1")
        self.assertEqual(lines[5].split(), ["1.0G", "1.1G", "+11%"])

    def test_diff_text(self):
        self.assertEqual(tables.diff(1.0), "0%")
        self.assertEqual(tables.diff(1.004), "+0.4%")
        self.assertEqual(tables.diff(0.95, "faster"), "-5%")
        self.assertEqual(tables.diff(1.01, stats.NO_DIFFERENCE), "~+1%")
        self.assertEqual(tables.diff(None), "")


class OtherFormatsTest(unittest.TestCase):
    def test_markdown_table(self):
        out = tables.render(many_variants(), "markdown")
        lines = out.splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith("| clock"))
        self.assertRegex(lines[head + 1], r"^\|(-{3}:?\|)+$")
        self.assertEqual(lines[head].count("|"), lines[head + 1].count("|"))
        self.assertIn("| CI |", lines[head])
        self.assertIn("| p |", lines[head])
        self.assertIn(f"`{LONG[0]}`", out)
        self.assertIn("[0.891, 0.909]", out)

    def test_csv_parses_back_to_the_same_numbers(self):
        original = many_variants()
        parsed = list(csv.DictReader(io.StringIO(tables.render(original, "csv"))))
        self.assertEqual(len(parsed), len(original["rows"]))
        for got, want in zip(parsed, original["rows"]):
            for key, value in want.items():
                if isinstance(value, float):
                    self.assertEqual(float(got[key]), value, key)
                elif value is None:
                    self.assertEqual(got[key], "", key)
                else:
                    self.assertEqual(got[key], str(value), key)

    def test_json_round_trips_and_is_stable(self):
        original = many_variants()
        text = tables.render(original, "json")
        self.assertEqual(json.loads(text), original)
        shuffled = {"rows": original["rows"], "meta": dict(reversed(original["meta"].items()))}
        self.assertEqual(tables.render(shuffled, "json"), text)

    def test_cold_rows_say_what_the_time_is(self):
        for fmt in ("lkml", "table", "markdown"):
            out = " ".join(tables.render(cold_comparison(), fmt).split())
            self.assertIn("cold: each call timed alone after its data page's lines were "
                          "evicted from L1D, net of the bracket", out, fmt)
        out = " ".join(tables.render(seed_comparison(), "lkml").split())
        self.assertNotIn("timed alone", out, "hot rows: no cold note")

    def test_a_simulated_table_ends_with_no_timing_footer(self):
        for fmt in ("lkml", "table", "markdown"):
            out = tables.render(simulated_only(cold_comparison()), fmt)
            flat = " ".join(out.split())
            self.assertIn("Simulated by cachegrind: exact counts per call", flat, fmt)
            for timing in ("interleaved rounds", "no significant difference",
                           "Bonferroni", "paired sign test", "timed alone"):
                self.assertNotIn(timing, flat, fmt)
            self.assertIn("exact: deterministic counts", flat, fmt)
        lkml = tables.render(simulated_only(cold_comparison()), "lkml")
        self.assertIn("Ratio after/before (exact):", lkml)
        self.assertIn("CLOCK_MONOTONIC: 2.000 (exact)", lkml)
        mixed = " ".join(tables.render(cold_comparison(), "lkml").split())
        self.assertIn("interleaved rounds", mixed, "time rows keep the timing footer")

    def test_terminal_table_has_every_field(self):
        out = tables.render(unpaired_comparison(), "table")
        self.assertIn("Unpaired", out)
        self.assertIn("sys/vdso (old)", out)
        self.assertIn("95% CI (98.75% each, Bonferroni over 2, widened: unpaired)", out)
        lines = out.splitlines()
        head = next(line for line in lines if line.startswith("clock"))
        for field in ("mode", "metric", "baseline", "variant", "before", "after", "ratio",
                      "CI", "p adj.", "verdict", "n"):
            self.assertIn(field, head.split("  ") + head.split())
        self.assertIn("no significant difference", out)


if __name__ == "__main__":
    unittest.main()
