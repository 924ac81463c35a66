"""`import`: a kernel tree's own vDSO read path and update path, with patches on
top, as a variant, measured and checked without booting it.

    vdsobench import SOURCE [--patch FILE]... --name NAME [--arch x86_64]

SOURCE is a kernel tree (a directory) or a kernel source tarball (Debian's
/usr/src/linux-source-6.12.tar.xz; the package name linux-source-6.12 names
that file). Only what the read and update paths need is taken (TAKE below),
the patches are applied in order with `git apply` (-p1, as `git format-patch`
writes them; one that does not apply is one line naming it and its first
failing hunk, exit 2, nothing imported), and the tree's configuration is
written as its build would (include/generated/autoconf.h: what its
arch/x86/Kconfig selects, CONFIG_TIME_NS=y as Debian builds it). The tree's
own lib/vdso/gettimeofday.c and kernel/time/vsyscall.c are then compiled,
unmodified, against kernel_import/shim (a few kernel headers, each saying
which it stands for) into the variants kernel:NAME+COUNTER+INLINE: every
counter and inline choice of impls/variants.bzl, like any layout, so list,
verify, run, compare, sim, layout, gate and the recipes take them.

Where it lives: the imports directory, $VDSOBENCH_IMPORTS or
.vdsobench-imports/ in the repository (it ignores itself in git), holds
imports.json (the table: name -> tree) and trees/<key>/, one per source and
patch series, keyed by their SHA-256 (a tarball's is remembered by path, size
and mtime), so a second import of the same thing is a table entry. Bazel reads
the table through the @vdso_imports repository rule
(third_party/vdso_imports/repo.bzl), which every command of this CLI re-runs
when the table changes (VDSOBENCH_IMPORTS_DIGEST); a clean clone has no table
and builds as it always did.
"""

import argparse
import ast
import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from . import arch, build, bundle, lifecycle, packages, results
from .errors import Failure, UsageError

ROOT = build.ROOT
DIR_ENV = "VDSOBENCH_IMPORTS"
DIGEST_ENV = "VDSOBENCH_IMPORTS_DIGEST"
GLUE_ENV = "VDSOBENCH_GLUE_DIGEST"
TABLE = "imports.json"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}\Z")
PREFIX = "kernel:"
# --arch -> the kernel's arch/ directory; the shim and glue are x86-64's
ARCH_DIRS = {"x86_64": "x86"}
COPTS_BZL = ROOT / "kernel_import" / "copts.bzl"
GLUE = "kernel_import/glue"
# What make_tree() writes into a tree besides the tree's files (autoconf.h,
# kimport_desc.h, kimport_includes.h, kimport.json): raise it with any change
# to that, so that cached trees are made again (glue_digest()).
GENERATED = 1
VERIFY = "//verify:vdsobench_verify"
AGREE = "//kernel_import:vdsobench_agree"

# What is taken from a tree, relative to its top ({arch}: ARCH_DIRS); a pattern
# ending in /* takes that folder's files. Those in REQUIRED must be there.
TAKE = (
    "Makefile",  # VERSION, PATCHLEVEL, SUBLEVEL
    "arch/{arch}/Kconfig",  # what the architecture selects
    "lib/vdso/gettimeofday.c",  # the read path
    "include/vdso/*",  # its data page, helpers, math
    "include/asm-generic/vdso/*",  # the update path's generic arch hooks
    "arch/{arch}/include/asm/vdso/*",  # the architecture's hooks
    "kernel/time/vsyscall.c",  # the update path
    "kernel/time/timekeeping_internal.h",
    "include/linux/timekeeper_internal.h",  # struct timekeeper
    "include/uapi/linux/time.h",  # clock ids, struct timezone
    "include/uapi/linux/time_types.h",  # __kernel_timespec
    "include/uapi/linux/const.h",
    "include/uapi/linux/bits.h",
    "include/uapi/asm-generic/errno-base.h",
)
REQUIRED = ("Makefile", "arch/{arch}/Kconfig", "lib/vdso/gettimeofday.c",
            "include/vdso/datapage.h", "include/vdso/helpers.h", "kernel/time/vsyscall.c",
            "include/linux/timekeeper_internal.h",
            "arch/{arch}/include/asm/vdso/gettimeofday.h")

