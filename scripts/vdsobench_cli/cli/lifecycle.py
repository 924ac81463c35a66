"""One way in and out for every command: signals, temporary paths, child processes.

errors.guard runs each command inside session(). There SIGINT, SIGTERM and
SIGHUP become Interrupted(signum), raised in the main thread, after every
child process started through this module has been sent SIGTERM (the whole
process group: each child is started as the leader of its own group, so a
harness, a verify driver or setarch -> valgrind goes with everything it
started). From then on no new child starts (popen raises Interrupted, also
in worker threads) and nothing is published (results.* call check()). On
the way out the session stops the children still running (SIGTERM, then
SIGKILL after GRACE_S), removes every temporary file and directory
registered here and the directories made for outputs that were not
written, and errors.guard prints one line and exits 128 + the signal.
Ctrl-Z (SIGTSTP, which the terminal sends to our group only) stops the
children's groups with us, and SIGCONT continues them. A thread watching
the signals (cli/wakeup.py) stops the children too, at once: a signal that
lands just before the main thread blocks on a child would otherwise wait
for the child to end.

Outside a session (a unit test calling a function directly) the helpers
work the same but nothing is registered for the final sweep: each context
manager still cleans up after itself.
"""

import concurrent.futures
import contextlib
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import threading

from vdsobench_cli.cli import wakeup

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GRACE_S = 2.0  # a child's time to exit after SIGTERM before SIGKILL

_lock = threading.RLock()  # reentrant: the handler may run while the main thread holds it
_ending = threading.Event()  # set when the session ends: the watcher waits no longer
_state = {"depth": 0, "signum": None, "raised": False, "critical": 0, "saved": {}}
_children = set()  # Popen objects not yet reaped by their owner
_temps = {}  # path -> "file" | "dir": removed on the way out
_made = []  # directories made for outputs: removed when empty unless kept
_targets = []  # outputs the command means to write (for the interruption message)
_written = []  # outputs published


class Interrupted(BaseException):
    """A signal asked the command to stop (BaseException, like KeyboardInterrupt:
    an `except Exception` must not swallow it)."""

    def __init__(self, signum):
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def name(self):
        return signal.Signals(self.signum).name

    @property
    def code(self):
        return 128 + self.signum


# ---- signals ------------------------------------------------------------------------------

def in_main_thread():
    return threading.current_thread() is threading.main_thread()


def _first(signum):
    """Whether signum is the first signal of the session (then it is recorded)."""
    with _lock:
        if _state["signum"] is not None:
            return False
        _state["signum"] = signum
        return True


def _on_signal(signum, frame):
    if _first(signum):
        signal_children(signal.SIGTERM)
    _raise_pending()


def _watched(signum):
    """In the watcher thread (cli/wakeup.py), at once: the children stopped,
    so that a main thread blocked on one returns and raises. Killed after
    GRACE_S unless the main thread raised by then and stops them itself."""
    if signum not in SIGNALS or not _first(signum):
        return
    signal_children(signal.SIGTERM)
    if not _ending.wait(GRACE_S) and not _state["raised"]:
        signal_children(signal.SIGKILL)


def _on_stop(signum, frame):
    """Ctrl-Z: the children lead their own process groups, so the terminal's SIGTSTP
    reaches only us: stop them, stop ourselves the default way, and on SIGCONT
    continue them."""
    signal_children(signal.SIGSTOP)
    signal.signal(signal.SIGTSTP, signal.SIG_DFL)
    try:
        os.kill(os.getpid(), signal.SIGTSTP)  # returns once we are continued
    finally:
        signal.signal(signal.SIGTSTP, _on_stop)
        signal_children(signal.SIGCONT)


def _raise_pending():
    """Raise Interrupted once, in the main thread, outside a critical section."""
    if (_state["signum"] is not None and not _state["raised"] and not _state["critical"]
            and in_main_thread()):
        _state["raised"] = True
        raise Interrupted(_state["signum"])


def pending():
    """The signal number that asked us to stop, or None."""
    return _state["signum"]


