"""Cache-line maps of the variants' vDSO data: where each field lies in 64-byte
lines, which entries straddle a line boundary, which lines each clock's read
path touches, and two layouts side by side (tglx's comparison in seed 000);
as text, JSON and a PNG figure.

Pure functions. The fields are the registry's offsetof() table (as
`vdsobench_verify --list-json` prints it) and the read sets are measured
loads per call (scripts/vdsobench_cli/commands/layout.py traces them); nothing here
knows a layout by name.

Offsets are from the start of the variant's vvar area. The data page is its
first page, except for a task in a time namespace, which sees the namespace
page first and the data page second (the kernel swaps the VVAR and TIMENS
mappings); a read set says which page each line is on.
"""

LINE = 64
PAGE = 4096
LINES_PER_PAGE = PAGE // LINE
DATA_PAGE, TIMENS_PAGE = "data page", "timens page"
# what every read path loads first: a syscall path that loads only these
# has read no time data
SEQ_FIELDS = frozenset(("seq", "vclock_mode", "clock_mode"))


# ---- fields and lines -------------------------------------------------------------------

def line_range(offset, size):
    """(first, last) 64-byte line index of the bytes [offset, offset + size)."""
    return offset // LINE, (offset + max(size, 1) - 1) // LINE


def straddles(offset, size):
    first, last = line_range(offset, size)
    return first != last


def span(offset, size):
    """'48..71': first and last byte, both inclusive, as tglx wrote them."""
    return f"{offset}..{offset + size - 1}"


def joined(numbers, sep=", "):
    return sep.join(str(n) for n in numbers)


def encloses(outer, inner):
    return (outer is not inner and inner["size"] < outer["size"]
            and outer["offset"] <= inner["offset"]
            and inner["offset"] + inner["size"] <= outer["offset"] + outer["size"])


def entries(fields):
    """The offsetof table as rows in offset order (a container before what it holds):
    name, offset, size, end (inclusive), lines, straddles, container (it encloses
    other entries of the table, as basetime[] encloses basetime[CLOCK_MONOTONIC])."""
    rows = sorted(fields, key=lambda f: (f["offset"], -f["size"], f["name"]))
    out = []
    for f in rows:
        first, last = line_range(f["offset"], f["size"])
        out.append({"name": f["name"], "offset": f["offset"], "size": f["size"],
                    "end": f["offset"] + f["size"] - 1,
                    "lines": list(range(first, last + 1)),
                    "straddles": first != last,
                    "container": any(encloses(f, g) for g in rows)})
    return out


