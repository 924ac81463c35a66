"""A git work tree's HEAD commit, read as data: never by running git (git in
someone else's repository runs their hooks and their config's commands).

    head(tree) -> Head(commit, ref, why)
        commit: the 40 or 64 hex digits HEAD resolves to, or None;
        ref: the branch HEAD names (refs/heads/main), None when detached;
        why: why there is no commit (NO_GIT: the tree has no .git at all).

    with GitDir.of(tree) as g: g.head(), g.resolve(name), g.read(rel)
        the reader underneath, for what else a review reads of .git.

A .git folder is hostile input like the tree around it:
- every component of every path is opened without following a symbolic
  link; '..' (a .git file's or a commondir's path) is the folder's real
  parent. Git writes no link inside .git, and one that stays inside the tree
  today can point out of it by the time it is read: none is followed;
- no folder on a pseudo filesystem (proc, sysfs, devtmpfs, ...: the mount
  table says which, and /proc, /sys and /dev themselves): a read there acts
  (/proc/kmsg drains the kernel's log) or blocks;
- only regular files, checked before they are opened (a FIFO or a device is
  never opened), opened without blocking and read to a cap whatever st_size
  says (safe_read: /proc's files say 0);
- a .git file (a linked worktree's, `gitdir: PATH`) is followed as git
  follows it, PATH and its commondir walked by the same rules; ref names as
  git allows them, a symbolic ref followed at most SYMREF_DEPTH deep; a loose
  ref first, then packed-refs.
"""

import errno
import os
import re
import stat
from typing import NamedTuple

from vdsobench_cli.cli import safe_read

from vdsobench_cli.core.text import printable

NO_GIT = "no .git in it"
SMALL = 4096  # HEAD, a loose ref, a .git file, commondir: one line each
PACKED_LIMIT = 32 << 20  # packed-refs: linux.git with every tag is under 1 MB
MOUNTS_LIMIT = 4 << 20
SYMREF_DEPTH = 5
MAX_COMPONENTS = 64
OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
SYMREF = re.compile(r"ref: *(\S+)")
# git check-ref-format's rules, a component at a time
REF_PART = re.compile(r"[^\x00-\x20\x7f~^:?*\[\\/]+")
# a worktree's own refs live in its git dir, every other in the common dir
PER_WORKTREE = ("refs/bisect/", "refs/worktree/", "refs/rewritten/")
PSEUDO = {"proc", "sysfs", "devtmpfs", "devpts", "debugfs", "tracefs", "securityfs",
          "cgroup", "cgroup2", "bpf", "configfs", "efivarfs", "pstore", "fusectl",
          "binfmt_misc", "mqueue", "hugetlbfs", "rpc_pipefs", "autofs", "nsfs"}
PSEUDO_ROOTS = ("/proc", "/sys", "/dev")
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Head(NamedTuple):
    commit: str = None
    ref: str = None
    why: str = None


class Unreadable(Exception):
    """Why .git could not be read (one line)."""


def pseudo_filesystems():
    """{st_dev: type} of the pseudo filesystems mounted here (the mount table's,
    then /proc, /sys and /dev themselves)."""
    devs = {}
    try:
        table = safe_read.read_regular("/proc/self/mountinfo", "mount table", MOUNTS_LIMIT)
    except safe_read.UsageError:
        table = b""
    for line in table.decode(errors="replace").splitlines():
        fields, _, tail = line.partition(" - ")
        fields, tail = fields.split(), tail.split()
        if len(fields) > 2 and tail and tail[0] in PSEUDO and fields[2].count(":") == 1:
            major, minor = fields[2].split(":")
            if major.isdigit() and minor.isdigit():
                devs[os.makedev(int(major), int(minor))] = tail[0]
    for root in PSEUDO_ROOTS:
        try:
            devs.setdefault(os.stat(root).st_dev, root[1:])
        except OSError:
            pass
    return devs


def ref_name(name):
    """name, when git would take it for a ref under refs/ (or HEAD)."""
    parts = name.split("/")
    good = name == "HEAD" or (
        parts[0] == "refs" and len(parts) > 1 and len(parts) <= MAX_COMPONENTS
        and "@{" not in name and all(REF_PART.fullmatch(p) and not p.startswith(".")
                                     and not p.endswith(".lock") and ".." not in p
                                     for p in parts))
    if not good:
        raise Unreadable(f"{shown(name)}: not a ref name git allows")
    return name


def shown(text):
    """A path or name from .git as a message may print it."""
    return printable(text, 160)


