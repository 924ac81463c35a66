"""`recipe patch-review --source S --patch P`: what a patch author pastes under
the `---` of a cover letter (reports/cover_letter.py lays it out).

Before is the tree S as it is, after is S with the patches applied, both
imported (`vdsobench import`, cached) for the length of the recipe. In order:

  - the 32-bit vDSO (review_vdso32.py): kbuild's vdso32 of both trees,
    built or not, checked, its code per function, and the two trees' i386
    variants through verify --arch i386, natively or under qemu-i386
    (review_vdso32_verify.py; not with --no-i386); a patch that breaks only
    it (kbuild's error or verify's failure named) is WRONG, untimed (exit 1);
    timed after the 64-bit rows, natively only (review_vdso32_timed.py: the
    i386 variants, +image where both trees have one, in paired rounds as
    the 64-bit rows, the same budget again; a row per clock, its verdict;
    one without makes the review INCOMPLETE), never under qemu-i386 (no
    CPU's time there), nor where its verify did not pass on both trees;
  - verify on the patched tree, then the tree: a patch that fails it gets the
    failure and where it tore, no timing (exit 1);
  - the read path's object code before against after (objdump of the two
    builds, addresses aside): "identical", or what differs;
  - the simulated counts (cachegrind, the same on any machine);
  - the time: a pilot of review.PILOT_ROUNDS paired rounds, then the rounds
    the pilot's noise says the target width needs (reports/review.py), within
    a time budget; every row before, after, the ratio with its interval and a
    verdict from the same paired rounds; rows without a verdict make the block
    "INCOMPLETE" and the command exit 1;
  - the data page from the trees' own DWARF (every field of the struct, its
    size in bytes and lines) and the lines each clock's read path loads.

Without --source and --patch it reviews a demonstration: Debian's 6.12 sources
with kernel_import/testdata/6.12-max-cycles-last.patch (a layout change);
--source without --patch is refused.
"""

import contextlib
import json
import os
import sys
from pathlib import Path

from vdsobench_cli.cli import arch, atomic, build, tools
from vdsobench_cli.measure import compare, sim as sim_mod
from vdsobench_cli.kimport import names, patches as patches_mod, request, store, txn
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.recipes import (patch_review_arm64, patch_review_rounds as rounds_mod,
                                   patch_series, review_image, review_provenance,
                                   review_vdso32, review_vdso32_timed, review_vdso32_verify)
from vdsobench_cli.recipes.review_parts import (DATA_STRUCTS, code_comparison, judged,
                                                layout_json, layout_summary, path_changes,
                                                reader_disassembly, tore, verdict)

from reports import cover_letter as letter_mod, layout_map, struct_diff
from vdsobench_cli.core import stats, text as text_mod, vocab

NAME = "patch-review"
# Fixed names, so that a second review of a tree finds its builds cached: a
# review holds them for its whole run (txn.reserved), with arm64's.
BEFORE, AFTER = "patch-review-before", "patch-review-after"
RESERVED = (BEFORE, AFTER, patch_series.STEP, patch_review_arm64.BEFORE,
            patch_review_arm64.AFTER)
DEFAULT_SOURCE = "linux-source-6.12"
DEFAULT_PATCH = build.ROOT / "kernel_import" / "testdata" / "6.12-max-cycles-last.patch"
CLOCKS = list(vocab.CLOCKS)
QUICK_CLOCKS = ["realtime", "monotonic", "monotonic_raw"]
# Timed: hot only. Under pressure two imports of the very same tree differ by
# a third on an Emerald Rapids guest (0.65 [0.60, 0.73], the same way round
# whichever is the baseline): where the build puts an import decides, not its
# code, so a pressure row would give a verdict on the placement. Simulated:
# both (cachegrind has no such placement effect).
MODES = list(rounds_mod.MODES)
SIM_MODES = ["hot", "pressure"]
PRESSURE_NOTE = ("pressure is simulated, not timed: two builds of the same tree "
                 "differ by a third in time under pressure on some CPUs")


def subject(path):
    """A patch's Subject: line (or its file name), the patch read and checked as
    import reads it (a FIFO, /dev/zero or a path out of the tree: one line, now),
    as text to print."""
    return text_mod.printable(patches_mod.read_patch(path).subject)


def progress(text):
    """The minutes the recipe runs, on stderr, so the terminal is never silent."""
    print(f"patch-review: {text}", file=sys.stderr, flush=True)


