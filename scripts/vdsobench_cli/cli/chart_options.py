"""What `plot`, `merge` and `report` share on the command line: the
--variants/--clocks/--modes filters, read back as patterns, and the paths
they print (relative where below the working directory, always printable)."""

import os
from pathlib import Path

from vdsobench_cli.cli.variants import split_patterns
from vdsobench_cli.core.text import printable


def add_filters(p):
    p.add_argument("--variants", action="append", metavar="LIST",
                   help="only these variants (names or globs, comma-separated)")
    p.add_argument("--clocks", action="append", metavar="LIST",
                   help="only these clocks (the per-CPU chart: one per clock given; "
                        "default monotonic)")
    p.add_argument("--modes", action="append", metavar="LIST", help="only these modes")


def patterns(args):
    """(variants, clocks, modes) patterns from --variants/--clocks/--modes, or None each."""
    return tuple(split_patterns(getattr(args, key) or []) or None
                 for key in ("variants", "clocks", "modes"))


def shown_path(path):
    """Relative to the working directory where it is below it, else absolute;
    printable (core/text.py), as a name the user gave may not be."""
    rel = os.path.relpath(path)
    return printable(str(Path(path).resolve()) if rel.startswith("..") else rel, limit=None)


def print_paths(paths):
    for p in paths:
        print(shown_path(p))
