"""`review-node BEFORE AFTER --out FILE`: one node's share of `recipe
patch-review --fleet`, run from the bundle on every node of the job.

BEFORE and AFTER are two imported layouts (kernel:NAME) built into the
bundle, as rebuilt (--build always) or as kbuild's images of the two trees
(--build image: the image's alternatives applied by the loader for this
node's CPU, as its kernel would). The node reads them with its own CPU's counter, the one the kernel
would choose there (arch.timed_counter(): rdtsc_ordered()'s alternative on
x86-64, RDTSCP where the CPU has it, else lfence; rdtsc), or --counter's. It
verifies the patched layout, then the other, each with the fake counter and
its own (exact, edges, concurrency); where both pass, it runs the recipe's
two-stage paired rounds (a pilot, then what the pilot's noise asks for,
within the time budget). It writes one file (results/schema/review-node-v1):
its verify records, its counter, the plan and the comparison with every
round, which the submit host pools per CPU model: the comparison is made
from each row's PairedRounds (core/paired.py) and the row judged once,
as the one-machine review's, and the host reads those records back. No simulation here: the
submit host has valgrind, the nodes need not.

Exit 0 when the file is written and the patched layout passes verify, 1
when it fails verify (the file says where it tore) or verify gave no verdict
on one of the four (no file: nothing tore, nothing can be timed), 2 for bad
usage.
"""

import sys
import time

from vdsobench_cli.cli import arch, targets, variants as variants_mod
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.measure import compare
from vdsobench_cli.measure import fingerprint
from vdsobench_cli.recipes import patch_review, patch_review_rounds, review_parts
from vdsobench_cli.recipes.recipe_session import verify_one

from vdsobench_cli.core import limits, vocab

FORMAT = "vdsobench-review-node/1"
# --build: the inline axis's values a node can be asked for
BUILDS = ("always", "image")
SCHEMA = "review-node-v1.schema.json"
# what a verify record keeps of each check (verify's JSON has more)
CHECK_FIELDS = ("name", "ok", "skipped", "detail", "counter", "starved")


class NodeSession:
    """What patch_review_rounds.timed_rounds and verify_one ask of a recipe
    session, with nothing written beside the one file."""

    def __init__(self, quick, budget_s=None):
        self.quick, self.budget_s = quick, budget_s
        self.rounds = limits.QUICK_ROUNDS if quick else limits.ROUNDS
        self.batch_ms = limits.QUICK_BATCH_MS if quick else limits.BATCH_MS


def progress(text):
    print(f"review-node: {text}", file=sys.stderr, flush=True)


def trimmed(rec, side, variant):
    return {"side": side, "variant": variant, "status": str(rec.get("status", "?")),
            "first_failure": rec.get("first_failure"),
            "verdict": patch_review.verdict(rec),
            "checks": [{k: c.get(k) for k in CHECK_FIELDS if k in c}
                       for c in rec.get("checks", []) if isinstance(c, dict)]}


def check_layouts(names, known, build_kind, counter):
    layouts = sorted({v["layout"] for v in known if v.get("layout", "").startswith("kernel:")})
    built = {v["name"] for v in known}
    for name in names:
        if name not in layouts:
            raise UsageError(f"review-node: {name!r} is not an imported layout built into "
                             f"this build (valid: {', '.join(layouts) or 'none imported'})")
        missing = [v for v in (vocab.variant(name, c, build_kind) for c in ("fake", counter))
                   if v not in built]
        if missing:
            raise UsageError(f"review-node: --build {build_kind}: {missing[0]} is not built "
                             "here (valid: --build always; image where the import holds "
                             "kbuild's image)")