def check_inputs(source, patches, kbuild=None, config=None):
    """One line before anything is printed: a tree without a patch would
    review the demonstration patch on it, which is never what was meant; a
    source or patch that import would refuse is refused now, as import
    words it."""
    if source and not patches:
        raise UsageError("recipe patch-review: --source needs --patch FILE (the patch to "
                         "review on it); without both it reviews the demonstration patch "
                         f"on {DEFAULT_SOURCE}")
    request.request(source or DEFAULT_SOURCE, patches or [str(DEFAULT_PATCH)], BEFORE, kbuild,
                    config)


def read_path_code(before, after):
    """The object code comparison of the two imports' rebuilt readers, or
    (None, why) when it cannot be made."""
    (a, why_a), (b, why_b) = (reader_disassembly(v, build.bin_dir()) for v in (before, after))
    if a is None or b is None:
        return None, why_a or why_b
    return code_comparison(a, b), None


def data_page(before, after, diff):
    """The structs from the trees' DWARF (every field), then the lines each
    clock's read path loads where they changed (diff None: not traced)."""
    from vdsobench_cli.measure import pahole
    lines = path_changes(diff, str.upper) if diff else []
    if not lines and diff:
        lines.append("every clock's read path loads the same lines")
    sides = []
    for name in (BEFORE, AFTER):
        v = {"name": f"kernel:{name}+fake+always", "layout": f"kernel:{name}",
             "counter": "fake", "inline": "always"}
        obj = names.object_of(v, build.bin_dir())
        if not tools.have("pahole") or not obj.is_file():
            sides = None
            break
        sides.append({st["struct"]: st for st in
                      pahole.parse_pahole(pahole.pahole(["-I", str(obj)]))})
    if sides:
        root = next((n for n in DATA_STRUCTS if n in sides[0] or n in sides[1]), None)
        if root:
            lines = struct_diff.page(lines, struct_diff.diff(sides[0], sides[1], root,
                                                             limit=3), root)
    else:
        lines.append("the structs: pahole or the objects missing; layout's table only")
        lines += [x.strip() for x in layout_summary(diff) if "lines per call" not in x] \
            if diff else []
    return lines


def sim_table(c):
    """[(clock, mode, instr before, after, misses before, after)]."""
    by = {}
    for r in c["rows"]:
        if r["metric"] in ("sim:instructions", "sim:l1d_misses"):
            by.setdefault((r["clock"], r["mode"]), {})[r["metric"]] = (r["base"], r["value"])
    return [(clock, mode, *d.get("sim:instructions", (0, 0)), *d.get("sim:l1d_misses", (0, 0)))
            for (clock, mode), d in by.items()]


# What a line more costs, as measured (docs/measurements.md): the call itself
# pays ~0 ns for a second line's miss in the cold modes (line-cost's fit,
# +0.00 ns [-0.05, +0.07] a miss, Zen 4 and Zen 5, 2026-12-01), while each line
# it displaces costs its caller about 4 ns in the footprint mode (4.08 ns
# [3.95, 4.37], Emerald Rapids, 2026-12-02).
CALL_LINE_NS, CALLER_LINE_NS = 0, 4
# simulated misses per call that count as a line more (cachegrind's are exact
# per call, but a pressure row's average may carry a fraction)
LINE_RISE = 0.5


def why_lines(rows, sim):
    """Where the simulation counts more L1D misses on a clock than before and
    its timed (hot) row does not say slower, one sentence why, from what the
    cold and footprint modes measured; [] where it does not apply (no rise, or
    the time agrees: slower, or says nothing: no verdict)."""
    verdicts = {clock: r["verdict"] for clock, _, r in rows}
    rise = {}
    for clock, _, _, _, m0, m1 in sim:
        if m1 - m0 >= LINE_RISE and verdicts.get(clock) in (
                stats.NO_DIFFERENCE, "faster"):
            rise[clock] = max(rise.get(clock, 0), m1 - m0)
    if not rise:
        return []
    where = ", ".join(f"{c.upper()} ({n:+.0f} line{'s' if round(n) != 1 else ''})"
                      for c, n in list(rise.items())[:3])
    return [f"Simulated misses rise on {where}, not the time: a line more costs "
            f"the call ~{CALL_LINE_NS} ns, its caller ~{CALLER_LINE_NS} ns a line displaced."]


def timed(s, before, after, clocks, notes, progress_fn=progress, walk=None):
    """The two-stage measurement (patch_review_rounds.py), then the simulated
    rows (what stood in their way added to notes); (Timed, comparison, plan,
    seconds)."""
    t, p, seconds = rounds_mod.timed_rounds(s, before, after, clocks, progress_fn)
    c = t.comparison()
    progress_fn("simulating (cachegrind)")
    c["rows"] += simulated(before, after, clocks, walk, notes)
    return t, c, p, seconds


