"""run --clocksource: the system's vDSO timed under each clocksource the
machine lists, by switching clocksource0's current_clocksource.

That file is one setting for the whole machine, root's alone to write: the
switch is opt-in, made with every online CPU's lock held (bench/cpu_lock.h's
files: no other vdsobench measurement runs under a clocksource it did not
choose, and the harness is told not to lock again), and the original is
written back on every way out: the end, an error, SIGINT, SIGTERM or SIGHUP
(lifecycle raises those as Interrupted in the main thread, and Switch's exit
runs in its unwinding). SIGKILL cannot be caught: the results of each
clocksource name the original, and `run` prints the line that puts it back
before it switches.

    directory()                 the clocksource0 folder ($VDSOBENCH_CLOCKSOURCE_DIR
                                names another, of the same two files: the tests')
    available(d), current(d)    what it lists and uses now
    chosen(value, d)            "all" or a comma list -> [names], or UsageError
                                naming the valid ones; not root, no such file:
                                UsageError, one line each
    Switch(d, cpus)             the locks and the original; .to(name) switches
                                and reads back; leaving puts the original back
    served(rows)                per clock, whether sys/vdso stayed in userspace
                                under a clocksource, from its measured cost
                                against sys/syscall's
"""

import fcntl
import os
import re
import stat

from vdsobench_cli.cli import safe_read
from vdsobench_cli.cli.errors import Failure, UsageError

SYSFS = "/sys/devices/system/clocksource/clocksource0"
DIR_ENV = "VDSOBENCH_CLOCKSOURCE_DIR"
CURRENT = "current_clocksource"
AVAILABLE = "available_clocksource"
# what --clocksource measures unless --variants says otherwise: the system's
# vDSO, and the syscall it falls back to, which says whether it did
SUBJECTS = "sys/vdso,sys/syscall"
# sys/vdso at this fraction of sys/syscall's cost or more is the syscall's
# cost: a read served in userspace costs a tenth of it or less (22-27 ns
# against 250 ns and up on the KVM guests measured, 2026-11/12)
FALLBACK_RATIO = 0.6
WHO = b"vdsobench run --clocksource"
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")


def subjects(arch_name):
    """--clocksource's subjects unless --variants says: SUBJECTS, and in an i386
    run sys/vdso_gettime64 (__vdso_clock_gettime64, what a y2038-safe libc
    calls there)."""
    return SUBJECTS + (",sys/vdso_gettime64" if arch_name == "i386" else "")


def directory():
    return os.environ.get(DIR_ENV) or SYSFS


def _read(d, name):
    """The file's text: a regular file (a FIFO in a stand-in folder is
    refused, never waited on), no link followed."""
    path = os.path.join(d, name)
    try:
        data = safe_read.read_regular(path, "clocksource file", 4096, follow=False)
    except UsageError as e:
        raise UsageError(f"--clocksource: {e}") from None
    return data.decode("ascii", "replace").strip()


def available(d):
    return _read(d, AVAILABLE).split()


def current(d):
    return _read(d, CURRENT)


def chosen(value, d):
    """The clocksources --clocksource names, each once, in its order."""
    if os.geteuid() != 0:
        raise UsageError("--clocksource: switching the clocksource needs root (it is one "
                         "setting for the whole machine)")
    listed = available(d)
    current(d)  # the file to write must be there too
    odd = [n for n in listed if not NAME.fullmatch(n)]
    if odd:  # it names the results files: no path, no option
        raise UsageError(f"--clocksource: {os.path.join(d, AVAILABLE)} lists {odd[0]!r}, "
                         "which is not a clocksource's name (letters, digits, _ and -)")
    names = listed if value == "all" else list(dict.fromkeys(
        n.strip() for n in value.split(",") if n.strip()))
    unknown = [n for n in names if n not in listed]
    if unknown or not names:
        raise UsageError(f"--clocksource: {unknown[0] if unknown else value!r} is not a "
                         f"clocksource this machine lists (valid: all, "
                         f"{', '.join(listed) or 'none listed'})")
    return names


def out_path(path, name):
    """run's results path for one clocksource: r.json -> r-<name>.json."""
    stem, dot, ext = path.rpartition(".")
    if dot and ext == "json" and "/" not in ext:
        return f"{stem}-{name}.json"
    return f"{path}-{name}"