def cache_lines(data_size):
    return -(-data_size // LINE)


def line_rows(ents, data_size):
    """Per line of the data: the entries that start in it, and those that run on
    into it from an earlier line."""
    rows = []
    for i in range(cache_lines(data_size)):
        rows.append({"line": i, "bytes": [i * LINE, i * LINE + LINE - 1],
                     "fields": [e["name"] for e in ents if e["lines"][0] == i],
                     "continued": [e["name"] for e in ents
                                   if e["lines"][0] < i <= e["lines"][-1]]})
    return rows


# ---- read sets --------------------------------------------------------------------------

def data_page_index(mode):
    """Which page of the vvar area holds the data, as the reading task sees it."""
    return 1 if mode == "timens" else 0


def page_role(mode, page):
    return DATA_PAGE if page == data_page_index(mode) else TIMENS_PAGE


def touched(loads, mode):
    """The lines the loads touch: [{page, role, line}] in vvar order; line is
    within its page."""
    seen = set()
    for load in loads:
        first, last = line_range(load["offset"], load["size"])
        seen.update(range(first, last + 1))
    return [{"page": g // LINES_PER_PAGE, "role": page_role(mode, g // LINES_PER_PAGE),
             "line": g % LINES_PER_PAGE} for g in sorted(seen)]


def overlaps(entry, start, end):
    return entry["offset"] <= end and start <= entry["end"]


def fields_read(ents, loads, mode):
    """Names of the table's entries the loads on the data page overlap: the
    innermost ones (basetime[CLOCK_MONOTONIC], not basetime[]); bytes no entry
    but a container covers are named by the container and the bytes."""
    base = data_page_index(mode) * PAGE
    names = []
    for load in sorted(loads, key=lambda x: (x["offset"], x["size"])):
        start = load["offset"] - base
        end = start + load["size"] - 1
        if start < 0 or start >= PAGE:
            continue
        inner = [e["name"] for e in ents if not e["container"] and overlaps(e, start, end)]
        if not inner:
            outer = [e for e in ents if e["container"] and overlaps(e, start, end)]
            inner = ([f"{outer[-1]['name']} bytes {start}..{end}"] if outer
                     else [f"bytes {start}..{end} (in no entry of the table)"])
        names += [n for n in inner if n not in names]
    return names


def describe_lines(marks):
    """'lines 0, 1' on the data page alone; else each page named."""
    if not marks:
        return "no lines"
    if all(m["role"] == DATA_PAGE and m["page"] == 0 for m in marks):
        return f"line{'s' if len(marks) > 1 else ''} {joined(m['line'] for m in marks)}"
    parts = []
    for m in marks:
        if parts and parts[-1][0] == m["role"]:
            parts[-1][1].append(m["line"])
        else:
            parts.append((m["role"], [m["line"]]))
    return ", ".join(f"{role} line{'s' if len(ls) > 1 else ''} {joined(ls)}"
                     for role, ls in parts)


def count_words(n, word="line"):
    return f"{n} {word}{'' if n == 1 else 's'}"


def path_name(path):
    return path["clock"] + (" in a time namespace" if path["mode"] == "timens" else "")


def path_label(path):
    return f"{path_name(path)} ({path['kind']})"


def analyze_path(ents, path):
    """A measured path {path, kind, clock, mode, syscalls_per_call, loads} with
    its lines, the fields it reads, the straddling ones, and a summary line."""
    loads = path["loads"]
    marks = touched(loads, path["mode"])
    read = fields_read(ents, loads, path["mode"])
    by_name = {e["name"]: e for e in ents}
    strad = [{"name": n, "lines": by_name[n]["lines"]} for n in read
             if n in by_name and by_name[n]["straddles"]]
    out = dict(path, lines=marks, line_count=len(marks), fields_read=read, straddling=strad)
    label = path_label(path)
    if path["kind"] == "syscall":
        if not loads:
            text = "no vDSO data read"
        elif {name.split(".")[-1] for name in read} <= SEQ_FIELDS:
            # "seq", or v6.15's "clock_data[CS_HRES_COARSE].seq"
            text = f"no vDSO data read beyond seq/clock_mode ({describe_lines(marks)})"
        else:
            text = f"after reading {', '.join(read)} ({describe_lines(marks)})"
        out["summary"] = f"{path_name(path)}: syscall (not served in userspace): {text}"
    else:
        text = f"{label}: {describe_lines(marks)} ({count_words(len(marks))})"
        if strad:
            text += "; " + "; ".join(f"{s['name']} straddles {joined(s['lines'], '/')}"
                                     for s in strad)
        out["summary"] = text
    return out


def variant_map(variant, paths, crosscheck=None):
    """Everything `layout` says about one variant, JSON-ready."""
    ents = entries(variant["fields"])
    return {"variant": variant["name"], "layout": variant.get("layout", ""),
            "data_size": variant["data_size"], "vvar_size": variant["vvar_size"],
            "cache_lines": cache_lines(variant["data_size"]),
            "has_timens": bool(variant.get("has_timens")),
            "fields": ents, "lines": line_rows(ents, variant["data_size"]),
            "paths": [analyze_path(ents, p) for p in paths],
            "crosscheck": crosscheck}


# ---- text -------------------------------------------------------------------------------

def header(m):
    pages = m["vvar_size"] // PAGE
    vvar = f"vvar {m['vvar_size']} bytes ({count_words(pages, 'page')}"
    vvar += (": the data page, then the time-namespace page; a task in a namespace "
             "sees them swapped)" if m["has_timens"] else ")")
    return (f"{m['variant']}: {m['data_size']} bytes of data, "
            f"{count_words(m['cache_lines'], 'cache line')}; {vvar}")


def entry_line(e):
    if e["container"]:
        mark = f"  (spans lines {e['lines'][0]}..{e['lines'][-1]})" if e["straddles"] else ""
    else:
        mark = f"  <-- straddles lines {joined(e['lines'], '/')}" if e["straddles"] else ""
    return f"  {e['offset']:6} {e['size']:5} {e['end']:5}  {e['name']}{mark}"


def render_map(m):
    lines = [header(m), f"  {'offset':>6} {'size':>5} {'end':>5}  field "
                        "(the registry's offsetof table)"]
    by_name = {e["name"]: e for e in m["fields"]}
    for row in m["lines"]:
        lines.append(f"line {row['line']} (bytes {row['bytes'][0]}..{row['bytes'][1]})")
        if row["continued"]:
            lines.append("                       ... " + ", ".join(
                f"{n} (to {by_name[n]['end']})" for n in row["continued"]))
        lines += [entry_line(by_name[n]) for n in row["fields"]]
    if m["paths"]:  # none when they could not be traced (another architecture's build)
        lines.append("read paths (lines each call loads, measured):")
        lines += [f"  {p['summary']}" for p in m["paths"]]
    lines += crosscheck_lines(m.get("crosscheck"))
    return lines


def crosscheck_lines(c):
    if not c:
        return []
    if c.get("skipped"):
        return [f"pahole cross-check skipped: {c['skipped']}"]
    text = (f"pahole {c['version']}: struct {c['struct']} of {c['compile_unit']} "
            f"({c['size']} bytes): {c['agree']} of {c['checked']} table entries agree")
    return [text] + [f"  note: {n}" for n in c.get("notes", [])]


def render_text(maps, method=None):
    out = []
    for i, m in enumerate(maps):
        if i:
            out.append("")
        out += render_map(m)
    if method:
        out += ["", method]
    return out


# ---- two layouts ------------------------------------------------------------------------

def field_cell(e):
    return {"offset": e["offset"], "end": e["end"], "size": e["size"], "lines": e["lines"],
            "straddles": e["straddles"], "container": e["container"]}


def diff(a, b):
    """Fields in both (offset..end and lines in each), those in one only, and per
    path the lines touched in each."""
    fa = {e["name"]: e for e in a["fields"]}
    fb = {e["name"]: e for e in b["fields"]}
    both = [{"name": n, "a": field_cell(fa[n]), "b": field_cell(fb[n]),
             "moved": (fa[n]["offset"], fa[n]["size"]) != (fb[n]["offset"], fb[n]["size"]),
             "lines_changed": fa[n]["lines"] != fb[n]["lines"]}
            for n in fa if n in fb]
    pa = {p["path"]: p for p in a["paths"]}
    pb = {p["path"]: p for p in b["paths"]}
    paths = []
    for key in list(pa) + [k for k in pb if k not in pa]:
        sides = {side: None if p is None else
                 {"kind": p["kind"], "lines": p["lines"], "line_count": p["line_count"]}
                 for side, p in (("a", pa.get(key)), ("b", pb.get(key)))}
        paths.append({"path": key, "label": path_name(pa.get(key) or pb[key]), **sides})
    return {"a": a["variant"], "b": b["variant"],
            "data": {"a": [a["data_size"], a["cache_lines"]],
                     "b": [b["data_size"], b["cache_lines"]]},
            "fields": both,
            "only_a": [dict(field_cell(fa[n]), name=n) for n in fa if n not in fb],
            "only_b": [dict(field_cell(fb[n]), name=n) for n in fb if n not in fa],
            "paths": paths}


def lines_cell(lines):
    return ",".join(str(x) for x in lines)


def path_cell(side):
    if side is None:
        return "-"
    if side["kind"] == "syscall":
        return "syscall" + (f", {count_words(side['line_count'])}" if side["line_count"] else "")
    return f"{count_words(side['line_count'])} ({describe_lines(side['lines'])})"


def table(head, rows):
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head, *rows]]


