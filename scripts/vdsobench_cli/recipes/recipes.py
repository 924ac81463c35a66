"""The experiments in the seeds, as recipes: what each measured, quoted from the
mails, and the steps that measure it again here.

A recipe's run(session) prints the seed's table, today's table in the same
shape, the verdicts with intervals, and where and why this machine differs;
it returns False when something it must show did not come out (e.g. the
concurrency checker missed the known-bad variant).
"""

import json
from dataclasses import dataclass
from typing import Callable

from vdsobench_cli.cli import arch, atomic, labels, lifecycle, tools
from vdsobench_cli.measure import code_metrics, cpu_lock, footprint, rounds as rounds_mod
from vdsobench_cli.measure.harness import Selection
from vdsobench_cli.recipes import line_costs, patch_review, seeds
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.recipes.recipe_session import calls_diff, ci_text, row, rows, verdict_line, verify_one

from reports import tables
from vdsobench_cli.core import clocks, vocab

# The seeds' x86 layouts with the kernel's own counter read on this CPU (rdtscp,
# or lfence_rdtsc where the CPU has no RDTSCP: arch.timed_counter()), so that a
# recipe times what this machine's kernel would run, and runs at all on a CPU
# without RDTSCP. Static sections (layout, sim) are the same whatever the read.
_TIMED = arch.timed_counter() if arch.host() == "x86_64" else arch.DEFAULT_COUNTER["x86_64"]
X86 = f"x86_gtod+{_TIMED}+always"
RAW_BRANCH = f"x86_gtod_raw_branch+{_TIMED}+always"
RAW_COPY = f"x86_gtod_raw_copy+{_TIMED}+always"
MULTSHIFT = f"x86_gtod_ts_multshift+{_TIMED}+always"
G53 = f"generic_5_3+{_TIMED}+always"
G610 = f"generic_6_10+{_TIMED}+always"
TIMENS = f"generic_timens+{_TIMED}+always"
TIMENS_SWITCH = f"generic_timens_switch+{_TIMED}+always"
CLOCKS3 = ["monotonic", "monotonic_raw", "realtime"]
ALL_CLOCKS = list(vocab.CLOCKS)


@dataclass
class Recipe:
    name: str
    title: str
    seed: str
    run: Callable


def machine_reasons(s, seed_machine):
    """Why numbers here may differ from the seed's: what differs between the
    two machines, as far as the seed says."""
    m = s.machine
    here = [f"{m.get('cpu_model')}", f"kernel {m.get('kernel')}"]
    here.append(f"a {m['hypervisor']} guest (syscalls and timer interrupts exit to the host)"
                if m.get("hypervisor") else "bare metal")
    return f"This machine: {', '.join(here)}; the seed's: {seed_machine}."


def per_clock_against_seed(s, comparison, seed_diffs, variant):
    """One line per clock: the seed's Diff, today's, and the verdict."""
    for clock, seed in seed_diffs.items():
        r = row(comparison, clock=clock, variant=variant)
        here = calls_diff(r)
        agree = (seed is None and r["verdict"] == "no significant difference") or (
            seed is not None and seed.startswith("+") == here.startswith("+")
            and r["verdict"] != "no significant difference")
        s.say(f"{clock.upper()}: seed {seed or 'no change'}, here {here} ({r['verdict']}, "
              f"time ratio {r['ratio']:.3f} {ci_text(r)})"
              + ("" if agree else " -- differs from the seed"))


# ---- the recipes -------------------------------------------------------------------------


def raw_vdso(s):
    s.heading("the seed: calls in 10 s, MONOTONIC_RAW moved into the vDSO (v1, then v2)")
    s.block(seeds.SEED_000_V1)
    s.block(seeds.SEED_000_V2)
    c = s.compare([X86, RAW_COPY, G53], clocks=CLOCKS3)
    s.heading(f"this machine: calls in 10 s; Before = {X86}")
    s.table(c, calls_per=10)
    s.heading("against the seed")
    per_clock_against_seed(s, c, {"monotonic": None, "monotonic_raw": "+726%",
                                  "realtime": None}, RAW_COPY)
    raw = row(c, clock="monotonic_raw", variant=RAW_COPY)
    s.say(f"A syscall MONOTONIC_RAW costs {1 / raw['ratio']:.1f} vDSO reads here "
          f"({raw['base']:.0f} ns against {raw['value']:.1f} ns); in the seed 8.3 (v2) and "
          "7.5 (v1). The gain is the syscall's cost, and kernel entry is dearer on a VM "
          "and with today's speculation mitigations.")
    s.say(machine_reasons(s, "x86-64 bare metal, v4.x kernel, 2018"))
    return True


