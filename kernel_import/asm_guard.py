#!/usr/bin/python3 -I
"""The assembler's gate for an imported tree's code: gcc runs every program of
a compile of it through this one (-wrapper, copts.bzl's TREE_COPTS).

    asm_guard.py PROGRAM ARG...   as gcc -wrapper runs it: PROGRAM ARG... run as
                                  they are, but for the assembler, which runs
                                  only on assembly that passes problem()
    problem(text)                 what import's syntax check asks of the
                                  assembly it makes (kimport/probe.py)

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

The compiler proper (cc1) is gated the same way, for what it includes: it is
run once more, preprocessing only (-E -H), and every header it opens must be
the build's own (a relative path: the tree, the shim, the glue, Bazel's
inputs) or the system's (SYSTEM_HEADERS); a condition on a flag only the
build passes could otherwise include /root/.ssh/id_rsa or a FIFO, as root.
Import's own check (kimport) does the same for the flags it knows.

Refused: one line "vdsobench-refused: ..." on stderr (the CLI shows it as its
own), exit 1, the assembler or compiler never started. Standard library only.
"""

import os
import re
import subprocess
import sys

READS = re.compile(rb"\.(?:incbin|include|macro|irpc?|irepc?|rept?|altmacro|purgem)\b|/\*",
                   re.I)
REFUSED = "vdsobench-refused: "
WITH_VALUE = ("-o", "-I", "--MD", "--defsym")
# where the system's headers are, for GCC and Debian's cross compilers
# (arm-linux-gnueabihf's: arm64's compat vDSO takes asm/errno.h, the uapi's, there;
# i686-linux-gnu's: x86's vdso32 takes the i386 system call numbers there)
SYSTEM_HEADERS = ("/usr/include/", "/usr/lib/gcc/", "/usr/lib/gcc-cross/",
                  "/usr/aarch64-linux-gnu/include/", "/usr/arm-linux-gnueabihf/include/",
                  "/usr/i686-linux-gnu/include/", "/usr/local/include/")
INCLUDED = re.compile(r"^\.+ (.+)$")
PREPROCESS_TIMEOUT_S = 60
# set by import's own compiles, whose -H check says the same with more to say
# (which file includes what): kimport's GUARD_OWN_CHECK
IMPORT_CHECKS = "VDSOBENCH_IMPORT_CHECKS_INCLUDES"


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


SEARCH = ("-I", "-iquote", "-isystem", "-idirafter")


def searched(args):
    """The folders the compile was told to search (-I and the like, and the
    folders of its -include files), absolute: the build's own line names them
    (a tree's kbuild line never passes one on)."""
    out, take = [], None
    for a in args:
        if take:
            out.append(os.path.dirname(a) if take == "-include" else a)
            take = None
        elif a in SEARCH or a == "-include":
            take = a
        else:
            out += [a[len(o):] for o in SEARCH if a.startswith(o) and len(a) > len(o)][:1]
    return tuple(os.path.join(os.path.abspath(d), "") for d in out)


def outside(path, allowed=()):
    """Whether a header the compiler opened is neither the build's (below its
    folder, or one it was told to search) nor the system's."""
    if not path.startswith("/"):
        return os.path.normpath(path).startswith("..")  # above the build's own folder
    norm = os.path.normpath(path)
    return not any(p.startswith(SYSTEM_HEADERS + tuple(allowed))
                   for p in (norm, os.path.realpath(norm)))


def includes(program, args):
    """None, or what the compiler proper would include that it may not: it runs
    once more, preprocessing only, its output dropped and its list of headers
    (-H) read; a header that blocks (a FIFO) ends that run."""
    try:
        at = args.index("-o")
    except ValueError:
        return None if inputs(args) else "comes on stdin, unchecked"
    argv = [program, *args[:at], "-o", os.devnull, *args[at + 2:], "-E", "-H"]
    try:
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=PREPROCESS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"blocks its preprocessor for {PREPROCESS_TIMEOUT_S} s (a FIFO included?)"
    allowed = searched(args)
    for line in r.stderr.decode(errors="replace").splitlines():
        m = INCLUDED.match(line)
        if m and outside(m.group(1), allowed):
            return f"includes {m.group(1)[:200]!r}, neither the build's nor the system's"
    return None


def compiled(args):
    """What a compile makes, for messages: its source, and the variant's prefix."""
    prefix = [a.split("=", 1)[1] for a in args if a.startswith("-DVDSO_PREFIX=")][:1]
    sources = [a for a in args if a.endswith((".c", ".i", ".S")) and os.path.isfile(a)]
    source = (sources or ["the source"])[0]
    return f"{source} ({prefix[0]})" if prefix else source


def is_compiler(program):
    return os.path.basename(program) == "cc1"


def main(argv):
    if not argv:
        print("usage: asm_guard.py PROGRAM ARG...", file=sys.stderr)
        return 2
    if is_assembler(argv[0]):
        return assemble(argv[0], argv[1:])
    if is_compiler(argv[0]) and not os.environ.get(IMPORT_CHECKS):
        why = includes(argv[0], argv[1:])
        if why:
            print(f"{REFUSED}{compiled(argv[1:])}: the tree's code {why}: "
                  "nothing that links it is built", file=sys.stderr)
            return 1
    if output(argv[1:]) == "-":
        # gcc -pipe: only the first program of a pipe runs through -wrapper,
        # so the assembler after it would never come here
        return refuse("-pipe", "would reach the assembler unchecked (gcc -pipe)")
    os.execvp(argv[0], argv)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
