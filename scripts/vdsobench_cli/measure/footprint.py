"""The footprint mode's known difference (bench/footprint.h), from paired rounds.

x86_gtod_ts_multshift against x86_gtod: MONOTONIC reads two lines against one
(seed 000's straddle, basetime 48..71), REALTIME one against one. What the
caller's walk pays after a call (`walk_net_ns`: the walk net of the walk
alone) may differ on every clock by the pair's code (lines of the stack, say);
the difference of differences, per round (B - A on MONOTONIC) - (B - A on
REALTIME), cancels that and leaves the extra line. The same of `ns_per_call`
(the call too, which finds its own lines in L2) is reported beside it. It must exclude 0 and
match one displaced line (the controls' line cost) within LINE_TOLERANCE;
REALTIME's extra lines displaced must not reach a line.

The figures follow the layouts x86_gtod (v4.20-v5.2) and x86_gtod_ts_multshift
(the 2019 proposal), impls/layouts/.
"""

import statistics
import time

from vdsobench_cli.cli import arch
from vdsobench_cli.measure import rounds
from vdsobench_cli.measure.harness import Selection

from vdsobench_cli.core import paired, stats

PAIR = tuple(f"{layout}+{arch.timed_counter()}+always"
             for layout in ("x86_gtod", "x86_gtod_ts_multshift"))
CLOCKS = ("monotonic", "realtime")
# how far, in lines, the extra cost may be from one line, and REALTIME's extra
# lines from none
LINE_TOLERANCE = 0.5


def _by_clock(groups):
    return {g.clock: g for g in groups if g.mode == "footprint"}


def _field(group, who, name):
    """{round: the footprint record's field} of one subject."""
    return {r: rec[name] for r, rec in group.footprint.get(who, {}).items() if name in rec}


def median_ci(values, confidence=0.95):
    """stats.median_ci() of values of either sign (it takes none below 0): the
    order statistics move with the values, so shift them by their minimum."""
    low = min(values)
    ci = stats.median_ci([v - low for v in values], confidence)
    return None if ci is None else (ci[0] + low, ci[1] + low)


def _diff_of_diff(mono, real, a, b, per_round):
    """Per round, (B - A on MONOTONIC) - (B - A on REALTIME) of per_round(group, who)."""
    diffs = []
    for g in (mono, real):
        sa, sb = per_round(g, a), per_round(g, b)
        diffs.append({r: sb[r] - sa[r] for r in set(sa) & set(sb)})
    return [diffs[0][r] - diffs[1][r] for r in sorted(set(diffs[0]) & set(diffs[1]))]


def extra(groups, pair=PAIR, confidence=0.95):
    """The known difference's figures from the footprint groups of CLOCKS, or None
    when either clock is missing: {"ns": median of the per-round difference of
    differences of the caller's walk (walk_net_ns: what the displaced lines cost
    the caller), "ci": its interval (None below stats.min_rounds()), "n",
    "total_ns" and "total_ci": the same of ns_per_call (the call's own misses
    too), "line_ns": the controls' line cost (median over every batch),
    "lines": {clock: {subject: median lines displaced}}, "extra_lines": {clock:
    median per-round lines displaced, B - A}}."""
    by = _by_clock(groups)
    if any(c not in by for c in CLOCKS):
        return None
    a, b = (pair[0], 0), (pair[1], 0)
    mono, real = by["monotonic"], by["realtime"]
    walk = _diff_of_diff(mono, real, a, b, lambda g, who: _field(g, who, "walk_net_ns"))
    total = _diff_of_diff(mono, real, a, b, lambda g, who: g.ns.get(who, {}))
    line_costs = [v for g in (mono, real) for who in (a, b)
                  for v in _field(g, who, "line_ns").values()]
    lines, extra_lines = {}, {}
    for clock, g in (("monotonic", mono), ("realtime", real)):
        la, lb = _field(g, a, "lines_displaced"), _field(g, b, "lines_displaced")
        lines[clock] = {who[0]: statistics.median(v.values()) for who, v in ((a, la), (b, lb)) if v}
        both = sorted(set(la) & set(lb))
        extra_lines[clock] = statistics.median(lb[r] - la[r] for r in both) if both else None
    return {
        "ns": statistics.median(walk) if walk else None,
        "ci": median_ci(walk, confidence) if walk else None,
        "n": len(walk),
        "total_ns": statistics.median(total) if total else None,
        "total_ci": median_ci(total, confidence) if total else None,
        "line_ns": statistics.median(line_costs) if line_costs else None,
        "lines": lines,
        "extra_lines": extra_lines,
    }


