"""The one safe way to read a file the CLI was handed, or one inside a tree it
was handed: a regular file only, within a size cap, and an open that never
blocks (a FIFO is refused, not waited on) and, inside a tree, follows no
symbolic link on the way.

    read_regular(path, what, limit)            a file a person named
    read_regular(rel, what, limit, root=fd)    a file below an open directory:
                                               every component, the last one
                                               too, must be no symbolic link
    read_regular(path, ..., follow=False)      a file that may not itself be a
                                               symbolic link (a node's file)
    read_regular(path, ..., owned=True)        a file the tool trusts: root's or
                                               this user's, writable by no one
                                               else (cli/trust.py)
    open_regular(path, what, limit)            the same checks, a file object to
                                               stream from (tarfile, a copy)

A refused file is one line naming it and why (UsageError, exit 2). It is the
only reader of user files: inputs.read_bytes (the JSON loader's) and
fleet_slurm.read_left (what jobs leave) call it, and only this module opens
a file with O_NONBLOCK for reading (vocab_test checks).

Standard library only, and it runs as a plain script's neighbour too: the
@vdso_imports repository rule runs imports_table.py, which reads through it.
"""

import errno
import os
import stat

try:
    from vdsobench_cli.cli import trust
except ImportError:  # run as imports_table's neighbour by the repository rule
    import trust

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


def not_regular(name, mode, what, via=""):
    return UsageError(f"{name}: is {kind(mode)}{via}; a {what} must be a regular file")


def checked(fd, name, what, limit, owned=False):
    """fd again, once fstat says it is a regular file of at most limit bytes (None:
    any size), and with owned, root's or this user's alone; closed and UsageError
    otherwise: what is read is what was checked."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(name, st.st_mode, what)
        if limit is not None and st.st_size > limit:
            raise too_large(name, st.st_size, what, limit)
        why = trust.stat_problem(st) if owned else None
        if why:
            raise UsageError(f"{name} {why}; a {what} must be root's or this user's alone")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_fd(fd, name, what, limit):
    """At most limit bytes of fd, read to its end; UsageError past the cap (a file
    that grows, a /proc file that says it is empty): the read stops one byte past it."""
    chunks, size = [], 0
    while size <= limit:
        chunk = os.read(fd, min(MB, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        raise UsageError(f"{name}: more than the {size_text(limit)} a {what} may be "
                         "(stopped reading there)")
    return b"".join(chunks)


def open_fd(path, what, limit, root=None, prefix="", missing=None, follow=True, owned=False):
    """The checked fd of the regular file path (read_regular's rules), or None for
    a missing one when missing is False. The caller closes it."""
    name = f"{prefix}{path}"
    try:
        if root is None:
            # refuse a FIFO or device before opening it (as root, opening some acts:
            # a watchdog, a tape); without follow, a symbolic link too
            st = os.stat(path) if follow else os.lstat(path)
            if not stat.S_ISREG(st.st_mode):
                via = " (through a symbolic link)" if follow and os.path.islink(path) else ""
                raise not_regular(name, st.st_mode, what, via)
            if limit is not None and st.st_size > limit:
                raise too_large(name, st.st_size, what, limit)
            try:
                fd = os.open(path, NONBLOCK | (0 if follow else os.O_NOFOLLOW))
            except OSError as e:
                if follow or e.errno != errno.ELOOP:
                    raise
                raise not_regular(name, stat.S_IFLNK, what) from None
        else:
            parts = parts_of(path)
            parent = open_dir(root, "/".join(parts[:-1]), prefix=prefix)
            try:
                st = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode):  # never opened: a device may act on it
                    raise not_regular(name, st.st_mode, what)
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
    return checked(fd, name, what, limit, owned)


def read_regular(path, what, limit, root=None, prefix="", missing=None, follow=True,
                 owned=False):
    """The bytes of a regular file of at most limit bytes.

    root: a directory fd; path is then relative to it and no component may be
    a symbolic link. prefix: put before path in messages (the tree's name).
    missing: the message for a file that is not there (default: strerror), or
    False to return None for one. follow=False: path may not be a symbolic link
    (its directories may). owned: see cli/trust.py."""
    fd = open_fd(path, what, limit, root, prefix, missing, follow, owned)
    if fd is None:
        return None
    try:
        return read_fd(fd, f"{prefix}{path}", what, limit)
    except OSError as e:
        raise UsageError(f"{prefix}{path}: {e.strerror or e}") from None
    finally:
        os.close(fd)


def open_regular(path, what, limit=None, prefix="", missing=None, follow=True):
    """An unbuffered binary file object of the regular file at path (read_regular's
    rules; limit None: any size, for a caller that reads only a part), or None
    for a missing one when missing is False. The caller reads at most what it
    means to and closes it."""
    fd = open_fd(path, what, limit, prefix=prefix, missing=missing, follow=follow)
    return None if fd is None else os.fdopen(fd, "rb", buffering=0)
