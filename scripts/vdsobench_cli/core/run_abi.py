"""The ABI a run's times are of, as the readers of results and comparisons
name it: "i386 (32-bit)", "x86_64 (64-bit)".

A results file says it in context.vdsobench.abi (measure/abi.py record():
{"name", "bits", "left_out"}); a file written before that record (before
`run --arch i386`, 2026-12-07) is a 64-bit run of its emulated guest's
architecture, or else of its machine's. Two files of different ABIs timed
different vDSOs (a 32-bit process maps vdso32): merge and compare --results
say so.
"""

from vdsobench_cli.core import emulation, vocab
from vdsobench_cli.core.text import printable


def label(name, bits):
    """'i386 (32-bit)'; None without a name."""
    name = printable(name)
    if not name:
        return None
    name = vocab.ARCH_ALIASES.get(name, name)
    return f"{name} ({bits}-bit)" if bits in (32, 64) else name


def of_results(results):
    """The ABI of a results file's times, or None where it cannot be told."""
    try:
        ctx = results["context"]["vdsobench"]
    except (KeyError, TypeError):
        return None
    rec = ctx.get("abi") if isinstance(ctx, dict) else None
    if isinstance(rec, dict):
        bits = rec.get("bits") if type(rec.get("bits")) is int else None
        return label(rec.get("name"), bits)
    emu = emulation.of_results(results)
    if emu:
        return label(emulation.guest(emu), 64)
    fp = ctx.get("fingerprint") if isinstance(ctx, dict) else None
    kernel = (fp or {}).get("kernel") if isinstance(fp, dict) else None
    return label((kernel or {}).get("machine") if isinstance(kernel, dict) else None, 64)


def is_32_bit(abi):
    return bool(abi) and abi.endswith("(32-bit)")
