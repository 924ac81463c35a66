"""`recipe NAME`: one experiment from the seeds, end to end.

Each recipe (recipes.py) prints the seed's own table, today's measurement in
the same shape, the verdicts with their intervals, and where this machine's
result differs from the seed's and why that may be; it writes the comparison
and its plots into a fresh directory (never over an earlier run's).
"""

import argparse
import datetime
import os
import sys
import textwrap

from . import arch, build, compare, fingerprint, results
from .errors import CliError, Failure, UsageError

from reports import tables

WIDTH = 72
OUT_DIR_BYTES = 4 * 1024 * 1024  # a recipe's comparisons and charts, with room to spare


class Session:
    """What a recipe's steps share: the mode (quick for CI), where files go,
    and the machine, so the recipe can say how it differs from the seed's."""

    def __init__(self, name, quick, out_dir, out=None):
        self.name, self.quick, self.out_dir = name, quick, out_dir
        self.out = out or sys.stdout
        # enough for an interval at 99.9% (Bonferroni over a dozen rows)
        self.rounds = 12 if quick else compare.DEFAULT_ROUNDS
        self.batch_ms = 1 if quick else compare.DEFAULT_BATCH_MS
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
        options = argparse.Namespace(clocks=clocks, modes=modes)
        comparison = compare.paired_comparison(variants, options, rounds or self.rounds,
                                               self.batch_ms, sim=sim)
        self.save(comparison, tag)
        return comparison

    def table(self, comparison, calls_per=None, metric="ns/call"):
        shown = dict(comparison, rows=[r for r in comparison["rows"] if r["metric"] == metric])
        self.block(tables.render(shown, "lkml", calls_per=calls_per))

    def save(self, comparison, tag):
        path = os.path.join(self.out_dir, f"{tag}.json")
        results.write_atomic(path, comparison)
        self.files.append(path)
        try:
            from . import plot
        except ImportError:  # plotting is optional for a recipe's numbers
            return
        self.files += [str(p) for p in plot.plot_comparison(
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


def default_out(name):
    now = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return os.path.join(build.ROOT, "results", "recipes", name,
                        f"{fingerprint.short_host()}-{now}")


def run_recipe(args):
    from . import recipes

    if args.list or not args.name:
        if not args.list:
            raise UsageError(f"recipe: a name is required (valid: {', '.join(recipes.NAMES)}; "
                             "--list describes them)")
        for r in recipes.RECIPES:
            print(f"{r.name:18} {r.title}")
        return 0
    recipe = recipes.by_name(args.name)
    if (args.source or args.patch) and recipe.name != recipes.patch_review.NAME:
        raise UsageError(f"recipe {recipe.name}: --source and --patch are for "
                         f"{recipes.patch_review.NAME} (it reviews a patch on a kernel tree)")
    if recipe.name == recipes.patch_review.NAME:
        recipes.patch_review.check_inputs(args.source, args.patch)
    for patch in args.patch or []:
        recipes.patch_review.subject(patch)  # each readable, or one line now
    target = arch.current()
    if target.emulated and recipe.name not in recipes.EMULATED:
        raise UsageError(f"recipe {recipe.name} --arch {target.name}: this machine runs "
                         f"{target.name} under qemu-user, where every time is the "
                         "emulator's; the recipes that compare code there: "
                         f"{', '.join(recipes.EMULATED)}")
    # checked now, filled as the recipe goes in a hidden directory beside it, moved
    # into place at the end: an interrupted recipe leaves nothing there
    stage = results.StagedDir(args.out or default_out(recipe.name), args.force,
                              need=OUT_DIR_BYTES)
    from . import packages
    packages.ensure_setup()
    session = Session(recipe.name, args.quick, str(stage.path))
    session.source, session.patches = args.source, args.patch
    session.say(f"== recipe {recipe.name}: {recipe.title}")
    session.say(f"Seed: {recipe.seed}")
    if target.emulated:
        session.say(f"This machine: {session.machine_line()}; {target.machine} cross-built "
                    f"here and run under qemu-user ({arch.LABEL}): code is compared, "
                    "never time.")
    else:
        session.say(f"This machine: {session.machine_line()}; {session.rounds} interleaved "
                    "rounds" + (" (--quick: a smoke run, too few rounds for small effects)"
                                if args.quick else "") + ".")
    try:
        ok = recipe.run(session)
    except CliError as e:
        if not session.files:
            raise
        raise Failure(f"{e}; {stage.keep()}") from None
    stage.publish()
    session.heading("files")
    for path in session.files:
        session.say(os.path.relpath(stage.final(path)))
    return 0 if ok is not False else 1


def add_parser(sub):
    p = sub.add_parser("recipe", help="replay one experiment from the seeds end to end",
                       description="Replay one experiment from the mailing-list seeds: the "
                                   "seed's table next to this machine's, verdicts with "
                                   "intervals, plots. `recipe --list` names them.")
    p.add_argument("name", nargs="?", metavar="NAME", help="the recipe (see --list)")
    p.add_argument("--list", action="store_true", help="list the recipes")
    p.add_argument("--quick", action="store_true",
                   help="a short smoke run (12 rounds of 1 ms): for CI, not for conclusions")
    p.add_argument("--out", metavar="DIR",
                   help="where the comparisons and plots go (default "
                        "results/recipes/NAME/<host>-<date>): a new or empty directory; "
                        "written when the recipe ends (an interrupted one leaves nothing, "
                        "a failed one keeps what it wrote in DIR.recovered-<date>)")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty --out (files of the same names replaced)")
    p.add_argument("--source", metavar="SOURCE",
                   help="patch-review: the kernel tree or tarball (as `vdsobench import` "
                        "takes it; default linux-source-6.12)")
    p.add_argument("--patch", action="append", metavar="FILE",
                   help="patch-review: a patch on --source, in order; repeat for a series")
    arch.add_argument(p, "run the recipe on this architecture's build (arm64: inline only)")
    p.set_defaults(func=run_recipe)