# The Kconfig symbols the vDSO and the update path test, as the architecture
# selects them (config X86 / X86_64 / 64BIT); a select whose condition is one of
# TRUE counts (GCC has __int128, the build is 64-bit).
KCONFIG = ("GENERIC_GETTIMEOFDAY", "GENERIC_TIME_VSYSCALL", "GENERIC_VDSO_TIME_NS",
           "GENERIC_VDSO_OVERFLOW_PROTECT", "HAVE_GENERIC_VDSO", "ARCH_SUPPORTS_INT128",
           "GENERIC_VDSO_DATA_STORE", "ARCH_HAS_VDSO_TIME_DATA", "ARCH_HAS_VDSO_ARCH_DATA",
           "VDSO_GETRANDOM")
KCONFIG_BLOCKS = ("X86", "X86_64", "64BIT")
TRUE = {"X86", "X86_64", "64BIT", "CC_HAS_INT128"}
# Always set: the build is x86-64 with 4 KiB pages and HZ=250 (Debian's), and
# CONFIG_TIME_NS (default y, Debian's) wherever the architecture allows it.
BASE_CONFIG = {"X86": 1, "X86_64": 1, "64BIT": 1, "PAGE_SHIFT": 12, "HZ": 250}

# What differs between tree shapes, found by looking (name -> file, pattern): each
# becomes a KIMPORT_<name> define the glue reads (kernel_import/glue/writer.c).
FEATURES = {
    "TIME_DATA": ("include/vdso/datapage.h", r"struct\s+vdso_time_data\s*\{"),
    "TZ_STRUCT": ("include/vdso/datapage.h", r"struct\s+timezone\s+tz\s*;"),
    "AUX_CLOCK_DATA": ("include/vdso/datapage.h", r"\baux_clock_data\b"),
    "TK_COARSE_NSEC": ("include/linux/timekeeper_internal.h", r"\bcoarse_nsec\b"),
    "TK_LOCK_FUNCS": ("kernel/time/timekeeping_internal.h", r"\btimekeeper_lock_irqsave\b"),
}

HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@.*$", re.M)


# ---- where things are -------------------------------------------------------------------

def imports_dir():
    return Path(os.environ.get(DIR_ENV) or ROOT / ".vdsobench-imports")


def table_path():
    return imports_dir() / TABLE


def read_table():
    """{name: entry} of the imports table ({} when there is none)."""
    path = table_path()
    try:
        obj = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise Failure(f"{path}: unreadable imports table ({e}); remove it and import "
                      "again") from None
    imports = obj.get("imports") if isinstance(obj, dict) else None
    if not isinstance(imports, dict):
        raise Failure(f"{path}: not an imports table (no \"imports\" object); remove it "
                      "and import again")
    return imports


def digest():
    """The table's SHA-256 ('none' without one): what @vdso_imports is re-run on."""
    try:
        return hashlib.sha256(table_path().read_bytes()).hexdigest()
    except OSError:
        return "none"


