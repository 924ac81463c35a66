"""Emulated runs: another architecture's build run under qemu-user.

A results file written under emulation (`run --arch arm64` on an x86-64
machine) records context.vdsobench.emulation = {"label": "emulated
(qemu-user)", "emulator", "program", "version", "guest", "host", "note"};
a comparison, meta.emulation. Its times measure the emulator translating the
guest's code on the host's CPU, not a CPU of the guest's architecture, so
every table, merged table and plot that shows one says so (label()), and
`gate` never takes one.
"""

from vdsobench_cli.core.text import printable

LABEL = "emulated (qemu-user)"


def of_results(results):
    """The emulation record of a results file, or None (a native run, or a file
    written before emulation was recorded)."""
    try:
        emu = results["context"]["vdsobench"].get("emulation")
    except (KeyError, TypeError, AttributeError):
        return None
    return emu if isinstance(emu, dict) else None


def label(emu):
    """'emulated (qemu-user)' for an emulation record, '' for None."""
    if not emu:
        return ""
    return printable(emu.get("label")) or LABEL


def guest(emu):
    """The architecture whose code ran ('aarch64'), or None."""
    return printable((emu or {}).get("guest"))


def _a(word):
    # 'an x86_64': the letter is read "ex"
    return f"{'an' if word[:1].lower() in 'aeioux' else 'a'} {word}"


def describe(emu):
    """One sentence for captions and headers: what ran on what, and what the
    times therefore measure."""
    if not emu:
        return ""
    guest_arch = guest(emu) or "another architecture"
    by = printable(emu.get("program")) or "qemu-user"
    if emu.get("version"):
        by += f" {printable(emu['version'])}"
    host = _a(printable(emu["host"])) if emu.get("host") else "another"
    return (f"{label(emu)}: {guest_arch} code run by {by} on {host} CPU; "
            f"the times measure the emulator, not {_a(guest_arch)} CPU.")


def on(emu, machine):
    """A machine's text as the emulated run shows it: 'aarch64 emulated
    (qemu-user) on Zen 3 (...)'; the text unchanged for a native run."""
    if not emu:
        return machine
    return f"{guest(emu) or 'another architecture'} {label(emu)} on {machine}"