def raw_branch(s):
    s.heading("the seed: v1 (mult/shift read outside the seqlock for RAW), calls in 10 s")
    s.block(seeds.SEED_000_V1)
    s.say("tglx: \"the performance regressions for CLOCK_MONOTONIC and CLOCK_REALTIME are "
          "just not acceptable\"")
    c = s.compare([X86, RAW_BRANCH], clocks=CLOCKS3)
    s.heading(f"this machine: calls in 10 s; Before = {X86}, After = v1")
    s.table(c, calls_per=10)
    s.heading("against the seed")
    per_clock_against_seed(s, c, {"monotonic": "-5%", "monotonic_raw": "+650%",
                                  "realtime": "-3%"}, RAW_BRANCH)
    hit = [r for r in rows(c) if r["clock"] != "monotonic_raw" and r["verdict"] == "slower"]
    s.say(("The extra conditional costs " + " and ".join(
        f"{r['clock'].upper()} {(r['ratio'] - 1) * 100:.1f}% more time" for r in hit)
        + " here, as it cost the seed's machine 3-5% fewer calls.") if hit else
        "The extra conditional is not measurable here on MONOTONIC or REALTIME (no "
        "significant difference at this many rounds), where the seed's machine lost 3-5%: "
        "this core predicts the branch and overlaps it with the counter read.")
    s.heading("the torn read: the concurrency checker on v1 and on v2")
    ok = True
    for variant, expect in ((RAW_BRANCH, "CAUGHT"), (RAW_COPY, "PASS")):
        rec = verify_one(s, variant)
        ok &= rec.get("status") == expect
        s.say(f"{variant}: {rec.get('status')} (expected {expect})"
              + (f": {rec['first_failure']}" if rec.get("first_failure") else ""))
    s.say(machine_reasons(s, "x86-64 bare metal, v4.x kernel, 2018"))
    return ok


def multshift_in_base(s):
    s.heading("the seed: v3 (mult and shift in each clock's base), calls in 10 s")
    s.block(seeds.SEED_000_V3)
    s.say("tglx: \"the results of the micro benchmark above have to be taken with a grain of "
          "salt. Let's look at the cache side effects\": basetime[CLOCK_MONOTONIC] moves from "
          "48..63 to 48..71 and straddles two cache lines.")
    c = s.compare([X86, MULTSHIFT], clocks=["monotonic", "realtime"],
                  modes=["hot", "compute", "cold", "warm", "footprint"], sim=True)
    s.heading(f"this machine: ns per call; Before = {X86}, After = v3")
    s.table(c)
    s.heading("simulated (cachegrind, deterministic): net L1D misses per call")
    s.table(c, metric="sim:l1d_misses")
    for r in rows(c, "sim:l1d_misses") + rows(c, "sim:instructions"):
        s.say(f"{r['metric']} {r['clock']} {r['mode']}: {r['base']:g} -> {r['value']:g} "
              f"({r['verdict']})")
    layout_diff(s, X86, MULTSHIFT)
    s.heading("against the seed")
    for r in rows(c):
        s.say(verdict_line(r, "v3"))
    hot = row(c, clock="monotonic", mode="hot", variant=MULTSHIFT)
    s.say(f"Hot, MONOTONIC: {calls_diff(hot)} calls ({hot['verdict']}) against the seed's "
          "+1%: a hot loop keeps both lines in L1 and cannot see the straddle.")
    cache_side(s, c, X86, MULTSHIFT)
    footprint_side(s, c, X86, MULTSHIFT)
    s.say(machine_reasons(s, "x86-64 bare metal, v4.x kernel, 2018"))
    return True


