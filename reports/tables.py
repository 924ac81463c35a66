"""A comparison as text: terminal table, LKML plain text, Markdown, CSV, JSON.

The input is the dict `compare` builds: {"meta": {...}, "rows": [{"clock",
"mode", "metric", "baseline", "variant", "base", "value", "ratio", "ci_low",
"ci_high", "p", "p_adjusted", "verdict", "n", ...}]}, one row per clock x
mode x metric x variant against the baseline (see core/stats.py for what
the numbers mean).

The "lkml" format is what a patch author pastes into a cover letter, so it is
shaped like the tables in the mail threads (seed 000: Clock, Before, After,
Diff; calls in 10 s) and every line fits the 72 columns mail wants; the
confidence intervals and the machine go in a footer, since a bare percentage
is exactly what those threads argued over.
"""

import csv
import io
import json
import textwrap

from vdsobench_cli.core import emulation, run_abi, stats, vocab
from vdsobench_cli.core.text import printable

FORMATS = ("table", "lkml", "markdown", "csv", "json")
WIDTH = 72
# the row fields in the order people read them; others follow, sorted
ROW_FIELDS = ("clock", "mode", "cpu", "metric", "emulated", "baseline", "variant", "base", "value",
              "ratio", "ci_low", "ci_high", "confidence", "p", "p_adjusted", "verdict", "n",
              "retries", "lost", "note")
POSIX_CLOCKS = vocab.CLOCKS
NOT_SIGNIFICANT = "~"
# a row whose rounds lost the CPU too often to be believed (compare sets it)
NO_VERDICT = "no verdict: the CPU was lost"
NO_VERDICT_MARK = "?"
LOST_LEGEND = ("retries: batches that lost the CPU to another task and were measured again; "
               "lost: rounds that lost it even so")
# what a row's time means in the modes that time each call alone (bench/cold.h,
# bench/footprint.h)
MODE_NOTES = {
    "cold": "cold: each call timed alone after its data page's lines were evicted from "
            "L1D, net of the bracket (floor/empty cold, timed in the same round)",
    "cold-l2": "cold-l2: each call timed alone after its data page's lines were evicted "
               "from L1D and L2, net of the bracket (floor/empty cold-l2, same round)",
    "warm": "warm: each call timed alone, nothing evicted, net of the bracket (floor/empty "
            "warm, same round)",
    "footprint": "footprint: each call and the walk after it of a chain of the caller's lines "
                 "over the L1D sets the call's data maps to, net of the walk alone (same "
                 "batch): the call and the lines it displaced from its caller",
}
SIMULATED = ("Simulated by cachegrind: exact counts per call, the same on every run of "
             "this build, compared exactly (no rounds, no intervals).")


def render(comparison, fmt, calls_per=None):
    """The comparison in format fmt (one of FORMATS), ending in a newline.

    calls_per (seconds): the people formats (table, lkml, markdown) show
    ns/call rows as calls in that many seconds, as seed 000 did, with Diff and
    ratios on calls (so a faster variant shows a positive Diff); csv and json
    always carry the measured numbers.
    """
    if fmt not in RENDERERS:
        raise ValueError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")
    if calls_per is not None and not calls_per > 0:
        raise ValueError(f"calls_per {calls_per!r}: must be a number of seconds > 0")
    return RENDERERS[fmt](comparison, calls_per)


# ---- what a row shows --------------------------------------------------------------------


def clock_name(clock):
    """The kernel's name: monotonic -> CLOCK_MONOTONIC, getres:tai ->
    getres(CLOCK_TAI), time -> time(); anything else as given."""
    if clock.startswith("getres:"):
        return f"getres({clock_name(clock[7:])})"
    if clock in POSIX_CLOCKS:
        return "CLOCK_" + clock.upper()
    if clock in ("time", "gettimeofday"):
        return clock + "()"
    return clock


def is_calls(row, calls_per):
    return bool(calls_per) and row.get("metric") == "ns/call"


