"""patch-review's vdso32 time: the tree's and the patched tree's i386
variants timed as 32-bit processes on the CPU, a row per clock.

The same machinery as the 64-bit rows (patch_review_rounds.timed_rounds():
a pilot, the plan it sizes, the staged rounds, each row judged once by
review.paired_row), run inside arch.using("i386"), so that the harness and
compare are the i386 build's. The variants are kernel:N+COUNTER+INLINE of
the two imports: COUNTER the timed counter (arch.timed_counter(), as the
64-bit rows read), INLINE "image" where both trees have an i386 +image
variant (kbuild's vdso32.so, as the kernel ships it), else "always" (the
tree's vdso32 read path rebuilt); which, it says. The budget is the 64-bit
side's (--budget, or the --quick or full default), spent again.

Only natively, and only where the 64-bit rows are timed (patch_review.py
calls timed() after measured()): where the kernel runs no 32-bit program
(arch.Target("i386").emulated, cli/abi32.py) there is no CPU's time to
take, qemu-i386 runs the code instruction by instruction; nor where the
vdso32 verify did not run, was left out (--no-i386), gave no verdict or
failed on either tree, nor on a cluster (its nodes time the 64-bit vDSO).

    why_not(v32, fleet=False)  None, or the one line why it is not timed
    timed(s, v32, names, clocks, progress, fleet=False)  {
      "rows": [{"clock", "mode", **review row}], "rounds": the plan's,
      "build": "image" or "always", "variants": [before, after],
      "how": "natively", "capped": whether the budget cut the rounds,
      "harness": the i386 harness that timed them,
      "why": None, or why_not()'s line / why it could not be timed}
    lines(t)      the review's lines: every row, as the 64-bit table has it
                  (the block's compact form: reports/cover_letter_vdso32.py)
    complete(t)   False where a row has no verdict (the review INCOMPLETE)
"""

from vdsobench_cli.cli import arch, build, labels, variants as variants_mod
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.core import clocks as clocks_mod
from vdsobench_cli.recipes import patch_review_rounds as rounds_mod, review_image

from reports import cover_letter_vdso32 as letter, review

ARCH = "i386"
IMAGE, REBUILT = review_image.IMAGE, review_image.REBUILT
EMULATED = "under qemu-i386 there is no CPU's time"


def untimed(why):
    return {"rows": [], "rounds": 0, "build": None, "variants": [], "how": None,
            "capped": False, "why": why}


def why_not(v32, fleet=False, target=None):
    """Why the vdso32 is not timed here (one line), or None: it is."""
    t = target or arch.Target(ARCH)
    runs, why = t.runs_natively
    if not runs:
        return f"{why.split(' (')[0]}; {EMULATED}"
    ver = (v32 or {}).get("verify")
    if (v32 or {}).get("broken"):
        return "the patched tree's vdso32 does not build, check or verify"
    if ver is None:
        return "its verify --arch i386 did not run"
    if not ver.get("ran"):
        return f"its verify --arch i386 did not run: {ver.get('why') or 'no i386 variants'}"
    if ver.get("why"):
        return f"its verify --arch i386 gave no verdict ({ver['why']})"
    if ver.get("failed"):
        return "the patched tree fails verify --arch i386"
    if ver.get("before_failed"):
        return "the tree itself fails verify --arch i386"
    if set(ver.get("records") or {}) != {"before", "after"}:
        return "verify --arch i386 ran on one tree only: " + (
            "; ".join((ver.get("left_out") or {}).values()) or "?")
    if fleet:
        return "the review is timed on the cluster, whose nodes time the 64-bit vDSO"
    return None


def variants(names, counter, listed):
    """(INLINE, [before, after]) of the i386 variants both trees (names: the
    two imports) have, or (None, why)."""
    for inline in (IMAGE, REBUILT):
        pair = [f"kernel:{n}+{counter}+{inline}" for n in names]
        if all(v in listed for v in pair):
            return inline, pair
    return None, f"the two trees have no i386 {counter} variants to time"


def timed(s, v32, names, clocks, progress, fleet=False):
    why = why_not(v32, fleet)
    if why:
        progress(f"vdso32: not timed: {why}")
        return untimed(why)
    with arch.using(ARCH):
        counter = arch.timed_counter()
        try:
            listed = {v["name"] for v in variants_mod.load()}
        except (Failure, UsageError) as e:
            return untimed(f"the i386 build failed: {e}")
        inline, pair = variants(names, counter, listed)
        if inline is None:
            return untimed(pair)
        progress(f"vdso32: timing the i386 variants natively (+{inline})")
        try:
            t, plan, _ = rounds_mod.timed_rounds(s, pair[0], pair[1], clocks,
                                                 lambda text: progress(f"vdso32: {text}"))
        except (Failure, UsageError) as e:
            return untimed(f"the i386 rounds did not run: {e}")
        harness = str(build.binary_path(labels.BENCH))
    return {"rows": [{"clock": c, "mode": m, **r} for c, m, r in t.block_rows()],
            "rounds": plan["rounds"], "build": inline, "variants": pair, "how": "natively",
            "capped": bool(plan.get("capped")), "why": None, "harness": harness}


def complete(t):
    return all(r["complete"] for r in (t or {}).get("rows") or [])


def change(r):
    """The change and its interval, '-' without a ratio."""
    return "-" if r["ratio"] is None else f"{review.change(r)} {review.interval(r)}"


def lines(t):
    if t.get("why"):
        return [f"vdso32 time: not timed here: {t['why']}"]
    out = [f"{letter.heading(t)}: {t['rounds']} paired rounds of {t['variants'][0]} "
           f"and {t['variants'][1]}"
           + (" (the time budget's limit)" if t.get("capped") else "")]
    for r in t["rows"]:
        out.append(f"  {clocks_mod.label(r['clock'])} {r['mode']}: {review.ns(r['before'])} "
                   f"-> {review.ns(r['after'])} ns, {change(r)}, "
                   f"{letter.WORDS.get(r['verdict'], '?')}"
                   + (f" ({r['reason']})" if r.get("reason") else ""))
    return out
