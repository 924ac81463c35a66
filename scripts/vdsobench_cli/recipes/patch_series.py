"""Every patch of a series (`recipe patch-review` with --patch repeated, or
--range): the patches applied in turn, the tree after each imported,
built and verified as the end points are, its read path's object code and
simulated counts compared with the tree's before it. The first patch that
does not apply, build or verify ends the walk and is named; the review
then exits as it would for that one patch alone (2: does not apply or
build; 1: fails verify, or verify gave no verdict). The time is the end
points' alone (patch_review.py): the trees between are built and
verified, never timed. Each patch's code and counts are its rebuild's; the
end points are measured on their kbuild images where both have one (the
last tree's made with its import), verified as such first.

    walk(s, held, source, patches, names, counter, clocks, progress) -> Walk
        the tree imported (names[0]) and verified first, then the tree
        after each patch k: k < N as STEP, one at a time (each taken out
        of the table before the next comes in), the last as names[1],
        kept in `held` (an ExitStack) for the end points' measurement.
        Every name is the review's own, held for its whole run
        (patch_review.RESERVED) and taken out however it ends.

Pure, and tested without a tree: failure() (an import's error as a
result and why), sim_changes(), stopped() and status().
"""

import contextlib
import re
from typing import NamedTuple

from vdsobench_cli.cli import build
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.core import text as text_mod
from vdsobench_cli.kimport import patches as patches_mod, probe, store, txn
from vdsobench_cli.recipes import review_image, review_parts
from vdsobench_cli.recipes.recipe_session import verify_one
from vdsobench_cli.recipes.review_parts import (code_comparison, judged, reader_disassembly,
                                                tore, verdict)

# the tree after patch k < N, for its import+verify: one at a time
STEP = "patch-review-step"
SIM_MODES = ("hot", "pressure")
VERIFIED, NOT_TRIED = "verified", "not tried"
APPLY, BUILD, WRONG, NO_VERDICT = ("does not apply", "does not build", "fails verify",
                                   "no verdict")
EXIT = {APPLY: 2, BUILD: 2, WRONG: 1, NO_VERDICT: 1}


class Walk(NamedTuple):
    steps: list  # one record a patch (step())
    metas: dict  # {name: kimport.json's meta} of the imports still held
    checked: dict  # {(label, variant): verify's record}: "before", and "after" if reached
    sims: dict  # {"before"/"after": sim.measure()'s records} of the rebuilds
    status: int  # status(steps)
    # the end points' build the review measures (review_image.chosen()), why
    inline: str = review_image.REBUILT
    why: str = None


def step(n, patch):
    """The record of patch n (a kimport Patch) before it is tried."""
    return {"n": n, "subject": patch.subject, "patch": patch.path.name, "result": NOT_TRIED,
            "why": None, "code": None, "sim": None, "timed": False}


def failure(error):
    """(result, why) of an import that failed on the tree after a patch:
    git apply's refusal (APPLY) or anything else (BUILD), the why in one line
    without the import's own words around it."""
    if isinstance(error, probe.ShimError):
        # the compiler's first error names its file already, mostly
        first = " ".join(error.first.split())
        return BUILD, first if first.startswith(error.what) else f"{error.what}: {first}"
    text = " ".join(str(error).split())
    text = re.sub(r"[;,] nothing imported$", "", text)
    m = re.search(r" does not apply: (.+)$", text)
    if m:
        return APPLY, m.group(1)
    if "git apply" in text:
        return APPLY, re.sub(r"^import: \S+: ", "", text)
    return BUILD, re.sub(r"^import: \S+: ", "", text)


def sim_changes(before, after):
    """[(clock, mode, instructions before, after, L1D misses before, after)]
    where the two trees' simulated counts differ (sim.measure()'s records;
    None: not simulated, nothing to compare)."""
    if before is None or after is None:
        return []

    def counts(records):
        return {(r["clock"], r["mode"]): (r["net_instructions_per_call"],
                                          r["net_l1d_misses_per_call"]) for r in records}
    a, b = counts(before), counts(after)
    return [(c, m, a[(c, m)][0], b[(c, m)][0], a[(c, m)][1], b[(c, m)][1])
            for (c, m) in a if (c, m) in b and a[(c, m)] != b[(c, m)]]


def stopped(steps):
    """The record of the first patch that did not pass, or None."""
    return next((st for st in steps if st["result"] in EXIT), None)


def status(steps):
    """The review's exit status for the series' walk: 0 when every patch
    passed (the end points then decide), else its first failure's."""
    first = stopped(steps)
    return EXIT[first["result"]] if first else 0


def kbuild_of(s):
    """The recipe's --kbuild and --config, as txn.temporary() takes them."""
    return {"kbuild": getattr(s, "kbuild", None), "config": getattr(s, "config", None)}


