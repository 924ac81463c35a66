"""Run one program confined: the trampoline that starts every program that
links or loads a tree's code, and every run of a tree's build system
(cli/confine.py makes its command line; docs/confinement.md says why).

    python3 -I -S confine_exec.py [--uid U --gid G] [--write DIR]... [--own DIR]...
                                  [--read PATH]... [--abi i386] -- PROGRAM ARG...
    python3 -I -S confine_exec.py [--uid U --gid G] --probe

As root: new mount, network, IPC, UTS and PID namespaces. In the new mount
namespace every mount is read-only and nosuid but the --write folders (each
a writable bind mount of its own); a folder user U could not pass through
(/root, a private temporary folder) is covered by an empty one that holds
only the --read and --write paths below it; /proc is the new PID namespace's
own. The folder it was started in stays readable (and PROGRAM starts there);
$TMPDIR and $HOME are the first --write folder. Then no supplementary
groups, uid and gid U and G (no capability survives the change), no new
privileges, a system-call filter (FILTERED: no socket but the namespace's
own, no io_uring, no keyring, no typing into a terminal), a session of its
own (no controlling terminal), at most NPROC tasks of U's (all its programs
together), no file larger than FSIZE, and first to be killed when memory
runs out, and PROGRAM runs as the namespace's second process under a first
that forwards signals and reaps: when PROGRAM ends, the kernel kills
whatever it left behind, and nothing of it outlives this command. Where the
caller's stdout or stderr is a regular file, PROGRAM writes into a pipe the
trampoline copies there (a file's fd could seek and rewrite it).

Not root: the same in a user namespace of the user's own, where the kernel
allows one; else no new privileges alone.

The user (default_ids): --uid/--gid, else $VDSOBENCH_SANDBOX_UID, else the
first uid of systemd's range for dynamic users (61184-65519), either with no
passwd or group entry; its gid the same number. Nothing is made on the system for
it. --own DIR: a folder given to that user first (a test's $TEMP), then
written like --write's.

Standard library only (ctypes for the system calls Python 3.11 lacks): it
runs in isolated mode, before anything of the project is importable. Exit
126 with one line "vdsobench-confine: WHY" when a step that must succeed
fails (PROGRAM never runs as root); else PROGRAM's status, or its signal.
--probe sets everything up, then prints as JSON what it got (the record
results carry) instead of running a program.
"""

import ctypes
import grp
import json
import os
import pwd
import resource
import select
import signal
import stat
import sys

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x4000000, 0x8000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 0x4000, 0x40000
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID = 1, 2
AT_FDCWD, AT_RECURSIVE, AT_EMPTY_PATH = -100, 0x8000, 0x1000
OPEN_TREE_CLONE, MOVE_MOUNT_F_EMPTY_PATH = 1, 4
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442  # x86-64 and arm64 alike
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 1, 38, 22
# What of the caller's environment a confined program gets (passed_on): the
# locale, the search path, a bundle's library path, the project's own
# settings, kbuild's reproducibility stamps, the git settings import sets for
# its confined git, Bazel's test protocol, the sanitizers' and qemu's options.
KEPT = frozenset(("PATH", "LANG", "LANGUAGE", "TERM", "TZ", "SOURCE_DATE_EPOCH",
                  "LD_LIBRARY_PATH", "XDG_RUNTIME_DIR", "XML_OUTPUT_FILE",
                  "GIT_CEILING_DIRECTORIES", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL"))
KEPT_PREFIXES = ("LC_", "VDSOBENCH_", "KBUILD_", "TEST_", "RUNFILES_", "TESTBRIDGE_",
                 "GTEST_", "ASAN_", "UBSAN_", "LSAN_", "QEMU_")
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT,
             signal.SIGUSR1, signal.SIGUSR2)
COVER_OPTIONS = b"mode=0755,size=1m,nr_inodes=4096"
UID_ENV = "VDSOBENCH_SANDBOX_UID"
DYNAMIC_UIDS = range(61184, 65520)
# the sandbox user's tasks, every confined program's together: a fork bomb
# stops there (kbuild's make -j16 and a test per CPU need a few hundred)
NPROC = 4096
# the largest file it may write: a kbuild tree's objects are a few MB, a
# results file at most 128 MB
FSIZE = 1 << 30
OOM_FIRST = b"1000"  # /proc/self/oom_score_adj: out of memory, the program goes first

# The system-call filter (seccomp) of a confined program, per architecture:
# (AUDIT_ARCH, socket, io_uring_setup, add_key, request_key, keyctl). The
# network namespace holds only socket families it has of its own: a Unix
# socket (the system's D-Bus, journal, X server) or a vsock reaches
# services outside it. io_uring makes sockets past this filter. The kernel's
# keyrings are the uid's own and outlive the program. i386's: on x86-64, for
# an i386 program alone (--abi i386, which COMPAT allows; cli/confine.py).
FILTERED = {"x86_64": (0xC000003E, 41, 425, 248, 249, 250),
            "aarch64": (0xC00000B7, 198, 425, 217, 218, 219),
            "i386": (0x40000003, 359, 425, 286, 287, 288)}
# ioctl's number, and the requests that type into a terminal or paste its
# selection (TIOCSTI, TIOCLINUX): the caller's terminal is often the program's
# stderr, and what it typed would run after the command, as the caller
IOCTL = {"x86_64": 16, "aarch64": 29, "i386": 54}
# socketcall(2): socket()'s family in memory, out of a filter's reach (refused)
SOCKETCALL = {"i386": (102,)}
# SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO of ENOSYS, EPERM, EAFNOSUPPORT; BPF's
ALLOW, ENOSYS, EPERM, EAFNOSUPPORT = 0x7FFF0000, 0x50026, 0x50001, 0x50061
LD, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06  # LD|W|ABS, JMP|JEQ|K, JMP|JSET|K, RET|K
COMPAT = {"x86_64": ("i386",)}  # the ABIs --abi may add to the machine's own
TERMINAL_TYPING = (0x5412, 0x541C)
SOCKET_FAMILIES = (2, 10, 16)  # AF_INET, AF_INET6, AF_NETLINK: the namespace's own
X32_BIT = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)


class MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


class Refused(Exception):
    """A step that must succeed did not: the program is not run."""


def free_id(n):
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(n)
            return False
        except KeyError:
            pass
    return True


def default_ids():
    """(uid, gid) of the sandbox user (see the top): the caller's own when it is
    not root. Refused for a $VDSOBENCH_SANDBOX_UID that is no uid, or 0."""
    if os.geteuid() != 0:
        return os.getuid(), os.getgid()
    given = os.environ.get(UID_ENV)
    if given:
        if not (given.isascii() and given.isdigit()) or not 0 < int(given) < 1 << 31:
            raise Refused(f"${UID_ENV}: {given!r} is not a uid (valid: 1 to "
                          f"{(1 << 31) - 1}, not 0)")
        if not free_id(int(given)):
            # its gid is the same number: 6 would be the group disk, the raw disks
            raise Refused(f"${UID_ENV}: {int(given)} is a user or group of this system, whose "
                          "rights and files a confined program would share (valid: a uid "
                          "with no passwd or group entry)")
        return int(given), int(given)
    for n in DYNAMIC_UIDS:
        if free_id(n):
            return n, n
    raise Refused(f"no free uid in {DYNAMIC_UIDS.start}-{DYNAMIC_UIDS.stop - 1} for confined "
                  f"programs: set ${UID_ENV}")


def call(result, what):
    if result < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")
    return result


def mount(source, target, fstype, flags, data=None):
    call(libc.mount(source, os.fsencode(target), fstype, ctypes.c_ulong(flags), data),
         f"mount {target}")


def clone_tree(path):
    return call(libc.syscall(SYS_OPEN_TREE, AT_FDCWD, os.fsencode(path),
                             OPEN_TREE_CLONE | os.O_CLOEXEC | AT_RECURSIVE),
                f"open_tree {path}")


def attach(fd, path):
    call(libc.syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, os.fsencode(path),
                      MOVE_MOUNT_F_EMPTY_PATH), f"move_mount {path}")
    os.close(fd)


def set_attr(path, set_=0, clear=0, flags=0):
    a = MountAttr(set_, clear, 0, 0)
    call(libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, os.fsencode(path), flags,
                      ctypes.byref(a), ctypes.sizeof(a)), f"mount_setattr {path}")


def passable(st, uid, gid):
    """Whether uid/gid may search a directory with this stat (no ACLs read)."""
    if st.st_uid == uid:
        return bool(st.st_mode & stat.S_IXUSR)
    if st.st_gid == gid:
        return bool(st.st_mode & stat.S_IXGRP)
    return bool(st.st_mode & stat.S_IXOTH)


def cover_of(path, uid, gid):
    """The first folder on the way to path that uid/gid cannot pass, or None."""
    parts = path.strip("/").split("/")
    for i in range(len(parts)):
        d = "/" + "/".join(parts[:i])
        if not passable(os.stat(d), uid, gid):
            return d
    return None


