"""Tree code never runs as root.

Every program of the build links the variant table, imported trees included
(the verify driver, the harness, the sim driver, agree, the listing import
runs), and a tree's kbuild runs its Makefiles and host programs: each is
started through confine_exec.py, as a user of its own, in namespaces of its
own, with only its output folders writable (docs/confinement.md).

    command(argv, write=(), read=())  the command line that runs argv confined;
                                      every absolute path in argv that exists is
                                      readable too (a file: its folder); an i386
                                      program gets i386's system calls (abi_of)
    allow(cmd, write=())              a confined command line (build.program's),
                                      with more folders it may write
    scratch(prefix)                   a temporary folder a confined program may
                                      write, removed after the block
    reading(path)                     path, or a copy of it, as a confined program
                                      may read it (a file of a private folder)
    sandbox_ids()                     (uid, gid) confined programs run as
    record()                          how they run here (probed once), for results

What a confined program wrote is hostile input: read it with safe_read
(a regular file, no link followed, a cap), never by a plain open().

The user: $VDSOBENCH_SANDBOX_UID, else the first uid of systemd's range for
dynamic users (61184-65519) with no passwd or group entry; its gid the same
number (confine_exec.default_ids). Nothing is made on the system for it.
"""

import contextlib
import functools
import json
import os
import shutil
import stat
import sys
from pathlib import Path

from vdsobench_cli.cli import confine_exec, lifecycle, safe_read
from vdsobench_cli.cli.errors import UsageError

EXEC = Path(__file__).resolve().with_name("confine_exec.py")
# the trampoline's own status when it could not start the program confined
REFUSED = 126


@functools.lru_cache(maxsize=1)
def sandbox_ids():
    """(uid, gid) of confined programs (confine_exec.default_ids): the caller's
    own when it is not root."""
    try:
        return confine_exec.default_ids()
    except confine_exec.Refused as e:
        raise UsageError(str(e)) from None


def readable(argv):
    """The folders argv's absolute paths need: a file's folder, a folder itself."""
    out = []
    for a in argv:
        if a.startswith("/") and os.path.exists(a):
            out.append(a if os.path.isdir(a) else os.path.dirname(os.path.realpath(a)))
    return out


def python():
    """This interpreter, by a path that can be run: Python leaves sys.executable
    empty when it cannot tell (started as python3 with no $PATH, as a bundle
    under env -i is)."""
    if sys.executable and os.path.isabs(sys.executable):
        return sys.executable
    return shutil.which("python3", path=os.defpath) or "/usr/bin/python3"


def trampoline(write, read):
    uid, gid = sandbox_ids()
    cmd = [python(), "-I", "-S", str(EXEC), "--uid", str(uid), "--gid", str(gid)]
    for w in write:
        cmd += ["--write", str(w)]
    for r in dict.fromkeys(map(str, read)):
        cmd += ["--read", r]
    return cmd


def abi_of(program, machine=None):
    """["--abi", "i386"] where program (found as execvp finds it) is an i386 ELF
    file on x86-64, whose system calls the trampoline's filter must then take
    in i386's numbers too (confine_exec.COMPAT); else []."""
    machine = machine or os.uname().machine
    path = program if "/" in program else shutil.which(program)
    try:
        f = safe_read.open_regular(path or "", "program", missing=False)
        head = f.read(20) if f else b""
        if f:
            f.close()
    except (UsageError, OSError):
        return []
    if len(head) == 20 and head[:4] == b"\x7fELF" and head[18:20] == b"\x03\x00" and \
            "i386" in confine_exec.COMPAT.get(machine, ()):
        return ["--abi", "i386"]  # EM_386
    return []


def command(argv, write=(), read=()):
    """The command line that runs argv confined (see the top)."""
    argv = [str(a) for a in argv]
    return trampoline(write, [*read, *readable(argv)]) + abi_of(argv[0]) + ["--", *argv]


def allow(cmd, write=()):
    """cmd, a command line from command() with arguments added after it, that
    may also write the folders in write."""
    if cmd[3:4] != [str(EXEC)] or "--" not in cmd:
        raise ValueError("confine.allow: not a confined command line")
    at = cmd.index("--")
    extra = [x for w in write for x in ("--write", str(w))]
    return cmd[:at] + extra + cmd[at:]


def own(path):
    """Give a folder of ours to the sandbox user (as root; else it is ours
    already); a link put in its place is not followed."""
    if os.geteuid() == 0:
        uid, gid = sandbox_ids()
        os.chown(path, uid, gid, follow_symlinks=False)


@contextlib.contextmanager
def scratch(prefix="vdsobench-confined-", dir=None):
    """A new folder the confined programs may write (pass it as write=),
    removed with what they left in it when the block ends. It is the one
    folder of a private one of ours (confine_exec covers that with an empty
    one that shows it): a confined program may open its own folder to
    everyone and leave a program there setuid to the sandbox user, which no
    one else can then reach to run."""
    with lifecycle.temp_dir(prefix=prefix, dir=dir) as private:
        path = os.path.join(private, "w")
        os.mkdir(path, 0o700)
        own(path)
        yield path


def may_read(path):
    """Whether the sandbox user may read the file path where it is (the
    trampoline shows its folder, but not past the folder's own mode)."""
    uid, gid = sandbox_ids()
    try:
        folder, st = os.stat(os.path.dirname(os.path.abspath(path))), os.stat(path)
    except OSError:
        return False
    return (confine_exec.passable(folder, uid, gid)
            and bool(st.st_mode & (stat.S_IRUSR if st.st_uid == uid else
                                   stat.S_IRGRP if st.st_gid == gid else stat.S_IROTH)))


@contextlib.contextmanager
def reading(path):
    """path itself where a confined program may read it, else a copy of it in
    a scratch folder (a cached object in a folder private to root)."""
    if may_read(path) or not os.path.isfile(path):  # none: the reader says so itself
        yield str(path)
        return
    with scratch(prefix="vdsobench-read-") as d:
        copy = os.path.join(d, os.path.basename(path))
        shutil.copyfile(path, copy)
        os.chmod(copy, 0o644)
        yield copy


@functools.lru_cache(maxsize=1)
def record():
    """{"user", "namespaces", "view", "no_new_privs", "why"}: how confined programs
    run on this machine, from one probe run of the trampoline."""
    uid, _ = sandbox_ids()
    with scratch() as w:
        try:
            r = lifecycle.run(trampoline([w], []) + ["--probe"], capture_output=True,
                              text=True, errors="replace")
        except OSError as e:
            return {"user": uid, "confined": False, "why": e.strerror}
    try:
        got = json.loads(r.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"user": uid, "confined": False,
                "why": (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]}
    return {"user": got.get("uid", uid), "confined": got.get("uid") != 0,
            "namespaces": bool(got.get("namespaces")), "view": bool(got.get("view")),
            "no_new_privs": bool(got.get("no_new_privs")), "why": got.get("why")}


def refused(r):
    """The trampoline's one line when it refused to start the program, else None."""
    if r.returncode != REFUSED:
        return None
    lines = [x for x in (r.stderr or "").splitlines() if x.startswith("vdsobench-confine: ")]
    return lines[-1] if lines else None