def simulated(before, after, clocks, walk, notes):
    """end_sims()'s rows; [] and a note where valgrind cannot run a tree's code
    here (a counter read by an instruction this CPU does not list): the rest
    of the review stands without them."""
    try:
        return end_sims(before, after, clocks, walk)
    except sim_mod.Unsimulated as e:
        notes.append(f"not simulated: {e.reason}")
        return []


def run(s):
    """The recipe (recipes.RECIPES): False when the patched tree (or the
    tree after a patch of a series) fails verify, verify gives no verdict,
    or a row has no verdict; 2 when a patch of a series does not apply or
    build. One review at a time holds the names (a second waits, saying
    so)."""
    source = getattr(s, "source", None)
    patches = getattr(s, "patches", None)
    check_inputs(source, patches)
    # each step asks for the binaries it runs; built once per imports table
    with txn.reserved(RESERVED, NAME, progress), build.reusing():
        return reviewed(s, source or DEFAULT_SOURCE, patches or [str(DEFAULT_PATCH)])


def verified(s, counter, inlines):
    """{(label, variant): verify's record}: the patched tree, then the tree,
    each with the fake counter and the timed one, of the build measured
    (inlines: kbuild's images, where both trees have one, else the
    rebuilds)."""
    s.heading("verify: the patched tree, then the tree")
    checked = patch_series.verify_tree(s, AFTER, "after", counter, progress, inlines)
    return {**checked, **patch_series.verify_tree(s, BEFORE, "before", counter, progress,
                                                   inlines)}


def unjudged(checked):
    """Why verify gave no verdict on a variant (it did not run it: no result,
    a counter skipped), or None: that is no tear, and nothing can be timed."""
    for (label, v), rec in checked.items():
        if not judged(rec):
            tree = "the patched tree" if label == "after" else "the tree"
            return (f"verify gave no verdict on {tree} ({v.split('+')[1]} counter): "
                    f"{verdict(rec)}")
    return None


def reviewed(s, source, patches):
    """The review, with the names held: whether it passed (True, False), or
    2 where a patch of a series does not apply or build."""
    rng = getattr(s, "range", None)  # --range: the tree's commits (review_range.py)
    subjects = [subject(p) for p in patches]
    named = "; ".join(f"{text_mod.printable(Path(p).name)} ({t})"
                      for p, t in zip(patches, subjects))
    s.heading("the seed: none; the patch under review, on its tree")
    s.say(f"Tree: {text_mod.printable(source)}"
          + (f" (BASE of {text_mod.printable(rng.text)} in {text_mod.printable(rng.tree)})"
             if rng else "") + f". Patches, in order: {named}")
    counter = arch.timed_counter()
    clocks = QUICK_CLOCKS if s.quick else CLOCKS
    walk = None
    with contextlib.ExitStack() as held:
        if len(patches) > 1:
            walk = patch_series.walk(s, held, source, patches, (BEFORE, AFTER), counter,
                                     clocks, progress)
            metas, checked = walk.metas, walk.checked
            inline, why = walk.inline, walk.why
        else:
            progress("importing the tree and the patched tree (kbuild's images too)")
            metas = held.enter_context(txn.temporary({BEFORE: (source, []),
                                                      AFTER: (source, patches)},
                                                     images=True,
                                                     **patch_series.kbuild_of(s)))
            inline, why = review_image.chosen(store.read_table(), BEFORE, AFTER)
            v32 = vdso32_section(s)
            # a patched tree that does not build is not verified; one whose
            # vdso32 fails verify --arch i386 is, for what else it tears
            unbuilt = v32["broken"] and not failed32(v32)
            checked = {} if unbuilt else verified(s, counter, [inline])
        before = f"kernel:{BEFORE}+{counter}+{inline}"
        after = f"kernel:{AFTER}+{counter}+{inline}"
        failed = [rec for (label, _), rec in checked.items() if label == "after" and tore(rec)]
        rv = review_provenance.provenance(s, metas, (BEFORE, AFTER), source, patches,
                                          subjects, checked, rng)
        rv.update(measured=review_image.measured(inline, why, metas, {
            BEFORE: "the tree", AFTER: "the patched tree"}), build=inline,
            vdso32=v32 if walk is None else vdso32_section(s))
        if walk is not None and not patch_series.into_review(rv, walk.steps):
            # a patch before the last, or the last's import, stopped the walk
            ok = finish(s, rv, None)
            return walk.status if walk.status == 2 else ok
        plan = None
        fleet_args = getattr(s, "fleet", None)
        if not failed:
            rv["unverified"] = unjudged(checked)
        if failed:
            rec = failed[0]
            rv["torn"] = rec.get("first_failure") or verdict(rec)
            if fleet_args:
                # each CPU model's own verify, with its own counter: the block says
                # which models caught it
                rv["fleet"] = on_fleet(s, fleet_args, inline)
        elif rv["vdso32"]["broken"]:
            progress(f"the patched tree's {review_vdso32.why_broken(rv['vdso32'])}: "
                     "nothing timed")
        elif rv["unverified"]:
            progress(rv["unverified"])
        else:
            # the walk simulated the rebuilds: the images' counts are made now
            plan = measured(s, rv, before, after, clocks, fleet_args,
                            walk if inline == review_image.REBUILT else None)
            timed32(s, rv["vdso32"], clocks, fleet_args)
            s.heading("the data page: the tree against the patched tree")
            try:
                # the lines the measured build's read paths load: the images'
                # where they are measured (traced as their fake twins)
                diff = layout_json(before, after)["diff"]
                s.block("\n".join(layout_map.render_diff(diff)))
            except sim_mod.Unsimulated as e:  # the lines each path loads: traced
                diff = None
                rv["notes"].append(f"data page lines not traced: {e.reason}")
            rv["page"] = data_page(BEFORE, AFTER, diff)

    if getattr(s, "arm64", True):
        rv["arm64"] = on_arm64(s, source, patches)
    caught = [m["cpu"] for m in (rv.get("fleet") or {}).get("models", []) if m["caught"]]
    if caught and not rv.get("torn"):
        # verify passed here but failed on a node, with its own counter
        rv["torn"] = "caught on " + ", ".join(caught)
    return finish(s, rv, plan)


