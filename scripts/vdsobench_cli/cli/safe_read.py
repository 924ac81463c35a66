"""The one safe way to read a file the CLI was handed, or one inside a tree it
was handed: a regular file only, within a size cap, and an open that never
blocks (a FIFO is refused, not waited on) and, inside a tree, follows no
symbolic link on the way.

    read_regular(path, what, limit)            a file a person named
    read_regular(rel, what, limit, root=fd)    a file below an open directory:
                                               every component, the last one
                                               too, must be no symbolic link

A refused file is one line naming it and why (UsageError, exit 2).

Standard library only, and it runs as a plain script's neighbour too: the
@vdso_imports repository rule runs imports_table.py, which reads through it.
inputs.read_bytes() predates it; new readers use this one.
"""

import errno
import os
import stat

try:
    from vdsobench_cli.cli.errors import UsageError
except ImportError:  # imports_table run by the repository rule: no reports/ on the path
    class UsageError(Exception):
        code = 2

MB = 1 << 20
NONBLOCK = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"),
         (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
         (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"))


def kind(mode):
    """'a named pipe (FIFO)', 'a directory', ... ('a regular file' for one)."""
    return next((k for test, k in KINDS if test(mode)), "a regular file")


def size_text(size):
    return f"{-(-size // MB)} MB" if size >= MB else f"{size} bytes"


def parts_of(rel):
    """The components of a relative path; UsageError for an absolute one or '..'."""
    parts = [p for p in str(rel).split("/") if p not in ("", ".")]
    if str(rel).startswith("/") or ".." in parts or not parts:
        raise UsageError(f"{rel}: not a path inside the tree")
    return parts


def open_dir(root, rel, create=False, prefix=""):
    """An fd of the directory rel below the directory fd root, each component
    opened without following a symbolic link (made, with create, when missing).
    The caller closes it. UsageError naming (after prefix) a component that is a
    link or no directory; FileNotFoundError for a missing one (without create)."""
    fd = os.dup(root)
    done = []
    try:
        for part in parts_of(rel) if str(rel) not in ("", ".") else []:
            done.append(part)
            if create:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
                              | os.O_CLOEXEC, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    st = os.lstat(part, dir_fd=fd)
                    raise UsageError(f"{prefix}{'/'.join(done)}: is "
                                     f"{kind(st.st_mode)}, not a folder") from None
                raise
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def too_large(name, size, what, limit):
    return UsageError(f"{name}: {size_text(size)} is larger than the {size_text(limit)} "
                      f"a {what} may be")


def read_fd(fd, name, what, limit):
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{name}: is {kind(st.st_mode)}; a {what} must be a regular file")
    if st.st_size > limit:
        raise too_large(name, st.st_size, what, limit)
    chunks, size = [], 0
    while size <= limit:
        chunk = os.read(fd, min(1 << 20, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:  # it grew while read
        raise too_large(name, size, what, limit)
    return b"".join(chunks)


def read_regular(path, what, limit, root=None, prefix="", missing=None):
    """The bytes of a regular file of at most limit bytes.

    root: a directory fd; path is then relative to it and no component may be
    a symbolic link. prefix: put before path in messages (the tree's name).
    missing: the message for a file that is not there (default: strerror), or
    False to return None for one."""
    name = f"{prefix}{path}"
    try:
        if root is None:
            st = os.stat(path)  # refuse a FIFO or device before opening it
            if not stat.S_ISREG(st.st_mode):
                via = " (through a symbolic link)" if os.path.islink(path) else ""
                raise UsageError(f"{name}: is {kind(st.st_mode)}{via}; a {what} must be "
                                 "a regular file")
            fd = os.open(path, NONBLOCK)
        else:
            parts = parts_of(path)
            parent = open_dir(root, "/".join(parts[:-1]), prefix=prefix)
            try:
                st = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode):  # never opened: a device may act on it
                    raise UsageError(f"{name}: is {kind(st.st_mode)}; a {what} must be a "
                                     "regular file")
                fd = os.open(parts[-1], NONBLOCK | os.O_NOFOLLOW, dir_fd=parent)
            except OSError as e:
                if e.errno != errno.ELOOP:
                    raise
                raise UsageError(f"{name}: is a symbolic link, not a {what}") from None
            finally:
                os.close(parent)
    except FileNotFoundError:
        if missing is False:
            return None
        raise UsageError(missing or f"{name}: No such file or directory") from None
    except OSError as e:
        raise UsageError(f"{name}: {e.strerror or e}") from None
    try:
        return read_fd(fd, name, what, limit)
    except OSError as e:
        raise UsageError(f"{name}: {e.strerror or e}") from None
    finally:
        os.close(fd)
