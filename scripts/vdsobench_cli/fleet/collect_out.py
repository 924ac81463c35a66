"""Everything `fleet collect` writes under --out, all or nothing: every
target checked before anything is written, the files written into a hidden
stage and published at once with signals held off. A node's copy is never
written over a different file (it is named -2, -3...) nor through a link."""

import contextlib
import os
import stat
from pathlib import Path

from vdsobench_cli.cli import atomic, lifecycle, targets
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.fleet import fleet_slurm


def same_bytes(a, b):
    """Whether the regular files a and b hold the same bytes (open_left's rules)."""
    fa, fb = fleet_slurm.open_left(a, "file"), fleet_slurm.open_left(b, "file")
    with contextlib.ExitStack() as stack:
        for f in (fa, fb):
            if f is not None:
                stack.enter_context(f)
        if fa is None or fb is None or (os.fstat(fa.fileno()).st_size
                                        != os.fstat(fb.fileno()).st_size):
            return False
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def numbered(name):
    """name, then name-2, name-3... (before the extension)."""
    stem, dot, ext = name.rpartition(".") if "." in Path(name).name else (name, "", "")
    yield name
    for n in range(2, 1000):
        yield f"{stem}-{n}{dot}{ext}"


def lstat_mode(path):
    try:
        return os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as e:
        raise atomic.cannot(path, e, "files") from None


class CollectOut:
    """Everything collect writes under --out: every target checked before
    anything is written, then written into a stage (a hidden directory in out)
    and published at once, with signals held off: all of it or none. A file
    there is replaced only with force and only if it is a regular file; a
    node's copy is never written over a different file (it is named -2, -3...),
    never through a link; a directory on the way must be one, not a link."""

    def __init__(self, out, force):
        targets.check_out_dir(out)
        self.out, self.force = Path(out), force
        self.before = {}  # relative name -> lstat of the file there at the check, or None
        self.stage = None

    def check_dir(self, rel):
        path = self.out / rel
        mode = lstat_mode(path)
        if mode is not None and not stat.S_ISDIR(mode):
            raise UsageError(f"cannot write files to {path}: it is {atomic.kind_of(mode)}")
        return mode is not None

    def check_file(self, rel, what):
        """A file written whole (a table, the summary): new, or replaced with force."""
        if "/" in rel:
            self.check_dir(rel.rsplit("/", 1)[0])
        self.before[rel] = atomic.refuse_existing(self.out / rel, self.force, what)

    def check_files_in(self, rel, what):
        """A directory whose files are written whole (the report): every file
        there is replaced only with force, and it holds nothing but regular files."""
        if not self.check_dir(rel):
            return
        with os.scandir(self.out / rel) as entries:
            for entry in entries:
                self.check_file(f"{rel}/{entry.name}", what)

    def copy_name(self, rel, src):
        """Where src's copy goes: rel, else rel-2, rel-3...: the first that is free
        or already holds its bytes (nothing to write then: None)."""
        if "/" in rel:
            self.check_dir(rel.rsplit("/", 1)[0])
        for name in numbered(rel):
            if name in self.before:
                continue
            path = self.out / name
            mode = lstat_mode(path)
            if mode is None:
                self.before[name] = None
                return name
            if not stat.S_ISREG(mode):
                raise UsageError(f"cannot copy {Path(src).name} to {path}: it is "
                                 f"{atomic.kind_of(mode)}; collect writes no copy through "
                                 "a link or over anything but a regular file")
            if same_bytes(src, path):
                return None
        raise UsageError(f"cannot copy {Path(src).name} into {self.out}: 999 other copies")

    def path(self, rel):
        """Where rel is written now: in the stage (made when first asked)."""
        if self.stage is None:
            atomic.make_parent(self.out / "x", "files")
            try:
                self.stage = Path(lifecycle.new_temp_dir(self.out, ".collect-"))
            except OSError as e:
                raise atomic.cannot(self.out, e, "files") from None
        path = self.stage / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def staged(self):
        if self.stage is None:
            return []
        return sorted(str(p.relative_to(self.stage)) for p in self.stage.rglob("*")
                      if p.is_file())

    def publish(self):
        """Give every staged file its name under out, over only what the check saw."""
        names = self.staged()
        with lifecycle.critical():
            lifecycle.check()
            for rel in names:
                final = self.out / rel
                try:
                    if "/" in rel:
                        make_dir(final.parent)
                    atomic.publish(self.stage / rel, final, self.before.get(rel), "files")
                except OSError as e:
                    raise atomic.cannot(final, e, "files") from None
                lifecycle.written(final)
        if self.stage is not None:
            lifecycle.discard(self.stage, "dir")


def make_dir(path):
    """path as a directory: made, or one already there (not a link to one)."""
    try:
        os.mkdir(path)
    except FileExistsError:
        mode = lstat_mode(path)
        if mode is None or not stat.S_ISDIR(mode):
            raise UsageError(f"cannot write files to {path}: it is "
                             f"{atomic.kind_of(mode) if mode else 'gone'}") from None