def cache_side(s, c, before, after):
    """The cache-side verdicts: per clock, the simulated misses beside the cold
    mode's time (each call alone, its data evicted from L1D), the warm control's,
    and the lines' own cost (cold minus warm, per round)."""
    s.heading("the cache side: cold time against the simulated misses")
    s.say("cold: before each call the data page's lines are evicted from L1D and the call "
          "is timed alone, net of the bracket; warm: the same without the eviction, so "
          "cold minus warm, round by round, is what the evicted lines cost, whatever else "
          "differs between the two builds. Intervals: 95%, per clock.")
    def extra(clock):
        sim = rows(c, "sim:l1d_misses", clock=clock, mode="cold", variant=after)
        return sim[0]["value"] - sim[0]["base"] if sim else None
    controls = [r["clock"] for r in rows(c, mode="cold", variant=after)
                if extra(r["clock"]) == 0]
    for r in rows(c, mode="cold", variant=after):
        sim = rows(c, "sim:l1d_misses", clock=r["clock"], mode="cold", variant=after)
        misses = (f"{sim[0]['base']:g} -> {sim[0]['value']:g} simulated L1D misses per call"
                  if sim else "no simulated count")
        warm = rows(c, mode="warm", clock=r["clock"], variant=after)
        cost = line_costs.lines_cost(c, r["clock"], before, after)
        s.say(f"{tables.clock_name(r['clock'])}: {misses}; cold: time ratio {r['ratio']:.3f} "
              f"{ci_text(r)} {r['verdict']}"
              + (f"; warm: {warm[0]['ratio']:.3f} {ci_text(warm[0])} {warm[0]['verdict']}"
                 if warm else "")
              + f"; the lines' own cost (cold - warm): {line_costs.ns_text(*cost)}")
        if not extra(r["clock"]):
            continue
        said = f"  The simulation counts {extra(r['clock']):+g} line(s) on " \
               f"{tables.clock_name(r['clock'])}"
        if not controls:
            seen = cost[1] is not None and (cost[1] > 0 or cost[2] < 0)
            s.say(said + ("; time sees a cost (no clock without the extra miss to "
                          "check it against)." if seen else "; time does not see it."))
            continue
        more = line_costs.beyond_control(c, r["clock"], controls[0], before, after)
        seen = more[1] is not None and (more[1] > 0 or more[2] < 0)
        s.say(said + f"; beyond {tables.clock_name(controls[0])}, whose misses do not "
              f"differ, its lines cost {line_costs.ns_text(*more)}: time "
              + ("sees the line." if seen else
                 "does not see the line. Its miss overlaps the first line's (the load "
                 "does not wait for it) or the counter read's latency: an out-of-order "
                 "core pays one L2 latency for both. What the cold ratio shows beyond "
                 "that, the control clock shows too (the code, in warm; where the "
                 "pages landed, in cold - warm)."))


def footprint_side(s, c, before, after):
    """The footprint verdict beside the cold one (bench/footprint.h), each
    probe's lines checked against layout's loads."""
    s.heading("the caller's side: the footprint mode")
    clocks = sorted({k.split("/")[0] for k in c.get("footprint", {})})
    paths, why = probe_paths([before, after], clocks)
    for line in footprint.recipe_lines(c, before, after, paths=paths):
        s.say(line)
    if why:
        s.say(f"(the probes are not checked against layout: {why})")


def probe_paths(variants, clocks):
    """({(variant, clock): (layout's traced path, the variant's fields)}, None)
    for the footprint probe's check, only those clocks traced (valgrind
    lackey, a few seconds); ({}, why) where they cannot be."""
    import os
    from vdsobench_cli.cli import variants as variants_mod
    from vdsobench_cli.measure import layouts
    if not clocks:
        return {}, None
    if not arch.current().native or not tools.have("valgrind"):
        return {}, "valgrind cannot trace here"
    chosen = [v for v in variants_mod.load() if v["name"] in variants]
    try:
        layouts.build.build([labels.LAYOUT_DRIVER])
        traced = layouts.measure(chosen, layouts.build.binary_path(labels.LAYOUT_DRIVER),
                                 os.cpu_count() or 1, clocks=clocks)
    except Failure as e:
        return {}, str(e)
    return {(v["name"], p["clock"]): (p, v["fields"]) for v in chosen
            for p in traced.get(v["name"], [])}, None


def layout_diff(s, a, b):
    try:
        from vdsobench_cli.measure import layouts
    except ImportError:
        s.say("(layout diff: the layout command is not available in this build)")
        return
    s.heading(f"the data page: {a} against {b}")
    s.block(layouts.text(layouts.diff(vocab.layout_of(a), vocab.layout_of(b))))


