"""A kernel source tarball as tar sees it: what kind it is (its bytes against
its name), why tar failed (one line in tar's and the compressor's words), its
top folder, and the extraction of the names import takes (TAKE's globs and
the patches' names, literal), each file under FILE_LIMIT."""

import contextlib
import os
import re
import signal
import subprocess
from pathlib import Path

from vdsobench_cli.cli import lifecycle, tools
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import imports_table, source as source_mod, taken_cache

MB = imports_table.MB
# tar's lines that say nothing of why it failed
TAR_NOISE = re.compile(r"Not found in archive|Exiting with failure status|Child returned "
                       r"status|Error is not recoverable|in the future|implausibly old|"
                       r"Ignoring unknown extended header|Removing leading")


def tar_reason(stderr, rc):
    """Why tar failed, in its own words: its first line that is no warning."""
    lines = [x.strip() for x in stderr.splitlines() if x.strip()]
    reasons = [x for x in lines if not TAR_NOISE.search(x)]
    if reasons:
        return reasons[0]
    if rc in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
        return (f"a member is larger than the {source_mod.FILE_LIMIT // MB} MB a file of a "
                "tree may be")
    return lines[-1] if lines else f"tar exit {rc}"


# (name, magic, suffixes) of the compressions tar undoes by itself
COMPRESSIONS = (("xz", b"\xfd7zXZ\x00", (".tar.xz", ".txz")),
                ("gzip", b"\x1f\x8b", (".tar.gz", ".tgz")),
                ("bzip2", b"BZh", (".tar.bz2", ".tbz2")),
                ("zstd", b"\x28\xb5\x2f\xfd", (".tar.zst", ".tzst")))
COMPRESSOR_LINE = re.compile(r"^(xz|gzip|bzip2|zstd): "
                             r"(?:\(stdin\): |[^:]*: )?(.*)$")


def tarball_kind(path):
    """(what its bytes are, what its name says): each a compression's name,
    "tar" (none) or None; raises UsageError for an empty file."""
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError as e:
        raise UsageError(f"import: {path}: cannot be read ({e.strerror})") from None
    if not head:
        raise UsageError(f"import: {path}: an empty file, not a tar archive")
    name = Path(path).name.lower()
    is_kind = next((c for c, magic, _ in COMPRESSIONS if head.startswith(magic)), None)
    named = next((c for c, _, suffixes in COMPRESSIONS if name.endswith(suffixes)),
                 "tar" if name.endswith(".tar") else None)
    return is_kind, named


def tar_failure(path, stderr, rc):
    """UsageError's one line for a tarball tar could not read: what the file is
    (its first bytes against its name), then why in the tool's own words, the
    compressor's line first ("x.tar.xz: not an xz-compressed tar archive (xz:
    File format not recognized)")."""
    is_kind, named = tarball_kind(path)
    lines = [x.strip() for x in stderr.splitlines() if x.strip()]
    said = [COMPRESSOR_LINE.match(x) for x in lines]
    said = [f"{m.group(1)}: {m.group(2)}" for m in said if m]
    why = said[0] if said else tar_reason(stderr, rc)
    article = {"xz": "an xz", "gzip": "a gzip", "bzip2": "a bzip2", "zstd": "a zstd"}
    if named not in (None, "tar") and is_kind != named:
        what = f"not {article[named]}-compressed tar archive"
    elif is_kind and said:
        what = f"{article[is_kind]}-compressed tar archive that is damaged"
    elif is_kind:
        what = f"{is_kind}-compressed, but not a tar archive"
    else:
        what = "not a tar archive"
    return UsageError(f"import: {path}: {what} ({why}); valid: a kernel source "
                      ".tar.xz, .tar.gz or .tar")


def tar_top(tarball):
    """The folder every member of a kernel tarball is under (linux-source-6.12);
    the tarball refused in one line when it is no compressed tar, holds no
    member, or its first member is under no folder."""
    tarball_kind(tarball)  # an empty or unreadable file: said as such
    proc = lifecycle.popen([tools.path("tar", "import"), "-tf", str(tarball)],
                           stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, errors="replace")
    with lifecycle.owned(proc):
        first = proc.stdout.readline().rstrip("\n")
        err = ""
        if first:
            proc.kill()
        else:
            err = proc.stderr.read()
    if not first:
        if proc.returncode == 0 and not err.strip():
            raise UsageError(f"import: {tarball}: a tar archive with no members, not a "
                             "kernel source tarball")
        raise tar_failure(tarball, err, proc.returncode)
    top, sep, _ = first.partition("/")
    if not imports_table.safe_rel(top) or top.startswith("."):
        raise UsageError(f"import: {tarball}: not a kernel source tarball (its first "
                         f"member is {ascii(first)}, not a top folder)")
    if not sep:
        raise UsageError(f"import: {tarball}: not a kernel source tarball (its first "
                         f"member {ascii(first)} is under no top folder, as "
                         "linux-source-6.12/Makefile is)")
    return top


def untar(source, patterns, named, into):
    """Untar the files the patterns name (globs: TAKE's /*) and those the patches
    name (literal names, after --no-wildcards) into the empty folder `into`; one
    file over FILE_LIMIT ends it (tar runs under that RLIMIT_FSIZE). What the
    patterns name comes from taken_cache.py where this tarball's was kept."""
    top = tar_top(source)
    if not taken_cache.cacheable(patterns) or os.listdir(into):
        return _untar(source, top, patterns, named, into)
    sha = source_mod.file_sha256(source)
    # a name the patterns match is in the entry already, or not in the tarball
    rest = [n for n in named if not taken_cache.matches(n, patterns)]
    if taken_cache.fetch(sha, patterns, into):
        if rest:  # beside an entry's plain files and folders: no link to write through
            _untar(source, top, [], rest, into)
        return
    # One tar for all: a link it makes is never followed by a later member of
    # the same run (it makes links last). Kept only when that is the patterns'.
    _untar(source, top, patterns, named, into)
    if not rest:
        # a cache that cannot be written (full, or not to be trusted) leaves
        # the extraction as it is: the next import untars again
        with contextlib.suppress(OSError, UsageError):
            taken_cache.keep(sha, patterns, into)


def _untar(source, top, patterns, named, into):
    limit = ([tools.find("prlimit"), f"--fsize={source_mod.FILE_LIMIT}"]
             if tools.have("prlimit") else [])
    argv = [*limit, tools.path("tar", "import"), "-xf", str(source), "-C",
            str(into), "--strip-components=1", "--no-same-owner", "--no-same-permissions",
            "--no-recursion", "--warning=no-timestamp", "--warning=no-unknown-keyword",
            "--wildcards", "--no-wildcards-match-slash", *[f"{top}/{p}" for p in patterns],
            "--no-wildcards", *[f"{top}/{n}" for n in named if n not in patterns]]
    r = lifecycle.run(argv, capture_output=True, text=True, errors="replace")
    # a pattern one version lacks (uapi/linux/bits.h before v6.14) is fine here;
    # REQUIRED is checked afterwards
    if r.returncode != 0 and not all(TAR_NOISE.search(x) for x in r.stderr.splitlines()
                                     if x.strip()):
        raise tar_failure(source, r.stderr, r.returncode)
    if r.returncode in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
        raise UsageError(f"import: {source}: {tar_reason('', r.returncode)}")
