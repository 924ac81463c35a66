"""The harness's selection options: which variants, clocks, modes and CPUs a
run of //bench:vdsobench_bench measures, as its command line spells them,
and what a selection expands to (its --list). A library that needs the
harness says what it wants with a Selection; a command hands over its own
parsed options (option_args reads the same attribute names), so nothing
builds an argparse.Namespace for another's code."""

from __future__ import annotations

from dataclasses import dataclass, fields

from vdsobench_cli.cli import build, lifecycle
from vdsobench_cli.cli.errors import Failure, UsageError

# the harness's options that take a value, as `run` spells them
VALUED = ("variants", "clocks", "modes", "cpus", "writer_cpu", "hz", "events",
          "min_time", "repetitions", "cpu_lock")
DEFAULTS = {"min_time": "0.1", "repetitions": "3"}
# what rounds (compare, gate, the footprint, the recipes) pass of a selection
SELECTION = ("clocks", "modes", "cpus", "writer_cpu", "hz", "events", "cpu_lock")
FLAGS = ("no_pin", "sequential")


@dataclass(frozen=True)
class Selection:
    """What to measure besides the variants: names (None: the harness's
    default), a CPU, the writer thread, perf events, the CPU lock, and the
    flags. Lists become tuples: a Selection is a value."""
    clocks: tuple | None = None
    modes: tuple | None = None
    cpus: str | int | None = None
    writer_cpu: str | int | None = None
    hz: str | int | None = None
    events: tuple | None = None
    cpu_lock: str | None = None
    no_pin: bool = False
    sequential: bool = False

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, list):
                object.__setattr__(self, f.name, tuple(value))


def option_args(args, keys, defaults=None):
    """The harness's options for these attribute names of args (a Selection or
    a command's parsed options; lists joined with commas, unset ones left to
    the harness unless defaults names them), and its flags."""
    out = []
    for key in keys:
        value = getattr(args, key, None)
        if isinstance(value, (list, tuple)):
            value = ",".join(map(str, value)) if value else None
        if value is None:
            value = (defaults or {}).get(key)
        if value is not None:
            out += ["--" + key.replace("_", "-"), str(value)]
    for flag in FLAGS:
        if getattr(args, flag, False):
            out.append("--" + flag.replace("_", "-"))
    return out


def call(cmd, capture, env=None):
    """Run the harness (stopped with us on a signal); its one-line usage errors
    become ours (exit 2)."""
    try:
        r = lifecycle.run(cmd, capture_output=capture, text=True, errors="replace", env=env)
    except OSError as e:
        raise Failure(f"cannot run {cmd[0]}: {e.strerror}") from None
    if r.returncode == 2:
        line = (r.stderr or "").strip().splitlines()[-1:] or ["bad usage"]
        raise UsageError(line[0].removeprefix("vdsobench_bench: "))
    return r


def planned(binary, hargs):
    """(benchmark names, skipped lines) the selection hargs expands to; binary:
    the harness's command line (build.program)."""
    r = call([*binary, *hargs, "--list"], capture=True)
    if r.returncode != 0:
        raise Failure(f"vdsobench_bench --list failed (exit {r.returncode}): "
                      f"{build.tail(r.stderr, 1)}")
    names = r.stdout.split()
    skipped = [line for line in r.stderr.splitlines() if line.startswith("skipped ")]
    return names, skipped
