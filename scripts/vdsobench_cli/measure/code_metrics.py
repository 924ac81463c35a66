"""What a variant's code costs where its time cannot be measured: another
architecture's build run under qemu-user (arm64 on x86-64).

- Code size: each variant's layout object of the build (impls/_objs/...),
  its read-path functions (the entry points and the static functions they
  call: everything but update_vsyscall*, the writer's, and the data page's
  init) with their bytes and instructions from the disassembly
  (<triplet>-objdump -d).
- Executed instructions per call: //bench:vdsobench_sim_driver (the sim
  driver: N calls through the harness's own timed loop on the fake
  clocksource, so every call takes the same path; a variant is measured as
  its fake-counter twin) under qemu-user with one instruction per
  translation block and the execution log on (QEMU_SINGLESTEP,
  QEMU_LOG=exec,nochain): one log line per instruction executed. Two runs,
  sim.ITERATIONS apart, their difference divided by the calls: start-up
  cancels (the counts have the same number of digits, so parsing them costs
  the same), and floor/empty's own count per call is subtracted ("net"). The
  same count on every run of a build. It is the emulated guest's instruction
  stream, not a CPU's cycles: what it compares is code, never time.
"""

import os
import re
import subprocess
from fractions import Fraction

from vdsobench_cli.cli import arch, build, confine, labels, lifecycle, tools
from vdsobench_cli.measure import sim
from vdsobench_cli.cli.errors import Failure
from vdsobench_cli.core import vocab

# qemu-user's options as environment variables, so the runner script passes them
TRACE_ENV = {"QEMU_SINGLESTEP": "1", "QEMU_LOG": "exec,nochain"}
# functions of a layout object that are not the reader's: the writer's
# (update_vsyscall*, v6.17's vdso_time_update_aux) and the data's set-up
NOT_READ_PATH = re.compile(r"__update_vsyscall(_tz)?$|^vdso_time_update_aux$|_init$")
FUNCTION = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
INSTRUCTION = re.compile(r"^\s+[0-9a-f]+:\s+[0-9a-f]{2}")


def tool(name):
    """A binutils program for the current --arch, by absolute path: Debian's
    aarch64-linux-gnu-objdump when cross-built, objdump natively."""
    if arch.current().native:
        return tools.path(name)
    return f"{arch.CROSS_BIN}/{arch.TRIPLET[arch.current().name]}-{name}"


def library_of(variant):
    """The variant's cc_library (impls/variants.bzl)."""
    return f"//impls:variant_{variant.replace('+', '__')}"


def object_of(variant):
    """The variant's layout object in the current --arch's build: the one its
    library builds for the binaries (not the .pic.o beside it)."""
    prefix = variant.replace("+", "__")
    layout = vocab.layout_of(variant)
    return build.bin_dir() / "impls" / "_objs" / f"variant_{prefix}" / f"{layout}.o"


def parse_objdump(text):
    """{function: (bytes, instructions)} from `objdump -d -w` of an object: bytes
    from its first instruction to the end of its last (the raw encoding column:
    "d503233f" on aarch64, "48 89 e5" on x86-64)."""
    out = {}
    name = first = end = None
    count = 0
    for line in text.splitlines() + [""]:
        m = FUNCTION.match(line)
        if (m or not line) and name is not None and count:
            out[name] = (end - first, count)
        if m:
            name, first, end, count = m.group(1), None, None, 0
        elif name is not None and INSTRUCTION.match(line):
            addr = int(line.split(":", 1)[0], 16)
            raw = line.split("\t")[1].split()
            first = addr if first is None else first
            end = addr + sum(len(x) for x in raw) // 2
            count += 1
    return out