def verdict(result, tolerance=LINE_TOLERANCE):
    """(passed, lines of text) for the known difference: MONOTONIC's extra cost
    over REALTIME's has an interval excluding 0 and is one line's cost to within
    tolerance lines; REALTIME's extra lines displaced stay under tolerance."""
    if result is None or result["ns"] is None:
        return False, ["  footprint: MONOTONIC and REALTIME not both measured (MISSED)"]
    if result["ci"] is None:
        return False, [f"  footprint: {result['n']} paired rounds, too few for an interval "
                       f"(at least {stats.min_rounds()}; MISSED)"]
    lo, hi = result["ci"]
    line = result["line_ns"]
    excludes = lo > 0 or hi < 0
    in_lines = result["ns"] / line if line else None
    matches = in_lines is not None and abs(in_lines - 1) <= tolerance
    real_extra = result["extra_lines"].get("realtime")
    real_ok = real_extra is not None and abs(real_extra) < tolerance
    ok = excludes and matches and real_ok
    out = [f"  MONOTONIC's extra cost to the caller's walk over REALTIME's ({PAIR[1]} - {PAIR[0]}, "
           f"{result['n']} rounds): {result['ns']:+.2f} ns [{lo:+.2f}, {hi:+.2f}]"
           + (f" = {in_lines:.2f} lines of {line:.2f} ns" if in_lines is not None else "")
           + (" (excludes 0" if excludes else " (includes 0: MISSED")
           + ("" if not excludes else
              ", one line" if matches else f", not one line within {tolerance}: MISSED") + ")"]
    if result.get("total_ns") is not None:
        tci = result["total_ci"]
        out.append(f"  per call, the call's own misses too: {result['total_ns']:+.2f} ns"
                   + (f" [{tci[0]:+.2f}, {tci[1]:+.2f}]" if tci else ""))
    for clock in CLOCKS:
        per = result["lines"].get(clock, {})
        ex = result["extra_lines"].get(clock)
        out.append(f"  {clock} lines displaced: "
                   + ", ".join(f"{s} {v:.2f}" for s, v in per.items())
                   + ("" if ex is None else f"; extra {ex:+.2f}"))
    if not real_ok:
        out.append(f"  REALTIME's extra lines displaced reach {tolerance} of a line or were "
                   "not measured (MISSED)")
    return ok, out


def measure(binary, trial_rounds, batch_ms, cpus=None):
    """(extra()'s result, why a clock lost the CPU too often or None, seconds)."""
    chosen = Selection(clocks=CLOCKS, modes=("footprint",), cpus=cpus)
    started = time.monotonic()
    context, groups = rounds.measure(binary, rounds.harness_args(list(PAIR), chosen),
                                     trial_rounds, batch_ms, quiet=True)
    lost = rounds.lost_cpu(context, groups)
    return (extra(groups), "; ".join(lost.values()) or None,
            time.monotonic() - started)


# what a comparison keeps of each footprint batch (compare --out: "footprint")
KEPT = ("lines_displaced", "line_ns", "walk_net_ns", "data_lines", "probe")


