"""Imports a command keeps under fixed names for the whole of its run
(patch-review's before and after): one such run at a time per imports
folder, the next waiting and saying whom for.

    with hold(d, names, who, say):   the names are this run's until the end
    holder(d, name)                  "patch-review (pid 4242, since 12:01:02)"
                                     while a run holds name, else None

The lock is flock on d/.reserved.lock: it belongs to the open file and goes
with the process however it ends (a SIGKILL too), so a killed run never
blocks the next. The file also says who holds it and which names (JSON,
written once the lock is taken), for the line of a run that waits and for
`import` and `import --remove`, which refuse a name a run holds: replacing
or removing it would pull the imports from under that run's builds.
txn.reserved() adds what the table needs: what a killed run left
under the names is removed when the next begins, and nothing is left under
them at its end.
"""

import contextlib
import fcntl
import json
import os
import stat
import time

LOCK = ".reserved.lock"
INFO_LIMIT = 4096


def open_lock(d, create):
    """An fd of the lock file (made with create), a regular file opened without
    following a link; OSError otherwise (FileNotFoundError: none yet)."""
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_CREAT if create else 0)
    fd = os.open(os.path.join(d, LOCK), flags, 0o644)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError("it is no regular file")
    return fd


def read_info(fd):
    """{"who", "pid", "since", "names"} from the lock file, or None."""
    try:
        info = json.loads(os.pread(fd, INFO_LIMIT, 0).decode())
    except (OSError, ValueError):
        return None
    ok = (isinstance(info, dict) and isinstance(info.get("who"), str)
          and isinstance(info.get("pid"), int) and isinstance(info.get("since"), (int, float))
          and isinstance(info.get("names"), list)
          and all(isinstance(n, str) for n in info["names"]))
    return info if ok else None


def describe(info):
    if info is None:
        return "another run"
    since = time.strftime("%H:%M:%S", time.localtime(info["since"]))
    return f"{info['who'][:40]} (pid {info['pid']}, since {since})"


@contextlib.contextmanager
def hold(d, names, who, say):
    """The names are this run's for the block; a run that holds them already
    makes this one wait, after one line through say(text)."""
    fd = open_lock(d, create=True)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for {describe(read_info(fd))} to finish: one run at a time "
                f"uses {', '.join(names)} in {d}")
            fcntl.flock(fd, fcntl.LOCK_EX)
        data = json.dumps({"who": who, "pid": os.getpid(), "since": time.time(),
                           "names": list(names)}).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        yield
    finally:
        os.close(fd)  # releases it


def holder(d, name):
    """Who holds name now (describe()'s words), or None: no run holds it."""
    try:
        fd = open_lock(d, create=False)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return None
        except BlockingIOError:
            pass
        info = read_info(fd)
        return describe(info) if info is not None and name in info["names"] else None
    finally:
        os.close(fd)