def failed32(v32):
    """The patched tree's first failure in verify --arch i386, or None."""
    return (v32.get("verify") or {}).get("failed")


def vdso32_section(s):
    """review_vdso32.section() of the two imports, said under its heading,
    its lines kept for the block."""
    s.heading("vdso32: the 32-bit vDSO of the tree and the patched tree (kbuild's)")
    v32 = review_vdso32.section(store.read_table(), BEFORE, AFTER)
    if not v32["broken"] and not getattr(s, "i386", True):
        v32["verify"] = review_vdso32_verify.result(why="left out (--no-i386)")
    elif not v32["broken"]:
        v32["verify"] = review_vdso32_verify.verified(BEFORE, AFTER, s.quick, progress)
        v32["broken"] = bool(v32["verify"]["failed"])
    for line in review_vdso32.lines(v32):
        s.say(line)
    v32["lines"] = review_vdso32.block(v32)
    return v32


def timed32(s, v32, clocks, fleet_args):
    """The vdso32's timed rows (review_vdso32_timed.py), or why not, said
    under their heading and kept in v32["timed"]; the block's vdso32 lines
    made again with them."""
    s.heading("vdso32 time: the tree's and the patched tree's i386 variants")
    v32["timed"] = review_vdso32_timed.timed(s, v32, (BEFORE, AFTER), clocks, progress,
                                             bool(fleet_args))
    s.block("\n".join(review_vdso32_timed.lines(v32["timed"])))
    v32["lines"] = review_vdso32.block(v32)


def end_sims(before, after, clocks, walk):
    """The end points' simulated rows: from the series' walk, which simulated
    every tree it verified, else simulated now."""
    if walk is not None and "after" in walk.sims:
        return compare.sim_compared(walk.sims["before"] + walk.sims["after"], before)
    return compare.sim_rows([before, after], clocks, SIM_MODES, before)


def measured(s, rv, before, after, clocks, fleet_args, walk=None):
    """The code, the simulation and the time (here or on the cluster) into
    rv; the plan of the timed rounds (None on a cluster)."""
    plan = None
    if before.endswith("+" + review_image.IMAGE):
        rv["code"], why, rv["counter_read"] = review_image.read_path(store.read_table(),
                                                                     BEFORE, AFTER)
    else:
        rv["code"], why = read_path_code(before, after)
    if why:
        rv["notes"].append(f"object code not compared: {why}")
    rv["notes"].append(PRESSURE_NOTE)
    if fleet_args:
        rv["fleet"] = on_fleet(s, fleet_args, before.rsplit("+", 1)[1])
        progress("simulating (cachegrind)")
        rv["sim"] = sim_table({"rows": simulated(before, after, clocks, walk, rv["notes"])})
        rv["notes"] += fleet_notes(rv["fleet"])
        return plan
    t, c, plan, seconds = timed(s, before, after, clocks, rv["notes"], walk=walk)
    rv["rows"] = t.block_rows()
    cpus = sorted({key.cpu for key in t.records if key.cpu is not None})
    rv["machine"]["cpu_pinned"] = ",".join(map(str, cpus)) or None
    s.save(c, "comparison")
    rv["capped"] = plan["capped"]
    rv["sim"] = sim_table(c)
    rv["why"] = why_lines(rv["rows"], rv["sim"])
    grouped = letter_mod.group_lost(t.lost())
    if grouped:
        rv["notes"].append(grouped)
    if s.quick:
        rv["notes"].append(f"--quick: {plan['rounds']} rounds of "
                           f"{s.batch_ms} ms, a smoke run, not for posting")
    rv["rounds"] = plan["rounds"]
    return plan


