#!/usr/bin/python3 -I
"""The assembler's gate for an imported tree's code: gcc runs every program of
a compile of it through this one (-wrapper, copts.bzl's TREE_COPTS).

    asm_guard.py PROGRAM ARG...   as gcc -wrapper runs it: PROGRAM ARG... run as
                                  they are, but for the assembler, which runs
                                  only on assembly that passes problem()
    problem(text)                 what import's syntax check asks of the
                                  assembly it makes (kimport/kernel_import.py)

The tree's inline assembly reaches the assembler as it was written, and the
assembler runs as root in the build: `.incbin "/root/.ssh/id_rsa"` would put
the file into every program that links the tree. So the assembly may hold no
directive that reads a file (.incbin, .include) or makes directives out of
parts (.macro, .irp, .irpc, .irep, .irepc, .rept, .rep, .altmacro, .purgem),
and no C comment, which the assembler removes before it reads a directive's
name (`.inc/**/bin` is .incbin). The kernel's vDSO read and update paths have
none.

Checked here, on what the assembler is given, rather than only by import's
syntax check: the build compiles with flags that check never sees (Bazel's
-D_FORTIFY_SOURCE, --config=kline or asan, each variant's own prefix), and a
preprocessor condition on any of them can choose the assembly.

Refused: one line "vdsobench-refused: ..." on stderr (the CLI shows it as its
own), exit 1, the assembler never started. Standard library only.
"""

import os
import re
import sys

READS = re.compile(rb"\.(?:incbin|include|macro|irpc?|irepc?|rept?|altmacro|purgem)\b|/\*",
                   re.I)
REFUSED = "vdsobench-refused: "
WITH_VALUE = ("-o", "-I", "--MD", "--defsym")


def problem(text):
    """None, or what in the assembly text (bytes) may not be assembled."""
    m = READS.search(text)
    if m is None:
        return None
    found = m.group(0).decode("latin-1")
    if found == "/*":
        return ("has a C comment, which the assembler removes before it reads a "
                "directive (.inc/**/bin is .incbin)")
    return f"has {found}, which reads a file or makes directives out of parts"


def is_assembler(program):
    name = os.path.basename(program)
    return name == "as" or name.endswith("-as")


def inputs(args):
    """The files the assembler reads: its arguments but options and their values."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in WITH_VALUE:
            skip = True
        elif not a.startswith("-"):
            out.append(a)
    return out


def refuse(what, why):
    print(f"{REFUSED}{what}: the tree's assembly {why}: nothing that links it is built",
          file=sys.stderr)
    return 1


def output(args):
    return args[args.index("-o") + 1] if "-o" in args[:-1] else None


def assemble(program, args):
    files = inputs(args)
    if not files:
        return refuse(output(args) or "the object", "comes on stdin, unchecked")
    for path in files:
        with open(path, "rb") as f:
            why = problem(f.read())
        if why:
            return refuse(output(args) or "the object", why)
    os.execvp(program, [program, *args])
    return 127


def main(argv):
    if not argv:
        print("usage: asm_guard.py PROGRAM ARG...", file=sys.stderr)
        return 2
    if is_assembler(argv[0]):
        return assemble(argv[0], argv[1:])
    if output(argv[1:]) == "-":
        # gcc -pipe: only the first program of a pipe runs through -wrapper,
        # so the assembler after it would never come here
        return refuse("-pipe", "would reach the assembler unchecked (gcc -pipe)")
    os.execvp(argv[0], argv)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