def render_diff(d):
    (sa, la), (sb, lb) = d["data"]["a"], d["data"]["b"]
    out = [f"A: {d['a']}: {sa} bytes, {count_words(la)}",
           f"B: {d['b']}: {sb} bytes, {count_words(lb)}", "fields (bytes, ends inclusive):"]
    rows = []
    for f in d["fields"]:
        notes = ["lines changed"] if f["lines_changed"] else []
        strad = [s.upper() for s in "ab" if f[s]["straddles"] and not f[s]["container"]]
        if strad:
            notes.append(f"straddles in {' and '.join(strad)}")
        rows.append([f["name"], span(f["a"]["offset"], f["a"]["size"]),
                     lines_cell(f["a"]["lines"]), span(f["b"]["offset"], f["b"]["size"]),
                     lines_cell(f["b"]["lines"]), ", ".join(notes)])
    out += ["  " + x for x in table(["field", "A", "lines", "B", "lines", ""], rows)]
    for side in ("a", "b"):
        only = d[f"only_{side}"]
        if only:
            out.append(f"only in {side.upper()}: " + ", ".join(
                f"{e['name']} {span(e['offset'], e['size'])}" for e in only))
    if not d["paths"]:  # not traced (another architecture's build)
        return out
    out.append("read paths (lines each call loads, measured):")
    rows = [[p["label"], path_cell(p["a"]), path_cell(p["b"]), path_delta(p["a"], p["b"])]
            for p in d["paths"]]
    out += ["  " + x for x in table(["path", "A", "B", ""], rows)]
    return out


