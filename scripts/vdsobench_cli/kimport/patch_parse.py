"""A patch's text read as git apply reads it: every file section, its hunks
skipped by their counts, and every path it names (---/+++, diff --git,
rename and copy headers, git's quoted names too). A path that is not plainly
inside the tree, a link, a submodule, a binary patch or a path import writes
itself is a PatchError, found before anything is copied."""

import re
from pathlib import Path
from typing import NamedTuple

from vdsobench_cli.kimport import imports_table


MAX_NAMES = 200  # the paths one patch names
MAX_PATH = 400  # bytes of one path (the kernel's longest are about 100)
MODES = ("100644", "100755")  # what a patch may give a file: no link, no submodule
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@.*$")


class Patch(NamedTuple):
    path: Path
    data: bytes  # as read: what git apply is given, and hashed
    targets: list  # [(path, [hunk headers])]: each file it changes, with its hunks
    names: list  # every path it names (old and new, renames, copies), sorted
    subject: str


class PatchError(Exception):
    """A patch names something import does not take (the why)."""


ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote(text):
    """(name, rest) of the path at the start of text: git's "C-quoted" form
    (with \\t, \\", \\ooo ...) or up to the first space or tab."""
    if not text.startswith('"'):
        m = re.match(r"[^\t ]*", text)
        return m.group(0), text[m.end():]
    out, i = bytearray(), 1
    while i < len(text):
        c = text[i]
        if c == '"':
            return out.decode("utf-8", "surrogateescape"), text[i + 1:]
        if c != "\\":
            out += c.encode("utf-8", "surrogateescape")
            i += 1
        elif text[i + 1:i + 2] in ESCAPES:
            out.append(ESCAPES[text[i + 1]])
            i += 2
        elif re.fullmatch(r"[0-3][0-7]{2}", text[i + 1:i + 4]):
            out.append(int(text[i + 1:i + 4], 8))
            i += 4
        else:
            raise PatchError(f"a quoted path with a bad escape ({ascii(text[:60])})")
    raise PatchError(f"an unterminated quoted path ({ascii(text[:60])})")


# What import writes into a staged tree: no patch may make or change it first
# (a folder where write_inside puts its temporary file, a file to rename over).
WRITTEN = ("include/generated", "kimport.json")


def checked_path(name, strip=True):
    """name (-p1: its first folder stripped) as a path inside the tree, or PatchError."""
    rel = name
    if len(name.encode("utf-8", "surrogateescape")) > MAX_PATH:
        raise PatchError(f"names a path of over {MAX_PATH} bytes ({ascii(name[:60])}...)")
    if strip:
        if "/" not in name:
            raise PatchError(f"names {ascii(name)}, which has no leading folder to strip "
                             "(-p1: a/, b/)")
        rel = name.split("/", 1)[1]
    if not imports_table.safe_rel(rel):
        raise PatchError(f"names {ascii(name)}: not a plain path inside the tree (no "
                         "absolute path, no '..', '.' or '//', letters, digits and _.+,=@~- "
                         "only)")
    if rel in WRITTEN or rel.startswith(tuple(f"{w}/" for w in WRITTEN)):
        raise PatchError(f"names {rel}, which import writes itself (a kernel's "
                         "include/generated/ is its build's output, never its source)")
    return rel


def header_name(text):
    """The path of a ---/+++ line ("/dev/null" as is): up to a tab (diff -u's date)."""
    name, rest = unquote(text)
    if rest and not rest.startswith("\t"):
        raise PatchError(f"names {ascii(text.rstrip()[:80])}: a path with a space")
    return name


def git_names(text):
    """The two paths of a `diff --git a/X b/Y` line."""
    a, rest = unquote(text)
    if not rest.startswith(" "):
        raise PatchError(f"a diff --git line import cannot read ({ascii(text[:80])})")
    b, rest = unquote(rest[1:])
    if rest.strip():
        raise PatchError(f"a diff --git line with a path with a space ({ascii(text[:80])})")
    return a, b


def hunk_lines(lines, i, old, new):
    """The index past a hunk's body (old and new line counts) starting at lines[i]."""
    while i < len(lines) and (old > 0 or new > 0):
        c = lines[i][:1]
        if c in (" ", ""):
            old, new = old - 1, new - 1
        elif c == "-":
            old -= 1
        elif c == "+":
            new -= 1
        elif c != "\\":
            break  # a short hunk: git apply says so
        i += 1
    while i < len(lines) and lines[i].startswith("\\"):
        i += 1
    return i


MODE_LINE = re.compile(r"(old mode|new mode|deleted file mode|new file mode) (\d+)\s*$")
INDEX_LINE = re.compile(r"index [0-9a-f]+\.\.[0-9a-f]+(?: (\d+))?\s*$")
PLAIN_HEADERS = ("rename from ", "rename to ", "copy from ", "copy to ", "rename old ",
                 "rename new ")


def parse_patch(text):
    """(targets, names) of a patch as git apply reads it: every file section (a
    `diff --git` line, or a ---/+++ pair), its hunks skipped by their counts, so
    that no hunk line is taken for a header. PatchError for a path that is not
    plainly inside the tree, or a mode other than a plain file's. Lines end at
    "\n" only, as git reads them (str.splitlines() would also end one at \v,
    \f, \x1c-\x1e, \x85, U+2028 and U+2029, and a path could hide there)."""
    lines = text.split("\n")
    targets, names, i, section = [], set(), 0, None
    while i < len(lines):
        line = lines[i]
        m = HUNK.match(line)
        if m and section is not None:
            section[1].append(line)
            old, new = (int(x) if x is not None else 1 for x in (m.group(2), m.group(3)))
            i = hunk_lines(lines, i + 1, old, new)
            continue
        if line.startswith("diff --git "):
            a, b = git_names(line[len("diff --git "):])
            names.update(checked_path(n) for n in (a, b))
            section = (checked_path(b), [])
            targets.append(section)
        elif (line.startswith("--- ") and i + 1 < len(lines)
              and lines[i + 1].startswith("+++ ")):
            old, new = header_name(line[4:]), header_name(lines[i + 1][4:])
            paths = [checked_path(n) for n in (old, new) if n != "/dev/null"]
            if not paths:
                raise PatchError("a file section from /dev/null to /dev/null")
            names.update(paths)
            if section is None or section[1] or section[0] != paths[-1]:
                section = (paths[-1], [])
                targets.append(section)
            i += 2
            continue
        elif line.startswith("GIT binary patch"):
            raise PatchError(f"a binary patch of {section[0] if section else '?'}: import "
                             "takes text patches only (a deflated literal can be any size)")
        elif line.startswith(PLAIN_HEADERS) and section is not None:
            names.add(checked_path(unquote(line.split(" ", 2)[2])[0], strip=False))
        elif (m := MODE_LINE.match(line) or INDEX_LINE.match(line)) and section is not None:
            mode = m.groups()[-1]
            if mode is not None and mode not in MODES:
                raise PatchError(f"gives {section[0]} the mode {mode} ("
                                 f"{'a symbolic link' if mode == '120000' else 'not a file'}"
                                 "): a patch may only change files, never make a link")
        if len(names) > MAX_NAMES:
            raise PatchError(f"names over {MAX_NAMES} paths (a vDSO patch names a few)")
        i += 1
    return targets, sorted(names)


def patch_targets(text):
    """[(path, [hunk headers])]: each file a patch (git's a/ b/, -p1) changes."""
    return parse_patch(text)[0]