def shown(row, calls_per=None):
    """(before, after, ratio, ci_low, ci_high) as the people formats show them:
    with calls_per, an ns/call row becomes calls per calls_per seconds and its
    ratio and interval invert (the interval's ends swap)."""
    base, value = row.get("base"), row.get("value")
    ratio = row.get("ratio")
    if ratio is None and base and value is not None:
        ratio = value / base
    if not is_calls(row, calls_per):
        return base, value, ratio, row.get("ci_low"), row.get("ci_high")

    def inverse(x, scale=1.0):
        return scale / x if x else None
    return (inverse(base, calls_per * 1e9), inverse(value, calls_per * 1e9), inverse(ratio),
            inverse(row.get("ci_high")), inverse(row.get("ci_low")))


def number(x):
    """Four or so significant digits; millions as 355.5M, as in seed 000."""
    if x is None:
        return "-"
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    if abs(x) < 10:
        return f"{x:.2f}"
    if abs(x) < 1e4:
        return f"{x:.1f}"
    for scale, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= scale:
            return f"{x / scale:.1f}{suffix}"


def ratio_text(x):
    if x is None:
        return "-"
    return f"{x:.3f}" if 0.01 <= abs(x) < 1000 else f"{x:.3g}"


def diff(ratio, verdict=None):
    """after/before - 1 as a signed percentage ("+650%", "-5%", "+0.4%", "0%"),
    with "~" in front when not significant."""
    if ratio is None or ratio != ratio:
        return ""
    pct = (ratio - 1) * 100
    text = ("0%" if round(pct, 1) == 0 else f"{pct:+.1f}%" if abs(pct) < 1
            else f"{pct:+.0f}%")
    mark = {stats.NO_DIFFERENCE: NOT_SIGNIFICANT, NO_VERDICT: NO_VERDICT_MARK}
    return mark.get(verdict, "") + text


def ci_text(lo, hi):
    return "-" if lo is None or hi is None else f"[{ratio_text(lo)}, {ratio_text(hi)}]"


def p_text(p):
    return "-" if p is None else f"{p:.2g}"


def distinct(rows, key):
    return list(dict.fromkeys(r.get(key) for r in rows))


def row_label(row, rows):
    """The clock, then the mode and CPU where the comparison has more than one."""
    parts = [clock_name(str(row.get("clock")))]
    parts += [str(row.get("mode"))] if len(distinct(rows, "mode")) > 1 else []
    parts += ([f"cpu{row['cpu']}"] if row.get("cpu") is not None
              and len(distinct(rows, "cpu")) > 1 else [])
    return " ".join(parts)


def metric_label(metric, calls_per):
    if metric == "ns/call" and calls_per:
        return f"calls in {calls_per:g} s"
    if metric.startswith("sim:"):
        return f"{metric[4:]}/call (simulated)"
    return metric


def confidence_text(comparison):
    """"95% CI (99.17% each, Bonferroni over 6)": the family-wise confidence the
    reader wants, then what each interval really is, from the meta (or from
    the rows' own confidence where the meta lacks alpha)."""
    meta, rows = comparison.get("meta") or {}, comparison.get("rows") or []
    alpha, m = meta.get("alpha"), meta.get("comparisons") or 1
    unpaired = meta.get("paired", True) is False
    each = next((r["confidence"] for r in rows if r.get("confidence")), None)
    if alpha is None:
        return f"{pct(each)} CI" if each else "CI"
    if each is None:
        each = stats.corrected_confidence(alpha, m, not unpaired)
    why = ([f"Bonferroni over {m}"] if m > 1 else []) + (["widened: unpaired"] if unpaired else [])
    return f"{pct(1 - alpha)} CI" + (f" ({pct(each)} each, {', '.join(why)})" if why else "")


def pct(fraction):
    return f"{fraction * 100:.4g}%"