def inside(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def make_mount_point(path, is_dir):
    os.makedirs(path if is_dir else os.path.dirname(path), mode=0o755, exist_ok=True)
    if not is_dir and not os.path.exists(path):
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))


def view(read, write, uid, gid):
    """The read-only view (see the top); returns the covered folders."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    # a path to read inside one to write is shown with it: a mount of its own
    # there would stay read-only
    read = [r for r in read if not any(inside(r, w) for w in write)]
    needed = sorted(set(read) | set(write), key=len)
    covers = {}
    for p in needed:
        c = cover_of(p, uid, gid)
        if c is not None:
            covers.setdefault(c, []).append(p)
    top = [c for c in covers if not any(inside(c, o) and c != o for o in covers)]
    for c in top:
        paths = sorted({p for o, ps in covers.items() if inside(o, c) for p in ps}, key=len)
        clones = [(p, os.path.isdir(p), clone_tree(p)) for p in paths]
        mount(b"tmpfs", c, b"tmpfs", MS_NOSUID | MS_NODEV, COVER_OPTIONS)
        for p, is_dir, fd in clones:
            make_mount_point(p, is_dir)
            attach(fd, p)
    for w in write:
        if not any(inside(w, c) for c in top):
            attach(clone_tree(w), w)  # its own mount, to be left writable
    mount(b"proc", "/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    set_attr("/", set_=MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, flags=AT_RECURSIVE)
    for w in write:
        set_attr(w, clear=MOUNT_ATTR_RDONLY)
    return top


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def abi_rules(abi):
    """One ABI's rules, from loading the call's number: (code, jt, jf, k) tuples."""
    _, socket_nr, uring, *keys = FILTERED[abi]
    fams, typing = SOCKET_FAMILIES, len(TERMINAL_TYPING)
    x32 = [(JSET, 0, 1, X32_BIT), (RET, 0, 0, ENOSYS)] if abi == "x86_64" else []
    prog = [(LD, 0, 0, 0), *x32]
    for nr in (uring, *keys, *SOCKETCALL.get(abi, ())):
        prog += [(JEQ, 0, 1, nr), (RET, 0, 0, EPERM)]
    prog += [(JEQ, 0, typing + 3, IOCTL[abi]), (LD, 0, 0, 24)]  # args[1]: the request
    prog += [(JEQ, typing - i, 0, req) for i, req in enumerate(TERMINAL_TYPING)]
    prog += [(RET, 0, 0, ALLOW), (RET, 0, 0, EPERM)]
    prog += [(JEQ, 1, 0, socket_nr), (RET, 0, 0, ALLOW), (LD, 0, 0, 16)]  # args[0]: family
    prog += [(JEQ, len(fams) - i, 0, f) for i, f in enumerate(fams)]
    return prog + [(RET, 0, 0, EAFNOSUPPORT), (RET, 0, 0, ALLOW)]


def filter_program(machine, compat=()):
    """(code, jt, jf, k): FILTERED's rules for the machine's ABI and --abi's; others ENOSYS."""
    prog = [(LD, 0, 0, 4)]  # the ABI (seccomp_data.arch)
    for abi in (machine, *compat):
        rules = abi_rules(abi)
        prog += [(JEQ, 0, len(rules), FILTERED[abi][0]), *rules]
    return prog + [(RET, 0, 0, ENOSYS)]  # another ABI: none


def filter_system_calls(compat=()):
    """Install filter_program() for this process and all it starts (after
    no_new_privs); Refused where it cannot be."""
    machine = os.uname().machine
    if machine not in FILTERED:
        raise Refused(f"no system-call filter for {machine}")
    rules = filter_program(machine, compat)
    table = (SockFilter * len(rules))(*[SockFilter(*r) for r in rules])
    prog = SockFprog(len(rules), table)
    call(libc.prctl(PR_SET_SECCOMP, 2, ctypes.byref(prog), 0, 0), "seccomp")


