"""A program run under resource limits and a wall-clock timeout: what kimport
runs on hostile input (patch applying a series, gcc compiling a tree's code)
must not take the machine's memory, CPU or disk, nor hang the command."""

import resource
import subprocess

from vdsobench_cli.cli import lifecycle


def limited_run(argv, limits, timeout, **kwargs):
    """lifecycle.run under resource limits (RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE,
    set in the child before it runs), stdin /dev/null unless input is given, and a
    wall-clock timeout: CompletedProcess, or None when it ran out of time (its
    whole process group is stopped)."""

    def preexec():
        for res, value in ((resource.RLIMIT_AS, limits["as"]),
                           (resource.RLIMIT_CPU, limits["cpu"]),
                           (resource.RLIMIT_FSIZE, limits["fsize"])):
            resource.setrlimit(res, (value, value))

    data = kwargs.pop("input", None)
    kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    kwargs["stdin"] = subprocess.PIPE if data is not None else subprocess.DEVNULL
    proc = lifecycle.popen(argv, preexec_fn=preexec, **kwargs)
    with lifecycle.owned(proc):
        try:
            out, err = proc.communicate(data, timeout=timeout)
        except subprocess.TimeoutExpired:
            lifecycle.stop(proc)
            return None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
