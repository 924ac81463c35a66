"""--cpu-lock: one measurement per CPU at a time.

The harness takes an advisory lock per pinned CPU (bench/cpu_lock.h: a flock
on /run/lock/vdsobench/cpuN.lock, or a private directory; $VDSOBENCH_LOCK_DIR
chooses one) for its whole run, the writer's CPU included. A second run
pinned to a held CPU waits for it and says so once, or with --cpu-lock=fail
refuses in one line (exit 1). This gives run and compare the option and
turns what the harness recorded ("cpu_lock" in its context) into warnings:

  cpu_lock_waited       it waited for another vdsobench run pinned there
  cpu_lock_unavailable  no lock could be taken: another run may have shared
                        the CPU unseen
"""

import os
import re
import stat
import tempfile

from vdsobench_cli.cli.errors import UsageError

POLICIES = ("wait", "fail", "off")
HELP = ("another vdsobench pinned to one of these CPUs: wait for it (default; said "
        "once, and recorded in the warnings), fail (exit 1), or off")


def add_argument(parser):
    parser.add_argument("--cpu-lock", choices=POLICIES, metavar="wait|fail|off", help=HELP)


def warnings(harness):
    """[{"id", "message", ...}] from the harness's context (its "cpu_lock")."""
    lock = (harness or {}).get("cpu_lock") or {}
    out = [{"id": "cpu_lock_waited",
            "message": f"waited {w['seconds']:.1f} s for CPU {w['cpu']}, held by "
                       f"{w['holder']}: another vdsobench measurement was pinned there",
            "cpu": w["cpu"], "seconds": w["seconds"], "holder": w["holder"]}
           for w in lock.get("waited") or []]
    if lock.get("error"):
        out.append({"id": "cpu_lock_unavailable",
                    "message": f"{lock['error']}: measured without the CPU lock, so another "
                               "vdsobench run may have shared the CPU unseen"})
    return out



SHARED_DIR = "/run/lock/vdsobench"


def shared_dir():
    """Whether /run/lock/vdsobench is a folder, made as the harness makes it."""
    try:
        os.mkdir(SHARED_DIR, 0o1777)
        os.chmod(SHARED_DIR, 0o1777)  # mkdir's mode went through the umask
    except FileExistsError:
        pass
    except OSError:
        return False
    return stat.S_ISDIR(os.lstat(SHARED_DIR).st_mode)


def confined_dir():
    """(folder, environment) of a confined harness's locks (cli/confine.py): the
    folder it must be able to write (None: none could be made; the harness
    says so) and the environment naming it (None: the harness finds it
    itself). A private $VDSOBENCH_LOCK_DIR of the caller's (empty, or of locks
    alone; else refused) is given to the sandbox user, whose harness runs (all
    of them) lock there; where no shared folder can be made, the sandbox user
    gets a private one in $TMPDIR."""
    from vdsobench_cli.cli import confine
    own = os.environ.get("VDSOBENCH_LOCK_DIR")
    if not own and shared_dir():
        return SHARED_DIR, None
    uid, _ = confine.sandbox_ids()
    d = own or os.path.join(tempfile.gettempdir(), f"vdsobench-locks-confined-{uid}")
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None, None
    st = os.lstat(d)
    if not own and not (stat.S_ISDIR(st.st_mode) and st.st_uid in (os.geteuid(), uid)):
        # a link or another user's folder at this name anyone may take in
        # $TMPDIR: the harness would write where they chose; no lock instead
        return None, None
    if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() != uid:
        refuse_other_files(d)
        confine.own(d)  # the caller's private folder: the sandbox user's now
    return d, (dict(os.environ, VDSOBENCH_LOCK_DIR=d) if not own else None)


LOCK_FILE = re.compile(r"cpu[0-9]+\.lock")


def refuse_other_files(d):
    """The caller's folder the sandbox user is about to be given must hold
    CPU locks alone: a home, /tmp or /etc named by mistake would become the
    trees' code's to write."""
    if not all(LOCK_FILE.fullmatch(name) for name in os.listdir(d)):
        raise UsageError(f"$VDSOBENCH_LOCK_DIR: {d} holds other files than CPU locks, and "
                         "the confined harness would be given it (valid: an empty folder, "
                         "or one of locks alone)")


def confined(cmd, write=()):
    """(cmd, env) to run the harness's confined command line cmd
    (build.program's) with its CPU locks: it may write their folder (and
    write), and env names the folder where the harness would not find it."""
    from vdsobench_cli.cli import confine
    locks, env = confined_dir()
    return confine.allow(cmd, write=[*write, *filter(None, [locks])]), env