def comparison_part(groups):
    """{"footprint": clock/mode/cpuN -> subject#copy -> round -> KEPT of the
    batch's object} for a comparison, or {} when no group is in the mode."""
    part = {str(g.key): {paired.subject_key(s, c): {str(r): {k: rec[k] for k in KEPT if k in rec}
                                                    for r, rec in per.items()}
                         for (s, c), per in g.footprint.items()}
            for g in groups if g.footprint}
    return {"footprint": part} if part else {}


def _of(c, clock, variant, field):
    """{round: field} of one subject's footprint batches in comparison c."""
    key = paired.group_in(c.get("footprint", {}), clock, "footprint")
    per = c["footprint"][key].get(paired.subject_key(variant), {}) if key else {}
    return {r: rec[field] for r, rec in per.items() if field in rec}


def recipe_lines(c, before, after, control="realtime", paths=None):
    """A recipe's footprint verdict, as lines of text: per clock the lines each
    side displaces from its caller (and which, as probed), and for each clock
    but control the extra walk cost over control's, round by round (the code
    cancels), in ns and in lines of the controls' cost. With paths
    ({(variant, clock): (layout's path, layout's fields)}), each probe is
    checked against layout's lines (check_probe): a difference the loads
    predict is explained by name, any other said unexplained."""
    if not c.get("footprint"):
        return ["footprint: not measured"]
    clocks = sorted({k.split("/")[0] for k in c["footprint"]})
    costs = [v for clock in clocks for who in (before, after)
             for v in _of(c, clock, who, "line_ns").values()]
    line = statistics.median(costs) if costs else None
    out = ["footprint: the caller's lines a call displaces (one line costs the caller "
           + (f"{line:.2f} ns here, " if line else "")
           + "from the controls); extra cost over "
           + f"{control.upper()}'s per round, so that the code cancels; intervals 95%"]

    checked = []  # per probe checked against layout: found layout's own lines

    def walk_diff(clock):
        a, b = _of(c, clock, before, "walk_net_ns"), _of(c, clock, after, "walk_net_ns")
        return {r: b[r] - a[r] for r in a if r in b}

    for clock in clocks:
        la, lb = (_of(c, clock, v, "lines_displaced") for v in (before, after))
        da = next(iter(_of(c, clock, before, "data_lines").values()), None)
        db = next(iter(_of(c, clock, after, "data_lines").values()), None)
        text = (f"  {clock.upper()}: lines displaced "
                + (f"{statistics.median(la.values()):.2f}" if la else "-") + " -> "
                + (f"{statistics.median(lb.values()):.2f}" if lb else "-")
                + (f" (probed data lines {da} -> {db})" if da is not None else ""))
        if clock != control and clock in clocks and control in clocks:
            d, k = walk_diff(clock), walk_diff(control)
            dd = [d[r] - k[r] for r in d if r in k]
            if dd:
                m, ci = statistics.median(dd), median_ci(dd)
                seen = ci is not None and (ci[0] > 0 or ci[1] < 0)
                text += (f"; beyond {control.upper()}: {m:+.2f} ns"
                         + (f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "")
                         + (f" = {m / line:+.2f} lines" if line else "")
                         + (": the caller pays for it" if seen else ": not seen"))
        out.append(text)
        for who in (before, after):
            got = next(iter(_probe_of(c, clock, who)), None)
            known = (paths or {}).get((who, clock))
            if got is None or known is None:
                continue
            agrees, why = check_probe(known[0], got, known[1])
            checked.append(agrees and why is None)
            if why:
                out.append(f"    {who}: {'' if agrees else 'MISMATCH: '}{why}")
    if checked and all(checked):
        out.append(f"  the probes found the lines layout traces, on all {len(checked)} paths")
    return out


def _probe_of(c, clock, variant):
    """Each batch's {"probe", "data_lines"} of one subject in comparison c."""
    key = paired.group_in(c.get("footprint", {}), clock, "footprint")
    per = c["footprint"][key].get(paired.subject_key(variant), {}) if key else {}
    return [{"probe": rec.get("probe", "fault"), "data_lines": rec["data_lines"]}
            for _, rec in sorted(per.items()) if "data_lines" in rec]


