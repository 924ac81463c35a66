"""The probe: kernel_import/glue/probe.c compiled against the tree to assembly
(nothing linked, nothing run), its "->NAME VALUE" markers read back
(parse_markers); and the syntax check, the tree's read and update paths
compiled to assembly with every counter and inline choice, that assembly
checked by the build's own gate (kernel_import/asm_guard.py)."""

import re
from pathlib import Path

from vdsobench_cli.cli import arch, build, lifecycle
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.kimport import compile, imports_table, tree_config

ROOT = build.ROOT
MARKER = re.compile(r'^\s*\.ascii\s+"->(\w+) (.*)"\s*$')
PROBE_VALUES = ("data_size", "hres_clocks", "coarse_clocks", "raw_clocks", "aux_clocks",
                "has_getres", "has_time")


class ShimError(UsageError):
    """The shim cannot build this tree's `what`: `first`, the compiler's first
    error. flow.make_tree() sets `version`, the tree's (tree_config's), so
    that an import that runs kbuild can say what kbuild built of it too."""

    def __init__(self, given, what, first):
        super().__init__(f"import: {given}: the shim cannot build this tree's {what}: {first}")
        self.given, self.what, self.first, self.version = given, what, first, None


def parse_markers(asm):
    """{value: int, "fields": [{name, offset, size}]} from the probe's assembly
    ("->NAME VALUE" markers), or None when a value is missing or malformed."""
    out, fields = {}, []
    for line in asm.splitlines():
        m = MARKER.match(line)
        if not m:
            continue
        name, rest = m.groups()
        if name == "FIELD":
            f = re.fullmatch(r"(\d+) (\d+) ([][A-Za-z0-9_.]+)", rest)
            if not f:
                return None
            fields.append({"name": f.group(3), "offset": int(f.group(1)),
                           "size": int(f.group(2))})
        elif name in PROBE_VALUES and re.fullmatch(r"\d+", rest):
            out[name] = int(rest)
        else:
            return None
    if set(out) != set(PROBE_VALUES) or not fields:
        return None
    out["fields"] = fields
    return out


def probe(tree, arch_dir, workdir, given, line=None):
    """Compile kernel_import/glue/probe.c against the tree to assembly (gcc -S,
    nothing linked, nothing run) and read its markers: its data size, field
    table and clock masks; UsageError with what the shim could not provide.
    line: another compile line (compile.compat_line()'s)."""
    asm = workdir / "probe.s"
    line = line or compile.compile_line(tree, arch_dir)
    r = compile.compile_tree([*line, "-S", "-o", str(asm),
                      f"{compile.GLUE}/probe.c"], tree, given, "the probe of its vDSO data")
    if r.returncode != 0:
        raise ShimError(given, "vDSO data", compile.first_error(r.stderr, tree))
    try:
        text = asm.read_text(errors="replace")
    except OSError:
        text = ""
    found = parse_markers(text)
    if found is None:
        raise Failure(f"import: the probe of {given} left no description in its assembly")
    return found