def check():
    """Raise Interrupted if a signal arrived (in any thread, however often asked):
    called before anything is started or published."""
    if _state["signum"] is not None:
        if in_main_thread():
            _state["raised"] = True  # the handler must not raise it a second time
        raise Interrupted(_state["signum"])


@contextlib.contextmanager
def critical():
    """In the main thread, a signal arriving inside is raised at the end, not in the
    middle (registering a new child, publishing a file)."""
    main = in_main_thread()
    if main:
        _state["critical"] += 1
    try:
        yield
    finally:
        if main:
            _state["critical"] -= 1
    if main:
        _raise_pending()


@contextlib.contextmanager
def session():
    """The life of one command: handlers installed (main thread only), and on the
    way out, whatever happened, children stopped and temporary paths removed.
    Nested sessions share the outermost one."""
    with _lock:
        _state["depth"] += 1
        outer = _state["depth"] == 1
        if outer:
            _state.update(signum=None, raised=False, critical=0, saved={})
            for registry in (_children, _temps, _made, _targets, _written):
                registry.clear()
    watch = contextlib.ExitStack()
    if outer and in_main_thread():
        for s in SIGNALS:
            if signal.getsignal(s) is not signal.SIG_IGN:  # nohup: a hangup is not for us
                _state["saved"][s] = signal.signal(s, _on_signal)
        _state["saved"][signal.SIGTSTP] = signal.signal(signal.SIGTSTP, _on_stop)
        _ending.clear()
        watch.enter_context(wakeup.watching(_watched, _ending))
    try:
        yield
    finally:
        # a second signal during the sweep must not cut it short
        _state["raised"] = True
        try:
            if outer:
                sweep()
        finally:
            with _lock:
                _state["depth"] -= 1
            watch.close()
            if outer:
                for s, handler in _state["saved"].items():
                    signal.signal(s, signal.SIG_DFL if handler is None else handler)


def active():
    return _state["depth"] > 0


def sweep():
    """Stop the children still running; remove the temporary paths and the
    output directories made for nothing."""
    with _lock:
        children = list(_children)
    for proc in children:
        stop(proc)
    with _lock:
        temps = list(_temps.items())
        made = list(reversed(_made))
        for registry in (_temps, _made, _children):
            registry.clear()
    for path, kind in temps:
        _remove(path, kind)
    for path in made:
        with contextlib.suppress(OSError):
            os.rmdir(path)


def interruption(signum):
    """The one line errors.guard prints for an interrupted command."""
    line = f"vdsobench: interrupted by {signal.Signals(signum).name}"
    kept = [p for p in _written if os.path.lexists(p)]  # not a temp the sweep removed
    if kept:
        return line + "; written before it: " + shown(kept)
    if _targets:
        return line + "; nothing written to " + shown(_targets)
    return line + "; nothing written"


def shown(paths):
    """Paths as the user would type them: relative below the working directory."""
    rel = [os.path.relpath(p) for p in paths]
    return ", ".join(dict.fromkeys(r if not r.startswith("..") else os.path.abspath(p)
                                   for r, p in zip(rel, paths)))


# ---- temporary paths and outputs ----------------------------------------------------------

def register(path, kind="file"):
    """Remove path (a \"file\" or a \"dir\") at the end of the session unless forgotten."""
    if active():
        with _lock:
            _temps[str(path)] = kind


def forget(path):
    """path is no longer temporary (renamed into place, or removed by its owner)."""
    with _lock:
        _temps.pop(str(path), None)


def _remove(path, kind):
    try:
        if kind == "dir":
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError:
        shutil.rmtree(path, ignore_errors=True) if kind == "dir" else None
    except RecursionError:
        # a confined program's folder may nest deeper than Python's stack
        # (rmtree recurses); rm removes any depth, following no link
        subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)],
                       stdin=subprocess.DEVNULL, capture_output=True)


def discard(path, kind="file"):
    """Remove a temporary path now and forget it."""
    with critical():
        _remove(path, kind)
        forget(path)