def verify_tree(s, name, label, counter, progress, inlines=("always",)):
    """{(label, variant): verify's record} of an import, fake counter first,
    for each of inlines (the rebuild, "always"; the kbuild image, "image"),
    then the fake counter's in each paravirtual mode ((label, variant + "@pvclock"),
    review_parts.VCLOCKS) where verify runs it (a SKIP there is said, not kept)."""
    checked = {}
    for v in (f"kernel:{name}+{c}+{i}" for i in inlines for c in ("fake", counter)):
        progress(f"verify {label} ({v.split('+')[1]} counter)")
        checked[(label, v)] = rec = verify_one(s, v)
        s.say(f"{label}: {v}: {verdict(rec)}")
    for mode in review_parts.VCLOCKS:
        for v in (f"kernel:{name}+fake+{i}" for i in inlines):
            progress(f"verify {label} ({mode})")
            rec = verify_one(s, v, mode)
            s.say(f"{label}: {v}, {mode} mode: {verdict(rec)}"
                  + (f" ({rec.get('reason')})" if rec.get("status") == "SKIP" else ""))
            if rec.get("status") != "SKIP":
                checked[(label, f"{v}@{mode}")] = rec
    return checked


def judge(checked):
    """(result, why) of a tree's verify records: WRONG where a check failed,
    NO_VERDICT where verify did not run a variant, else (VERIFIED, None)."""
    for rec in checked.values():
        if tore(rec):
            return WRONG, rec.get("first_failure") or verdict(rec)
    for (_, v), rec in checked.items():
        if not judged(rec):
            return NO_VERDICT, f"{v.split('+')[1]} counter: {verdict(rec)}"
    return VERIFIED, None


def facts(name, counter, clocks, progress):
    """(disassembly or None, sim.measure()'s records or None where valgrind
    cannot run the tree's code here) of an import's read path."""
    from vdsobench_cli.measure import sim
    variant = f"kernel:{name}+{counter}+always"
    code, _ = reader_disassembly(variant, build.bin_dir())
    progress(f"simulating {name} (cachegrind)")
    try:
        return code, sim.measure([variant], clocks, list(SIM_MODES))
    except sim.Unsimulated as e:
        progress(f"{name}: not simulated: {e.reason}")
        return code, None


def walk(s, held, source, patches, names, counter, clocks, progress):
    """The walk (see the top): a Walk. progress(text): a line on stderr."""
    before, after = names
    steps = [step(n, p) for n, p in enumerate(patches_mod.check_patches(patches), 1)]
    s.heading(f"the series: each of its {len(steps)} patches applied, built and verified "
              "in turn")
    progress("importing the tree")
    metas = dict(held.enter_context(txn.temporary({before: (source, [])}, **kbuild_of(s))))
    checked = verify_tree(s, before, "before", counter, progress)
    code, sims = facts(before, counter, clocks, progress)
    ends = {} if sims is None else {"before": sims}
    for k, st in enumerate(steps, 1):
        last = k == len(steps)
        name = after if last else STEP
        progress(f"patch {k} of {len(steps)}: importing the tree after it")
        # the last tree stays imported in the review's own stack: the end point
        with (contextlib.nullcontext(held) if last else contextlib.ExitStack()) as keep:
            try:
                # the last tree's image too, kbuild's, where kbuild runs
                got = keep.enter_context(txn.temporary(
                    {name: (source, patches[:k])}, images=last, **kbuild_of(s)))
            except (UsageError, Failure) as e:
                st["result"], st["why"] = failure(e)
                s.say(f"patch {k}: {st['result']}: {text_mod.printable(st['why'], 300)}")
                break
            mine = verify_tree(s, name, "after" if last else f"after patch {k}", counter,
                               progress)
            st["result"], st["why"] = judge(mine)
            if last:
                metas.update(got)
                checked.update(mine)
            if st["result"] != VERIFIED:
                break
            new_code, new_sims = facts(name, counter, clocks, progress)
        st["code"] = code_comparison(code, new_code) if code and new_code else None
        st["sim"] = sim_changes(sims, new_sims)
        st["timed"] = last
        code, sims = new_code, new_sims
    if steps[-1]["result"] == VERIFIED and sims is not None and ends:
        ends["after"] = sims
    inline, why = review_image.REBUILT, None
    if steps[-1]["result"] == VERIFIED:
        inline, why = ends_build(s, names, counter, progress, checked)
    return Walk(steps, metas, checked, ends, status(steps), inline, why)


def ends_build(s, names, counter, progress, checked):
    """(inline, why) of the build the end points are measured on: their
    kbuild images where both have one (review_image.chosen()), whose verify
    records then join checked; else the rebuilds the walk verified."""
    inline, why = review_image.chosen(store.read_table(), *names)
    if inline == review_image.IMAGE:
        for name, label in zip(reversed(names), ("after", "before")):
            checked.update(verify_tree(s, name, label, counter, progress, (inline,)))
    return inline, why


def record(steps):
    """patch-review.json's "series" (and the block's): each patch's result;
    the first that did not pass."""
    first = stopped(steps)
    return {"patches": [dict(st) for st in steps], "stopped": first["n"] if first else None}


def into_review(rv, steps):
    """rv's "series" (record()), and where a patch before the last stopped the
    walk, what the review says of it: its tear (rv["torn"]) or verify's lack
    of a verdict (rv["unverified"]). Whether the review goes on: the end
    points were both imported and verified (the last patch may still have
    failed verify: the end points' checks say so as for one patch)."""
    rv["series"] = record(steps)
    first = stopped(steps)
    if first is None:
        return True
    n, last = first["n"], first["n"] == len(steps)
    if first["result"] in (APPLY, BUILD):
        return False
    if last:
        return True
    if first["result"] == WRONG:
        rv["torn"] = f"patch {n}: {first['why']}"
    else:
        rv["unverified"] = f"verify gave no verdict on the tree after patch {n} ({first['why']})"
    return False