def finish(s, rv, plan):
    """The block printed and written, with the JSON behind it; whether the
    review passed."""
    lines = letter_mod.render(rv)
    letter = "\n".join(lines)
    s.heading("for the cover letter (paste below the ---)")
    s.block(letter)
    write(s, "cover-letter.txt", letter + "\n")
    record = dict(rv, rows=[{"clock": c, "mode": m, **r} for c, m, r in rv.get("rows", [])],
                  plan=plan, block_lines=len(lines))
    write(s, "patch-review.json", json.dumps(record, indent=1, default=str) + "\n")
    arm64_torn = bool((rv.get("arm64") or {}).get("torn"))
    stopped = (rv.get("series") or {}).get("stopped")
    broken32 = (rv.get("vdso32") or {}).get("broken")
    ok = not rv.get("torn") and not rv.get("unverified") and not arm64_torn and not stopped \
        and not broken32 \
        and all(r["complete"] for _, _, r in rv.get("rows", [])) \
        and review_vdso32_timed.complete((rv.get("vdso32") or {}).get("timed"))
    if rv.get("fleet"):
        ok = ok and fleet_complete(rv["fleet"])
    if stopped:
        s.say(f"Patch {stopped} of the series did not pass (above): nothing was timed.")
    elif rv.get("torn"):
        s.say("The patched tree FAILS verify (above): it was not timed.")
    elif broken32:
        s.say(f"The patched tree's {review_vdso32.why_broken(rv['vdso32'])} (above): "
              "nothing was timed.")
    elif rv.get("unverified"):
        s.say("Verify gave no verdict (above), so nothing was timed: run it again; "
              "if it says the same, verify the two imports by hand (docs/verify.md).")
    elif arm64_torn:
        s.say("The patched tree FAILS verify on arm64 (above), under qemu-user.")
    elif not ok:
        s.say("Some rows have no verdict (the block's first line says why): run it "
              "again on a quieter machine, or with a longer budget.")
    return ok


def on_arm64(s, source, patches):
    """The same tree and patches imported for arm64 and checked under
    qemu-user (patch_review_arm64.py): correctness and code, never time."""
    s.heading("arm64, emulated: the tree and the patched tree under qemu-user")
    progress("arm64: importing both trees for arm64, verifying under qemu-user")
    a = patch_review_arm64.review(source, patches, s.quick)
    if a.get("missing"):
        s.say(f"arm64: {a['missing']}")
    else:
        for side in ("after", "before"):
            if side in a["verify"]:
                s.say(f"arm64 {side}: {a['verify'][side][1]}")
    return a


def on_fleet(s, args, inline):
    """The review's time on the cluster's nodes (patch_review_fleet.py), of
    the build measured here (inline: the rebuilds, or kbuild's images)."""
    from vdsobench_cli.recipes import patch_review_fleet
    s.heading("on the cluster: every chosen node verifies and times the two trees")
    f = patch_review_fleet.review(s, args, f"kernel:{BEFORE}", f"kernel:{AFTER}", inline)
    s.say(f"job {f['job']}: {len(f['models'])} CPU model(s), {len(f['failed'])} of "
          f"{f['asked']} nodes failed; their files in {f['job_dir']}")
    return f


def fleet_complete(f):
    """Every asked node answered and every model's row has a verdict."""
    return not f["failed"] and all(r is not None and r["complete"]
                                   for _, _, cells in f["rows"] for r in cells.values())


def fleet_notes(f):
    return [f"each node read its CPU's own counter; the nodes' files: {f['job_dir']}"]


def write(s, name, text):
    path = os.path.join(s.out_dir, name)
    atomic.write_stream_atomic(path, lambda f: f.write(text.encode()), what=name)
    s.files.append(path)
