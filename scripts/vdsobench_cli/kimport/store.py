"""The imports directory and what is kept in it: $VDSOBENCH_IMPORTS (made
absolute) or .vdsobench-imports/ in the repository, imports.json (the table:
name -> tree), its lock (imports/.lock, held across a whole
read-modify-write-build), and trees/, one folder per source and patch series.

The table is written whole or not at all (a new file renamed over it, never
written through a link). What Bazel sees of it is bazel_sync.py's: save() is
the write that every command's Bazel then sees."""

import contextlib
import fcntl
import json
import os
import shutil
import stat
import time
from pathlib import Path

from vdsobench_cli.cli import build, lifecycle, safe_read
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import imports_table

ROOT = build.ROOT
DIR_ENV = "VDSOBENCH_IMPORTS"
TABLE = imports_table.TABLE


def imports_dir():
    """The imports directory, absolute: Bazel's repository rule resolves a
    relative one elsewhere, and would see no table."""
    given = os.environ.get(DIR_ENV)
    return Path(os.path.abspath(given)) if given else ROOT / ".vdsobench-imports"


def table_path():
    return imports_dir() / TABLE


def where():
    """How messages name the imports directory."""
    d = imports_dir()
    return f"${DIR_ENV}={d}" if os.environ.get(DIR_ENV) else str(d)


def refuse_dir(why):
    return UsageError(f"import: cannot keep imports in {where()}: {why}; set "
                      f"${DIR_ENV} to a folder this user can write (or unset it for "
                      ".vdsobench-imports/ in the repository)")


def readable_dir():
    """The imports directory (absent is fine), or UsageError: it is no folder."""
    d = imports_dir()
    problem = imports_table.directory_problem(str(d))
    if problem:
        raise refuse_dir(problem.removeprefix(f"{d}: "))
    return d


def writable_dir():
    """The imports directory, made if missing, checked before anything is done:
    UsageError for one that is no folder or cannot be written."""
    d = readable_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise refuse_dir(e.strerror or str(e)) from None
    if not os.access(d, os.W_OK | os.X_OK):
        raise refuse_dir("it is read-only")
    try:  # made once, never through a link
        fd = os.open(d / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o644)
    except FileExistsError:
        return d
    except OSError as e:
        raise refuse_dir(e.strerror or str(e)) from None
    with os.fdopen(fd, "w") as f:
        f.write("# vdsobench import's cache: never committed\n*\n")
    return d


@contextlib.contextmanager
def table_lock(d):
    """The imports table's lock (flock on d/.lock), held across a whole
    read-modify-write-build: imports wait for each other, never undo each other."""
    try:
        fd = os.open(d / imports_table.LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise refuse_dir(f"cannot open its lock ({e.strerror or e})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"import: waiting for another import in {d} to finish", flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        _lock_since[:] = [time.time()]
        yield
    finally:
        _lock_since[:] = []
        os.close(fd)  # releases it


_lock_since = []  # when this process took the table's lock, while it holds it


def read_table():
    """{name: entry} of the imports table as written ({} when there is none), for
    changing it; UsageError when it cannot be read (nothing is written over it)."""
    readable_dir()
    imports, why = imports_table.read_raw(str(imports_dir()))
    if imports is None:
        raise UsageError(f"import: {why}; mend it with: "
                         f"{imports_table.table_mend(str(imports_dir()))}")
    return imports


def write_table(imports):
    """The table, whole or not at all (a new file renamed over it, never written
    through a link); bazel_sync.save() is this and what Bazel sees of it.
    Unlike results files it is written after a signal too: that is how an
    interrupted import takes its entry back out."""
    path = table_path()
    data = (json.dumps({"version": 1, "imports": imports}, indent=1) + "\n").encode()
    try:
        fd, tmp = lifecycle.temp_file(path.parent, f".{TABLE}.", ".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        finally:
            lifecycle.discard(tmp)
    except OSError as e:
        raise refuse_dir(f"cannot write {path.name} ({e.strerror or e})") from None


def trees_dir():
    """imports/trees/, made if missing; never a link to somewhere else."""
    trees = imports_dir() / "trees"
    try:
        trees.mkdir(exist_ok=True)
    except OSError as e:
        raise refuse_dir(e.strerror or str(e)) from None
    if not stat.S_ISDIR(os.lstat(trees).st_mode):
        raise refuse_dir(f"{trees} is {safe_read.kind(os.lstat(trees).st_mode)}, not a folder")
    return trees


STALE = (".staging-", ".damaged-")


def sweep_stale(trees):
    """Remove what an import killed by SIGKILL left in trees/ (.staging-*,
    .damaged-*): only while this process holds the table's lock, under which
    alone such folders are made, and only those older than its taking it, so
    never a live import's."""
    if not _lock_since:
        return
    with os.scandir(trees) as entries:
        stale = [e for e in entries if e.name.startswith(STALE)
                 and e.is_dir(follow_symlinks=False)
                 and e.stat(follow_symlinks=False).st_mtime < _lock_since[0]]
    for e in stale:
        shutil.rmtree(e.path, ignore_errors=True)