def path_delta(a, b):
    if not (a and b):
        return ""
    served = [side["kind"] != "syscall" for side in (a, b)]
    if served == [False, False]:
        return "syscall in both"
    if served != [True, True]:
        return f"served in userspace in {'A' if served[0] else 'B'} only"
    n = b["line_count"] - a["line_count"]
    if n:
        return f"{count_words(abs(n))} {'more' if n > 0 else 'fewer'} in B"
    return "same" if a["lines"] == b["lines"] else "as many, other lines"


# ---- figure -----------------------------------------------------------------------------

SHADES = ("0.55", "0.8")  # alternate field fills: distinct in grayscale
FIG_WIDTH = 13.0  # inches
ROW_INCHES = 0.32
PATH_STEP = 2.6  # bytes' width between path columns


def figure_rows(m):
    """The rows a panel draws: the data's lines, then any namespace-page line a
    path touches."""
    rows = [(DATA_PAGE, i) for i in range(m["cache_lines"])]
    for p in m["paths"]:
        for mark in p["lines"]:
            key = (mark["role"], mark["line"])
            if key not in rows:
                rows.append(key)
    return rows


def fitted(name, width_pt):
    """(text, font size) for a label inside a box width_pt wide: on one line, or
    broken after a '.' or before a '[', at 3 to 6 points."""
    lines = [name]
    if len(name) * 0.6 * 4.5 > width_pt:
        cut = max(name.rfind(".", 0, len(name) - 1) + 1, name.find("["), 0)
        if 0 < cut < len(name):
            lines = [name[:cut], name[cut:]]
    size = width_pt / (0.62 * max(len(x) for x in lines))
    return "\n".join(lines), max(3.0, min(6.0, size))


