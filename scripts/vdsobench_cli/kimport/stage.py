"""The staged tree (trees/.staging-*): writes into it only through no-follow
opens and renames (write_inside), never through what is there; its files
checked after they are taken and after the patches (no link, no device, only
safe names, nothing that opens a file by name in the preprocessor, every
REQUIRED file there); and its placing under trees/<key>."""

import contextlib
import os
import re
import stat

from vdsobench_cli.cli import lifecycle, safe_read
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.core import text as text_mod
from vdsobench_cli.kimport import compile, source as source_mod, tarball


def write_inside(tree, rel, data):
    """Write a file of the staged tree: each folder on the way opened without
    following a link (made if missing), the file written new beside its name and
    renamed over it, so that nothing already there, a link least of all, is
    written through."""
    parts = rel.split("/")
    data = data.encode() if isinstance(data, str) else data
    try:
        top = os.open(tree, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            parent = safe_read.open_dir(top, "/".join(parts[:-1]), create=True,
                                        prefix=f"{tree}/") if len(parts) > 1 else os.dup(top)
        finally:
            os.close(top)
        try:
            tmp = f".{parts[-1]}.kimport-tmp"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=parent)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o644, dir_fd=parent)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.rename(tmp, parts[-1], src_dir_fd=parent, dst_dir_fd=parent)
        finally:
            os.close(parent)
    except OSError as e:
        raise Failure(f"import: cannot write {rel} in {tree}: {e.strerror or e}") from None


def stage_files(tree, given):
    """The files of the staged tree (relative paths, sorted), or UsageError for the
    first thing in it that is a link, neither a file nor a folder, or has a
    name import does not take."""
    files = []
    for dirpath, dirnames, filenames in os.walk(tree):  # never into a linked folder
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, tree)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                raise UsageError(f"import: {given}: {ascii(rel)[1:-1]} is a symbolic link "
                                 f"(to {ascii(os.readlink(full))}): import takes no links")
            source_mod.taken_name(given, rel)
            if stat.S_ISREG(st.st_mode):
                files.append(rel)
            elif not stat.S_ISDIR(st.st_mode):
                raise UsageError(f"import: {given}: {rel} is {safe_read.kind(st.st_mode)}, "
                                 "not a file")
    return sorted(files)


def take_files(source, given, arch_dir, patches, files, stage):
    """The taken files into the stage (copied from a tree as read, or untarred),
    checked: the files REQUIRED there, and nothing a link or oddly named."""
    named = sorted({n for p in patches for n in p.names})
    if files is not None:
        for rel, data in files.items():
            write_inside(stage, rel, data)
    else:
        tarball.untar(source, source_mod.expand(source_mod.TAKE, arch_dir), named, stage)
    check_stage(stage, given, arch_dir)


# What opens a file by name in the preprocessor without gcc -H listing it (an
# existence oracle on the machine, a FIFO that blocks): the kernel's vDSO read
# and update paths use none of them.
CPP_OPENS = re.compile(rb"\b__has_include(?:_next)?\b|\b_Pragma\b|"
                       rb"^[ \t]*(?:#|%:)[ \t]*pragma\b[^\n]*\bdependency\b", re.M)


def check_stage(stage, given, arch_dir, after=""):
    """Nothing in the stage a link or oddly named, no file with CPP_OPENS, and
    every REQUIRED file there."""
    for rel in stage_files(stage, given):  # no link in it now: isfile() below follows none
        if not rel.endswith((".c", ".h")):  # Makefile and Kconfig are read, not compiled
            continue
        with open(stage / rel, "rb") as f:
            m = CPP_OPENS.search(f.read().replace(b"\\\n", b""))
        if m:
            found = text_mod.printable(m.group(0).decode("latin-1").strip(), 60)
            raise UsageError(f"import: {given}{after}: {rel} has {found}, which opens "
                             "files by name in the preprocessor: import takes none")
    for rel in source_mod.expand(source_mod.REQUIRED, arch_dir):
        if not os.path.isfile(stage / rel):
            raise UsageError(f"import: {given}{after}: not a kernel tree with a generic vDSO "
                             f"for {compile.ARCH_DIRS_NAMES.get(arch_dir, arch_dir)} (no {rel})")


def place(stage, final):
    """The staged tree renamed to final; a damaged tree there moved aside and
    removed first (the caller holds the table's lock)."""
    with lifecycle.critical():
        if os.path.lexists(final):
            aside = lifecycle.new_temp_dir(final.parent, ".damaged-")
            os.rename(final, aside)  # over the empty folder new_temp_dir made
            os.rename(stage, final)
            lifecycle.forget(str(stage))
            lifecycle.discard(aside, "dir")
        else:
            os.rename(stage, final)
            lifecycle.forget(str(stage))