def write_current(d, name):
    """Write name to current_clocksource (an existing file, no link followed,
    never made) and return what it reads afterwards."""
    path = os.path.join(d, CURRENT)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        raise Failure(f"--clocksource: cannot open {path}: {e.strerror}") from None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.ftruncate(fd, 0)  # a stand-in folder's plain file (sysfs ignores it)
        os.write(fd, name.encode() + b"\n")
    except OSError as e:
        raise Failure(f"--clocksource: the kernel refused {name}: {e.strerror}") from None
    finally:
        os.close(fd)
    return current(d)


def lock_dir():
    """The folder the harness's CPU locks are in (measure/cpu_lock.py's)."""
    from vdsobench_cli.measure import cpu_lock
    return cpu_lock.confined_dir()[0]


def open_lock_file(path):
    """A CPU's lock file opened as bench/cpu_lock.c opens it: no link followed,
    no O_CREAT on an existing one (a sticky shared folder refuses it on
    another user's file), read-only where it must be (flock accepts it)."""
    flags = os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        try:
            return os.open(path, os.O_RDWR | flags)
        except PermissionError:
            return os.open(path, os.O_RDONLY | flags)
        except FileNotFoundError:
            pass
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | flags, 0o666)
        except FileExistsError:
            continue  # made by another process meanwhile: open that one
        os.fchmod(fd, 0o666)  # others must be able to say they hold it
        return fd
    raise Failure(f"--clocksource: cannot open the CPU lock {path}")


class Switch:
    """with Switch(d, cpus, locks) as s: s.to(name) ... : every CPU of cpus
    locked in the folder locks for the block (None: no lock taken; a holder
    waited for, said once on say, or refused with fail), the clocksource in
    use at the start written back at its end, however it ends."""

    def __init__(self, d, cpus, locks, fail=False, say=None):
        self.d, self.cpus, self.locks, self.fail, self.say = d, cpus, locks, fail, say
        self.original = None
        self.held = []
        self.restored = None

    def __enter__(self):
        try:
            for cpu in self.cpus if self.locks else ():
                self.held.append(self._lock(cpu))
            self.original = current(self.d)
        except BaseException:
            self._release()
            raise
        return self

    def _lock(self, cpu):
        fd = open_lock_file(os.path.join(self.locks, f"cpu{cpu}.lock"))
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 160, 0).decode("ascii", "replace").strip()
                if self.fail:
                    raise Failure(f"CPU {cpu} is in use: held by {holder or 'another'}, "
                                  "another measurement pinned there (--cpu-lock=wait "
                                  "waits for it)") from None
                if self.say:
                    self.say(f"run: waiting for CPU {cpu}, held by {holder}")
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, b"%d %s\n" % (os.getpid(), WHO), 0)
            except OSError:
                pass  # read-only: waiters see the last holder that could say
        except BaseException:
            os.close(fd)
            raise
        return fd

    def to(self, name):
        now = write_current(self.d, name)
        if now != name:
            raise Failure(f"--clocksource: asked for {name}, the kernel uses {now}")
        return now

    def __exit__(self, *exc):
        try:
            if self.original is not None:
                self._put_back(exc[0] is None)
        finally:
            self._release()
        return False

    def _put_back(self, raise_failure):
        try:
            self.restored = write_current(self.d, self.original) == self.original
            why = "the kernel reads another"
        except Failure as e:
            self.restored, why = False, str(e)
        if self.restored:
            if self.say:
                self.say(f"run: clocksource {self.original} put back")
            return
        line = (f"--clocksource: {self.original} could not be put back ({why}; as root: "
                f"echo {self.original} > {os.path.join(self.d, CURRENT)})")
        if raise_failure:
            raise Failure(line)
        if self.say:
            self.say(f"run: {line}")

    def _release(self):
        for fd in self.held:
            os.close(fd)
        self.held = []


def served(rows, clocksource):
    """Lines saying, per clock and mode measured for both, whether sys/vdso
    stayed in userspace under clocksource: its median ns/call against
    sys/syscall's (run_table rows)."""
    by = {}
    for row in rows:
        key = row.get("key")
        if key and row.get("ns") and key[0] in ("sys/vdso", "sys/syscall"):
            by.setdefault(key[1:3], {})[key[0]] = row["ns"]
    out = []
    for (clock, mode), ns in sorted(by.items()):
        if len(ns) < 2:
            continue
        vdso, sys = ns["sys/vdso"], ns["sys/syscall"]
        if vdso >= FALLBACK_RATIO * sys:
            verdict = "the vDSO falls back to the syscall (it costs what the syscall does)"
        else:
            verdict = "served in userspace"
        out.append(f"{clocksource}: {clock} {mode}: sys/vdso {vdso:.1f} ns, sys/syscall "
                   f"{sys:.1f} ns: {verdict}")
    return out