# ---- the probe against layout: what a fault can see ---------------------------------

LINE = 64
# bench/loops.h: the lines the probe takes when the call loads none of its data
SPAN = 1024


def _field_at(fields, offset, size):
    """The smallest of layout's fields that holds [offset, offset + size), or None."""
    holding = [f for f in fields or []
               if f["offset"] <= offset and offset + size <= f["offset"] + f["size"]]
    return min(holding, key=lambda f: f["size"])["name"] if holding else None


def predicted_probe(path, fields=None, line=LINE):
    """What footprint_probe() records for one of layout's paths (its JSON: kind,
    clock and the loads of one call, each an offset from the start of the vvar
    area and a size, as lackey traced them), from those offsets and sizes
    alone: a fault gives an access's first byte, not its size, so the probe
    records the line of each load's first byte; a call that loads none of its
    data makes it take every line of the span. Returns {"probe": "fault" or
    "span", "lines": the byte offsets of the lines it records, "layout": those
    of every line the loads touch, "why": one sentence per difference, naming
    the field (of layout's `fields`, when given)}."""
    loads = path.get("loads") or []
    every = sorted({o // line * line for ld in loads
                    for o in range(ld["offset"], ld["offset"] + max(1, ld["size"]))})
    if not loads:
        what = "a syscall" if path.get("kind") == "syscall" else "a path"
        return {"probe": "span", "lines": list(range(0, SPAN, line)), "layout": every,
                "why": [f"{path['clock'].upper()}: {what} that loads none of its data: "
                        f"the probe takes every line of the first {SPAN} bytes, and the "
                        "lines displaced are the kernel entry's"]}
    first = sorted({ld["offset"] // line * line for ld in loads})
    why = []
    for ld in sorted(loads, key=lambda x: x["offset"]):
        a, b = ld["offset"], ld["offset"] + max(1, ld["size"]) - 1
        missed = [n for n in range(a // line + 1, b // line + 1) if n * line not in first]
        if missed:
            name = _field_at(fields, a, ld["size"])
            what = f"{name}'s " if name else ""
            lines = ", ".join(map(str, missed))
            why.append(f"{path['clock'].upper()}: {what}{ld['size']}-byte load at {a}..{b} "
                       f"straddles lines {a // line} and {b // line}: a fault gives its first "
                       f"byte, so the probe records line {a // line} only, not {lines}")
    return {"probe": "fault", "lines": first, "layout": every, "why": why}


def probe_differences(variant_maps):
    """[(variant, clock, sentence)] for every hot path of layout's variant maps
    (layout --format json's "variants") whose probed lines will differ from
    layout's: each difference predicted and explained from the loads alone."""
    out = []
    for m in variant_maps:
        for p in m["paths"]:
            if p["mode"] != "hot" or p["path"] != p["clock"] or p["kind"] == "getres":
                continue  # the probe runs clock_gettime() as called, nothing else
            pred = predicted_probe(p, m.get("fields"))
            if pred["lines"] != pred["layout"]:
                out += [(m["variant"], p["clock"], w) for w in pred["why"]]
    return out


def check_probe(path, record, fields=None):
    """(agrees, sentence or None) for a measured footprint record ({"probe",
    "data_lines"}) against layout's path: None where the probe found layout's
    lines; the prediction's reason where it found what the loads predict; else
    that it differs unexplained (False)."""
    pred = predicted_probe(path, fields)
    got = record.get("data_lines")
    how = str(record.get("probe", ""))
    kind = "span" if how.startswith("span") else "fault"
    if got == pred["layout"] and kind == "fault":
        return True, None
    if got == pred["lines"] and kind == pred["probe"]:
        return True, "; ".join(pred["why"]) or None
    return False, (f"{path['clock'].upper()}: the probe found lines at "
                   f"{', '.join(map(str, got or [])) or 'none'} ({how or '?'}), layout's loads "
                   f"predict {', '.join(map(str, pred['lines']))}: unexplained")
