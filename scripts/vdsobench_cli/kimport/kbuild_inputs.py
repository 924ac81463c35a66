"""The files of a folder's tree that kbuild's vDSO was compiled from, so that
a cached kbuild of a developer's tree is used only while they are as built.

A folder's kbuild is cached under its identity (the files import takes and
the files that shape the line), which leaves out most headers the kernel's
own compile reads: an edit of arch/x86/include/asm/msr.h (rdtsc_ordered())
would find the image of the tree before it. So the record of a folder's
kbuild lists what the vDSO's objects were compiled from, as kbuild itself
lists it in each object's .cmd file (source_OBJ, and deps_OBJ but its
$(wildcard include/config/...) entries), with a digest of their contents;
a later import of the folder digests the same files there, and another
digest is another key (current_key).

    listed(build_fd)            the tree-relative paths the vDSO's .cmd files
                                name (kbuild_tree.folders), sorted
    digest(root, paths)         SHA-256 of each path's contents (or its
                                absence) below root (a folder or its fd)
    recorded(build_fd, folder)  {"paths", "sha256"}: the listed paths that
                                are the folder's own files, and their digest
    current_key(key, lookup, folder)  key while the folder's files its record
                                   lists are as recorded, else a key of their
                                   present digest

kbuild wrote the .cmd files (the tree's Makefiles ran): read as hostile, a
regular file within a cap, and only relative paths of safe characters that
stay in the tree once normalised are taken (a compiler's own headers are
absolute: its identity covers them).
"""

import hashlib
import os
import posixpath
import re
import stat

from vdsobench_cli.cli import safe_read
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import kbuild_tree

CMD_LIMIT = 1 << 20
FILE_LIMIT = 16 << 20
MAX_INPUTS = 20000
ENTRY = re.compile(r"^(source|deps)_\S+ :=(.*)$")
PATH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+,-]*(/[A-Za-z0-9_][A-Za-z0-9_.+,-]*)*$")


def names_in(text):
    """The paths a .cmd file's source_ and deps_ entries name (a deps_ entry
    runs on over lines ending in a backslash; its $(wildcard ...) words are
    no paths)."""
    out, going = [], False
    for line in text.splitlines():
        m = ENTRY.match(line)
        if m:
            words = m.group(2).split()
        elif going:
            words = line.split()
        else:
            continue
        going = line.rstrip().endswith("\\")
        # vclock_gettime.c's own include: arch/x86/entry/vdso/../../../../lib/...
        out += [n for n in map(posixpath.normpath, words)
                if PATH.match(n) and ".." not in n.split("/")]
    return out


def listed(build_fd):
    """The paths the .cmd files of the vDSO's folders name (sorted), at most
    MAX_INPUTS; [] where there is none."""
    found = set()
    for folder, ents in kbuild_tree.folders(build_fd):
        for name, mode in ents.items():
            if not (name.startswith(".") and name.endswith(".cmd") and stat.S_ISREG(mode)):
                continue
            try:
                text = safe_read.read_regular(f"{folder}/{name}", "kbuild command file",
                                              CMD_LIMIT, root=build_fd)
            except UsageError:
                continue
            found.update(names_in(text.decode(errors="replace")))
    return sorted(found)[:MAX_INPUTS]


def digest(root, paths):
    """SHA-256 over each path and its contents' SHA-256 ("-" where it is no
    regular file there, or past the cap) below root (a path or a folder fd)."""
    own = isinstance(root, (str, os.PathLike))
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC) if own else root
    try:
        h = hashlib.sha256()
        for rel in paths:
            try:
                data = safe_read.read_regular(rel, "a tree's file", FILE_LIMIT, root=fd,
                                              follow=False)
                h.update(f"{rel}\0{hashlib.sha256(data).hexdigest()}\0".encode())
            except (UsageError, OSError):
                h.update(f"{rel}\0-\0".encode())
        return h.hexdigest()
    finally:
        if own:
            os.close(fd)


def recorded(build_fd, folder):
    """What a folder's kbuild record keeps: the listed paths that are the
    folder's own files (not what the build generated), and their digest as
    built (in the copy kbuild ran in)."""
    root = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        paths = [p for p in listed(build_fd) if kbuild_tree.regular_file(root, p)]
    finally:
        os.close(root)
    return {"paths": paths, "sha256": digest(build_fd, paths)}


def current_key(key, lookup, folder, tries=8):
    """key, while the record lookup(key) finds lists files of the folder that
    are as it recorded them (or lists none, or there is none); else the key
    of their present digest, asked again (a rebuild's record lists its own
    files), at most `tries` times."""
    for _ in range(tries):
        inputs = (lookup(key) or {}).get("inputs")
        if not inputs:
            return key
        now = digest(folder, inputs["paths"])
        if now == inputs["sha256"]:
            return key
        key = hashlib.sha256(f"{key}\0{now}".encode()).hexdigest()
    return key