def generic_unified(s):
    s.heading("the seed: x86 on the generic vDSO library (5.2-rc6), calls in 10 s")
    s.block(seeds.SEED_000_GENERIC)
    c = s.compare([X86, G53], clocks=ALL_CLOCKS + ["getres:monotonic"], tag="x86-vs-generic")
    s.heading(f"this machine: calls in 10 s; Before = {X86}, After = {G53}")
    s.table(c, calls_per=10)
    s.heading("against the seed")
    per_clock_against_seed(s, c, {"monotonic": "+32%", "monotonic_raw": "+412%",
                                  "realtime": "+33%"}, G53)
    mono = row(c, clock="monotonic", variant=G53)
    s.say(f"MONOTONIC here: {calls_diff(mono)} ({mono['verdict']}) against the seed's +32%. "
          "The seed's Before was the x86 code of 5.2-rc6 on that machine; ours is v5.2's "
          "rebuilt in userspace and called directly, so what it measured beyond the code "
          "itself (the old retpolined vDSO entry, its compiler) is not in our Before. "
          "MONOTONIC_RAW is the syscall against userspace, as in raw-vdso.")
    s.heading("the seed's other table (Xeon Gold 5120T, 5.2-rc2), ns per call")
    s.block(seeds.SEED_001)
    sysc = s.compare(["sys/syscall", "sys/libc", "sys/vdso"],
                     clocks=["monotonic", "getres:monotonic", "monotonic_coarse",
                             "monotonic_raw", "realtime"], tag="syscall-libc-vdso")
    s.heading("this machine, the system's own clock_gettime, ns per call")
    for clock in ("monotonic", "getres:monotonic", "monotonic_coarse", "monotonic_raw",
                  "realtime"):
        libc = row(sysc, clock=clock, variant="sys/libc")
        vdso = row(sysc, clock=clock, variant="sys/vdso")
        kind, name = ("getres", clock[7:]) if clock.startswith("getres:") else ("gettime", clock)
        s.say(f"clock-{kind}-{name.replace('_', '-')}: syscall: {libc['base']:.0f} nsec/call "
              f"libc: {libc['value']:.0f} vdso: {vdso['value']:.0f}")
    s.say(machine_reasons(s, "x86-64 bare metal (5.2-rc6; Xeon Gold 5120T for the second "
                             "table)"))
    return True


def max_cycles(s):
    s.heading("the seed: none, only the question")
    s.say("generic_6_10 is today's x86 layout (CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT): "
          "max_cycles after cycle_last moves basetime to 40, so MONOTONIC sits at 56..71 and "
          "straddles two lines, the straddle tglx refused in 2019. Does it cost anything?")
    c = s.compare([G53, G610], clocks=CLOCKS3, modes=["hot", "cold", "warm", "footprint"],
                  sim=True)
    s.heading(f"this machine: ns per call; Before = {G53}, After = {G610}")
    s.table(c)
    s.heading("simulated (cachegrind, deterministic): net L1D misses per call")
    s.table(c, metric="sim:l1d_misses")
    for r in rows(c, "sim:l1d_misses") + rows(c, "sim:instructions"):
        s.say(f"{r['metric']} {r['clock']} {r['mode']}: {r['base']:g} -> {r['value']:g} "
              f"({r['verdict']})")
    s.heading("verdicts")
    for r in rows(c):
        s.say(verdict_line(r, "6.10 vs 5.3"))
    cache_side(s, c, G53, G610)
    footprint_side(s, c, G53, G610)
    layout_diff(s, G53, G610)
    return True


def lines_touched(variants):
    """{(variant, clock): the lines its read path loads, None where the clock goes
    to the kernel}, as `layout` traces them (valgrind lackey)."""
    from vdsobench_cli.measure import layouts
    out = {}
    for m in layouts.maps(variants)["variants"]:
        for p in m["paths"]:
            if p["mode"] == "hot" and p["path"] == p["clock"]:
                out[(m["variant"], p["clock"])] = (None if p["kind"] == "syscall"
                                                   else p["line_count"])
    return out