def drop(uid, gid, as_root, compat=()):
    if as_root:
        resource.setrlimit(resource.RLIMIT_NPROC, (NPROC, NPROC))
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    cap = FSIZE if hard == resource.RLIM_INFINITY else min(FSIZE, hard)
    resource.setrlimit(resource.RLIMIT_FSIZE, (cap if soft == resource.RLIM_INFINITY
                                               else min(soft, cap), cap))
    call(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    filter_system_calls(compat)
    if 0 in os.getresuid() or 0 in os.getresgid():
        raise Refused("still root after the change of user")


def oom_first():
    """This process and all it starts are the first the kernel kills when
    memory runs out (no limit on memory itself: ASan reserves terabytes)."""
    try:
        with open("/proc/self/oom_score_adj", "wb") as f:
            f.write(OOM_FIRST)
    except OSError:
        pass


def own_user_namespace(uid, gid):
    """Map the user to itself in a new user namespace (not root)."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def forward_to(pid):
    def handler(signum, frame):
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass
    for s in FORWARDED:
        signal.signal(s, handler)


def wait_for(pid, reap_all=False):
    """The raw wait status of pid (reaping every other child meanwhile, as a
    namespace's first process must)."""
    while True:
        try:
            got, status = os.waitpid(-1 if reap_all else pid, 0)
        except ChildProcessError:
            raise Refused("the program's process vanished") from None
        except InterruptedError:
            continue
        if got == pid:
            return status


def end_like(status):
    """Leave as the program left: its exit status, or killed by its signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the program's crash, not ours
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 126)


def parse(argv):
    opts = {"uid": None, "gid": None, "write": [], "own": [], "read": [], "abi": [], "probe": 0}
    i = 0
    while i < len(argv) and argv[i] != "--":
        key = argv[i].lstrip("-")
        if key == "probe":
            opts["probe"] = True
        elif key in ("uid", "gid", "write", "own", "read", "abi") and i + 1 < len(argv):
            value = argv[i + 1]
            i += 1
            if key in ("uid", "gid"):
                opts[key] = int(value)
            elif key != "abi":
                opts[key].append(os.path.realpath(value))
            elif value in COMPAT.get(os.uname().machine, ()):
                opts[key].append(value)
            else:
                raise Refused(f"--abi {value!r}: not one of this machine's")
        else:
            raise Refused(f"bad argument {argv[i]!r}")
        i += 1
    program = argv[i + 1:]
    if not (program or opts["probe"]) or (opts["uid"] is None) != (opts["gid"] is None):
        raise Refused("usage: [--uid U --gid G] [--write DIR]... [--own DIR]... "
                      "[--read PATH]... -- PROGRAM")
    if opts["uid"] is None:
        opts["uid"], opts["gid"] = default_ids()
    opts["write"] += opts["own"]
    try:
        opts["cwd"] = os.getcwd()
        opts["read"].append(opts["cwd"])
    except OSError:  # removed under us: start in / instead
        opts["cwd"] = None
    return opts, program


def isolate(as_root, uid, gid):
    """The new namespaces: None, or why there are none."""
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID
    try:
        call(libc.unshare(flags | (0 if as_root else CLONE_NEWUSER)), "unshare")
        if not as_root:
            own_user_namespace(uid, gid)
    except OSError as e:
        return e.strerror if isinstance(e.strerror, str) and ":" in e.strerror else str(e)
    return None


def passed_on(env):
    """Keep in env only what the programs need (KEPT, KEPT_PREFIXES): the
    caller's environment is root's, with its tokens, keys and agent sockets,
    which a tree's code could print into the results a review publishes."""
    for name in list(env):
        if name not in KEPT and not name.startswith(KEPT_PREFIXES):
            del env[name]


def start(opts, program, record):
    """In the program's own process: its folder, its signals, then exec."""
    for s in (signal.SIGPIPE, signal.SIGXFSZ, *FORWARDED):
        signal.signal(s, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    passed_on(os.environ)
    os.environ["TMPDIR"] = os.environ["HOME"] = (opts["write"] or ["/"])[0]  # all else read-only
    for d in (opts["cwd"], *opts["write"], "/"):
        try:
            if d:
                os.chdir(d)
                break
        except OSError:
            continue
    if opts["probe"]:
        record["uid"], record["gid"] = os.getuid(), os.getgid()
        record["no_new_privs"] = libc.prctl(39, 0, 0, 0, 0) == 1  # PR_GET_NO_NEW_PRIVS
        print(json.dumps(record), flush=True)
        os._exit(0)
    try:
        os.execvp(program[0], program)
    except OSError as e:
        print(f"vdsobench-confine: cannot run {program[0]}: {e.strerror}", file=sys.stderr)
        os._exit(127)


def trampoline_alive(lifeline):
    """Whether the trampoline still holds its end of the lifeline (end of file
    once it is gone: it died before this process asked to die with it)."""
    os.set_blocking(lifeline, False)
    try:
        return os.read(lifeline, 1) != b""
    except BlockingIOError:
        return True


def die_with_trampoline(lifeline):
    """SIGKILL when the trampoline dies (then the kernel kills the whole PID
    namespace), or exit now if it is gone already. The kernel forgets this at
    every change of user, so it is asked again after drop(): without that, a
    program that ignores SIGTERM outlived a trampoline killed after it."""
    call(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    if not trampoline_alive(lifeline):
        os._exit(126)


def first_process(opts, program, record, report_fd, lifeline):
    """The namespace's first process: the view, the user, then the program as
    its child; its wait status goes to report_fd."""
    as_root = os.geteuid() == 0
    try:
        die_with_trampoline(lifeline)
        # a session of its own: the caller's signals come through the trampoline,
        # once, and no terminal is its controlling one (TIOCSTI would type into it)
        os.setsid()
        try:
            record["covered"] = view(opts["read"], opts["write"], opts["uid"], opts["gid"])
            record["view"] = True
        except OSError as e:
            record["view"], record["why"] = False, str(e.strerror)
        drop(opts["uid"], opts["gid"], as_root, opts["abi"])
        die_with_trampoline(lifeline)
    except (OSError, Refused) as e:
        print(f"vdsobench-confine: {e.strerror if isinstance(e, OSError) else e}",
              file=sys.stderr)
        os._exit(126)
    child = os.fork()
    if child == 0:
        start(opts, program, record)
    forward_to(child)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    status = wait_for(child, reap_all=True)
    os.write(report_fd, f"{status}\n".encode())
    os._exit(0)


def pipe_files():
    """Where the caller's stdout or stderr is a regular file, a pipe instead for
    the program: through an inherited fd of a file it could seek and rewrite
    what is there. [(the pipe's end to read, the file, its fd number)]."""
    relays = []
    for fd in (1, 2):
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
        except OSError:
            continue
        end, into = os.pipe()
        relays.append((end, os.dup(fd), fd))
        os.dup2(into, fd)
        os.close(into)
    return relays


def relay(relays):
    """The files back in place for the trampoline: {pipe's end: the file's fd}."""
    ends = {}
    for end, saved, fd in relays:
        os.dup2(saved, fd)
        os.close(saved)
        ends[end] = fd
    return ends


def wait_relaying(child, ends):
    """wait_for(child), copying each pipe into its file as the program writes
    meanwhile, and on to its end (the namespace gone, no writer is left). No
    thread: none can be started once the PID namespace is unshared."""
    status = None
    while status is None or ends:
        if status is None:
            try:
                got, raw = os.waitpid(child, os.WNOHANG)
            except ChildProcessError:
                raise Refused("the program's process vanished") from None
            if got == child:
                status = raw
        if not ends:
            if status is None:
                status = wait_for(child)
            continue
        ready, _, _ = select.select(list(ends), [], [], 0.05)
        for end in ready:
            chunk = os.read(end, 1 << 16)
            if chunk:
                os.write(ends[end], chunk)
            else:
                os.close(end)
                del ends[end]
    return status


def main(argv):
    try:
        opts, program = parse(argv)
    except (Refused, ValueError) as e:
        print(f"vdsobench-confine: {e}", file=sys.stderr)
        return 126
    as_root = os.geteuid() == 0
    if not as_root:
        opts["uid"], opts["gid"] = os.getuid(), os.getgid()
    record = {"caller_root": as_root}
    oom_first()
    for d in opts["own"] if as_root else ():
        try:
            os.chown(d, opts["uid"], opts["gid"], follow_symlinks=False)
        except OSError as e:
            print(f"vdsobench-confine: --own {d}: {e.strerror}", file=sys.stderr)
            return 126
    why = isolate(as_root, opts["uid"], opts["gid"])
    record["namespaces"] = why is None
    if why is not None:
        record["view"], record["why"] = False, why
        try:
            drop(opts["uid"], opts["gid"], as_root, opts["abi"])
        except (OSError, Refused) as e:
            print(f"vdsobench-confine: {e.strerror if isinstance(e, OSError) else e}",
                  file=sys.stderr)
            return 126
        start(opts, program, record)
    r, w = os.pipe()
    lifeline, held = os.pipe()
    relays = pipe_files()
    signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
    child = os.fork()
    if child == 0:
        os.close(r)
        os.close(held)
        for end, saved, _ in relays:
            os.close(end)
            os.close(saved)
        first_process(opts, program, record, w, lifeline)
    os.close(w)
    os.close(lifeline)
    ends = relay(relays)
    forward_to(child)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    status = wait_relaying(child, ends)
    with os.fdopen(r) as f:
        said = f.read().strip()
    end_like(int(said) if said.isdigit() else status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
