"""The --patch series: each read by the safe reader and parsed
(patch_parse.py), the series bounded (MAX_PATCHES, SERIES_LIMIT,
MAX_SERIES_NAMES: what reaches git's and tar's argv cannot overflow), and
applied in order with `git apply` (-p1) under limits; one that does not
apply is one line naming it and its first failing hunk."""

import os
import re
from pathlib import Path

from vdsobench_cli.cli import build, confine, safe_read, tools
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.cli.limited_run import limited_run
from vdsobench_cli.core import text as text_mod
from vdsobench_cli.kimport import imports_table, patch_parse

MB = imports_table.MB
PATCH_LIMIT = 16 * MB  # a whole kernel release's patch is larger; a series is not
# A series, bounded: what reaches git's and tar's argv and memory cannot overflow
# (E2BIG) or grow without end. A vDSO series is a few patches of a few files.
MAX_PATCHES = 100
SERIES_LIMIT = 32 * MB  # all the patches together
MAX_SERIES_NAMES = 1000  # ... and the whole series (each goes to tar's argv)
# git apply's limits: a patch that makes it loop or grow ends in one line
APPLY_LIMITS = {"as": 2 << 30, "cpu": 60, "fsize": 16 * MB}
APPLY_TIMEOUT_S = 120


def patch_subject(text, path):
    """A format-patch's Subject: line ([PATCH n/m] dropped), else the file's name."""
    # a long Subject is folded (RFC 5322): its next lines begin with a blank
    m = re.search(r"^Subject: *(.+(?:\n[ \t]+\S.*)*)$", text.split("\ndiff --git ", 1)[0],
                  re.M)
    subject = " ".join(m.group(1).split()) if m else ""
    subject = re.sub(r"^\[[^\]]*\] *", "", subject)
    return text_mod.printable(subject, 200) or text_mod.printable(Path(path).name, 200)


def read_patch(p):
    """One --patch, read by the safe reader and parsed: Patch, or UsageError."""
    data = safe_read.read_regular(p, "patch", PATCH_LIMIT, prefix="import: --patch ")
    text = data.decode("utf-8", "surrogateescape")
    try:
        targets, names = patch_parse.parse_patch(text)
    except patch_parse.PatchError as e:
        raise UsageError(f"import: --patch {p}: {e}") from None
    if not targets:
        raise UsageError(f"import: --patch {p}: not a unified diff (no ---/+++ file "
                         "lines; git format-patch or diff -u output is)")
    return patch_parse.Patch(Path(p), data, targets, names, patch_subject(text, p))


def check_patches(paths):
    """[Patch] for each --patch, or UsageError naming the bad one; the series
    within MAX_PATCHES, SERIES_LIMIT and MAX_SERIES_NAMES."""
    if len(paths) > MAX_PATCHES:
        raise UsageError(f"import: --patch given {len(paths)} times: at most {MAX_PATCHES} "
                         "patches in a series")
    patches, size, names = [], 0, set()
    for p in paths:
        patch = read_patch(p)
        size += len(patch.data)
        names.update(patch.names)
        if size > SERIES_LIMIT:
            raise UsageError(f"import: --patch {p}: the series is over "
                             f"{SERIES_LIMIT // MB} MB with it")
        if len(names) > MAX_SERIES_NAMES:
            raise UsageError(f"import: --patch {p}: the series names over "
                             f"{MAX_SERIES_NAMES} paths with it")
        patches.append(patch)
    return patches


def failing_hunk(patch, targets, stderr):
    """The one line for a patch git apply refused: the file and first failing hunk."""
    m = re.search(r"patch failed: (.+):(\d+)", stderr)
    if m:
        name, line = m.group(1), int(m.group(2))
        for path, hunks in targets:
            if path != name:
                continue
            for n, header in enumerate(hunks, 1):
                if int(patch_parse.HUNK.match(header).group(1)) == line:
                    return f"{name} hunk #{n} ({header.strip()})"
        return f"{name} at line {line}"
    m = re.search(r"error: (.+?): (No such file or directory|does not exist in index)",
                  stderr)
    if m:
        return f"{m.group(1)} is not in the tree"
    first = next((x for x in stderr.splitlines() if x.startswith("error:")),
                 build.tail(stderr, 1))
    return first.removeprefix("error: ").strip()


def apply_patches(tree, patches, confined=None):
    """git apply each patch in order in `tree` (outside any repository, whatever
    folder it is in); UsageError with the first failing hunk. confined: the
    folder, holding tree, that a confined git may write (a tree a confined step
    made, which only a confined step then writes in: kbuild.py's)."""
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=str(tree.parent), GIT_CONFIG_NOSYSTEM="1",
               GIT_CONFIG_GLOBAL="/dev/null")
    argv = [tools.path("git", "import --patch"), "apply", "--whitespace=nowarn", "-"]
    if confined is not None:
        argv = confine.command(argv, write=[confined])
    for p in patches:
        r = limited_run(argv, APPLY_LIMITS, APPLY_TIMEOUT_S, input=p.data, cwd=tree, env=env)
        if r is None:
            raise UsageError(f"import: {p.path}: git apply took over {APPLY_TIMEOUT_S} s; "
                             "nothing imported")
        if r.returncode < 0:
            raise UsageError(f"import: {p.path}: git apply ran out of its limits (signal "
                             f"{-r.returncode}: CPU time, memory or file size); nothing "
                             "imported")
        if r.returncode != 0:
            why = failing_hunk(p.path, p.targets, r.stderr.decode(errors="replace"))
            raise UsageError(f"import: {p.path} does not apply: {why}")
