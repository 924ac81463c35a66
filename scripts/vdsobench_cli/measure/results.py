"""Results files: Google Benchmark JSON plus context.vdsobench, written atomically.

The schema is results/schema/results-v1.schema.json. Benchmark names are
<variant>/<clock>/<mode>/cpu<N> (variants may contain "/", e.g. sys/vdso);
aggregates are named <run_name>_<aggregate>, as Google Benchmark names them.
"""

import datetime
import json
import os
import stat
import tempfile
from pathlib import Path

from vdsobench_cli.cli import inputs, lifecycle, trust
from vdsobench_cli.cli.build import ROOT
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.core import vocab

SCHEMA_ID = "vdsobench-results/1"
SCHEMA_PATH = ROOT / "results" / "schema" / "results-v1.schema.json"


def default_path(repo_root, host, when, short_hash):
    """repo_root/results/runs/<host>-<YYYYMMDD-HHMMSS>-<short hash>.json.

    Seconds are in the name so that two runs a minute apart do not collide; `when`
    is used as given (pass an aware UTC datetime to make names comparable).
    """
    return (Path(repo_root) / "results" / "runs"
            / f"{host}-{when:%Y%m%d-%H%M%S}-{short_hash or 'nocommit'}.json")


def benchmark_key(name):
    """'sys/vdso/monotonic/hot/cpu0' -> ('sys/vdso', 'monotonic', 'hot', 0).

    For an aggregate, pass its run_name (its name has an _<aggregate> suffix).
    """
    try:
        return vocab.parse_benchmark(name)
    except vocab.BadName as e:
        raise UsageError(str(e)) from None


# ---- writing ----------------------------------------------------------------------------
#
# Two kinds of output, one check each: a file (check_writable, then Target.write_json or
# write_stream; write_atomic and write_stream_atomic for cheap outputs written at once)
# and a directory (check_out_dir; StagedDir for one filled over a long command).
# An existing file is replaced only with force and only if it is a regular file: a
# directory, device, FIFO or socket is refused, and so is a symbolic link (force
# replaces neither the link nor what it points to). "-" is not standard output.

MIN_FREE = 64 * 1024  # bytes any output file is allowed to need, at least
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
        fd, tmp = temp_file(self.path, what)
        os.close(fd)
        lifecycle.discard(tmp)
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
        lifecycle.check()
        refuse_existing(self.path, True, self.what)  # a file there now: publish() decides
        make_parent(self.path, self.what, self.parents)
        fd, tmp = temp_file(self.path, self.what)
        try:
            with os.fdopen(fd, "wb") as f:
                write(f)
                f.flush()
                os.fchmod(f.fileno(), file_mode())
                os.fsync(f.fileno())
            with lifecycle.critical():
                lifecycle.check()  # nothing is published after a signal
                publish(tmp, self.path, self.before, self.what)
                lifecycle.written(self.path)
        except OSError as e:
            raise cannot(self.path, e, self.what) from None
        finally:
            lifecycle.discard(tmp)
        sync_dir(self.path.parent)
        return self.path


def check_writable(path, force=False, what="results", need=MIN_FREE, parents=True):
    """Fail now, not after a long run, if the output could not be written; the
    Target to write it with afterwards. Creates the parent directory unless not
    parents (removed again if the command writes nothing) and a temp file it
    removes."""
    return Target(path, force, what, need, parents)


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


def write_stream_atomic(path, write, force=False, what="results"):
    """write(f) into a binary temp file beside path, then give it the name path:
    complete or not at all, never over an existing file unless force (and then
    only a regular one). Creates the parent directory. Leaves no temp file
    behind, whatever write raises. For outputs made in a moment: no pre-flight
    check and no recovery file (see Target for those)."""
    return Target(path, force, what, need=0, announce=False).publish(write)


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


# ---- reading and validating -------------------------------------------------------------

# the fields Google Benchmark writes for every run; any other is a user counter
RUN_FIELDS = ("name", "run_name", "family_index", "per_family_instance_index", "run_type",
              "repetitions", "repetition_index", "threads", "iterations", "real_time",
              "cpu_time", "time_unit", "aggregate_name", "aggregate_unit", "label",
              "error_occurred", "error_message")


def gbench_nan(parts, token, parent):
    """Where a results file may hold NaN: Google Benchmark writes it for the cv
    (stddev / mean) of a counter that was 0 in every repetition (0/0), e.g.
    "cpu" on CPU 0. Nowhere else, and never Infinity."""
    return (token == "NaN" and len(parts) == 3 and parts[0] == "benchmarks"
            and parent.get("aggregate_name") == "cv" and parts[2] not in RUN_FIELDS)


def check_runs(obj, where):
    """What the schema cannot say: each repetition of a benchmark once, and its
    index below its repetitions. Two identical entries are refused, never
    counted as two repetitions."""
    seen = {}
    for i, b in enumerate(obj["benchmarks"]):
        iteration = b["run_type"] == "iteration"
        key = (b["name"], b.get("repetition_index") if iteration else None)
        if key in seen:
            what = f"repetition {key[1]}" if iteration else "aggregate"
            raise UsageError(f"{where}: benchmarks[{i}]: {b['name']!r} {what} appears twice "
                             f"(also benchmarks[{seen[key]}]); each is recorded once")
        seen[key] = i
        if iteration and b["repetition_index"] >= b["repetitions"]:
            raise UsageError(f"{where}: benchmarks[{i}].repetition_index: "
                             f"{b['repetition_index']} of {b['repetitions']} repetitions "
                             f"(0..{b['repetitions'] - 1})")


def validate(obj, where):
    """Raise UsageError "WHERE: <what is wrong>" unless obj is a valid results object."""
    inputs.check(obj, SCHEMA_PATH, where, "results file")
    check_runs(obj, where)


def load(path):
    """The results file at path as a dict, validated (inputs.read, then the
    schema, then check_runs); UsageError naming the file and what is wrong."""
    obj = inputs.read(path, "results file", allow=gbench_nan)
    validate(obj, path)
    return obj