def line_cost(s):
    s.heading("the seed: none; the question: what does a cache line cost a call here?")
    s.say("Every layout against x86_gtod on every clock, in the cold mode (each call "
          "alone, its data page's lines evicted from L1D, net of the bracket) and in the "
          "warm mode (the same, nothing evicted). For each cell: the lines its read path "
          "loads (`layout`, traced), the simulated L1D misses per call (`sim --modes "
          "cold`, cachegrind), and the time: cold minus warm, round by round, is what the "
          "evicted lines cost, net of the code, which differs between layouts.")
    from vdsobench_cli.cli import variants as variants_mod

    registry = variants_mod.load()
    layouts = [f"{lay}+{_TIMED}+always" for lay in variants_mod.axis_values(registry, "layout")]
    layouts = [X86] + [v for v in layouts if v != X86
                       and any(r["name"] == v for r in registry)]
    clocks = ALL_CLOCKS
    if s.quick:  # CI's smoke run: two straddles and a control clock
        layouts = [v for v in layouts if v in (X86, MULTSHIFT, G610)]
        clocks = ["realtime", "monotonic"]
    c = s.compare(layouts, clocks=clocks, modes=["cold", "warm"], sim=True,
                  tag="line-cost")
    lines = lines_touched(layouts)
    cells = []
    for r in rows(c, mode="cold"):
        v, clock = r["variant"], r["clock"]
        la, lb = lines.get((X86, clock)), lines.get((v, clock))
        sim = rows(c, "sim:l1d_misses", clock=clock, mode="cold", variant=v)
        if la is None or lb is None or not sim:
            continue  # the kernel on either side: not a question of lines
        cold = line_costs.per_round_difference(c, clock, "cold", X86, v)
        warm = line_costs.per_round_difference(c, clock, "warm", X86, v)
        cells.append({"variant": v, "clock": clock, "lines": lb - la,
                      "misses": sim[0]["value"] - sim[0]["base"],
                      "cold": line_costs.median_with_ci(list(cold.values())),
                      "lines_cost": {k: cold[k] - warm[k] for k in cold if k in warm}})
    s.heading(f"each layout against {X86}: lines, simulated misses, time (ns, 95% CI)")
    s.block(f"{'layout':26}{'clock':17}{'lines':>6}{'misses':>7}  {'cold':>24}  "
            f"{'cold - warm':>24}")
    agree = disagree = 0
    for cell in cells:
        cost = line_costs.median_with_ci(list(cell["lines_cost"].values()))
        seen = cost[1] is not None and (cost[1] > 0 or cost[2] < 0)
        if cell["misses"]:
            agree += seen
            disagree += not seen
        s.block(f"{cell['variant'].split('+')[0]:26}{cell['clock']:17}{cell['lines']:>+6}"
                f"{cell['misses']:>+7g}  {line_costs.ns_text(*cell['cold']):>24}  "
                f"{line_costs.ns_text(*cost):>24}"
                + ("  <- misses differ" if cell["misses"] else ""))
    m, lo, hi, n = line_costs.per_line_fit(line_costs.net_of_controls(cells), key="net")
    cold_a = line_costs.subject_rounds(c, "realtime", "cold", X86)
    warm_a = line_costs.subject_rounds(c, "realtime", "warm", X86)
    base_cost = line_costs.median_with_ci([cold_a[k] - warm_a[k] for k in cold_a if k in warm_a])
    s.heading("the cost of a line")
    base_sim = rows(c, "sim:l1d_misses", clock="realtime", mode="cold")
    s.say(f"{X86} REALTIME, cold minus warm: {line_costs.ns_text(*base_cost)} for its "
          + (f"{base_sim[0]['base']:g} simulated miss(es) per call" if base_sim else
             "evicted line(s)")
          + ": the first line, whose load the call waits for.")
    if n:
        s.say(f"One more simulated L1D miss (slope over the {n} cells whose misses differ, "
              f"per round, each net of its layout's cells whose lines and misses do not): "
              f"{line_costs.ns_text(m, lo, hi)} per miss. Time follows the simulation in "
              f"{agree} of those {n} cells and not in {disagree}.")
    else:
        s.say("No two layouts differ in simulated misses on a clock both serve in "
              "userspace: no per-line cost to fit.")
    s.say("Where they disagree: the simulation counts every line a call loads, and time "
          "pays only for the ones on its critical path. The extra line of a straddle is "
          "loaded at an address known from the start, so an out-of-order core fetches it "
          "while it waits for the first line (or for the counter read): one L2 latency for "
          "both. " + machine_reasons(s, "(no seed: this recipe measures the machine)"))
    return True


