"""Slurm's host lists, one owner: "n[1-3,07],gpu1" expanded and names
compressed back into one, nodes in natural order (n2 before n10), and a list
cut to a width with "and N more". Pure functions of text: the fleet, its
summaries and Slurm's own answers all read and write host lists here."""

import re


def _split_top(text, sep=","):
    """text split at sep outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "[") - (ch == "]")
        if ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p]


def _expand_one(name):
    m = re.match(r"^([^\[]*)\[([^\]]*)\](.*)$", name)
    if not m:
        return [name]
    prefix, ranges, rest = m.groups()
    out = []
    for part in ranges.split(","):
        first, dash, last = part.partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"not a host list: {name!r}")
        width = len(first)
        for n in range(int(first), int(last or first) + 1):
            out += [f"{prefix}{n:0{width}d}{tail}" for tail in _expand_one(rest)]
    return out


def expand(text):
    """'n[1-3,07],gpu1' -> ['n1', 'n2', 'n3', 'n07', 'gpu1'] (Slurm's host list
    syntax, zero padding kept; several bracket groups in one name too).
    '(null)' and '' are no hosts."""
    text = (text or "").strip()
    if text in ("", "(null)", "None"):
        return []
    hosts = []
    for part in _split_top(text):
        hosts += _expand_one(part)
    return hosts


def compress(names):
    """['n1', 'n2', 'n3', 'n07', 'gpu1'] -> 'gpu1,n[1-3,07]': names that differ only
    in a trailing number folded into ranges (zero padding kept), for display."""
    groups = {}
    for name in names:
        m = re.match(r"^(.*?)(\d+)$", name)
        prefix, num = (m.group(1), m.group(2)) if m else (name, None)
        groups.setdefault(prefix, []).append(num)
    parts = []
    for prefix in sorted(groups):
        nums = groups[prefix]
        if nums == [None] or None in nums:
            parts += [prefix + (n or "") for n in nums]
            continue
        ranges, run = [], []
        for n in sorted(set(nums), key=lambda n: (int(n), len(n))):
            # n continues the run if the run's first number's width writes it so
            if run and int(n) == int(run[-1]) + 1 and f"{int(n):0{len(run[0])}d}" == n:
                run.append(n)
            else:
                if run:
                    ranges.append(run)
                run = [n]
        ranges.append(run)
        text = ",".join(r[0] if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in ranges)
        parts.append(f"{prefix}{text}" if len(nums) == 1 else f"{prefix}[{text}]")
    return ",".join(parts)


def natural(name):
    """n2 before n10: the sort key of a node name."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name or "")]


def fitting(names, width):
    """The names as a Slurm host list; where that is wider than width (nodes
    that are not numbered in a run), the longest first part of them that fits
    and how many more."""
    names = list(names)
    text = compress(names)
    if len(text) <= width:
        return text
    low, high = 1, len(names) - 1  # the most names whose list fits: low
    while low < high:
        mid = (low + high + 1) // 2
        if len(compress(names[:mid])) <= width:
            low = mid
        else:
            high = mid - 1
    return f"{compress(names[:low])} and {len(names) - low} more"
