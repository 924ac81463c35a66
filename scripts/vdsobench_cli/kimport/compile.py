"""Compiling tree code here, before Bazel does: the glue (kernel_import/glue)
and its digest, the one compile line (kernel_import/copts.bzl's TREE_COPTS,
read as Bazel reads it), and compile_tree(), which runs gcc on a tree's code
under limits and refuses any include from outside the tree, the shim and
the compiler's own headers (hostile headers: a FIFO, /dev/stdin, a user's
file)."""

import ast
import hashlib
import os
import re
import signal
import subprocess

from vdsobench_cli.cli import arch, build, tools
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.cli.limited_run import limited_run
from vdsobench_cli.core import text as text_mod
from vdsobench_cli.kimport import imports_table

ROOT = build.ROOT
MB = imports_table.MB
COPTS_BZL = ROOT / "kernel_import" / "copts.bzl"
GLUE = "kernel_import/glue"
ARCH_DIRS_NAMES = {v: k for k, v in imports_table.ARCH_DIRS.items()}
# What flow.make_tree() writes into a tree besides the tree's files (autoconf.h,
# kimport_desc.h, kimport_includes.h, kimport.json): raise it with any change
# to that, so that cached trees are made again (glue_digest()).
GENERATED = 9  # 9: CONFIG_COMPAT_32BIT_TIME in autoconf.h (tree_config.py)


def glue_digest():
    """The SHA-256 of what decides a cached tree's generated headers (the probe's
    reading of the tree, its configuration): the shim, the probe, the headers
    it shares with writer.c, the compile line, and GENERATED (and the way
    import reads the probe, raise it with parse_markers). Part of the cache
    key; a tree made with other glue is left out of the build (writer.c checks
    kimport_desc.h against the tree, and would fail to build it)."""
    h = hashlib.sha256(f"generated {GENERATED}\0".encode())
    glue = ROOT / "kernel_import" / "glue"
    files = sorted((ROOT / "kernel_import").glob("shim/**/*.h"))
    files += [glue / f for f in ("probe.c", "fields.h", "tree.h", "kimport.h")]
    files += [COPTS_BZL]
    for f in files:
        h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def tree_copts(tree, arch_dir, table="TREE_COPTS"):
    """kernel_import/copts.bzl's TREE_COPTS (or COMPAT_COPTS) for this tree: the
    one compile line, read as Bazel reads it."""
    m = re.search(rf"^{table} = (\[.*?^\])", COPTS_BZL.read_text(), re.M | re.S)
    return [c.replace("{root}", str(tree)).replace("{arch}", arch_dir)
            for c in ast.literal_eval(m.group(1))]


def tree_cc(arch_dir):
    """The C compiler of the tree's architecture: gcc on its own machine, else
    Debian's cross compiler (toolchains/BUILD's, arch.CROSS_BIN)."""
    name = ARCH_DIRS_NAMES[arch_dir]
    if name == arch.host():
        return tools.path("gcc", "import")
    return f"{arch.CROSS_BIN}/{arch.TRIPLET[name]}-gcc"


def compile_line(tree, arch_dir, counter="fake", always=1):
    return [tree_cc(arch_dir), "-O2", "-Wall", "-Wextra", "-Werror", "-iquote", ".",
            "-DVDSO_PREFIX=kimport_probe", f"-DVDSO_INLINE_ALWAYS={always}",
            f"-DVDSO_COUNTER_HEADER=impls/counters/{counter}.h", *tree_copts(tree, arch_dir)]


# arm64's compat vDSO: --config=arm's compiler and its code flags (toolchains/BUILD)
COMPAT_ARCH = "arm"
COMPAT_CPU = "armv7"  # impls/variants.bzl's name of it, its counters'
COMPAT_FLAGS = ("-march=armv8-a+simd", "-marm")
# an import's architecture -> its 32-bit vDSO's: (--arch, the table's name of
# its counters' architecture, the compiler's flags, copts.bzl's table or None).
# x86's vdso32 is --config=i386's compiler alone: reader.c takes BUILD_VDSO32
# and the tree's fake_32bit_build.h for i386, as vdso32/vclock_gettime.c does.
COMPAT = {"arm64": (COMPAT_ARCH, COMPAT_CPU, COMPAT_FLAGS, "COMPAT_COPTS"),
          "x86_64": ("i386", "x86_64", (), None)}


def compat_cc(arch_name="arm64"):
    return f"{arch.CROSS_BIN}/{arch.TRIPLET[COMPAT[arch_name][0]]}-gcc"


