"""Outputs checked before the work: a command that runs for minutes fails at
once, not at the end, if what it will write could not be written.

Two kinds of output, one check each: a file (check_writable, then
Target.write_json or write_stream) and a directory (check_out_dir; StagedDir
for one filled over a long command). If the final write fails all the same,
the output is kept in a recovery file or directory and the Failure (exit 1)
says where: the work is not lost. The writes themselves are cli/atomic.py's.
"""

import datetime
import json
import os
import stat
import tempfile
from pathlib import Path

from vdsobench_cli.cli import lifecycle, trust
from vdsobench_cli.cli.atomic import (appeared, cannot, exists, make_parent, probe,
                                      refuse_existing, refuse_stdout, replace_with, sync_dir)
from vdsobench_cli.cli.errors import Failure, UsageError

MIN_FREE = 64 * 1024  # bytes any output file is allowed to need, at least


def free_bytes(directory):
    """Bytes this user may still write on directory's file system (None: unknown)."""
    try:
        st = os.statvfs(directory)
    except OSError:
        return None
    return (st.f_bfree if os.geteuid() == 0 else st.f_bavail) * st.f_frsize


def size_text(n):
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


def check_space(directory, need, path, what="results"):
    free = free_bytes(directory)
    if need and free is not None and free < need:
        raise UsageError(f"cannot write {what} to {path}: {size_text(free)} free on its "
                         f"file system, about {size_text(need)} needed")


class Target:
    """A file a command writes when its work is done, checked before the work.

    Made by check_writable: the directory exists (or is made) and takes a new
    file, there is room for `need` bytes, and what is there may be replaced.
    write_json and write_stream then publish atomically, and only over what was
    there at the check: with force the same regular file, else nothing; a file
    that appeared or changed meanwhile (a second run to the same --out) is left
    alone. If the write fails, the output is kept in a recovery file and the
    Failure (exit 1) says where: the work is not lost.
    """

    def __init__(self, path, force=False, what="results", need=MIN_FREE, parents=True,
                 announce=True):
        self.path, self.force, self.what, self.parents = Path(path), force, what, parents
        self.before = refuse_existing(self.path, force, what)
        make_parent(self.path, what, parents)
        probe(self.path, what)
        check_space(self.path.parent, need, self.path, what)
        if announce:  # named if the command is interrupted
            lifecycle.target(self.path)

    def write_json(self, obj):
        text = json.dumps(obj, indent=1) + "\n"
        return self.write_stream(lambda f: f.write(text.encode()))

    def write_stream(self, write):
        try:
            return self.publish(write)
        except UsageError as e:
            raise Failure(f"{e}; {recover(self.path, write)}") from None

    def publish(self, write):
        """write(f) into a temp file beside the path, then give it the name: complete
        or not at all. Leaves no temp file behind, whatever write raises."""
        return replace_with(self.path, write, self.before, self.what, self.parents)


def check_writable(path, force=False, what="results", need=MIN_FREE, parents=True):
    """Fail now, not after a long run, if the output could not be written; the
    Target to write it with afterwards. Creates the parent directory unless not
    parents (removed again if the command writes nothing) and a temp file it
    removes."""
    return Target(path, force, what, need, parents)


# ---- recovery -----------------------------------------------------------------------------

