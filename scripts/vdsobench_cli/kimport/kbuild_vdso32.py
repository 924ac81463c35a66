"""The 32-bit vDSO of a kbuild (vdso32.so{,.dbg}): built, or why not.

kbuild builds it beside the 64-bit one in `make arch/x86/entry/vdso/`
wherever the configuration has CONFIG_IA32_EMULATION (or CONFIG_X86_32).
That make runs with -k: a patch that breaks only the 32-bit build (a u64
division, which i386 compiles to a call to libgcc's __udivdi3, a vDSO
cannot link; checkundef.sh says "undefined symbols found") stops no other
target, and the 64-bit image is built all the same. What failed is read
from make's own "*** [FILE:LINE: TARGET] Error" lines: where every
target that failed is the 32-bit vDSO's, the import goes on and records
the failure with kbuild's own error line.

    only_vdso32(log_text, build_fd)   kbuild's error line where only the
                                      32-bit vDSO failed (and the 64-bit
                                      image is there), else None
    record(build_fd, config, failure) {built, dir, why, error} for the
                                      kbuild record (kbuild.extract)
"""

import re

from vdsobench_cli.cli import safe_read
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import elf32, kbuild_tree

FAILED = re.compile(r"^make(?:\[\d+\])?: \*\*\* \[[^\]]*?:\d+: ([^\]]+)\] Error \d+")
ERROR = re.compile(r"error|undefined|not supported|no such file|cannot", re.I)
# a tool's message: "FILE[:LINE[:COL]]: ..." (gcc's, ld's, checkundef.sh's)
MESSAGE = re.compile(r"^[^\s:=\"']+(?::\d+)*:\s")
# the 32-bit vDSO's targets: its folder (v6.12, v7.3), images, image C files,
# setup, in whichever folder a tree puts them
OURS = re.compile(r"(^|/)(vdso32(/|\.|-|$)|vdso-image-32\.)")
NO_IA32 = ("the configuration has no CONFIG_IA32_EMULATION (nor CONFIG_X86_32): kbuild "
           "builds no 32-bit vDSO")
OBJ_LIMIT = 4 << 20


def failed_targets(text):
    """The targets make says failed, less the folders above another one
    (a failure's recursion: arch/x86/entry/vdso, ., __sub-make)."""
    found = [m.group(1).strip() for m in map(FAILED.match, text.splitlines()) if m]
    return sorted({t for t in found if t not in (".", "__sub-make")
                   and not any(o.startswith(t.rstrip("/") + "/") for o in found)})


def error_line(text):
    """kbuild's own error line: the first tool's message (MESSAGE; not a V=1
    command, nor make's own) that says an error, else make's first
    '*** [...] Error' line."""
    lines = text.splitlines()
    for line in lines:
        if MESSAGE.match(line) and not line.startswith("make") and ERROR.search(line):
            return line.strip()[:300]
    return next((line.strip()[:300] for line in lines if FAILED.match(line)), "?")


def libgcc_calls(build_fd):
    """The libgcc helpers the 32-bit vclock_gettime.o calls (none link in a
    vDSO), [] where there is no such object or it cannot be read."""
    rel = kbuild_tree.obj32(build_fd)
    if rel is None:
        return []
    try:
        data = safe_read.read_regular(rel, "kbuild's object", OBJ_LIMIT, root=build_fd)
        return [n for n in elf32.undefined(data) if elf32.LIBGCC.match(n)]
    except (UsageError, elf32.ElfError):
        return []


def only_vdso32(text, build_fd):
    """kbuild's error line (with the libgcc calls it stems from, where there
    are) where every failed target is the 32-bit vDSO's and the 64-bit image
    and its .dbg are there; None otherwise (the build failed as a whole)."""
    failed = failed_targets(text)
    if not failed or not all(OURS.search(t) for t in failed):
        return None
    try:
        vdso = kbuild_tree.vdso64_dir(build_fd)
    except UsageError:
        return None
    found = kbuild_tree.paths(vdso)
    if not all(kbuild_tree.regular_file(build_fd, found[k]) for k in ("image", "dbg", "obj")):
        return None
    line = error_line(text)
    calls = libgcc_calls(build_fd)
    if calls:
        line += (f" ({kbuild_tree.obj32(build_fd)} calls libgcc's {', '.join(calls)}, "
                 "which a vDSO does not link)")
    return line


def record(build_fd, config, failure):
    """What kbuild did of the 32-bit vDSO: {built, dir, why, error}."""
    text = config.decode(errors="replace")
    if not re.search(r"^CONFIG_(IA32_EMULATION|X86_32)=y$", text, re.M):
        return {"built": False, "dir": None, "why": NO_IA32, "error": None}
    if failure:
        return {"built": False, "dir": None, "why": "kbuild failed to build it",
                "error": failure}
    d = kbuild_tree.vdso32_dir(build_fd)
    if d is None:
        return {"built": False, "dir": None, "why": f"kbuild left no one {kbuild_tree.DBG32} "
                f"in {kbuild_tree.VDSO_DIR}/ or its folders", "error": None}
    return {"built": True, "dir": d, "why": None, "error": None}
