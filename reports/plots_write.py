"""Cover-letter charts and tables written: each figure in its formats, a text
output, and write_all(), which writes every file or none."""

import functools
import os
import tempfile
from pathlib import Path

from reports import plots_layout as pl
from vdsobench_cli.core.text import printable_lines

FORMATS = ("png", "svg")


# ---- writing ------------------------------------------------------------------------------


def _savefig(fig, fmt, f):
    with pl.rc():
        fig.savefig(f, format=fmt, dpi=fig.dpi,
                    metadata={"Date": None} if fmt == "svg" else None)


def figure_outputs(stem, fig, formats=FORMATS):
    """[(file name, write(binary file))] for one figure in each format."""
    for fmt in formats:
        if fmt not in FORMATS:
            raise ValueError(f"unknown plot format {fmt!r}; valid: {', '.join(FORMATS)}")
    return [(f"{stem}.{fmt}", functools.partial(_savefig, fig, fmt)) for fmt in formats]


def text_output(name, text):
    """(name, write) of a text file (index.md, merged.json): line by line through
    printable(), so that nothing in it acts on a terminal or a Markdown viewer."""
    data = printable_lines(text).encode()
    return name, lambda f: f.write(data)


def _make_dirs(path):
    """Create path and its missing parents; the ones created, outermost first."""
    missing = []
    p = path
    while not os.path.lexists(p):
        missing.insert(0, p)
        p = p.parent
    if not os.path.isdir(p):
        raise NotADirectoryError(20, f"{p} is not a directory")
    created = []
    try:
        for d in missing:
            os.mkdir(d)
            created.append(d)
    except OSError:
        _remove_dirs(created)
        raise
    return created


def _remove_dirs(created):
    for d in reversed(created):
        try:
            os.rmdir(d)
        except OSError:
            pass


def write_all(out_dir, outputs):
    """Write each (name, write(binary file)) into out_dir, creating it if needed:
    every file goes to a temp file in out_dir first and is renamed into place
    only when all are written, so an error leaves no new file (nor the
    directories this call created) behind; the OSError propagates. Existing
    files of the same names are replaced (they are derived). Returns the paths."""
    out_dir = Path(out_dir)
    created = _make_dirs(out_dir)
    temps = []
    try:
        for name, write in outputs:
            fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{name}.", suffix=".tmp")
            temps.append((tmp, out_dir / name))
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.chmod(tmp, 0o666 & ~_umask())
        for tmp, path in temps:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in temps:
            if os.path.lexists(tmp):
                os.unlink(tmp)
        _remove_dirs(created)
        raise
    return [path for _, path in temps]


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