def code_size(variant):
    """{"object", "functions": {name: {"bytes", "instructions"}}, "read_path_bytes",
    "read_path_instructions"} of one variant's layout object."""
    build.build([library_of(variant)])
    obj = object_of(variant)
    if not obj.is_file():
        raise Failure(f"{obj}: not built by {library_of(variant)}")
    try:
        # a tree's asm shapes the object it reads: confined (docs/confinement.md)
        with confine.reading(obj) as shown:
            r = lifecycle.run(confine.command([tool("objdump"), "-d", "-w", shown]),
                              capture_output=True, text=True, errors="replace")
    except OSError as e:
        raise Failure(f"cannot run {tool('objdump')}: {e.strerror}") from None
    if r.returncode != 0:
        raise Failure(f"{tool('objdump')} -d {obj.name} failed: {build.tail(r.stderr, 1)}")
    funcs = {n: {"bytes": b, "instructions": i}
             for n, (b, i) in parse_objdump(r.stdout).items() if not NOT_READ_PATH.search(n)}
    return {"object": obj.name, "functions": funcs,
            "read_path_bytes": sum(f["bytes"] for f in funcs.values()),
            "read_path_instructions": sum(f["instructions"] for f in funcs.values())}


def count_log_lines(stream):
    """Instructions executed: the "Trace" lines of qemu's exec log, read as it comes."""
    needle = b"\nTrace "
    n = 0
    tail = b"\n"  # the first line too
    for chunk in iter(lambda: stream.read(1 << 20), b""):
        data = tail + chunk
        n += data.count(needle)
        # carry what could begin a needle cut by the chunk's end, never a
        # whole one: 8 bytes counted a needle ending a chunk twice, one more
        # instruction now and then, as the pipe happened to split the log
        tail = data[-(len(needle) - 1):]
    return n


class Tracer:
    """Runs the driver under qemu-user's exec log; one run per (subject, clock, n)."""

    def __init__(self, tmp):
        self.cmd = build.program(labels.SIM_DRIVER)
        self.tmp = tmp

    def __call__(self, key):
        subject, clock, mode, n = key
        env = dict(os.environ, **TRACE_ENV)
        fd, out = lifecycle.temp_file(self.tmp, "out.")
        with os.fdopen(fd, "w") as stdout:
            proc = lifecycle.popen(self.cmd + [subject, clock, mode, str(n)], env=env,
                                   stdout=stdout, stderr=subprocess.PIPE)
            with lifecycle.owned(proc):
                executed = count_log_lines(proc.stderr)
                proc.wait()
        if proc.returncode != 0 or not executed:
            raise Failure(f"the sim driver under qemu-user failed on {subject} {clock} {mode} "
                          f"(exit {proc.returncode})")
        lifecycle.discard(out)
        return executed


def executed_per_call(variants, clocks, mode="hot", jobs=None, iterations=sim.ITERATIONS):
    """[{"variant", "measured_as", "clock", "mode", "instructions_per_call",
    "net_instructions_per_call"}] for each variant x clock, under qemu-user.
    iterations: the two call counts (the same number of digits)."""
    build.build([labels.SIM_DRIVER])
    subjects = {v: sim.twin(dict(zip(("layout", "counter", "inline"), vocab.split_variant(v))))
                for v in variants}
    points = [(s, c, mode) for s in dict.fromkeys(subjects.values()) for c in clocks]
    points.append((sim.FLOOR, "none", mode))
    keys = [(*p, n) for p in points for n in iterations]
    with lifecycle.temp_dir(prefix="vdsobench-trace-") as tmp:
        runs = lifecycle.parallel(Tracer(tmp), keys, jobs or os.cpu_count() or 1)
    calls = iterations[1] - iterations[0]

    def per_call(s, c):
        return Fraction(runs[(s, c, mode, iterations[1])] - runs[(s, c, mode, iterations[0])],
                        calls)
    floor = per_call(sim.FLOOR, "none")
    return [{"variant": v, "measured_as": subjects[v], "clock": c, "mode": mode,
             "instructions_per_call": sim.figure(per_call(subjects[v], c)),
             "net_instructions_per_call": sim.figure(per_call(subjects[v], c) - floor)}
            for v in variants for c in clocks]
