"""What a recipe reads out of a comparison's rounds: one subject's rounds, the
per-round differences, the cost of the lines a layout evicts (cold less warm,
and beyond a control clock), controls netted out, and the cost of one more
simulated L1D miss fitted over the cells; medians with their 95% intervals."""

import statistics

from vdsobench_cli.core import paired, stats


def subject_rounds(c, clock, mode, variant):
    """{round: ns} of one subject in one clock x mode's rounds (the first CPU's)."""
    key = paired.group_in(c.get("rounds", {}), clock, mode)
    return c["rounds"][key].get(paired.subject_key(variant), {}) if key else {}


def per_round_difference(c, clock, mode, before, after):
    """{round: after's ns - before's} in one clock x mode's rounds."""
    a, b = (subject_rounds(c, clock, mode, v) for v in (before, after))
    return {r: b[r] - a[r] for r in a if r in b}


def median_with_ci(values):
    """(median, low, high) of values (differences: any sign) with the median's 95%
    order-statistic interval (low and high None with too few values)."""
    if not values:
        return None, None, None
    # order statistics do not care where 0 is; stats.median_ci takes times (>= 0)
    shift = max(0.0, -min(values))
    ci = stats.median_ci([v + shift for v in values])
    return (statistics.median(values),
            *((ci[0] - shift, ci[1] - shift) if ci else (None, None)))


def lines_cost_rounds(c, clock, before, after):
    """{round: the cold difference minus the warm one} (same code, nothing
    evicted): what the evicted lines cost after over before, round by round."""
    cold = per_round_difference(c, clock, "cold", before, after)
    warm = per_round_difference(c, clock, "warm", before, after)
    return {r: cold[r] - warm[r] for r in cold if r in warm}


def lines_cost(c, clock, before, after):
    """lines_cost_rounds() as (median, low, high) in ns."""
    return median_with_ci(list(lines_cost_rounds(c, clock, before, after).values()))


def beyond_control(c, clock, control, before, after):
    """How much more the lines cost on clock than on control (a clock whose
    simulated misses do not differ), round by round: (median, low, high) in ns.
    What costs the same on both (where the page landed, the code) cancels."""
    a = lines_cost_rounds(c, clock, before, after)
    b = lines_cost_rounds(c, control, before, after)
    return median_with_ci([a[r] - b[r] for r in a if r in b])


def ns_text(m, lo, hi):
    if m is None:
        return "-"
    return f"{m:+.2f} ns" + (f" [{lo:+.2f}, {hi:+.2f}]" if lo is not None else "")


def net_of_controls(cells):
    """Each cell's (cold - warm) per round less the mean, that round, of the same
    layout's cells whose misses and lines do not differ (its controls): what a
    layout costs on every clock alike (where its page landed) cancels. Cells of a
    layout without controls keep their own. Sets cell["net"]."""
    for cell in cells:
        controls = [c for c in cells if c["variant"] == cell["variant"]
                    and not c["misses"] and not c["lines"]]
        cell["net"] = {r: v - sum(c["lines_cost"].get(r, 0) for c in controls) / len(controls)
                       for r, v in cell["lines_cost"].items()} if controls else \
            dict(cell["lines_cost"])
    return cells


def per_line_fit(cells, key="lines_cost"):
    """The cost of one more simulated L1D miss: per round, the least-squares slope
    through 0 of the cells' (cold - warm) differences (or another per-round key)
    against their miss differences, over the cells whose misses differ; (median,
    low, high) of the rounds' slopes, with the median's 95% interval, and how many
    cells."""
    used = [c for c in cells if c["misses"]]
    if not used:
        return None, None, None, 0
    rounds = set.intersection(*(set(c[key]) for c in used))
    slopes = [sum(c[key][r] * c["misses"] for c in used)
              / sum(c["misses"] ** 2 for c in used) for r in sorted(rounds)]
    return (*median_with_ci(slopes), len(used))