def timens(s):
    s.heading("the seed: tglx's timens numbers (seed 004)")
    s.block(seeds.SEED_004)
    host = s.compare([G53, TIMENS, TIMENS_SWITCH], clocks=ALL_CLOCKS, tag="host-task")
    task = s.compare([TIMENS, TIMENS_SWITCH], clocks=ALL_CLOCKS, modes=["timens"],
                     tag="timens-task")
    s.heading("this machine, ns per call (medians; the timens column ran in its own rounds)")
    s.block(f"{'':13}{'Base':>8}{'+ timens':>10}{'+ timens':>10}{'switch':>9}{'switch':>9}")
    s.block(f"{'':13}{'5.3':>8}{'host':>10}{'page':>10}{'host':>9}{'page':>9}")
    for clock in ALL_CLOCKS:
        label = clocks.short(clock)
        h = row(host, clock=clock, variant=TIMENS)
        hs = row(host, clock=clock, variant=TIMENS_SWITCH)
        t = row(task, clock=clock, variant=TIMENS_SWITCH)
        s.block(f"{label:13}{h['base']:8.1f}{h['value']:10.1f}{t['base']:10.1f}"
                f"{hs['value']:9.1f}{t['value']:9.1f}")
    s.heading("verdicts (paired)")
    for r in rows(host):
        s.say(verdict_line(r, f"host task, {r['variant'].split('+')[0]} vs 5.3"))
    for r in rows(task):
        s.say(verdict_line(r, "timens task, switch vs array"))
    s.say("tglx measured the timens page at +2 ns (5-7% with perf counters) and the switch "
          "slower than the array; compare the last two columns and the verdicts above. "
          + machine_reasons(s, "x86-64 bare metal, 5.3-rc, 2019"))
    return True


def counter_read(s):
    s.heading("the seed: rdtscp against rdtsc_ordered (lfence; rdtsc), seed 003")
    s.block(seeds.SEED_003)
    # a CPU without RDTSCP (some hypervisors mask it) measures the other three
    has_rdtscp = _TIMED == "rdtscp"
    reads = ["lfence_rdtsc", "rdtsc", "mfence_rdtsc"] + (["rdtscp"] if has_rdtscp else [])
    floors = s.compare([f"floor/{c}" for c in reads], tag="floors")
    s.heading("this machine: the bare counter reads, ns per read; Before = lfence;rdtsc")
    s.table(floors)
    inside_variants = [f"generic_5_3+{c}+always" for c in reads]
    inside = s.compare(inside_variants, clocks=["monotonic_raw", "monotonic"],
                       tag="inside-generic")
    s.heading("inside generic_5_3, ns per call; Before = lfence;rdtsc")
    s.table(inside)
    s.heading("the seed's latency and monotonicity counts, here")
    n = 1000 if s.quick else 10000
    for rec in samples(inside_variants, ["monotonic_raw", "monotonic"], n):
        s.say(f"{rec['subject']} {rec['clock']}: average latency {rec['mean_delta_ns']:.1f} "
              f"ns (median {rec['median_delta_ns']} ns), N zero deltas: "
              f"{rec['zero_deltas']}, N inconsistent (backwards) deltas: "
              f"{rec['backwards']} over {rec['samples']} samples")
    if not has_rdtscp:
        s.say("This CPU has no RDTSCP (the kernel's /proc/cpuinfo lacks the flag, as under "
              "hypervisors that mask it), so the seed's rdtscp half cannot be measured here: "
              "the kernel itself reads lfence;rdtsc on it. Run this recipe on a CPU with "
              "RDTSCP for the seed's question. " + machine_reasons(
                  s, "an Intel x86-64 of 2018, v4.15 kernel"))
        return True
    r = row(floors, variant="floor/rdtscp", clock="none")
    s.say(f"The seed found rdtscp about twice as fast as lfence;rdtsc (28 against 52 ns "
          f"per call); here the bare reads differ by a time ratio of {r['ratio']:.3f} "
          f"{ci_text(r)} ({r['verdict']})"
          + (", nowhere near 2x: the seed's gap was its CPU's." if 0.8 < r["ratio"] < 1.25
             else ".") + " " + machine_reasons(s, "an Intel x86-64 of 2018, v4.15 kernel"))
    return True


