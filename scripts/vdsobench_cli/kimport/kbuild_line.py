"""kbuild's compile line for the vDSO's vclock_gettime.o, read from the
.vclock_gettime.o.cmd kbuild writes (parse_cmd) and split
(classify) into what the import's read path is built with (the code
generation: -O, -f, -m, -std, -g and the plain -D switches, in the kernel's
order, so that the last of two contradicting flags wins as it does there)
and what cannot apply (each with the reason: kbuild's include paths and
force-included headers, which kernel_import/shim and copts.bzl stand for;
dependency files, output names and module names, which are Bazel's; the
warnings, which copts.bzl has as the kernel's own). The tree is hostile
input like any other: only flags of those shapes are kept, and a flag that
would load code or write files (-fplugin, -fprofile-*, -fdump-*, -wrapper,
-specs, -B, @file) is dropped, with its reason.

Bazel puts its own defaults (opt: -ffunction-sections -fdata-sections
-D_FORTIFY_SOURCE=1, the toolchain's -fstack-protector) before a target's
copts; NEUTRALISE undoes those the kernel line does not already undo, so
the code generation is the kernel line's (kbuild_test checks the object's
DW_AT_producer).
"""

import re
import shlex

from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import imports_table, kbuild_tree

# Bazel's defaults (toolchain and --compilation_mode=opt) the kernel line does
# not itself undo; appended after it.
NEUTRALISE = (
    ("-fno-function-sections", "Bazel's opt adds -ffunction-sections; kbuild does not"),
    ("-fno-data-sections", "Bazel's opt adds -fdata-sections; kbuild does not"),
    ("-U_FORTIFY_SOURCE", "Bazel's opt defines _FORTIFY_SOURCE=1; kbuild does not"),
)

KEEP = imports_table.KLINE_FLAG
PIC = re.compile(r"-f(no-)?(pic|PIC|pie|PIE)")
UNSAFE_F = imports_table.KLINE_UNSAFE
WITH_ARG = ("-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-I", "-o",
            "-MF", "-MT", "-MQ", "-x", "-Xassembler", "-Xlinker", "-Xpreprocessor")


def classify(argv):
    """(kept, dropped): the compiler's arguments (after the compiler) split into
    the flags the read path is built with, in order, and [flag, why] for the rest."""
    kept, dropped = [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in WITH_ARG and i + 1 < len(argv):
            a = f"{a} {argv[i + 1]}"
            i += 1
        i += 1
        why = reason(a)
        if why is None:
            kept.append(a)
        else:
            dropped.append([a, why])
    last_model = [k for k in kept if k.startswith("-mcmodel=")][-1:]
    if last_model == ["-mcmodel=kernel"]:
        kept = [k for k in kept if not k.startswith("-mcmodel=")]
        dropped.append(["-mcmodel=kernel", "the kernel code model links only above "
                        "-2 GB; a userspace object cannot"])
    last_pic = [k for k in kept if PIC.fullmatch(k)][-1:]
    if last_pic and last_pic[0].startswith("-fno-"):
        kept = [k for k in kept if not PIC.fullmatch(k)]
        dropped.append([last_pic[0], "the programs of the build link position-independent "
                        "code: an object built without it would not link"])
    return kept, dropped


def reason(a):
    """None for a flag kept, else why it cannot apply here."""
    if a.startswith(("-I", "-include ", "-isystem ", "-iquote ", "-idirafter ",
                     "-imacros ")) or a == "-nostdinc":
        return "kbuild's include paths and forced headers: kernel_import/shim and copts.bzl stand for them"
    if a == "-D__KERNEL__":
        return "copts.bzl defines it (the tree's headers need it, the shim stands for the rest)"
    if a.startswith(("-DKBUILD_", "-D__KBUILD_")):
        return "kbuild's object and module names: strings the vDSO never uses"
    if a.startswith(("-Wp,", "-MD", "-MMD", "-MF ", "-MT ", "-MQ ", "-M")):
        return "kbuild's dependency file: Bazel tracks its own"
    if a in ("-c",) or a.startswith("-o "):
        return "kbuild's output: Bazel names its own"
    if not a.startswith("-"):
        return "the source file: the import's glue/reader.c and writer.c include it"
    if a.startswith("-W") and not a.startswith(("-Wa,", "-Wl,")):
        return "a warning, no code: copts.bzl has the kernel's warnings for the glue"
    if UNSAFE_F.match(a):
        return "loads code, writes files or names paths: never passed on from a tree"
    if imports_table.KLINE_ABI.match(a):
        return ("changes the calling convention or the struct layout the program's other "
                "objects were built with")
    if KEEP.fullmatch(a) and a not in imports_table.KLINE_ONLY_OURS:
        return None
    return "not a code generation flag vdsobench passes on from a tree"


def parse_cmd(text, where=kbuild_tree.CMD):
    """(compiler, [arguments]) of the saved command in a .vclock_gettime.o.cmd
    (where: its path, for the messages)."""
    for line in text.splitlines():
        m = re.match(r"(?:saved)?cmd_\S*vclock_gettime\.o := (.*)$", line)
        if m:
            try:
                words = shlex.split(m.group(1))
            except ValueError as e:
                raise UsageError(f"kbuild: {where}: its command does not parse ({e})")
            if not words:
                break
            return words[0], words[1:]
    raise UsageError(f"kbuild: {where}: no saved command for vclock_gettime.o")
