"""Why Bazel cannot run here, in one line that says what to do, where its own
answer is a FATAL line about a path (build.bazel() asks these before it runs
Bazel, as it checks its caches: build.check_caches()).

- /proc not mounted (a container or a chroot without it): the Bazel client
  finds its server through /proc/<pid>, so it restarts it and dies.
- Bazel's output root not writable by this user: Bazel keeps every build in
  $HOME/.cache/bazel/_bazel_<user> (HOME unset: the passwd home), so a user
  with another user's HOME (`setpriv`, `su` without -l, sudo -E) or a
  read-only one gets "mkdir(...): Permission denied".
"""

import os
import pwd
from pathlib import Path

PROC = "/proc/self/stat"


def proc_problem():
    """The line for a machine without /proc, or None."""
    if os.path.exists(PROC):
        return None
    return ("/proc is not mounted (no /proc/self): Bazel and the benchmarks read it; "
            "mount it (as root: mount -t proc proc /proc) and run again")


def user_name():
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return os.environ.get("USER") or str(os.getuid())


def home():
    """The home Bazel uses: $HOME, else the passwd entry's."""
    given = os.environ.get("HOME")
    if given:
        return Path(given)
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        return Path("/")


def output_root():
    """Where Bazel keeps this user's builds by default."""
    return home() / ".cache" / "bazel" / f"_bazel_{user_name()}"


def first_existing(path):
    while not os.path.lexists(path) and path != path.parent:
        path = path.parent
    return path


def output_root_problem():
    """The line for an output root this user cannot make or write, or None."""
    root = output_root()
    there = first_existing(root)
    if os.access(there, os.W_OK | os.X_OK):
        return None
    uid = os.getuid()
    owner = ""
    try:
        if home().stat().st_uid != uid:
            owner = f" (HOME={home()} is another user's)"
    except OSError:
        owner = f" (HOME={home()} cannot be read)"
    return (f"Bazel keeps its builds in {root}, and {user_name()} (uid {uid}) cannot write "
            f"{there}{owner}: run as the user whose home that is, or set HOME to a folder "
            "this user owns")