class GitDir:
    """A work tree's git dir and common dir, open: GitDir.of(tree), Unreadable
    when there is none that can be read; a context manager (it closes them)."""

    def __init__(self):
        self.fds, self.devs = [], pseudo_filesystems()
        self.git = self.common = None
        self.git_name = self.common_name = ""

    @classmethod
    def of(cls, tree):
        g = cls()
        try:
            g.find(tree)
        except BaseException:
            g.close()
            raise
        return g

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        while self.fds:
            os.close(self.fds.pop())

    def keep(self, fd):
        self.fds.append(fd)
        return fd

    def find(self, tree):
        try:
            self.locate(tree)
        except FileNotFoundError as e:
            raise Unreadable(f"{shown(e.filename)}: no such folder") from None

    def locate(self, tree):
        try:
            top = self.keep(os.open(tree, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
        except OSError as e:
            raise Unreadable(f"{shown(str(tree))}: {e.strerror}") from None
        self.check_fs(top, str(tree))
        try:
            st = os.stat(".git", dir_fd=top, follow_symlinks=False)
        except FileNotFoundError:
            raise Unreadable(NO_GIT) from None
        if stat.S_ISDIR(st.st_mode):
            self.git, self.git_name = self.keep(self.walk(top, ".git", "")), ".git/"
        elif stat.S_ISREG(st.st_mode):
            path = self.line(top, ".git", "", r"gitdir: *(.+)")
            self.git = self.keep(self.walk(top, path, ".git: gitdir "))
            self.git_name = f"{path.rstrip('/')}/"
        else:
            raise Unreadable(f".git: is {safe_read.kind(st.st_mode)}, not a folder or "
                             "a gitdir file")
        common = self.line(self.git, "commondir", self.git_name, r"(.+)", missing=True)
        if common is None:
            self.common, self.common_name = self.git, self.git_name
        else:
            self.common = self.keep(self.walk(self.git, common, f"{self.git_name}commondir "))
            self.common_name = f"{self.git_name}{common.rstrip('/')}/"

    def check_fs(self, fd, where):
        kind = self.devs.get(os.fstat(fd).st_dev)
        if kind:
            raise Unreadable(f"{shown(where)}: on {kind}, a pseudo filesystem")

    def walk(self, start, path, where):
        """An fd of the folder path names (absolute: from /, else from start),
        each component no link, '..' the real parent, none on a pseudo
        filesystem. The caller closes it."""
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if "\0" in path:
            raise Unreadable(f"{shown(where + path)}: a NUL in the path")
        if len(parts) > MAX_COMPONENTS:
            raise Unreadable(f"{shown(where + path)}: too deep")
        done = "/" if path.startswith("/") else ""
        fd = os.open("/", DIR_FLAGS) if done else os.dup(start)
        try:
            self.check_fs(fd, where + (done or "."))
            for part in parts:
                done += part
                try:
                    nxt = open_dir(fd, part, where + done)
                except FileNotFoundError:
                    raise FileNotFoundError(errno.ENOENT, "no such folder", where + done) \
                        from None
                os.close(fd)
                fd = nxt
                self.check_fs(fd, where + done)
                done += "/"
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read(self, rel, limit=SMALL, common=False):
        """The bytes of the regular file rel below the git dir (the common dir
        with common), or None when there is none."""
        base, name = (self.common, self.common_name) if common else (self.git, self.git_name)
        folder, _, leaf = rel.rpartition("/")
        try:
            fd = self.walk(base, folder, name) if folder else os.dup(base)
        except FileNotFoundError:
            return None
        try:
            return safe_read.read_regular(leaf, "git file", limit, root=fd, missing=False,
                                          prefix=shown(name + (folder and folder + "/")))
        except safe_read.UsageError as e:
            raise Unreadable(str(e)) from None
        finally:
            os.close(fd)

    def line(self, fd, rel, where, pattern, missing=False):
        """Group 1 of pattern matched against the one line of a small file below
        fd; None for a missing file with missing."""
        try:
            data = safe_read.read_regular(rel, "git file", SMALL, root=fd, prefix=shown(where),
                                          missing=False if missing else None)
        except safe_read.UsageError as e:
            raise Unreadable(str(e)) from None
        if data is None:
            return None
        m = re.fullmatch(pattern, data.decode(errors="replace").strip())
        if not m:
            raise Unreadable(f"{shown(where + rel)}: not what git writes there")
        return m.group(1)

    def resolve(self, name, depth=0):
        """(commit, the last ref name) of a ref: loose, symbolic, then packed."""
        ref_name(name)
        per = name == "HEAD" or name.startswith(PER_WORKTREE)
        data = self.read(name, common=not per)
        if data is None:
            commit = None if per else self.packed(name)
            if commit is None:
                raise Unreadable(f"{shown(name)}: no commit yet (no such ref)")
            return commit, name
        value = data.decode(errors="replace").strip()
        if OID.fullmatch(value):
            return value, name
        m = SYMREF.fullmatch(value)
        if m and m.group(1) == "refs/heads/.invalid":
            raise Unreadable("its refs are in a reftable, which this reader does not read")
        if not m:
            raise Unreadable(f"{shown(name)}: neither a commit id nor a ref it names")
        if depth >= SYMREF_DEPTH:
            raise Unreadable(f"{shown(name)}: symbolic refs nested too deep")
        return self.resolve(m.group(1), depth + 1)

    def packed(self, name):
        """The commit packed-refs gives name, or None."""
        for line in (self.read("packed-refs", PACKED_LIMIT, common=True) or b"").splitlines():
            oid, _, ref = line.decode(errors="replace").partition(" ")
            if ref == name and OID.fullmatch(oid):
                return oid
        return None

    def head(self):
        commit, ref = self.resolve("HEAD")
        return Head(commit, None if ref == "HEAD" else ref)


def open_dir(fd, part, where):
    """An fd of the folder part below fd, never through a link;
    FileNotFoundError for none."""
    try:
        return os.open(part, DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        raise
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            raise Unreadable(f"{shown(where)}: is {safe_read.kind(st.st_mode)}, "
                             "not a folder") from None
        raise Unreadable(f"{shown(where)}: {e.strerror}") from None


def head(tree):
    """Head(commit, ref, why) of the work tree at tree (see the module's doc)."""
    try:
        with GitDir.of(tree) as g:
            return g.head()
    except Unreadable as e:
        return Head(why=str(e))
