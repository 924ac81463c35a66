"""The clock table, as C has it: common/clocks.h's rows, one a clock.

The C side (the harness, verify, the simulated kernel) and every Python reader
(the commands' --clocks, the reports' labels, the live page's check) take a
clock's name, id, kind, base and labels from the same rows. The header is
parsed, not imported: Python has no <time.h>, and the table is needed before
anything is built. A row is `X("name", CLOCK_ID, KIND, BASE, "label", "short",
"abbrev")`; SUITE_CLOCKS's rows are the suite's clocks in order, OTHER_CLOCKS's
the ones only the simulated kernel computes.
"""

import re
from collections import namedtuple
from pathlib import Path

HEADER = Path(__file__).resolve().parents[3] / "common" / "clocks.h"
KINDS = ("HRES", "COARSE", "RAW")
BASES = ("REAL", "MONO", "BOOT", "TAI")
# include/uapi/linux/time.h: the ids are the kernel's ABI
UAPI_IDS = {"CLOCK_REALTIME": 0, "CLOCK_MONOTONIC": 1, "CLOCK_PROCESS_CPUTIME_ID": 2,
            "CLOCK_THREAD_CPUTIME_ID": 3, "CLOCK_MONOTONIC_RAW": 4,
            "CLOCK_REALTIME_COARSE": 5, "CLOCK_MONOTONIC_COARSE": 6, "CLOCK_BOOTTIME": 7,
            "CLOCK_REALTIME_ALARM": 8, "CLOCK_BOOTTIME_ALARM": 9, "CLOCK_TAI": 11}

Clock = namedtuple("Clock", "name id number kind base label short abbrev")

# a table's #define with its continuation lines, and a row of it
DEFINE = re.compile(r"^#define (SUITE_CLOCKS|OTHER_CLOCKS)\(X\)((?:.*\\\n)*.*)$", re.M)
ROW = re.compile(r'X\("(\w+)", (CLOCK_\w+), (\w+), (\w+), "(\w+)", "(\w+)", "(\w+)"\)')


class TableError(ValueError):
    """common/clocks.h is not the table this module reads."""


def _row(found):
    name, cid, kind, base, label, short, abbrev = found
    if cid not in UAPI_IDS or kind not in KINDS or base not in BASES:
        raise TableError(f"common/clocks.h: clock {name!r}: the id must be one of "
                         f"{', '.join(UAPI_IDS)}, the kind one of {', '.join(KINDS)}, "
                         f"the base one of {', '.join(BASES)}")
    return Clock(name, cid, UAPI_IDS[cid], kind, base, label, short, abbrev)


def parse(text):
    """{"SUITE_CLOCKS": (Clock, ...), "OTHER_CLOCKS": (...)} from the header's text;
    TableError for a row not in the form, a clock named twice, no suite clock."""
    tables = {}
    for m in DEFINE.finditer(text):
        body = m.group(2)
        found = ROW.findall(body)
        if len(found) != body.count("X("):
            raise TableError(f"common/clocks.h: {m.group(1)}: a row is not "
                             'X("name", CLOCK_ID, KIND, BASE, "label", "short", "abbrev")')
        tables[m.group(1)] = tuple(_row(f) for f in found)
    if not tables.get("SUITE_CLOCKS"):
        raise TableError("common/clocks.h: no SUITE_CLOCKS rows")
    names = [c.name for rows in tables.values() for c in rows]
    ids = [c.id for rows in tables.values() for c in rows]
    if len(names) != len(set(names)) or len(ids) != len(set(ids)):
        raise TableError("common/clocks.h: a clock in two rows (move a row, do not copy it)")
    return tables


_TABLES = parse(HEADER.read_text())
SUITE = _TABLES["SUITE_CLOCKS"]
OTHERS = _TABLES.get("OTHER_CLOCKS", ())
NAMES = tuple(c.name for c in SUITE)
BY_NAME = {c.name: c for c in SUITE + OTHERS}


def label(clock):
    """The clock in a table or the cover letter's block; another name (getres:...,
    gettimeofday) in capitals, as the table's labels are."""
    c = BY_NAME.get(clock)
    return c.label if c else str(clock).upper()


def short(clock):
    """The clock on a chart's axis, or None for a name not in the table."""
    c = BY_NAME.get(clock)
    return c.short if c else None


def abbrev(clock):
    """The clock where a column is narrow, or None for a name not in the table."""
    c = BY_NAME.get(clock)
    return c.abbrev if c else None


def of_kind(kind):
    """The suite's clocks of a kind (HRES, COARSE, RAW), in the table's order."""
    return tuple(c for c in SUITE if c.kind == kind)