def compat_line(tree, counter="fake", always=1, arch_name="arm64"):
    """compile_line() of a tree's 32-bit vDSO (an arm64 tree's compat vDSO, an
    x86-64 tree's vdso32): the 32-bit compiler, and its copts.bzl table after
    the tree's line (kernel_import/imports.bzl's order)."""
    arch_dir = imports_table.ARCH_DIRS[arch_name]
    _, _, flags, table = COMPAT[arch_name]
    line = compile_line(tree, arch_dir, counter, always)
    return [compat_cc(arch_name), *flags, *line[1:],
            *(tree_copts(tree, arch_dir, table) if table else [])]


def counters(arch_name):
    """The counters impls/variants.bzl builds an import with on arch_name."""
    text = (ROOT / "impls" / "variants.bzl").read_text()
    table = ast.literal_eval(re.search(r"^COUNTERS = (\{.*?^\})", text, re.M | re.S).group(1))
    return sorted(c for c, a in table.items() if a in (arch_name, "any"))


def first_error(text, tree):
    """gcc's first error, one line, paths shown relative to the tree or project."""
    lines = [x for x in text.splitlines() if ": error: " in x or ": fatal error: " in x]
    line = lines[0] if lines else build.tail(text, 1)
    return " ".join(line.replace(f"{tree}/", "").replace(f"{ROOT}/", "").split())


# What a compile of tree code may take and how long: a header that includes a
# FIFO, /dev/zero or a huge file ends in one line, not a hang or the OOM killer.
COMPILE_LIMITS = {"as": 4 << 30, "cpu": 120, "fsize": 64 * MB}
COMPILE_TIMEOUT_S = 60  # a tree's unit compiles in under 2 s


def allowed_includes(tree, cc):
    """The folders tree code may include from: the tree, the shim and glue, the
    project's counter headers, GCC's own headers and the system's (the shim's
    asm/unistd.h takes the system call numbers from there; a cross compiler's
    are in /usr/<triplet>/include): regular header files of packages, never a
    device, a FIFO or a user's file."""
    gcc_include = subprocess.run([cc, "-print-file-name=include"], capture_output=True,
                                 text=True).stdout.strip()
    dirs = [os.path.realpath(tree), str(ROOT / "kernel_import"), str(ROOT / "impls"),
            str(ROOT / "common")]
    dirs += [os.path.realpath(gcc_include), "/usr/include"]
    triplet = os.path.basename(cc)[:-len("-gcc")] if cc.endswith("-gcc") else ""
    if triplet in arch.TRIPLET.values():
        dirs.append(f"/usr/{triplet}/include")
    return [d for d in dirs if d and os.path.isabs(d)]


INCLUDED = re.compile(r"^\.+ (.+)$")


def outside_include(stderr, tree, cc):
    """The first file gcc -H says it opened outside allowed_includes(), else None."""
    allowed = allowed_includes(tree, cc)
    for line in stderr.splitlines():
        m = INCLUDED.match(line)
        if not m:
            continue
        path = m.group(1)
        real = os.path.realpath(path if os.path.isabs(path) else ROOT / path)
        if not any(real == d or real.startswith(d + "/") for d in allowed):
            return path
    return None


GUARD_OWN_CHECK = "VDSOBENCH_IMPORT_CHECKS_INCLUDES"


def compile_tree(argv, tree, given, what):
    """gcc on tree code (argv without -H): limited (limited_run), and every file
    it includes checked to be inside the tree, the shim or GCC's own headers
    (an include of /dev/stdin, an absolute path or a FIFO is refused, one line).
    CompletedProcess with text output, or UsageError."""
    # its own -H check names the header and the file that includes it; the
    # build's gate (asm_guard.py) does the same for the compiles it sees
    r = limited_run([argv[0], "-H", *argv[1:]], COMPILE_LIMITS, COMPILE_TIMEOUT_S, cwd=ROOT,
                    env=dict(os.environ, **{GUARD_OWN_CHECK: "1"}))
    if r is None:
        raise UsageError(f"import: {given}: compiling {what} took over {COMPILE_TIMEOUT_S} s "
                         "(a header that includes a FIFO or a device?); nothing imported")
    stderr = r.stderr.decode(errors="replace")
    outside = outside_include(stderr, tree, argv[0])
    if outside is not None:
        raise UsageError(f"import: {given}: {what} includes "
                         f"{text_mod.printable(outside, 120)}, outside the tree and the "
                         "shim: import takes no include from elsewhere")
    if r.returncode in (-signal.SIGXCPU, -signal.SIGKILL, -signal.SIGXFSZ):
        raise UsageError(f"import: {given}: compiling {what} ran out of its limits (exit "
                         f"{r.returncode}: CPU time, memory or file size); nothing imported")
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode(errors="replace"),
                                       "\n".join(x for x in stderr.splitlines()
                                                 if not INCLUDED.match(x)))
