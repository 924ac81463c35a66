"""SOURCE, resolved, read and hashed: a kernel tree (a directory) or a source
tarball (Debian's /usr/src/linux-source-X.Y.tar.xz, installed when named and
missing; one the machine's suites lack is fetched from Debian's newer ones,
newer_sources.py). Only what the read and update paths need is taken (TAKE); every
file is a regular file within FILE_LIMIT, read without following a link
(safe_read), and each name one import takes (letters, digits and _.+,=@~-).
A tarball's hash is remembered (sources.json) by its path and stat."""

import hashlib
import json
import os
import re
import stat
from pathlib import Path

from vdsobench_cli.cli import atomic, safe_read
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import imports_table, newer_sources, store

MB = imports_table.MB
# --arch -> the kernel's arch/ directory; the shim and glue are x86-64's
ARCH_DIRS = imports_table.ARCH_DIRS
FILE_LIMIT = imports_table.FILE_LIMIT
# What is taken from a tree, relative to its top ({arch}: ARCH_DIRS); a pattern
# ending in /* takes that folder's files. Those in REQUIRED must be there.
TAKE = (
    "Makefile",  # VERSION, PATCHLEVEL, SUBLEVEL
    "arch/{arch}/Kconfig",  # what the architecture selects
    "lib/vdso/gettimeofday.c",  # the read path
    "include/vdso/*",  # its data page, helpers, math
    "include/asm-generic/vdso/*",  # the update path's generic arch hooks
    "arch/{arch}/include/asm/vdso/*",  # the architecture's hooks
    # x86's pvclock read (CONFIG_PARAVIRT_CLOCK): the tree's own helpers and ABI
    "arch/{arch}/include/asm/pvclock.h",
    "arch/{arch}/include/asm/pvclock-abi.h",
    "kernel/time/vsyscall.c",  # the update path
    # x86's 32-bit vDSO (the i386 variants): the 32-bit configuration its
    # vclock_gettime.c makes of the 64-bit one (kernel_import/glue/reader.c)
    "arch/{arch}/entry/vdso/vdso32/fake_32bit_build.h",
    # arm64's compat vDSO: its system call numbers (asm/unistd_compat_32.h; 6.1 has none)
    "arch/{arch}/tools/syscall_32.tbl",
    "kernel/time/timekeeping_internal.h",
    "include/linux/timekeeper_internal.h",  # struct timekeeper
    "include/linux/clocksource_ids.h",  # its cs_id's type (v6.17 on)
    "include/uapi/linux/time.h",  # clock ids, struct timezone
    "include/uapi/linux/time_types.h",  # __kernel_timespec
    "include/uapi/linux/const.h",
    "include/uapi/linux/bits.h",
    "include/uapi/asm-generic/errno-base.h",
)
REQUIRED = ("Makefile", "arch/{arch}/Kconfig", "lib/vdso/gettimeofday.c",
            "include/vdso/datapage.h", "include/vdso/helpers.h", "kernel/time/vsyscall.c",
            "include/linux/timekeeper_internal.h",
            "arch/{arch}/include/asm/vdso/gettimeofday.h")


def debian_package(source):
    """The Debian package that provides a source tarball path (or is named), else None."""
    m = re.fullmatch(r"(?:/usr/src/)?(linux-source-\d+\.\d+)(?:\.tar\.xz)?", str(source))
    return m.group(1) if m else None


def resolve_source(given):
    """The tree or tarball SOURCE names, installing Debian's package for a
    /usr/src/linux-source-X.Y.tar.xz (or linux-source-X.Y) that is missing, or
    fetching it from Debian's newer suites when the machine's lack it."""
    path = Path(given)
    package = debian_package(given)
    if package and not path.exists():
        path = Path(f"/usr/src/{package}.tar.xz")
        if not path.exists():
            path = newer_sources.tree_tarball(package, f"import: {given}")
    try:
        st = path.stat()
    except OSError:
        st = None
    if st is not None and (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        return path.resolve()
    hint = f"; Debian's {package} package provides it" if package else ""
    what = (f"is {safe_read.kind(st.st_mode)}" if st is not None else
            "no such kernel tree or tarball")
    raise UsageError(f"import: {given}: {what} (valid: a directory, a "
                     f".tar.xz/.tar.gz/.tar, or linux-source-X.Y{hint})")


def expand(patterns, arch_dir):
    return [p.replace("{arch}", arch_dir) for p in patterns]


def file_sha256(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


MEMO_ENTRIES = 64  # sources.json keeps the most recent tarballs' hashes


def tarball_sha256(path):
    """A tarball's SHA-256, remembered by path, size, mtime, ctime, device and
    inode (sources.json): hashing 150 MB again would make a cached import take a
    second. `touch -d` sets mtime back after an edit, but not ctime, which any
    write, touch or rename changes: then the tarball is hashed again."""
    st = path.stat()
    key = f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_dev}:{st.st_ino}"
    memo_path = store.imports_dir() / "sources.json"
    try:
        memo = json.loads(safe_read.read_regular(memo_path, "source hashes", 4 * MB))
    except (UsageError, ValueError):
        memo = {}
    if not isinstance(memo, dict):
        memo = {}
    if not (isinstance(memo.get(key), str) and re.fullmatch(r"[0-9a-f]{64}", memo[key])):
        memo.pop(key, None)
        memo = dict(list(memo.items())[-(MEMO_ENTRIES - 1):])
        memo[key] = file_sha256(path)
        atomic.write_atomic(memo_path, memo, force=True, what="the source hashes")
    return memo[key]


def read_tree(source, patterns, named):
    """{rel: bytes} of the files of a directory tree that the patterns and the
    patches name, each read without following a link (on the way either) and
    within FILE_LIMIT; a name that is not there is left out."""
    prefix = f"import: {source}/"
    root = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    out = {}

    def take(rel):
        data = safe_read.read_regular(rel, "source file", FILE_LIMIT, root=root,
                                      prefix=prefix, missing=False)
        if data is not None:
            out[rel] = data

    try:
        for pattern in patterns:
            if not pattern.endswith("/*"):
                take(pattern)
                continue
            try:
                fd = safe_read.open_dir(root, pattern[:-2], prefix=prefix)
            except FileNotFoundError:
                continue
            try:
                names = sorted(e.name for e in os.scandir(fd)
                               if not e.is_dir(follow_symlinks=False))
            finally:
                os.close(fd)
            for name in names:
                take(taken_name(source, f"{pattern[:-2]}/{name}"))
        for rel in named:
            if rel not in out:
                take(rel)
    finally:
        os.close(root)
    return out


def taken_name(given, rel):
    """rel, or UsageError for a name import does not take: one that is no UTF-8
    (it could be neither hashed nor written into the C strings) or has a
    character a glob, a quote or a shell would change."""
    if not imports_table.safe_rel(rel):
        raise UsageError(f"import: {given}: {ascii(rel)}: a file name import does not "
                         "take (letters, digits and _.+,=@~- only)")
    return rel


def tree_sha256(files):
    h = hashlib.sha256()
    for rel, data in sorted(files.items()):
        h.update(f"{rel}\0{len(data)}\0".encode() + data)
    return h.hexdigest()
