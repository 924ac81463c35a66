"""A signal seen at once, even where the main thread cannot run its handler.

Python runs a signal's handler in the main thread, between two bytecodes.
A signal that lands after the main thread's last check and before it enters
a blocking system call (a read of a child's pipe, a wait for the child) only
marks the handler pending: the call blocks, and the handler runs when it
returns, which for a child measuring 100,000 rounds is never. Here the
C-level handler also writes the signal's number to a pipe
(signal.set_wakeup_fd), and a thread reading that pipe calls on_signal with
it at once, so that the children can be stopped and the blocked call
returns; the main thread's handler then runs as usual.

    watching(on_signal, ending)  while inside (main thread; elsewhere it does
                                 nothing), on_signal(signum) runs in the
                                 watcher thread for each signal that has a
                                 Python handler; ending (a threading.Event)
                                 is set on the way out, before the thread is
                                 joined, to cut short what on_signal waits for
"""

import contextlib
import os
import select
import signal
import threading


def _watch(r, stop, on_signal):
    while True:
        ready, _, _ = select.select([r, stop], [], [])
        if stop in ready:
            return
        try:
            got = os.read(r, 64)
        except BlockingIOError:
            continue
        for signum in got:
            on_signal(signum)


@contextlib.contextmanager
def watching(on_signal, ending):
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    r, w = os.pipe()
    stop_r, stop_w = os.pipe()
    os.set_blocking(w, False)  # the C handler must never block on it
    os.set_blocking(r, False)
    old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    watcher = threading.Thread(target=_watch, args=(r, stop_r, on_signal), daemon=True,
                               name="vdsobench-signals")
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(old)
        ending.set()
        os.write(stop_w, b"x")
        watcher.join()
        for fd in (r, w, stop_r, stop_w):
            os.close(fd)