@contextlib.contextmanager
def temp_dir(prefix="vdsobench-", dir=None):
    """A new directory (under $TMPDIR unless dir), removed with everything in it when
    the block ends or the command is interrupted."""
    with critical():
        path = tempfile.mkdtemp(prefix=prefix, dir=dir)
        register(path, "dir")
    try:
        yield path
    finally:
        discard(path, "dir")


def temp_file(dir, prefix, suffix=""):
    """(fd, path) of a new file in dir, registered: the caller renames it into place
    (then forget()) or discard()s it."""
    with critical():
        fd, path = tempfile.mkstemp(dir=dir, prefix=prefix, suffix=suffix)
        register(path, "file")
    return fd, path


def new_temp_dir(dir, prefix):
    """A new directory in dir, registered like temp_dir's but not removed at the end
    of a block: the caller renames it into place (then forget()) or discard()s it."""
    with critical():
        path = tempfile.mkdtemp(dir=dir, prefix=prefix)
        register(path, "dir")
    return path


def replace_dir(stage, final):
    """new_temp_dir()'s stage renamed to final, whatever folder was there
    removed first, as one step no signal cuts in two."""
    with critical():
        if os.path.lexists(final):
            shutil.rmtree(final)
        os.rename(stage, final)
        forget(str(stage))


def made_dirs(paths):
    """Directories made for an output: removed (when empty) at the end of the
    session unless the output was written (kept())."""
    if active():
        with _lock:
            _made.extend(str(p) for p in paths)


def target(path):
    """An output this command means to write: named if it is interrupted."""
    if active():
        with _lock:
            _targets.append(str(path))


def written(path):
    """An output was published: it and the directories made for it stay."""
    path = str(path)
    with _lock:
        _written.append(path)
        keep = {path} | {str(p) for p in pathlib.Path(path).parents}
        _made[:] = [d for d in _made if d not in keep]


# ---- child processes ----------------------------------------------------------------------

def signal_children(sig):
    with _lock:
        children = list(_children)
    for proc in children:
        _signal_group(proc, sig)


def _signal_group(proc, sig):
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def popen(cmd, **kwargs):
    """subprocess.Popen, the child leading its own process group and registered,
    unless a signal already asked us to stop. Its stdin is /dev/null unless given:
    outside the terminal's foreground group, a read from it would stop the child."""
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    check()
    with critical():  # a signal while starting is raised once the child is registered
        with _lock:
            check()
            proc = subprocess.Popen(cmd, process_group=0, **kwargs)
            _children.add(proc)
        if _state["signum"] is not None:  # arrived while it started
            stop(proc)
            check()
    return proc


def stop(proc, grace=GRACE_S):
    """SIGTERM to the child's group; SIGKILL after grace; reap it; then SIGKILL for
    anything it left in its group."""
    if proc.poll() is None:
        _signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
    _signal_group(proc, signal.SIGKILL)
    with _lock:
        _children.discard(proc)


@contextlib.contextmanager
def owned(proc):
    """The block that uses a child from popen: if it raises, the child is stopped
    (group and all); either way it is reaped at the end."""
    try:
        yield proc
    except BaseException:
        stop(proc)
        raise
    finally:
        for f in (proc.stdin, proc.stdout, proc.stderr):
            if f:
                with contextlib.suppress(OSError):
                    f.close()
        proc.wait()
        with _lock:
            _children.discard(proc)


def run(cmd, input=None, capture_output=False, **kwargs):
    """subprocess.run for a registered child (see popen, owned): CompletedProcess,
    no check."""
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    proc = popen(cmd, **kwargs)
    with owned(proc):
        out, err = proc.communicate(input)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def parallel(fn, items, jobs):
    """{item: fn(item)}, jobs at a time in threads; the first failure, or a signal,
    cancels the calls not yet started (a signal also stops the running ones'
    children, and popen refuses new ones)."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        return dict(zip(items, pool.map(fn, items)))
    finally:
        pool.shutdown(cancel_futures=True)