def asm_guard():
    """kernel_import/asm_guard.py, the build's gate before the assembler (a
    standalone script, as Bazel runs it): its problem() of assembly text."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("asm_guard", ROOT / "kernel_import" /
                                                  "asm_guard.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


COMPAT_HEADER = "arch/arm64/include/asm/vdso/compat_gettimeofday.h"
# x86's vdso32: the 32-bit configuration its vclock_gettime.c (v6.12; from v7.x
# its Makefile) force-includes, which reader.c takes for i386
VDSO32_CONFIG = "arch/x86/entry/vdso/vdso32/fake_32bit_build.h"
# an import's architecture -> (what its 32-bit vDSO is, the files it needs)
COMPAT_VDSO = {"arm64": ("compat vDSO", (COMPAT_HEADER, tree_config.COMPAT_UNISTD)),
               "x86_64": ("32-bit vDSO", (VDSO32_CONFIG,))}


def compat_problem(tree, given, description, arch_name="arm64"):
    """Why a tree has no 32-bit variants, or None: an arm64 tree's armv7 ones
    (its compat vDSO, asm/vdso/compat_gettimeofday.h's read path,
    arch/arm64/kernel/vdso32's), an x86-64 tree's i386 ones (its vdso32,
    arch/x86/entry/vdso/vdso32's: the same read path under BUILD_VDSO32 and
    fake_32bit_build.h). None when the tree has the files (the compat
    header, the syscall numbers tree_config writes; vdso32's configuration),
    the 32-bit probe reads the same data as the 64-bit one (the kernel's
    64-bit update path writes what the 32-bit vDSO reads; here writer.c is
    compiled 32-bit beside it), and the read and update paths compile for
    every counter and inline choice, their assembly passing the gate
    (syntax_check)."""
    what, needed = COMPAT_VDSO[arch_name]
    for rel in needed:
        if not (tree / rel).is_file():
            return (f"the tree has no {rel}" + (" (import writes it from "
                    f"{tree_config.COMPAT_TABLE}, which 6.12 has and 6.1 lacks)"
                    if rel == tree_config.COMPAT_UNISTD else ""))
    target = compile.COMPAT[arch_name][0]
    if arch.Target(target).missing_toolchain():
        return (f"no {compile.compat_cc(arch_name)} (scripts/vdsobench setup --arch {target} "
                "installs it; then import again)")
    arch_dir = imports_table.ARCH_DIRS[arch_name]
    try:
        with lifecycle.temp_dir(prefix="vdsobench-probe-") as work:
            found = probe(tree, arch_dir, Path(work), given,
                          compile.compat_line(tree, arch_name=arch_name))
        if found != description:
            return ("its 32-bit probe reads another vDSO data layout than the 64-bit one "
                    f"({found['data_size']} bytes, {len(found['fields'])} fields, against "
                    f"{description['data_size']} and {len(description['fields'])})")
        called = syntax_check(tree, arch_dir, given, arch_name, compat=True)
    except ShimError as e:
        return f"the shim cannot build its {what}'s {e.what}: {e.first}"
    if called:
        return (f"its 32-bit read path calls libgcc's {', '.join(called)}, which the "
                "kernel's vdso32 does not link (-nostdlib): its build fails there")
    return None


# libgcc's 64-bit arithmetic on i386 (a / or % on a u64, a 64-bit shift GCC
# leaves to it), which the kernel's vdso32 does not link (-nostdlib): a
# tree whose 32-bit read path calls one fails to build there
# (kernel_import/testdata/6.12-u64-div-32bit.patch), where a program here
# would link it from libgcc.a (syntax_check reads the calls)
LIBGCC_CALL = re.compile(r"^\s*(?:call|jmp)\s+(__(?:u?(?:div|mod)di3|u?divmoddi4|"
                         r"(?:ashl|ashr|lshr|mul)di3|u?cmpdi2))\b", re.M)


def syntax_check(tree, arch_dir, given, arch_name="x86_64", writer="tree", compat=False):
    """Compile the tree's read and update paths to assembly as the build will,
    with every counter and inline choice (optimised: some warnings come from
    the optimiser): a tree or patch the shim cannot build with the fake
    counter is one line now, not a Bazel failure later (one that fails only
    with another is the build's to report); what each includes is checked
    (compile_tree), and its assembly may have nothing the assembler's gate in
    the build refuses (asm_guard.py: a directive that reads a file), all before
    Bazel or the assembler opens any of it.

    compat: the tree's 32-bit vDSO (compat_problem), which the import's
    transaction does not build: any failure is a ShimError, and only the fake
    counter is compiled (the update path once): the others are the shim's
    asm/msr.h and asm/arch_timer.h, not the tree's, and each x86-64 import
    paid 13 compiles for them; the build's own assembler gate still reads
    each. The libgcc helpers its read path calls (x86's vdso32), sorted."""
    problem = asm_guard().problem
    units = (("reader.c", "lib/vdso/gettimeofday.c"), ("writer.c", "kernel/time/vsyscall.c"))
    if writer == "dwarf":
        return []  # +image variants only: neither is built (dwarf_writer.c is the project's)
    called = set()
    with lifecycle.temp_dir(prefix="vdsobench-check-") as work:
        asm = Path(work) / "unit.s"
        cpu = compile.COMPAT[arch_name][1] if compat else arch.MACHINE[arch_name]
        for counter in ["fake"] + [c for c in compile.counters(cpu) if c != "fake"]:
            for always in (1, 0):
                for unit, what in units:
                    if compat and (counter != "fake" or unit == "writer.c" and not always):
                        continue
                    line = (compile.compat_line(tree, counter, always, arch_name) if compat
                            else compile.compile_line(tree, arch_dir, counter, always))
                    r = compile.compile_tree([*line, "-S", "-o", str(asm),
                                              f"{compile.GLUE}/{unit}"], tree, given, what)
                    if r.returncode != 0 and (compat or (counter, always) == ("fake", 1)):
                        raise ShimError(given, what if (counter, always) == ("fake", 1) else
                                        f"{what} (counter {counter}, VDSO_INLINE_ALWAYS="
                                        f"{always})", compile.first_error(r.stderr, tree))
                    if r.returncode != 0:
                        # the Bazel build fails on it the same way, inside the
                        # import's transaction (undone); no object, nothing to read
                        continue
                    why = problem(asm.read_bytes())
                    if why:
                        raise UsageError(f"import: {given}: {what}'s inline assembly {why}: "
                                         "import takes none; nothing imported")
                    if compat and arch_name == "x86_64" and unit == "reader.c":
                        called.update(LIBGCC_CALL.findall(asm.read_text(errors="replace")))
    return sorted(called)
