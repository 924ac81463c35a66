"""What a recipe's steps share (recipes.py, patch_review.py): the Session
(mode, output directory, machine), the row lookups and how a row is worded,
and one variant's verify record. A leaf of the recipe modules: the `recipe`
command (recipe.py) imports the table, the table its recipes, each recipe
this."""

import json
import os
import sys
import textwrap

from vdsobench_cli.cli import atomic, build, labels, lifecycle
from vdsobench_cli.measure import compare
from vdsobench_cli.measure import fingerprint
from vdsobench_cli.measure.harness import Selection
from vdsobench_cli.core import limits

from reports import tables

WIDTH = 72
OUT_DIR_BYTES = 4 * 1024 * 1024  # a recipe's comparisons and charts, with room to spare


class Session:
    """What a recipe's steps share: the mode (quick for CI), where files go,
    and the machine, so the recipe can say how it differs from the seed's."""

    def __init__(self, name, quick, out_dir, out=None, budget_s=None):
        self.name, self.quick, self.out_dir = name, quick, out_dir
        # patch-review's time budget for its timed rounds (None: the mode's)
        self.budget_s = budget_s
        self.out = out or sys.stdout
        # enough for an interval at 99.9% (Bonferroni over a dozen rows)
        self.rounds = limits.QUICK_ROUNDS if quick else limits.ROUNDS
        self.batch_ms = limits.QUICK_BATCH_MS if quick else limits.BATCH_MS
        self.files = []
        fp = fingerprint.collect([])
        self.machine = compare.machine_meta(fp)
        self.fingerprint = fp

    def say(self, text=""):
        for para in str(text).split("\n"):
            print(textwrap.fill(para, WIDTH, subsequent_indent="  ") if para else "",
                  file=self.out)
        self.out.flush()

    def block(self, text):
        """Preformatted lines (tables): printed as they are."""
        print(text.rstrip("\n"), file=self.out)
        self.out.flush()

    def heading(self, text):
        self.say()
        self.say(f"-- {text}")

    def compare(self, variants, clocks=None, modes=None, sim=False, tag="compare",
                rounds=None):
        options = Selection(clocks=clocks, modes=modes)
        comparison = compare.paired_comparison(variants, options, rounds or self.rounds,
                                               self.batch_ms, sim=sim)
        self.save(comparison, tag)
        return comparison

    def table(self, comparison, calls_per=None, metric="ns/call"):
        shown = dict(comparison, rows=[r for r in comparison["rows"] if r["metric"] == metric])
        self.block(tables.render(shown, "lkml", calls_per=calls_per))

    def save(self, comparison, tag):
        path = os.path.join(self.out_dir, f"{tag}.json")
        atomic.write_atomic(path, comparison)
        self.files.append(path)
        try:
            from vdsobench_cli.measure import charts
        except ImportError:  # plotting is optional for a recipe's numbers
            return
        self.files += [str(p) for p in charts.plot_comparison(
            comparison, os.path.join(self.out_dir, tag))]

    def machine_line(self):
        m = self.machine
        hyp = f", under {m['hypervisor']}" if m.get("hypervisor") else ", bare metal"
        return f"{m.get('cpu_model')}, kernel {m.get('kernel')}{hyp}"


def rows(comparison, metric="ns/call", **match):
    return [r for r in comparison["rows"] if r["metric"] == metric
            and all(r.get(k) == v for k, v in match.items())]


def row(comparison, metric="ns/call", **match):
    found = rows(comparison, metric, **match)
    if not found:
        raise KeyError(f"no {metric} row for {match}")
    return found[0]


def calls_diff(r):
    """The seeds' Diff: change in calls per time, so faster is positive."""
    return f"{(1 / r['ratio'] - 1) * 100:+.0f}%"


def ci_text(r):
    if r.get("ci_low") is None:
        return "(too few rounds for an interval)"
    return f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"


def verdict_line(r, label=None):
    ci = ci_text(r)
    who = label or f"{r['variant']} vs {r['baseline']}"
    return f"{who}, {r['clock']} {r['mode']}: time ratio {r['ratio']:.3f} {ci}: {r['verdict']}"


def verify_one(s, variant, clock_mode="tsc"):
    """verify's record of one variant, in a clock mode (verify --clock-mode)."""
    build.build([labels.VERIFY])
    cmd = [*build.program(labels.VERIFY), "--duration-ms",
           "100" if s.quick else "300", "--system-ms", "200", variant,
           *(["--clock-mode", clock_mode] if clock_mode != "tsc" else [])]
    r = lifecycle.run(cmd, capture_output=True, text=True, errors="replace")
    for line in r.stdout.splitlines():
        rec = json.loads(line)
        if rec.get("variant") == variant:
            return rec
    return {"status": f"no result (exit {r.returncode})"}