def segments(e):
    """(line, start, stop) of the bytes of entry e within each of its lines."""
    for line in e["lines"]:
        yield (line, max(e["offset"], line * LINE) - line * LINE,
               min(e["end"] + 1, (line + 1) * LINE) - line * LINE)


def draw_panel(ax, m, width_in):
    from matplotlib.patches import Rectangle

    rows = figure_rows(m)
    index = {key: i for i, key in enumerate(rows)}
    x_paths = [LINE + 3 + PATH_STEP * j for j in range(len(m["paths"]))]
    x_max = (x_paths[-1] + 3) if x_paths else LINE + 1
    ax.set_xlim(-9, x_max)
    ax.set_ylim(len(rows) + 0.1, -3.6)
    ax.axis("off")
    pt_per_byte = width_in * 72 / (x_max + 9)
    for (role, line), y in index.items():
        ax.add_patch(Rectangle((0, y + 0.1), LINE, 0.8, fill=False, lw=0.6, ec="0.3"))
        ax.vlines(range(8, LINE, 8), y + 0.1, y + 0.9, colors="0.85", lw=0.4)
        label = (f"line {line}: {line * LINE}..{line * LINE + LINE - 1}" if role == DATA_PAGE
                 else f"{role}, line {line}")
        ax.text(-0.8, y + 0.5, label, ha="right", va="center", fontsize=5.5)
    fills = 0
    for e in m["fields"]:
        for line, start, stop in segments(e):
            y = index[(DATA_PAGE, line)]
            if e["container"]:
                ax.add_patch(Rectangle((start, y + 0.12), stop - start, 0.76, fill=False,
                                       ls="--", lw=0.6, ec="0.4"))
                continue
            ax.add_patch(Rectangle((start, y + 0.2), stop - start, 0.6,
                                   fc=SHADES[fills % 2], ec="black", lw=0.7,
                                   hatch="////" if e["straddles"] else None))
            name = e["name"] + (" (straddles)" if e["straddles"] and line == e["lines"][0]
                                else "")
            text, size = fitted(name, (stop - start) * pt_per_byte)
            ax.text(start + (stop - start) / 2, y + 0.5, text, ha="center", va="center",
                    fontsize=size, linespacing=0.9,
                    bbox=dict(fc="white", ec="none", pad=0.3) if e["straddles"] else None)
        fills += not e["container"]
    for x, p in zip(x_paths, m["paths"]):
        ax.text(x, -0.15, path_label(p), rotation=60, ha="left", va="bottom", fontsize=6)
        for y in index.values():
            ax.plot([x], [y + 0.5], marker="o", ms=2.5, mfc="white", mec="0.6", mew=0.5)
        for mark in p["lines"]:
            ax.plot([x], [index[(mark["role"], mark["line"])] + 0.5], marker="s", ms=7,
                    color="black")
    ax.set_title(f"{m['variant']}: {m['data_size']} bytes, "
                 f"{count_words(m['cache_lines'], 'cache line')} of 64 bytes. Grey boxes: "
                 "the offsetof table's fields (hatched: straddles a line; dashed: an array); "
                 "black squares: the lines each path loads per call", fontsize=7, loc="left")


def draw_png(maps, fileobj, dpi=120):
    """One figure, a panel per map, written to fileobj as PNG (Agg: no display)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    heights = [len(figure_rows(m)) + 3.7 for m in maps]
    fig = Figure(figsize=(FIG_WIDTH, ROW_INCHES * sum(heights) + 0.3))
    grid = fig.add_gridspec(len(maps), 1, height_ratios=heights, hspace=0.12,
                            left=0.01, right=0.99, top=0.97, bottom=0.01)
    for i, m in enumerate(maps):
        draw_panel(fig.add_subplot(grid[i]), m, FIG_WIDTH * 0.98)
    # tight: the slanted path names and the titles may reach past the panels
    fig.savefig(fileobj, format="png", dpi=dpi, bbox_inches="tight", pad_inches=0.1)