def samples(variants, clocks, n):
    binary = rounds_mod.binary()
    chosen = Selection(clocks=clocks, modes=["hot"])
    cmd, env = cpu_lock.confined([*binary, *rounds_mod.harness_args(variants, chosen),
                                  "--samples", str(n)])
    r = lifecycle.run(cmd, capture_output=True, text=True, errors="replace", env=env)
    if r.returncode != 0:
        raise Failure(f"vdsobench_bench --samples failed (exit {r.returncode}): "
                      f"{(r.stderr.strip().splitlines() or ['no message'])[-1]}")
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


INLINE_CLOCKS = ["realtime", "monotonic", "boottime"]


def inline(s):
    s.heading("the seed: forcing do_hres inline, seed 002 (arm, 2017)")
    s.block(seeds.SEED_002)
    if arch.current().emulated:
        return inline_emulated(s)
    counter = arch.timed_counter()
    c = s.compare([f"generic_5_3+{counter}+always", f"generic_5_3+{counter}+auto"],
                  clocks=INLINE_CLOCKS, sim=True)
    s.heading("this machine: ns per call; Before = always inline, After = auto")
    s.table(c)
    instr = rows(c, "sim:instructions", mode="hot")
    for r in instr:
        s.say(f"instructions per call, {r['clock']}: always {r['base']:g}, auto "
              f"{r['value']:g} ({r['verdict']})")
    s.heading("verdicts")
    for r in rows(c):
        s.say(verdict_line(r, "auto vs always"))
    if instr and all(r["verdict"] == "same" for r in instr):
        s.say("Both builds execute the same number of instructions per call: the compiler "
              "inlines do_hres() either way here, so any timing verdict other than \"no "
              "significant difference\" would be noise or code alignment.")
    elif instr:
        extra = instr[0]["value"] - instr[0]["base"]
        timed = [r for r in rows(c) if r["verdict"] != "no significant difference"]
        s.say(f"Left to itself the compiler does not inline the same way: {extra:+g} "
              "instructions per call (a call and its frame). "
              + ("Timing sees it on " + ", ".join(r["clock"] for r in timed) + "."
                 if timed else "Timing does not see it: no significant difference on any "
                 "clock at this many rounds, which is the seed's conclusion too."))
    s.say("Seed 002 concluded the change was not worth it (within +/-1% but for one "
          "anomaly). " + machine_reasons(s, "Hikey960 (arm64 big.LITTLE), 4.9 kernel, "
                                           "GCC 4.9"))
    return True


