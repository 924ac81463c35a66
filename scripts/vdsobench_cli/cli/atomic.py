"""Atomic writes: a file is complete under its name or not there at all.

An existing file is replaced only with force and only if it is a regular file:
a directory, device, FIFO or socket is refused, and so is a symbolic link
(force replaces neither the link nor what it points to). "-" is not standard
output. A file is written beside its name, synced, and given the name by a
hard link (never clobbers) or, over the file that was there at the check, by
os.replace; a signal meanwhile leaves nothing (cli/lifecycle.py). A command
that works long before it writes checks first with cli/targets.py.
"""

import json
import os
import stat
from pathlib import Path

from vdsobench_cli.cli import lifecycle
from vdsobench_cli.cli.errors import UsageError

STDOUT = "output '-': standard output is not supported; give a {}"


def cannot(path, e, what="results"):
    return UsageError(f"cannot write {what} to {path}: {e.strerror or e}")


def exists(path, what="results"):
    return UsageError(f"{what} file exists: {path} (use --force to overwrite)")


def appeared(path, what="results"):
    return UsageError(f"cannot write {what} to {path}: it exists now, made or changed by "
                      "someone else while this command ran (another run?); not overwritten")


def kind_of(mode):
    """'a directory', 'a character device', ... for a file that is not a regular one."""
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def refuse_stdout(path, kind="file name"):
    if str(path) == "-":
        raise UsageError(STDOUT.format(kind))


def refuse_existing(path, force, what="results"):
    """The lstat of what is at path now (None if nothing), or UsageError: anything but
    a regular file is never replaced, a regular file only with force."""
    refuse_stdout(path)
    try:
        st = os.lstat(path)
    except OSError:
        return None  # nothing there (or no parent: make_parent says why)
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"cannot write {what} to {path}: it is a directory")
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(f"cannot write {what} to {path}: it is a symbolic link (to "
                         f"{os.readlink(path)}); --force replaces only a regular file, "
                         "never a link or what it points to")
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"cannot write {what} to {path}: it is {kind_of(st.st_mode)}; "
                         "--force replaces only a regular file")
    if not force:
        raise exists(path, what)
    return st


def same_file(a, b):
    return (a is None) == (b is None) and (a is None or (
        (a.st_dev, a.st_ino, a.st_size, a.st_mtime_ns)
        == (b.st_dev, b.st_ino, b.st_size, b.st_mtime_ns)))


def make_parent(path, what="results", parents=True):
    """Make path's missing parent directories (or, not parents, refuse to); they
    are removed again at the end of the command unless the output is written."""
    if not parents and not path.parent.is_dir():
        raise UsageError(f"cannot write {what} to {path}: no directory {path.parent}")
    missing = [p for p in reversed(path.parents) if not os.path.lexists(p)]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        if isinstance(e, FileExistsError):
            e.strerror = f"{e.filename} is not a directory"
        raise cannot(path, e, what) from None
    finally:
        lifecycle.made_dirs(p for p in missing if os.path.isdir(p))


def temp_file(path, what="results"):
    """(fd, name) of a new temp file beside path, registered with lifecycle."""
    try:
        return lifecycle.temp_file(path.parent, f".{path.name}.", ".tmp")
    except OSError as e:
        raise cannot(path, e, what) from None


def probe(path, what="results"):
    """A temp file made beside path and removed: the directory takes a new file."""
    fd, tmp = temp_file(path, what)
    os.close(fd)
    lifecycle.discard(tmp)


def file_mode():
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def publish(tmp, path, before, what="results"):
    """Give tmp the name path. Over `before` (the regular file there at the check)
    by os.replace, if it is still that file; otherwise as a new name with a hard
    link, which never clobbers (the caller removes tmp afterwards)."""
    try:
        now = os.lstat(path)
    except FileNotFoundError:
        now = None
    if before is not None:
        if now is None or not same_file(now, before):
            raise appeared(path, what)
        os.replace(tmp, path)
        return
    try:
        try:
            os.link(tmp, path)
        except PermissionError:
            # Filesystems without hard links (vfat, some FUSE): claim the name, then rename.
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            os.replace(tmp, path)
    except FileExistsError:
        raise appeared(path, what) from None


def replace_with(path, write, before, what="results", parents=True):
    """write(f) into a temp file beside path, then give it the name: complete or
    not at all, and over `before` only (publish). Leaves no temp file behind,
    whatever write raises."""
    lifecycle.check()
    refuse_existing(path, True, what)  # a file there now: publish() decides
    make_parent(path, what, parents)
    fd, tmp = temp_file(path, what)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fchmod(f.fileno(), file_mode())
            os.fsync(f.fileno())
        with lifecycle.critical():
            lifecycle.check()  # nothing is published after a signal
            publish(tmp, path, before, what)
            lifecycle.written(path)
    except OSError as e:
        raise cannot(path, e, what) from None
    finally:
        lifecycle.discard(tmp)
    sync_dir(path.parent)
    return path


def write_stream_atomic(path, write, force=False, what="results"):
    """write(f) into a binary temp file beside path, then give it the name path:
    complete or not at all, never over an existing file unless force (and then
    only a regular one). Creates the parent directory. Leaves no temp file
    behind, whatever write raises. For outputs made in a moment: no pre-flight
    check and no recovery file (targets.Target has those)."""
    path = Path(path)
    before = refuse_existing(path, force, what)
    make_parent(path, what)
    probe(path, what)
    return replace_with(path, write, before, what)


def write_atomic(path, obj, force=False, what="results"):
    """Write obj as JSON to path (see write_stream_atomic)."""
    text = json.dumps(obj, indent=1) + "\n"
    return write_stream_atomic(path, lambda f: f.write(text.encode()), force, what)


def sync_dir(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