def glue_digest():
    """The SHA-256 of what decides a cached tree's generated headers (the probe's
    reading of the tree, its configuration): the shim, the probe and the headers
    it shares with writer.c, the compile line, and GENERATED. Part of the cache
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


def sync_env():
    """Tell Bazel (through the environment every command's bazel inherits) which
    table it must see, and which glue: @vdso_imports is re-run whenever either
    value changes."""
    if build.bundled():  # prebuilt: no Bazel, no imports
        return
    os.environ[DIGEST_ENV] = digest()
    os.environ[GLUE_ENV] = glue_digest()


def write_table(imports):
    d = imports_dir()
    d.mkdir(parents=True, exist_ok=True)
    ignore = d / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# vdsobench import's cache: never committed\n*\n")
    results.write_atomic(table_path(), {"version": 1, "imports": imports}, force=True,
                         what="the imports table")
    sync_env()


def ident(name):
    """kernel_<name>, letters and digits kept, any other character as _xx (its hex
    code): a C identifier and Bazel target name, one per name."""
    return "kernel_" + "".join(c if c.isalnum() else f"_{ord(c):02x}" for c in name)


def layout_of(name):
    return PREFIX + name


def is_import(layout):
    return str(layout).startswith(PREFIX)


def object_of(v, bin_dir):
    """writer.o of an imported variant: the compile unit with the tree's own
    struct vdso_data, for layout's pahole cross-check."""
    prefix = f"{ident(v['layout'][len(PREFIX):])}__{v['counter']}__{v['inline']}"
    return bin_dir / "impls" / "_objs" / f"variant_{prefix}_tree" / "writer.o"


# ---- the source -------------------------------------------------------------------------

def debian_package(source):
    """The Debian package that provides a source tarball path (or is named), else None."""
    m = re.fullmatch(r"(?:/usr/src/)?(linux-source-\d+\.\d+)(?:\.tar\.xz)?", str(source))
    return m.group(1) if m else None


def resolve_source(given):
    """The tree or tarball SOURCE names, installing Debian's package for a
    /usr/src/linux-source-X.Y.tar.xz (or linux-source-X.Y) that is missing."""
    path = Path(given)
    package = debian_package(given)
    if package and not path.exists():
        path = Path(f"/usr/src/{package}.tar.xz")
        if not path.exists():
            packages.ensure_group((package,), f"import {given}")
    if path.is_dir() or path.is_file():
        return path.resolve()
    hint = f"; Debian's {package} package provides it" if package else ""
    raise UsageError(f"import: {given}: no such kernel tree or tarball (valid: a "
                     f"directory, a .tar.xz/.tar.gz/.tar, or linux-source-X.Y{hint})")


def expand(patterns, arch_dir):
    return [p.replace("{arch}", arch_dir) for p in patterns]


def tarball_sha256(path):
    """A tarball's SHA-256, remembered by path, size, mtime and inode (sources.json):
    hashing 150 MB again would make a cached import take a second."""
    st = path.stat()
    key = f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    memo_path = imports_dir() / "sources.json"
    try:
        memo = json.loads(memo_path.read_text())
    except (OSError, ValueError):
        memo = {}
    if not isinstance(memo, dict):
        memo = {}
    if key not in memo:
        memo[key] = bundle.sha256(path)
        imports_dir().mkdir(parents=True, exist_ok=True)
        results.write_atomic(memo_path, memo, force=True, what="the source hashes")
    return memo[key]


def tree_files(tree, patterns):
    """The files of a directory tree the patterns name (relative paths, sorted)."""
    out = set()
    for pattern in patterns:
        if pattern.endswith("/*"):
            folder = tree / pattern[:-2]
            if folder.is_dir():
                out |= {str(f.relative_to(tree)) for f in folder.iterdir() if f.is_file()}
        elif (tree / pattern).is_file():
            out.add(pattern)
    return sorted(out)


def source_identity(source, patterns):
    """(kind, SHA-256): a tarball's own hash, or a directory's over the files taken."""
    if source.is_file():
        return "tarball", tarball_sha256(source)
    h = hashlib.sha256()
    for rel in tree_files(source, patterns):
        h.update(rel.encode() + b"\0" + (source / rel).read_bytes() + b"\0")
    return "tree", h.hexdigest()


def tar_top(tarball):
    """The folder every member of a kernel tarball is under (linux-source-6.12)."""
    proc = lifecycle.popen(["tar", "-tf", str(tarball)], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, errors="replace")
    with lifecycle.owned(proc):
        first = proc.stdout.readline().strip()
        proc.kill()
    top = first.split("/", 1)[0]
    if not top or top in (".", ".."):
        raise UsageError(f"import: {tarball}: not a kernel source tarball (its first "
                         f"member is {first!r}, not a top folder)")
    return top


def extract(source, patterns, into):
    """Copy (or untar) the files the patterns name from source into `into`."""
    if source.is_dir():
        for rel in tree_files(source, patterns):
            dst = into / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes((source / rel).read_bytes())
        return
    top = tar_top(source)
    wanted = [f"{top}/{p}" for p in patterns]
    r = lifecycle.run(["tar", "-xf", str(source), "-C", str(into), "--strip-components=1",
                       "--wildcards", "--no-wildcards-match-slash", *wanted],
                      capture_output=True, text=True, errors="replace")
    # a pattern one version lacks (uapi/linux/bits.h before v6.14) is fine here;
    # REQUIRED is checked afterwards
    errors = [line for line in r.stderr.splitlines()
              if "Not found in archive" not in line and "previous errors" not in line]
    if r.returncode != 0 and errors:
        raise UsageError(f"import: {source}: tar failed: {errors[0]}")


# ---- patches ----------------------------------------------------------------------------

def patch_targets(text):
    """[(path, [hunk headers])]: each file a unified diff (git's a/ b/, -p1) changes,
    with its hunks in order."""
    out = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("+++ ") and i and lines[i - 1].startswith("--- "):
            new, old = line[4:].split("\t")[0].strip(), lines[i - 1][4:].split("\t")[0].strip()
            name = old if new == "/dev/null" else new
            out.append((name.split("/", 1)[1] if "/" in name else name, []))
        elif out and (m := HUNK.match(line)):
            out[-1][1].append(m.group(0))
    return out


def check_patches(paths):
    """[(path, text, targets)] for each --patch, or UsageError naming the bad one."""
    out = []
    for p in paths:
        try:
            text = Path(p).read_text(errors="replace")
        except OSError as e:
            raise UsageError(f"import: --patch {p}: {e.strerror}") from None
        targets = patch_targets(text)
        if not targets:
            raise UsageError(f"import: --patch {p}: not a unified diff (no ---/+++ file "
                             "lines; git format-patch or diff -u output is)")
        out.append((Path(p), text, targets))
    return out


def failing_hunk(patch, targets, stderr):
    """The one line for a patch git apply refused: the file and first failing hunk."""
    m = re.search(r"patch failed: (.+):(\d+)", stderr)
    if m:
        name, line = m.group(1), int(m.group(2))
        for path, hunks in targets:
            if path != name:
                continue
            for n, header in enumerate(hunks, 1):
                if int(HUNK.match(header).group(1)) == line:
                    return f"{name} hunk #{n} ({header.strip()})"
        return f"{name} at line {line}"
    m = re.search(r"error: (.+?): (No such file or directory|does not exist in index)",
                  stderr)
    if m:
        return f"{m.group(1)} is not in the tree"
    first = next((x for x in stderr.splitlines() if x.startswith("error:")),
                 build.tail(stderr, 1))
    return first.removeprefix("error: ").strip()


def apply_patches(tree, patches):
    """git apply each patch in order in `tree` (outside any repository, whatever
    folder it is in); UsageError with the first failing hunk."""
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=str(tree.parent))
    for path, text, targets in patches:
        r = lifecycle.run(["git", "apply", "--whitespace=nowarn", "-"], input=text,
                          cwd=tree, env=env, capture_output=True, text=True,
                          errors="replace")
        if r.returncode != 0:
            raise UsageError(f"import: {path} does not apply: "
                             f"{failing_hunk(path, targets, r.stderr)}")