def inline_emulated(s):
    """Seed 002 on an architecture this machine only emulates (arm64 on x86-64):
    both inline choices compared by their code, the size of the read path in
    the objects and the instructions each call executes, since time under
    qemu-user is the emulator's."""
    t = arch.current()
    names = {i: f"generic_5_3+isb_cntvct_isb+{i}" for i in ("always", "auto")}
    sizes = {i: code_metrics.code_size(n) for i, n in names.items()}
    s.heading(f"the code: the read path of the {t.machine} objects, bytes / instructions")
    prefixes = {i: n.replace("+", "__") + "__" for i, n in names.items()}
    funcs = list(dict.fromkeys(f.removeprefix(prefixes[i]) for i in sizes
                               for f in sizes[i]["functions"]))

    def cell(i, f):
        got = sizes[i]["functions"].get(prefixes[i] + f) or sizes[i]["functions"].get(f)
        return f"{got['bytes']} / {got['instructions']}" if got else "-"
    rows_ = [[f, cell("always", f), cell("auto", f)] for f in funcs]
    rows_.append(["read path", *(f"{sizes[i]['read_path_bytes']} / "
                                 f"{sizes[i]['read_path_instructions']}" for i in names)])
    widths = [max(len(r[k]) for r in rows_ + [["function", "always", "auto"]])
              for k in range(3)]
    for r in [["function", "always", "auto"]] + rows_:
        s.block("  ".join(x.ljust(w) if k == 0 else x.rjust(w)
                          for k, (x, w) in enumerate(zip(r, widths))))
    s.say(f"{names['always']} vs {names['auto']}; objdump -d of generic_5_3.o in each "
          "variant's build, update_vsyscall left out (the writer's).")
    counts = code_metrics.executed_per_call(list(names.values()), INLINE_CLOCKS)
    s.heading("instructions executed per call (qemu-user's instruction log)")
    by = {(r["variant"], r["clock"]): r for r in counts}
    for clock in INLINE_CLOCKS:
        a, b = by[(names["always"], clock)], by[(names["auto"], clock)]
        diff = b["net_instructions_per_call"] - a["net_instructions_per_call"]
        s.say(f"{clock}: always {a['net_instructions_per_call']:g}, auto "
              f"{b['net_instructions_per_call']:g} ({diff:+g})")
    s.say(f"Measured as {vocab.layout_of(counts[0]['measured_as'])}+fake+<inline> (the same "
          "code, the counter read from TLS) by the sim driver under qemu-user with one "
          "instruction per translation block, net of floor/empty; the same on every run.")
    path = f"{s.out_dir}/code.json"
    atomic.write_atomic(path, {"arch": t.machine, "emulation": arch.emulation(),
                                "code_size": {names[i]: sizes[i] for i in names},
                                "executed_per_call": counts})
    s.files.append(path)
    s.heading("timing")
    s.say(f"Timing needs a real {t.name} machine: under qemu-user every time is the "
          f"emulator's (what `run --arch {t.name}` labels '{arch.LABEL}'), not an "
          f"{t.machine} core's, so nothing here is timed. There: scripts/vdsobench bundle --arch {t.name} --out "
          f"vdsobench-{t.name}.tar.gz on this machine, then on that one ./vdsobench "
          f"compare {names['always']} {names['auto']} --clocks {','.join(INLINE_CLOCKS)}.")
    grew = sizes["always"]["read_path_bytes"] - sizes["auto"]["read_path_bytes"]
    per_call = (by[(names["always"], "monotonic")]["net_instructions_per_call"]
                - by[(names["auto"], "monotonic")]["net_instructions_per_call"])
    s.say(f"Forcing do_hres() inline (always against auto) changes the read path by "
          f"{grew:+d} bytes and each MONOTONIC call by {per_call:+g} instructions "
          "executed. Seed 002 (Hikey960, 2017) found the timing within +/-1% but for one "
          "anomaly and dropped the patch.")
    return True


# the recipes that also run where this machine only emulates the architecture
EMULATED = ("inline",)

RECIPES = (
    Recipe("raw-vdso", "MONOTONIC_RAW through the syscall vs in userspace",
           "000: [PATCH] x86/vdso: MONOTONIC_RAW in the vDSO (Sverdlin, 2018)", raw_vdso),
    Recipe("raw-branch", "v1's extra conditional: its cost, and the torn read",
           "000: v1, mult/shift read outside the seqlock", raw_branch),
    Recipe("multshift-in-base", "v3: mult/shift in each base, hot vs cache pressure",
           "000: [PATCH v3 1/2] and tglx's cache-line reply", multshift_in_base),
    Recipe("generic-unified", "x86 before and after the generic vDSO; syscall/libc/vdso",
           "000 (Sverdlin on 5.2-rc6) and 001 (the unified vDSO series)", generic_unified),
    Recipe("max-cycles", "generic_5_3 vs generic_6_10: does today's straddle cost?",
           "VARIANTS.md: CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT (no seed numbers)", max_cycles),
    Recipe("line-cost", "every layout, cold vs warm, against its lines and simulated misses",
           "none: the cold mode validated against `layout` and `sim`", line_cost),
    Recipe("timens", "base, timens-aware host task, timens task; array vs switch",
           "004: tglx on the timens page (2019)", timens),
    Recipe("counter-read", "rdtsc vs lfence vs mfence vs rdtscp, floors and inside",
           "003: rdtscp vs rdtsc_ordered (Vas Dias, 2018)", counter_read),
    Recipe("inline", "do_hres always inline vs the compiler's choice",
           "002: arm vdso: enforce monotonic and realtime as inline (2017)", inline),
    Recipe(patch_review.NAME, "your patch on your tree: the cover letter's block",
           "none: the tree and patches of --source and --patch", patch_review.run),
)
NAMES = [r.name for r in RECIPES]


def by_name(name):
    for r in RECIPES:
        if r.name == name:
            return r
    raise UsageError(f"recipe: unknown recipe {name!r} (valid: {', '.join(NAMES)})")
