"""The tree a tarball's kbuild built in, kept in its kbuild cache folder
(kbuild.made()), for kbuild_patched.py to build a patched tree's image again
from: `<key>/TREE`, and `<key>/MADE`, the files kbuild wrote there.

    keep_tree(src, since, stage)   src into stage/TREE, its modes tamed, MADE
                                   listed (a rename: the scratch folder is in
                                   the cache's)
    prune_trees(top, keeping)      the least used past KEPT_TREES removed
    try_lock(top, key)             a key's flock (kbuild.key_lock's), if free
    building(top, key)             the folder a key's tree is built in, the same
                                   for every patched tree made again from it

A kept tree is what kbuild's programs wrote, as the sandbox user: read as
hostile, its links never followed.
"""

import contextlib
import fcntl
import os
import shutil
import stat
from pathlib import Path

from vdsobench_cli.cli import confine, lifecycle

# the built tree kept in a kbuild cache folder, and the files kbuild wrote in it
TREE, MADE = "tree", "made.list"
# built trees kept at most (1.7 GB each for Debian's 6.12), the least used go
KEPT_TREES = 3


def made_files(tree, since):
    """The files below tree changed since `since` (a time.time()), relative
    and NUL-separated: kbuild's outputs, where the sources keep the tarball's
    times. Links are not followed; what is not a regular file is left out."""
    out = []
    for folder, dirs, files in os.walk(tree):
        rel = os.path.relpath(folder, tree)
        for name in files:
            st = os.lstat(os.path.join(folder, name))
            if stat.S_ISREG(st.st_mode) and st.st_mtime >= since - 1:
                out.append(os.path.normpath(os.path.join(rel, name)).encode())
    return b"\0".join(out)


# what no file or folder of a kept tree may have: kbuild's programs ran as
# the sandbox user, and a setuid file, or a folder others may write, would
# outlive them where another user can reach the cache
UNSAFE_MODE = stat.S_ISUID | stat.S_ISGID | stat.S_IWGRP | stat.S_IWOTH


def tame(tree):
    """UNSAFE_MODE cleared below tree (links left alone). Nothing of the build
    runs any more (its PID namespace ended with it), so nothing swaps a
    file between the lstat and the chmod."""
    for folder, dirs, files in os.walk(tree):
        for path in [folder] + [os.path.join(folder, n) for n in files + dirs]:
            st = os.lstat(path)
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & UNSAFE_MODE:
                os.chmod(path, stat.S_IMODE(st.st_mode) & ~UNSAFE_MODE)


def keep_tree(src, since, stage):
    """src, kbuild's tree, into stage/TREE, with its MADE list. Left out, said
    nowhere, where it cannot be renamed: patched images then run kbuild
    whole."""
    tame(src)
    (stage / MADE).write_bytes(made_files(src, since))
    try:
        os.rename(src, stage / TREE)
    except OSError:
        (stage / MADE).unlink()
        return
    os.chmod(stage / MADE, 0o644)
    os.chmod(stage, 0o711)  # the sandbox user passes to TREE and reads MADE


def prune_trees(top, keeping):
    """The least recently used built trees past KEPT_TREES removed (their
    records and images stay), but keeping's and any whose key is locked."""
    others = sorted((p.stat().st_mtime, p.parent) for p in Path(top).glob(f"*/{MADE}")
                    if (p.parent / TREE).is_dir() and p.parent.name != keeping)
    for _, folder in others[:max(0, len(others) - (KEPT_TREES - 1))]:
        with contextlib.suppress(OSError), try_lock(top, folder.name) as (held, _):
            if held:
                (folder / MADE).unlink()
                shutil.rmtree(folder / TREE)


@contextlib.contextmanager
def try_lock(top, key):
    """key_lock's flock if free now: yields (whether it is held, the lock
    file's fd)."""
    fd = os.open(top / f"{key}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = True
        except BlockingIOError:
            held = False
        yield held, fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def building(top, key):
    """top/building-KEY/w, the folder the tree of KEY is built in (the caller
    holds KEY's lock): kept trees and every patched tree made again from one
    are built at the same path, so the tools `prepare` builds (objtool,
    resolve_btfids), whose build keeps absolute paths, are found built. A
    private folder of ours, `w` the sandbox user's (confine.scratch's shape);
    what a killed build left there goes first."""
    private = Path(top) / f"building-{key}"
    with lifecycle.critical():
        if os.path.lexists(private):
            shutil.rmtree(private)
        os.mkdir(private, 0o700)
        lifecycle.register(str(private), "dir")
    try:
        work = private / "w"
        os.mkdir(work, 0o700)
        confine.own(work)
        yield str(work)
    finally:
        lifecycle.discard(str(private), "dir")