# ---- the tree's configuration -----------------------------------------------------------

def kernel_version(makefile):
    """(VERSION, PATCHLEVEL, SUBLEVEL, 'X.Y.Z<EXTRAVERSION>') of the top Makefile."""
    values = dict(re.findall(r"^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)\s*=[ \t]*(\S*)",
                             makefile, re.M))
    try:
        v, p, s = (int(values[k]) for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL"))
    except (KeyError, ValueError):
        return None
    return v, p, s, f"{v}.{p}.{s}{values.get('EXTRAVERSION', '')}"


def kconfig_selects(text):
    """The KCONFIG symbols the architecture's main config blocks select, and the
    selects left out because their condition is not known here."""
    chosen, skipped, block = set(), [], None
    for line in text.splitlines():
        if m := re.match(r"^(?:menu)?config\s+(\w+)", line):
            block = m.group(1)
            continue
        if block not in KCONFIG_BLOCKS:
            continue
        m = re.match(r"^\s+select\s+(\w+)(?:\s+if\s+(.+?))?\s*(?:#.*)?$", line)
        if not m or m.group(1) not in KCONFIG:
            continue
        cond = m.group(2)
        if cond is None or cond.strip() in TRUE:
            chosen.add(m.group(1))
        else:
            skipped.append(f"{m.group(1)} if {cond}")
    return chosen, skipped


def configuration(tree, arch_dir):
    """{CONFIG name: value} as the tree's build would set them for the vDSO."""
    chosen, skipped = kconfig_selects((tree / f"arch/{arch_dir}/Kconfig").read_text(
        errors="replace"))
    config = dict(BASE_CONFIG)
    config.update({name: 1 for name in sorted(chosen)})
    if "GENERIC_VDSO_TIME_NS" in chosen:
        config["TIME_NS"] = 1
    # v6.17's auxiliary clocks, where the tree's vDSO has them, as generic_6_17 is built
    datapage = tree / "include" / "vdso" / "datapage.h"
    if re.search(FEATURES["AUX_CLOCK_DATA"][1], datapage.read_text(errors="replace")):
        config["POSIX_AUX_CLOCKS"] = 1
    return config, skipped


def features(tree):
    found = []
    for name, (rel, pattern) in FEATURES.items():
        path = tree / rel
        if path.is_file() and re.search(pattern, path.read_text(errors="replace")):
            found.append(name)
    return found


def write_autoconf(tree, config, found):
    lines = ["/* include/generated/autoconf.h, written by `vdsobench import`: the",
             " * configuration the tree's vDSO and update path are built with (what",
             " * its arch Kconfig selects, TIME_NS as Debian sets it), and the",
             " * KIMPORT_* shape of its interfaces, which kernel_import/glue reads. */"]
    lines += [f"#define CONFIG_{k} {v}" for k, v in config.items()]
    lines += [f"#define KIMPORT_{name} 1" for name in found]
    out = tree / "include" / "generated" / "autoconf.h"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")


def write_includes(tree):
    """include/generated/kimport_includes.h: the #include lines of the tree's
    lib/vdso/gettimeofday.c, in its order, which reader.c and probe.c include
    before the read path itself (kernel_import/glue/reader.c says why)."""
    text = (tree / "lib" / "vdso" / "gettimeofday.c").read_text(errors="replace")
    lines = ["/* include/generated/kimport_includes.h, written by `vdsobench import`:",
             " * lib/vdso/gettimeofday.c's own #include lines, in its order */"]
    lines += re.findall(r"^#\s*include\s*<[^>]+>", text, re.M)
    out = tree / "include" / "generated" / "kimport_includes.h"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")


def c_string(text):
    """A C string literal of plain ASCII text."""
    text = text.encode("ascii", "replace").decode()
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_desc(tree, version, probe, source_text, summary):
    lines = ["/* include/generated/kimport_desc.h, written by `vdsobench import` from",
             " * kernel_import/glue/probe.c's reading of the tree (writer.c checks the",
             " * sizes again when it is built) */"]
    values = {"VERSION": version[0], "PATCHLEVEL": version[1],
              "SUBLEVEL": min(version[2], 255),
              "SOURCE": c_string(source_text), "SUMMARY": c_string(summary),
              "DATA_SIZE": probe["data_size"], "NR_FIELDS": len(probe["fields"]),
              "HRES_CLOCKS": probe["hres_clocks"], "COARSE_CLOCKS": probe["coarse_clocks"],
              "RAW_CLOCKS": probe["raw_clocks"], "AUX_CLOCKS": probe["aux_clocks"],
              "HAS_GETRES": probe["has_getres"]}
    lines += [f"#define KIMPORT_{k} {v}" for k, v in values.items()]
    (tree / "include" / "generated" / "kimport_desc.h").write_text("\n".join(lines) + "\n")


# ---- compiling it here ------------------------------------------------------------------

def tree_copts(tree, arch_dir):
    """kernel_import/copts.bzl's TREE_COPTS for this tree: the one compile line,
    read as Bazel reads it."""
    m = re.search(r"^TREE_COPTS = (\[.*?^\])", COPTS_BZL.read_text(), re.M | re.S)
    return [c.replace("{root}", str(tree)).replace("{arch}", arch_dir)
            for c in ast.literal_eval(m.group(1))]


def compile_line(tree, arch_dir):
    return ["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-iquote", ".",
            "-DVDSO_PREFIX=kimport_probe", "-DVDSO_INLINE_ALWAYS=1",
            "-DVDSO_COUNTER_HEADER=impls/counters/fake.h", *tree_copts(tree, arch_dir)]


def first_error(text, tree):
    """gcc's first error, one line, paths shown relative to the tree or project."""
    lines = [x for x in text.splitlines() if ": error: " in x or ": fatal error: " in x]
    line = lines[0] if lines else build.tail(text, 1)
    return " ".join(line.replace(f"{tree}/", "").replace(f"{ROOT}/", "").split())


def probe(tree, arch_dir, workdir, given):
    """Compile and run kernel_import/glue/probe.c against the tree: its data size,
    field table and clock masks; UsageError with what the shim could not provide."""
    binary = workdir / "probe"
    r = lifecycle.run([*compile_line(tree, arch_dir), "-o", str(binary),
                       f"{GLUE}/probe.c"], cwd=ROOT, capture_output=True, text=True,
                      errors="replace")
    if r.returncode != 0:
        raise UsageError(f"import: {given}: the shim cannot build this tree's vDSO data: "
                         f"{first_error(r.stderr, tree)}")
    r = lifecycle.run([str(binary)], capture_output=True, text=True, errors="replace")
    try:
        return json.loads(r.stdout)
    except ValueError:
        raise Failure(f"import: the probe of {given} printed no description "
                      f"(exit {r.returncode})") from None


def syntax_check(tree, arch_dir, given):
    """Compile the tree's read and update paths (optimised, as the build will: some
    warnings come from the optimiser), output thrown away: a tree or patch the
    shim cannot build is one line now, not a Bazel failure later."""
    for unit, what in (("reader.c", "lib/vdso/gettimeofday.c"),
                       ("writer.c", "kernel/time/vsyscall.c")):
        r = lifecycle.run([*compile_line(tree, arch_dir), "-c", "-o", os.devnull,
                           f"{GLUE}/{unit}"], cwd=ROOT, capture_output=True, text=True,
                          errors="replace")
        if r.returncode != 0:
            raise UsageError(f"import: {given}: the shim cannot build this tree's {what}: "
                             f"{first_error(r.stderr, tree)}")


# ---- import -----------------------------------------------------------------------------

def cache_key(arch_name, identity, patches):
    blob = json.dumps({"glue": glue_digest(), "arch": arch_name, "source": identity,
                       "patches": [hashlib.sha256(t.encode()).hexdigest()
                                   for _, t, _ in patches]}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def describe(source, version, patches):
    """(source text for list, one-line summary)."""
    names = [p.name for p, _, _ in patches]
    with_patches = f" + {', '.join(names)}" if names else ""
    return (f"lib/vdso/gettimeofday.c, kernel/time/vsyscall.c of {source.name} "
            f"(Linux {version[3]}){with_patches}",
            f"imported: Linux {version[3]} from {source.name}" +
            (f" with {len(names)} patch{'es' if len(names) > 1 else ''}" if names else ""))


def make_tree(source, given, arch_name, patches, key):
    """trees/<key>/: the taken files, patched, configured and probed. The folder
    appears whole (renamed into place) or not at all."""
    arch_dir = ARCH_DIRS[arch_name]
    trees = imports_dir() / "trees"
    trees.mkdir(parents=True, exist_ok=True)
    final = trees / key
    stage = Path(lifecycle.new_temp_dir(trees, ".staging-"))
    try:
        wanted = expand(TAKE, arch_dir)
        touched = [t for _, _, targets in patches for t, _ in targets]
        extract(source, wanted + [t for t in touched if t not in wanted], stage)
        for rel in expand(REQUIRED, arch_dir):
            if not (stage / rel).is_file():
                raise UsageError(f"import: {given}: not a kernel tree with a generic vDSO "
                                 f"for {arch_name} (no {rel})")
        apply_patches(stage, patches)
        version = kernel_version((stage / "Makefile").read_text(errors="replace"))
        if version is None:
            raise UsageError(f"import: {given}: its Makefile names no VERSION, PATCHLEVEL "
                             "and SUBLEVEL")
        config, skipped = configuration(stage, arch_dir)
        found = features(stage)
        write_autoconf(stage, config, found)
        write_includes(stage)
        source_text, summary = describe(source, version, patches)
        with lifecycle.temp_dir(prefix="vdsobench-probe-") as work:
            description = probe(stage, arch_dir, Path(work), given)
        write_desc(stage, version, description, source_text, summary)
        syntax_check(stage, arch_dir, given)
        files = sorted(str(f.relative_to(stage)) for f in stage.rglob("*") if f.is_file())
        meta = {"glue": glue_digest(), "kernel": version[3], "version": list(version[:3]),
                "arch": arch_name, "arch_dir": arch_dir, "config": config,
                "kconfig_skipped": skipped, "features": found, "probe": description,
                "source": source_text, "summary": summary,
                "patches": [{"name": p.name, "sha256": hashlib.sha256(t.encode()).hexdigest(),
                             "files": [f for f, _ in targets]} for p, t, targets in patches],
                "files": files + ["kimport.json"]}
        (stage / "kimport.json").write_text(json.dumps(meta, indent=1) + "\n")
        if final.exists():  # another import made it meanwhile: same content
            lifecycle.discard(str(stage), "dir")
        else:
            os.replace(stage, final)
            lifecycle.forget(str(stage))
    except BaseException:
        lifecycle.discard(str(stage), "dir")
        raise
    return meta


def cached_meta(key):
    try:
        meta = json.loads((imports_dir() / "trees" / key / "kimport.json").read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and meta.get("glue") == glue_digest() else None


def rebuild(previous):
    """Build the variants as the table now says; on failure put the previous table
    back (so that the project still builds) and fail."""
    try:
        build.build([VERIFY])
    except Failure:
        restore(previous)
        build.bazel("build", [VERIFY])  # back to a build of the previous table
        raise


def variant_names(name):
    from . import variants
    return [v["name"] for v in variants.load() if v.get("layout") == layout_of(name)]


def check_name(name):
    if not NAME.match(name or ""):
        raise UsageError(f"import: --name {name!r}: 1 to 40 letters, digits, '.', '_' or "
                         "'-', starting with a letter or digit (e.g. 6.12-mine)")


def take_in(given, patch_paths, name):
    """The table entry for SOURCE + patches under a name: its tree made (or found in
    the cache). (entry, meta, cached, seconds); nothing is registered yet."""
    check_name(name)
    arch_name = arch.current().name
    if arch_name not in ARCH_DIRS:
        raise UsageError(f"import: --arch {arch_name}: imported trees build for "
                         f"{', '.join(ARCH_DIRS)} only (valid: {', '.join(ARCH_DIRS)})")
    patches = check_patches(patch_paths)
    source = resolve_source(given)
    packages.ensure_setup()
    t0 = time.monotonic()
    identity = source_identity(source, expand(TAKE, ARCH_DIRS[arch_name]))
    key = cache_key(arch_name, identity, patches)
    meta = cached_meta(key)
    cached = meta is not None
    if not cached:
        meta = make_tree(source, given, arch_name, patches, key)
    entry = {"key": key, "ident": ident(name), "arch": arch_name,
             "arch_dir": ARCH_DIRS[arch_name], "kernel": meta["kernel"],
             "source": str(source), "patches": [str(p) for p, _, _ in patches],
             "summary": meta["summary"]}
    return entry, meta, cached, time.monotonic() - t0


def restore(previous):
    """Put a table back as it was (None: there was none)."""
    if previous is None:
        table_path().unlink(missing_ok=True)
        sync_env()
    else:
        write_table(previous)


def snapshot():
    return dict(read_table()) if table_path().exists() else None


@contextlib.contextmanager
def temporary(wanted):
    """Import {name: (SOURCE, [patch paths])} for the length of a block (the
    patch-review recipe's before and after), built; the table is put back as it
    was afterwards, whatever happens. Yields {name: meta}."""
    previous = snapshot()
    metas, imports = {}, dict(previous or {})
    try:
        for name, (given, patch_paths) in wanted.items():
            imports[name], metas[name], _, _ = take_in(given, patch_paths, name)
        write_table(imports)
        build.build([VERIFY])
        yield metas
    finally:
        restore(previous)


def do_import(args):
    entry, meta, cached, t_tree = take_in(args.source, args.patch or [], args.name)
    imports = read_table()
    previous = snapshot()
    replaced = args.name in imports and imports[args.name].get("key") != entry["key"]
    imports[args.name] = entry
    write_table(imports)
    t1 = time.monotonic()
    rebuild(previous)
    t_build = time.monotonic() - t1
    names = variant_names(args.name)
    how = (f"the tree from the cache in {t_tree:.1f} s" if cached else
           f"the tree taken, patched and probed in {t_tree:.1f} s")
    print(f"import: {layout_of(args.name)}: {meta['summary']}"
          f"{' (replaces the previous import of that name)' if replaced else ''}")
    print(f"import: {how}, built in {t_build:.1f} s; {len(names)} variants: "
          f"{layout_of(args.name)}+{{{','.join(sorted({n.split('+')[1] for n in names}))}}}"
          f"+{{{','.join(sorted({n.split('+')[2] for n in names}))}}}")
    return check_agreement(args)


def check_agreement(args):
    """--agree LAYOUT: 0 when the import reads as the layout does, else 1."""
    if not args.agree:
        return 0
    status, lines = agree(args.name, args.agree)
    print("\n".join(lines))
    return status


def agree(name, layout):
    """vdsobench_agree between the import's fake-counter variants and a layout's
    (each inline choice with its own): (exit status, the summary lines)."""
    from . import variants
    build.build([AGREE])
    registry = {v["name"] for v in variants.load()}
    if not any(n.startswith(f"{layout}+fake+") for n in registry):
        layouts = sorted({n.split("+")[0] for n in registry if not is_import(n)})
        raise UsageError(f"import: --agree {layout}: not a layout (valid: "
                         f"{', '.join(layouts)})")
    status, lines = 0, []
    for inline in ("always", "auto"):
        a, b = f"{layout_of(name)}+fake+{inline}", f"{layout}+fake+{inline}"
        if a not in registry or b not in registry:
            continue
        r = lifecycle.run(build.program(AGREE) + [a, b], capture_output=True, text=True,
                          errors="replace")
        if r.returncode not in (0, 1):
            raise Failure(f"import: vdsobench_agree {a} {b} failed (exit {r.returncode}): "
                          f"{build.tail(r.stderr, 1)}")
        status = max(status, r.returncode)
        lines += r.stdout.splitlines()
    return status, lines


def do_list():
    imports = read_table()
    if not imports:
        print(f"import: no imported trees ({table_path()} has none)")
        return 0
    for name, e in sorted(imports.items()):
        stale = "" if cached_meta(str(e.get("key"))) else (
            "  (made by another vdsobench, left out of the build: import it again)")
        print(f"{layout_of(name)}  Linux {e.get('kernel')}  {e.get('summary')}  "
              f"[{str(e.get('key'))[:12]}]{stale}")
        for p in e.get("patches", []):
            print(f"    patch {p}")
    return 0


def do_remove(name):
    imports = read_table()
    if name not in imports:
        raise UsageError(f"import: --remove {name}: no such import (valid: "
                         f"{', '.join(sorted(imports)) or 'none imported'})")
    previous = snapshot()
    del imports[name]
    write_table(imports)
    rebuild(previous)
    print(f"import: removed {layout_of(name)} (its tree stays in the cache, "
          f"{imports_dir() / 'trees'})")
    return 0


def run(args):
    if args.list:
        return do_list()
    if args.remove:
        return do_remove(args.remove)
    if args.agree and args.name and not args.source:
        if args.name not in read_table():
            raise UsageError(f"import: --name {args.name}: no such import (valid: "
                             f"{', '.join(sorted(read_table())) or 'none imported'})")
        return check_agreement(args)
    if not args.source or not args.name:
        raise UsageError("import: SOURCE and --name are required (or --list, --remove NAME, "
                         "or --name NAME --agree LAYOUT for an import made before)")
    return do_import(args)


def add_parser(sub):
    # Every command builds through Bazel, which must see the imports table as it
    # is now: the one thing this module does for the others.
    sync_env()
    p = sub.add_parser(
        "import", help="a kernel tree (or Debian's source tarball) and patches as a variant",
        description="Take a kernel tree's own lib/vdso/gettimeofday.c and\n"
                    "kernel/time/vsyscall.c (with what they include), apply the patches\n"
                    "in order, and build them, unmodified, against a small shim of kernel\n"
                    "headers into the variants kernel:NAME+COUNTER+INLINE, which every\n"
                    "command takes. A second import of the same tree and patches comes\n"
                    "from the cache.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  vdsobench import /usr/src/linux-source-6.12.tar.xz --name 6.12\n"
               "  vdsobench import ~/linux --patch 0001-vdso-mine.patch --name mine\n"
               "  vdsobench verify 'kernel:mine+*'\n"
               "  vdsobench import --list\n\n"
               f"The cache: ${DIR_ENV}, else .vdsobench-imports/ in the repository.")
    p.add_argument("source", nargs="?", metavar="SOURCE",
                   help="a kernel tree, a source tarball, or linux-source-X.Y (Debian's "
                        "/usr/src/linux-source-X.Y.tar.xz, installed when missing, as root)")
    p.add_argument("--patch", action="append", metavar="FILE",
                   help="a patch (git format-patch or diff -u, -p1) applied on top, in the "
                        "order given; repeat for a series")
    p.add_argument("--name", metavar="NAME",
                   help="the variants' name: kernel:NAME+COUNTER+INLINE")
    p.add_argument("--agree", metavar="LAYOUT",
                   help="then compare the import with a transcribed layout (e.g. "
                        "generic_6_10 for a 6.12 tree) reading by reading on the fake "
                        "counter: every clock, getres, gettimeofday and time in a series "
                        "of kernel states; exit 1 on any difference")
    p.add_argument("--list", action="store_true", help="the imported trees, and exit")
    p.add_argument("--remove", metavar="NAME", help="forget an import (its variants go)")
    arch.add_argument(p, "the architecture whose vDSO to take (x86_64; the only one "
                         "the shim has)")
    p.set_defaults(func=run)