def machine_text(meta):
    """'Machine: Zen 3 (...), kernel ..., KVM guest'; for a comparison measured
    under emulation (meta.emulation), 'Machine: aarch64 emulated (qemu-user) on
    Zen 3 (...), ...'; a 32-bit process's (meta.abi) ends ', an i386 (32-bit)
    process' (i386 and arm: both "an")."""
    hyp = printable(meta.get("hypervisor"))
    cpu = emulation.on(meta.get("emulation"), printable(meta.get('cpu_model')) or 'unknown CPU')
    abi = printable(meta.get("abi"))
    return (f"Machine: {cpu}, "
            f"kernel {printable(meta.get('kernel')) or 'unknown'}, "
            + (f"{hyp} guest" if hyp else "no hypervisor")
            # a 64-bit process is what every comparison was before --arch i386
            + (f", an {abi} process" if run_abi.is_32_bit(abi) else ""))


def simulated_only(rows):
    """Every row a simulated count: no rounds, no intervals, no significance."""
    return bool(rows) and all(str(r.get("metric")).startswith("sim:") for r in rows)


def mode_notes(rows):
    """What the time means in each mode (of the measured rows) that times each
    call alone."""
    measured = [r for r in rows if not str(r.get("metric")).startswith("sim:")]
    return [MODE_NOTES[m] + "." for m in distinct(measured, "mode") if m in MODE_NOTES]


def method_text(comparison):
    """The method the verdicts come from (a table of simulated counts: exact)."""
    if simulated_only(comparison.get("rows") or []):
        return "exact: deterministic counts"
    return (comparison.get("meta") or {}).get("method")


def rounds_text(comparison):
    meta, rows = comparison.get("meta") or {}, comparison.get("rows") or []
    if simulated_only(rows):
        return SIMULATED
    if meta.get("paired", True) is False:
        return "Unpaired: medians of the repetitions of two separate runs."
    n = meta.get("rounds") or max((r.get("n") or 0 for r in rows), default=0)
    return " ".join([f"Medians of {n} interleaved rounds, paired per round."]
                    + mode_notes(rows))


def notes(comparison):
    meta, rows = comparison.get("meta") or {}, comparison.get("rows") or []
    return list(dict.fromkeys(list(meta.get("notes") or [])
                              + [r["note"] for r in rows if r.get("note")]))


# ---- lkml --------------------------------------------------------------------------------


def wrap(text, indent=""):
    """Prose to WIDTH columns; a name longer than a line is broken, not kept whole."""
    return textwrap.wrap(text, WIDTH, subsequent_indent=indent, break_long_words=True,
                         break_on_hyphens=False) or [""]


def blocks(rows):
    """Rows grouped by (baseline, variant, metric), in first-seen order."""
    out = {}
    for r in rows:
        out.setdefault((r.get("baseline"), r.get("variant"), r.get("metric")), []).append(r)
    return out


def block_title(key, rows, calls_per):
    baseline, variant, metric = key
    parts = []
    if len(distinct(rows, "baseline")) > 1:
        parts.append(f"Before: {baseline}")
    if len(distinct(rows, "variant")) > 1:
        parts.append(f"After: {variant}")
    if len(distinct(rows, "metric")) > 1:
        parts.append(metric_label(metric, calls_per))
    return "; ".join(parts)


def lkml_table(block, rows, calls_per):
    """Clock, Before, After, Diff, right-aligned numbers; a label too long for
    its column goes on a line of its own above its numbers."""
    body = []
    for r in block:
        before, after, ratio, _, _ = shown(r, calls_per)
        body.append((row_label(r, rows), number(before), number(after),
                     diff(ratio, r.get("verdict"))))
    head = [("Clock", "Before", "After", "Diff"), ("-----", "------", "-----", "----")]
    widths = [max(len(row[i]) for row in head + body) for i in range(1, 4)]
    numbers_width = sum(widths) + 2 * 3
    label_width = min(max(len(row[0]) for row in head + body), WIDTH - numbers_width)
    lines = []
    for i, (label, *cells) in enumerate(head + body):
        text = "  ".join([""] + [c.ljust(w) if i < 2 else c.rjust(w)
                                 for c, w in zip(cells, widths)])
        if len(label) > label_width:
            lines += wrap(label)
            label = ""
        lines.append((label.ljust(label_width) + text).rstrip())
    return lines