def run(args):
    if not args.out:
        raise UsageError("review-node: --out FILE is required (the review file to write)")
    target = targets.check_writable(args.out, args.force, what="the review")
    known = variants_mod.load()
    # the fake counter is verify's, never a timed read
    counters = sorted({v["counter"] for v in known} - {"fake"})
    counter = args.counter or arch.timed_counter()
    if counter not in counters:
        raise UsageError(f"review-node: --counter {counter!r} is not built here "
                         f"(valid: {', '.join(counters)})")
    build_kind = args.build
    check_layouts([args.before, args.after], known, build_kind, counter)
    s = NodeSession(args.quick, args.budget)
    before = vocab.variant(args.before, counter, build_kind)
    after = vocab.variant(args.after, counter, build_kind)
    checked = []
    for side, layout in (("after", args.after), ("before", args.before)):
        for v in (vocab.variant(layout, "fake", build_kind),
                  vocab.variant(layout, counter, build_kind)):
            progress(f"verify {side}: {v}")
            checked.append(trimmed(verify_one(s, v), side, v))
    unrun = next((c for c in checked if not review_parts.judged(c)), None)
    if unrun is not None:  # no tear: the host names this node as failed, with why
        raise Failure(f"review-node: verify gave no verdict on {unrun['variant']}: "
                      f"{unrun['verdict']}; no review written")
    torn = next((c for c in checked if c["side"] == "after" and review_parts.tore(c)), None)
    review = {"format": FORMAT, "before": args.before, "after": args.after,
              "build": build_kind, "counter": counter, "counter_forced": bool(args.counter),
              "counter_kernel": arch.timed_counter(), "quick": args.quick,
              "hypervisor": compare.machine_meta(fingerprint.collect([])).get("hypervisor"),
              "verify": checked, "torn": torn and (torn["first_failure"] or torn["verdict"]),
              "plan": None, "seconds": None}
    comparison = None
    if torn is None:
        clocks = args.clocks or (patch_review.QUICK_CLOCKS if args.quick
                                 else patch_review.CLOCKS)
        t0 = time.monotonic()
        timed, plan, _ = patch_review_rounds.timed_rounds(s, before, after, clocks, progress)
        comparison = timed.comparison()
        review["plan"] = {k: plan.get(k) for k in ("rounds", "pilot_rounds", "budget_s",
                                                   "capped", "stopped")}
        review["seconds"] = round(time.monotonic() - t0, 3)
    target.write_json({"review": review, "comparison": comparison})
    print(f"review-node: {args.out}: "
          + (f"the patched tree FAILS verify: {review['torn']}" if torn else
             f"{review['plan']['rounds']} paired rounds, counter {counter}"))
    return 1 if torn else 0


def add_parser(sub):
    p = sub.add_parser(
        "review-node", help="one node's share of `recipe patch-review --fleet`",
        description="Verify two imported layouts (the patched one first) with the fake "
                    "counter and this CPU's own, then time them in paired rounds as "
                    "patch-review does (no simulation); write one file for the submit "
                    "host. `recipe patch-review --fleet` runs it on every node from its "
                    "bundle; by hand it tries one node. Exit 0: the file is written and "
                    "the patched layout passes verify; 1: it fails verify (the file says "
                    "where it tore); 2: bad usage (one line says which value).")
    p.add_argument("before", metavar="BEFORE", help="the tree's imported layout, kernel:NAME")
    p.add_argument("after", metavar="AFTER", help="the patched tree's, kernel:NAME")
    # required, but checked in run(): fleet checks a node's command line before
    # it adds the --out that names the node's file
    p.add_argument("--out", metavar="FILE", help="the review file to write (required)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--quick", action="store_true",
                   help="patch-review --quick's rounds and budget: a smoke run")
    patch_review_rounds.add_budget_argument(p)
    p.add_argument("--build", choices=BUILDS, default="always",
                   help="what is verified and timed: the trees rebuilt (always, the "
                        "default) or kbuild's images of them (image)")
    p.add_argument("--counter", metavar="NAME",
                   help="read the counter this way, not the kernel's choice on this CPU "
                        "(for a test of a mixed cluster)")
    p.add_argument("--clocks", nargs="+", metavar="CLOCK", choices=list(vocab.CLOCKS),
                   help="the clocks timed (default patch-review's)")
    p.set_defaults(func=run)
