"""Which of a work tree's files differ from what git has: the index
(.git/index, a linked worktree's own) read as data, never by running git,
and each file's blob id computed from its bytes.

    changed(tree, paths) -> Changes(files, why)
        files: those of paths (relative, '/'-separated) whose bytes are not
               the index's (edited and not staged), that the index does not
               track, or that are gone; [] when all are as staged;
        why:   None, or why it cannot tell, one phrase (no .git, an index
               this reader does not read: a split or sparse index, a version
               it does not know, one cut short).

It does not see an edit staged and not committed: the index then holds the
edit, and telling it from the commit needs HEAD's tree, that is, git's
object packs. The index is hostile input like the rest of .git
(kimport/git_dir.py reads it): its size capped, every count and length
checked against the bytes there are, no path taken from it opened.
"""

import hashlib
import os
import stat
import struct
from typing import NamedTuple

from vdsobench_cli.cli import safe_read
from vdsobench_cli.kimport import git_dir

INDEX_LIMIT = 64 << 20  # linux.git's index is about 10 MB
ENTRIES_LIMIT = 4_000_000
FILE_LIMIT = 16 << 20  # a source file the read path is built from
VERSIONS = (2, 3, 4)
EXTENDED = 0x4000  # an entry's flags: two more bytes of flags follow
NAME_MASK = 0x0FFF


class Changes(NamedTuple):
    files: list = None
    why: str = None


class BadIndex(Exception):
    """The index cannot be read; the message says why, one phrase."""


def _varint(data, i):
    """git's offset varint (index v4's strip length): (value, next index)."""
    value, n = 0, 0
    while True:
        if i >= len(data) or n > 8:
            raise BadIndex("a path's length runs past its end")
        c = data[i]
        i, n = i + 1, n + 1
        value = (value << 7) | (c & 0x7F) if n == 1 else ((value + 1) << 7) | (c & 0x7F)
        if not c & 0x80:
            return value, i


def entries(data, hash_len):
    """{path: (mode, blob id hex)} of an index's bytes (versions 2 to 4)."""
    if len(data) < 12 + hash_len or data[:4] != b"DIRC":
        raise BadIndex("not an index (no DIRC signature)")
    version, count = struct.unpack(">II", data[4:12])
    if version not in VERSIONS:
        raise BadIndex(f"index version {version}, which this reader does not know")
    if count > ENTRIES_LIMIT:
        raise BadIndex(f"{count} entries, more than {ENTRIES_LIMIT}")
    out, i, prev, fixed = {}, 12, b"", 40 + hash_len + 2
    for _ in range(count):
        if i + fixed > len(data):
            raise BadIndex("cut short")
        start = i
        mode = struct.unpack(">I", data[i + 24:i + 28])[0]
        oid = data[i + 40:i + 40 + hash_len].hex()
        flags = struct.unpack(">H", data[i + 40 + hash_len:i + fixed])[0]
        i += fixed
        if flags & EXTENDED:
            if version < 3:
                raise BadIndex("an extended entry in a version 2 index")
            i += 2
        if version == 4:
            strip, i = _varint(data, i)
            if strip > len(prev):
                raise BadIndex("a path strips more than the one before it")
            end = data.find(b"\0", i)
            if end < 0:
                raise BadIndex("a path without its end")
            name, i = prev[:len(prev) - strip] + data[i:end], end + 1
        else:
            end = data.find(b"\0", i)
            if end < 0:
                raise BadIndex("a path without its end")
            name = data[i:end]
            if (flags & NAME_MASK) not in (len(name), NAME_MASK):
                raise BadIndex("a path's length is not its flags'")
            i = start + ((end - start) // 8 + 1) * 8  # NULs to a multiple of 8
        if stat.S_ISDIR(mode):
            raise BadIndex("a sparse index (a folder's entry), which this reader does "
                           "not read")
        out[name.decode("utf-8", "surrogateescape")] = (mode, oid)
        prev = name
    while i + 8 <= len(data) - hash_len:  # extensions: a split index's entries are elsewhere
        sig, size = data[i:i + 4], struct.unpack(">I", data[i + 4:i + 8])[0]
        if sig == b"link":
            raise BadIndex("a split index (core.splitIndex), which this reader does not read")
        if sig == b"sdir":
            raise BadIndex("a sparse index, which this reader does not read")
        i += 8 + size
    return out


def blob_id(data, hash_len):
    h = hashlib.sha256() if hash_len == 32 else hashlib.sha1()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def _bytes_of(top, rel):
    """(mode, bytes) of rel below the folder fd top, no link followed on the
    way (safe_read, the one reader); a link's bytes are its target, as git
    stores it; None when gone, not a file or a link, or too large."""
    *folders, leaf = rel.split("/")
    fd = os.dup(top)
    try:
        for part in folders:  # a component at a time: none may be a link
            nxt = os.open(part, git_dir.DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
        st = os.stat(leaf, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            return st.st_mode, os.fsencode(os.readlink(leaf, dir_fd=fd))
        data = safe_read.read_regular(leaf, "file", FILE_LIMIT, root=fd, missing=False,
                                      follow=False)
        return None if data is None else (st.st_mode, data)
    except (OSError, safe_read.UsageError):
        return None
    finally:
        os.close(fd)


def changed(tree, paths):
    """Changes(files, why) of the work tree at tree (see the module's doc)."""
    try:
        with git_dir.GitDir.of(tree) as g:
            head = g.head()
            hash_len = 32 if len(head.commit) == 64 else 20
            data = g.read("index", INDEX_LIMIT)
    except git_dir.Unreadable as e:
        return Changes(why=str(e))
    if data is None:
        return Changes(why="no index")
    try:
        staged = entries(data, hash_len)
    except BadIndex as e:
        return Changes(why=f"its index: {e}")
    try:
        top = os.open(tree, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:  # gone or replaced since its .git was read
        return Changes(why=f"{git_dir.shown(str(tree))}: {e.strerror}")
    try:
        out = []
        for rel in paths:
            have, entry = _bytes_of(top, rel), staged.get(rel)
            if have is None or entry is None or blob_id(have[1], hash_len) != entry[1] \
                    or stat.S_ISLNK(have[0]) != stat.S_ISLNK(entry[0]):
                out.append(rel)
        return Changes(files=out)
    finally:
        os.close(top)