def recovery_dirs():
    """Where an output that could not be written is kept: $XDG_STATE_HOME/vdsobench
    (default ~/.local/state/vdsobench), else the temporary directory."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"),
                                                             ".local", "state")
    return [Path(state) / "vdsobench", Path(tempfile.gettempdir())]


def stamp():
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def recover(path, write):
    """write(f) into a new recovery file; the sentence that says where (or that it
    could not be kept anywhere)."""
    reasons = []
    for directory in recovery_dirs():
        kept = None
        try:
            directory.mkdir(parents=True, exist_ok=True)
            why = trust.folder_problem(directory)
            if why:  # another user's folder: they could read or swap what root keeps
                reasons.append(f"{directory}: {why}")
                continue
            with lifecycle.critical():  # a signal while it is written removes it
                fd, kept = new_file(directory, f"recovered-{stamp()}-{Path(path).name}")
                lifecycle.register(kept, "file")
            with os.fdopen(fd, "wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            reasons.append(f"{directory}: {e.strerror or e}")
            if kept is not None:
                lifecycle.discard(kept)
            continue
        lifecycle.forget(kept)
        return f"kept in {kept} instead"
    return "it could not be kept elsewhere either (" + "; ".join(reasons) + "): lost"


def new_file(directory, name):
    """(fd, path) of a file named name (or name-2, name-3...) that did not exist."""
    stem, dot, ext = name.rpartition(".") if "." in name else (name, "", "")
    for n in range(1, 1000):
        candidate = directory / (name if n == 1 else f"{stem}-{n}{dot}{ext}")
        try:
            return os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"{directory}: too many recovery files named {name}")


# ---- directories ----------------------------------------------------------------------------

def check_out_dir(out_dir, need=0):
    """Fail now, before any work, if out_dir cannot be a directory we write in: it
    is one (or a link to one), or its nearest existing ancestor is a writable one."""
    refuse_stdout(out_dir, "directory")
    p = Path(out_dir)
    while not os.path.lexists(p):
        p = p.parent
    if not p.is_dir():
        raise UsageError(f"cannot write to {out_dir}: {p} is not a directory")
    if not os.access(p, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write to {out_dir}: {p} is not writable")
    check_space(p, need, out_dir, "files")


class StagedDir:
    """An output directory a long command fills as it goes (a recipe's comparisons
    and plots). Everything goes to a hidden directory beside it first, moved into
    place by publish() at the end: an interrupted command leaves nothing (the
    stage is a lifecycle temp), a failed one keeps what it wrote (keep()).

    out_dir must not exist, or be an empty directory, or (force) a directory whose
    files of the same names are replaced."""

    def __init__(self, out_dir, force=False, need=MIN_FREE):
        check_out_dir(out_dir, need)
        self.out_dir, self.force = Path(os.path.abspath(out_dir)), force
        if self.out_dir.is_dir() and any(self.out_dir.iterdir()) and not force:
            raise UsageError(f"--out: {self.out_dir} is not empty (use --force to write "
                             "into it)")
        make_parent(self.out_dir, "files")
        try:
            self.path = Path(lifecycle.new_temp_dir(self.out_dir.parent,
                                                    f".{self.out_dir.name}."))
        except OSError as e:
            raise cannot(self.out_dir, e, "files") from None
        lifecycle.target(self.out_dir)

    def final(self, path):
        """Where a file written under the stage ends up."""
        return self.out_dir / Path(path).relative_to(self.path)

    def publish(self):
        """Move the stage into place; Failure (exit 1) naming where it was kept if
        that cannot be done (out_dir filled by another command meanwhile, ...)."""
        lifecycle.check()
        try:
            with lifecycle.critical():
                if not self.out_dir.is_dir():
                    os.rename(self.path, self.out_dir)  # fails if one appeared with files
                    lifecycle.forget(self.path)
                else:
                    if any(self.out_dir.iterdir()) and not self.force:
                        raise appeared(self.out_dir, "files")
                    move_tree(self.path, self.out_dir, self.force)
                    lifecycle.discard(self.path, "dir")
                lifecycle.written(self.out_dir)
        except (OSError, UsageError) as e:
            why = e if isinstance(e, UsageError) else cannot(self.out_dir, e, "files")
            raise Failure(f"{why}; {self.keep()}") from None
        sync_dir(self.out_dir.parent)
        return self.out_dir

    def keep(self):
        """Rename the stage to <out_dir>.recovered-<time> beside it; the sentence
        that says so."""
        kept = self.out_dir.with_name(f"{self.out_dir.name}.recovered-{stamp()}")
        try:
            os.rename(self.path, kept)
        except OSError as e:
            return f"what was written could not be kept ({e.strerror or e}): lost"
        lifecycle.forget(self.path)
        return f"what was written is kept in {kept}"


def move_tree(src, dst, force):
    """Move src's entries into the directory dst: subdirectories merged, files
    replaced only with force."""
    for entry in sorted(Path(src).iterdir()):
        to = Path(dst) / entry.name
        if entry.is_dir() and not entry.is_symlink():
            if to.is_dir() and not to.is_symlink():
                move_tree(entry, to, force)
                continue
            if os.path.lexists(to):
                raise UsageError(f"cannot write to {dst}: {to} is not a directory")
            os.rename(entry, to)
        elif force and (not os.path.lexists(to) or stat.S_ISREG(os.lstat(to).st_mode)):
            os.replace(entry, to)
        else:
            try:
                os.link(entry, to)
            except FileExistsError:
                raise exists(to, "output") from None
            os.unlink(entry)