def ci_lines(block, rows, calls_per):
    out = []
    for r in block:
        _, _, ratio, lo, hi = shown(r, calls_per)
        interval = ("(exact)" if r.get("p") is None and lo == hi and lo is not None
                    else ci_text(lo, hi) if lo is not None else "[no CI: too few rounds]")
        out += wrap(f"  {row_label(r, rows)}: {ratio_text(ratio)} {interval}", "    ")
    return out


def render_lkml(comparison, calls_per):
    meta, rows = comparison.get("meta") or {}, comparison.get("rows") or []
    groups = blocks(rows)
    # an emulated comparison says so before anything else
    lines = wrap(emulation.describe(meta.get("emulation"))) + [""] \
        if meta.get("emulation") else []
    for key, block in groups.items():
        title = block_title(key, rows, calls_per)
        if title:
            lines += wrap(title + ":", "  ")
        lines += lkml_table(block, rows, calls_per) + [""]
    if len(distinct(rows, "baseline")) == 1:
        lines += wrap(f"Before: {rows[0].get('baseline')}", "  ")
    if len(distinct(rows, "variant")) == 1:
        lines += wrap(f"After: {rows[0].get('variant')}", "  ")
    units = [metric_label(m, calls_per) for m in distinct(rows, "metric")]
    lines += wrap(f"{rounds_text(comparison)} Before, After: {', '.join(units)}; "
                  "Diff: the change from Before to After.")
    of_calls = " (of calls)" if calls_per and "ns/call" in distinct(rows, "metric") else ""
    simulated = simulated_only(rows)
    lines += wrap(f"Ratio after/before{of_calls}"
                  + (" (exact):" if simulated else
                     f" and its {confidence_text(comparison)}:"))
    for key, block in groups.items():
        title = block_title(key, rows, calls_per)
        if title and len(groups) > 1:
            lines += wrap(" " + title + ":", "   ")
        lines += ci_lines(block, rows, calls_per)
    if not simulated:
        lines += wrap(f"{NOT_SIGNIFICANT} = no significant difference (the CI includes 1).")
    lines += lost_lines(rows)
    lines += wrap(machine_text(meta) + ".")
    if method_text(comparison):
        lines += wrap(f"Method: {method_text(comparison)}.", "  ")
    for note in notes(comparison):
        lines += wrap(f"Note: {note}", "  ")
    return "\n".join(lines) + "\n"


def lost_lines(rows):
    """The lost-CPU legend: when a row has no verdict, or a batch was retried."""
    out = []
    if any(r.get("verdict") == NO_VERDICT for r in rows):
        out += wrap(f"{NO_VERDICT_MARK} = no verdict: too many rounds lost the CPU to "
                    "another task (see the notes).")
    if any(r.get("retries") for r in rows):
        out += wrap("Batches that lost the CPU to another task were measured again.")
    return out


# ---- terminal table, markdown ------------------------------------------------------------


# the columns of the table and markdown formats that hold numbers (right-aligned)
NUMERIC = ("cpu", "before", "after", "diff", "ratio", "CI", "p", "p adj.", "n", "retries",
           "lost")


