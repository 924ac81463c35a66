"""The files import takes from a kernel tarball, kept once per tarball.

Untarring the few hundred KB import takes (source.TAKE's globs) decompresses
the whole tarball: 12 s of a core for Debian's 6.12 (150 MB of xz, 1.5 GB of
tar), again for every patched tree, review and test module. What tar made of
one tarball's bytes with one list of patterns is kept in
~/.cache/vdsobench/taken/<key>/ ($VDSOBENCH_TAKEN_CACHE), the key the SHA-256
of the tarball's SHA-256 and the patterns, and copied from there.

An entry is its files and a manifest (each file's SHA-256, mode and mtime),
renamed into place whole. It is used only when every file reads back as
recorded: anything else is untarred again and the entry replaced; a cache
folder that cannot be used (not a folder, not to be trusted, full) is passed
by, and tar runs as it did without one. Only an
extraction of regular files and folders is kept (import refuses anything
else in a tree anyway), and only patterns whose one wildcard is `*` (tar's
and this module's matching then agree: matches(), for the patches' names).
"""

import hashlib
import json
import os
import re
import stat
from pathlib import Path

from vdsobench_cli.cli import caches, lifecycle, safe_read
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import imports_table

FORMAT = 1
MANIFEST = "manifest.json"
FILES = "files"
# what one tarball's taken files may come to (6.12's: about 1 MB)
ENTRY_LIMIT = 64 << 20
MANIFEST_LIMIT = 4 << 20


def cache_dir():
    return caches.folder("VDSOBENCH_TAKEN_CACHE", "taken", "import")


def cacheable(patterns):
    """Whether tar's reading of these patterns is matches()'s: `*` alone."""
    return bool(patterns) and not any(re.search(r"[?\[\]\\]", p) for p in patterns)


def matches(name, patterns):
    """Whether tar (--wildcards --no-wildcards-match-slash) extracts the member
    name for one of the patterns."""
    return any(re.fullmatch(re.escape(p).replace(r"\*", "[^/]*"), name) for p in patterns)


def key(sha, patterns):
    return hashlib.sha256(json.dumps([FORMAT, sha, list(patterns)]).encode()).hexdigest()


def fetch(sha, patterns, into):
    """The entry's files written into the folder into: True, or False (nothing
    written) when there is no entry or it does not read back as recorded."""
    try:
        files, dirs = _read(cache_dir() / key(sha, patterns))
    except (UsageError, OSError, ValueError, TypeError, KeyError, AttributeError):
        return False
    for d in dirs:
        (Path(into) / d).mkdir(parents=True, exist_ok=True)
    for rel, (data, mode, mtime) in files.items():
        path = Path(into) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.utime(path, ns=(mtime, mtime))
    return True


def _read(entry):
    """({rel: (bytes, mode, mtime)}, [folder]) of an entry, every file as its
    manifest records it; raises where one is not."""
    manifest = json.loads(safe_read.read_regular(entry / MANIFEST, "taken files",
                                                 MANIFEST_LIMIT))
    if manifest["format"] != FORMAT:
        raise ValueError("another format")
    files = {}
    root = os.open(entry / FILES, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for rel, (digest, mode, mtime) in manifest["files"].items():
            if not imports_table.safe_rel(rel):
                raise ValueError(rel)
            data = safe_read.read_regular(rel, "taken file", ENTRY_LIMIT, root=root)
            if hashlib.sha256(data).hexdigest() != digest:
                raise ValueError(rel)
            files[rel] = (data, int(mode) & 0o777, int(mtime))
    finally:
        os.close(root)
    dirs = manifest["dirs"]
    if not all(isinstance(d, str) and imports_table.safe_rel(d) for d in dirs):
        raise ValueError("a folder")
    return files, dirs


def keep(sha, patterns, tree):
    """tar's extraction in the folder tree, kept as the entry of (sha,
    patterns); nothing kept when it holds anything but regular files and
    folders, or more than ENTRY_LIMIT."""
    files, dirs, total = {}, [], 0
    for root, subdirs, names in os.walk(tree):
        for name in subdirs + names:
            path = Path(root, name)
            st = path.lstat()
            rel = str(path.relative_to(tree))
            if not imports_table.safe_rel(rel):
                return
            if stat.S_ISDIR(st.st_mode):
                dirs.append(rel)
            elif stat.S_ISREG(st.st_mode):
                total += st.st_size
                files[rel] = (path, st.st_mode, st.st_mtime_ns)
            else:
                return
    if total > ENTRY_LIMIT:
        return
    top = cache_dir()
    stage = Path(lifecycle.new_temp_dir(top, ".staging-"))
    try:
        manifest = {"format": FORMAT, "dirs": sorted(dirs), "files": {}}
        for rel, (path, mode, mtime) in sorted(files.items()):
            data = path.read_bytes()
            out = stage / FILES / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            manifest["files"][rel] = [hashlib.sha256(data).hexdigest(), mode & 0o777, mtime]
        (stage / MANIFEST).write_text(json.dumps(manifest) + "\n")
        lifecycle.replace_dir(stage, top / key(sha, patterns))
    except BaseException:
        lifecycle.discard(str(stage), "dir")
        raise