def columns(rows, calls_per, with_baseline):
    """Header and cells of every row for the table and markdown formats."""
    with_cpu = any(r.get("cpu") is not None for r in rows)
    # paired rounds: the batches retried after losing the CPU, the rounds lost even so
    with_lost = any("retries" in r for r in rows)
    head = (["clock", "mode"] + (["cpu"] if with_cpu else []) + ["metric"]
            + (["baseline"] if with_baseline else [])
            + ["variant", "before", "after", "diff", "ratio", "CI", "p", "p adj.", "verdict",
               "n"] + (["retries", "lost"] if with_lost else []))
    body = []
    for r in rows:
        before, after, ratio, lo, hi = shown(r, calls_per)
        body.append([clock_name(str(r.get("clock"))), str(r.get("mode"))]
                    + ([str(r.get("cpu", ""))] if with_cpu else [])
                    + [metric_label(str(r.get("metric")), calls_per if is_calls(r, calls_per)
                                    else None)
                       + (f", {r['emulated']}" if r.get("emulated") else "")]
                    + ([str(r.get("baseline"))] if with_baseline else [])
                    + [str(r.get("variant")), number(before), number(after),
                       diff(ratio, r.get("verdict")),
                       ratio_text(ratio), ci_text(lo, hi), p_text(r.get("p")),
                       p_text(r.get("p_adjusted")), str(r.get("verdict")), str(r.get("n"))]
                    + ([str(r.get("retries", "-")), str(r.get("lost", "-"))] if with_lost
                       else []))
    return head, body


def header_lines(comparison, rows):
    meta = comparison.get("meta") or {}
    lines = ([emulation.describe(meta["emulation"])] if meta.get("emulation") else []) + [
        machine_text(meta), rounds_text(comparison)]
    if simulated_only(rows):
        lines.append(f"Method: {method_text(comparison)}.")
    elif meta.get("method"):
        lines.append(f"Method: {meta['method']}; {confidence_text(comparison)}.")
    if len(distinct(rows, "baseline")) == 1 and rows:
        lines.append(f"Baseline: {rows[0].get('baseline')}")
    return lines


def render_table(comparison, calls_per):
    rows = comparison.get("rows") or []
    head, body = columns(rows, calls_per, len(distinct(rows, "baseline")) > 1)
    widths = [max(len(row[i]) for row in [head] + body) for i in range(len(head))]
    lines = []
    for row in [head] + body:
        lines.append("  ".join(c.rjust(w) if name in NUMERIC else c.ljust(w)
                               for name, c, w in zip(head, row, widths)).rstrip())
    lines.insert(1, "-" * len(lines[0]))
    lines += ([] if simulated_only(rows) else [f"{NOT_SIGNIFICANT} = no significant difference"]) + (
        [LOST_LEGEND] if "retries" in head else []) + [
        f"note: {n}" for n in notes(comparison)]
    return "\n".join(header_lines(comparison, rows) + [""] + lines) + "\n"


def render_markdown(comparison, calls_per):
    rows = comparison.get("rows") or []
    head, body = columns(rows, calls_per, len(distinct(rows, "baseline")) > 1)
    code = {head.index(c) for c in ("baseline", "variant") if c in head}

    def cell(i, text):
        text = text.replace("|", "\\|")
        return f"`{text}`" if i in code else text
    lines = [line + "  " for line in header_lines(comparison, rows)] + [""]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join("---:" if name in NUMERIC else "---" for name in head) + "|")
    lines += ["| " + " | ".join(cell(i, c) for i, c in enumerate(row)) + " |" for row in body]
    lines.append("")
    if not simulated_only(rows):
        lines.append(f"{NOT_SIGNIFICANT} = no significant difference (the CI includes 1).")
    if "retries" in head:
        lines.append(LOST_LEGEND + ".")
    lines += [f"- {n}" for n in notes(comparison)]
    return "\n".join(lines) + "\n"


# ---- csv, json ---------------------------------------------------------------------------


def render_csv(comparison, calls_per):
    """Every field of every row, as measured (calls_per does not apply)."""
    rows = comparison.get("rows") or []
    seen = {k for r in rows for k in r}
    fields = [f for f in ROW_FIELDS if f in seen] + sorted(seen - set(ROW_FIELDS))
    out = io.StringIO()
    writer = csv.DictWriter(out, fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def render_json(comparison, calls_per):
    """The comparison itself, keys sorted so the same comparison is the same text."""
    return json.dumps(comparison, indent=1, sort_keys=True) + "\n"


RENDERERS = {"table": render_table, "lkml": render_lkml, "markdown": render_markdown,
             "csv": render_csv, "json": render_json}
