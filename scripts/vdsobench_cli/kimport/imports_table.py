"""The imports table (imports.json) and the trees it names, checked whenever
they are read: by the CLI (bazel_sync.py) before a command runs Bazel, and
by the @vdso_imports repository rule (third_party/vdso_imports/repo.bzl),
which runs this file as a script, so that the two see the same table:

    python3 imports_table.py DIR GLUE BUILDING
        -> {"imports": {name: what the rule needs}, "problems": [line, ...]}

An import whose entry is damaged, whose tree is missing, edited (each file's
SHA-256 is in its kimport.json, whose own hash is in the entry) or made with
other glue, or whose import never finished (state "building", and no import
holds the lock) is left out with one line naming it and the command that
mends it; the others are kept. A table that cannot be read at all leaves
every import out, with the command that moves it aside.

Standard library only (and cli/safe_read).
"""

import fcntl
import hashlib
import json
import os
import re
import shlex
import stat
import sys

# Run by the @vdso_imports repository rule as `python3 -E -s -B -m
# vdsobench_cli.kimport.imports_table` from scripts/: standard library only
# (safe_read falls back to its own UsageError there).
from vdsobench_cli.cli import safe_read, trust

TABLE = "imports.json"
LOCK = ".lock"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}\Z")
KEY = re.compile(r"[0-9a-f]{64}\Z")
# One component of a path in a tree: what kernel trees use, and nothing that a
# shell, tar, a glob, Bazel's BUILD language or a C string would read as more.
COMPONENT = re.compile(r"[A-Za-z0-9_.+,=@~][A-Za-z0-9_.+,=@~-]{0,254}\Z")
ARCH_DIRS = {"x86_64": "x86", "arm64": "arm64"}
BUILDING = "building"
MB = 1 << 20
TABLE_LIMIT = 16 * MB
META_LIMIT = 4 * MB
FILE_LIMIT = 16 * MB  # any one file of a tree (arch/x86/Kconfig is 100 KB)


def ident(name):
    """kernel_<name>, letters and digits kept, any other character as _xx (its hex
    code): a C identifier and Bazel target name, one per name."""
    return "kernel_" + "".join(c if c.isalnum() else f"_{ord(c):02x}" for c in name)


def safe_rel(rel):
    """A normalised relative path of safe components: no '', '.', '..', no '/'
    at either end, nothing a glob or a quote would change."""
    parts = rel.split("/") if isinstance(rel, str) else [""]
    return all(COMPONENT.match(p) and p not in (".", "..") for p in parts)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def import_running(directory):
    """True while an import holds the table's lock."""
    try:
        fd = os.open(os.path.join(directory, LOCK), os.O_RDONLY | os.O_NOFOLLOW
                     | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def reimport_command(name, entry):
    argv = ["vdsobench", "import", str(entry.get("source"))]
    for p in entry.get("patches") or []:
        argv += ["--patch", str(p)]
    return " ".join(shlex.quote(a) for a in argv + ["--name", name])


def left_out(name, why, mend):
    shown = name if isinstance(name, str) and NAME.match(name) else ascii(name)
    return f"import kernel:{shown} left out: {why}; mend it with: {mend}"


def table_path(directory):
    return os.path.join(directory, TABLE)


def directory_problem(directory):
    """Why the imports directory cannot hold a table (None: it can, or is absent)."""
    try:
        st = os.stat(directory)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"{directory}: {e.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{directory}: is {safe_read.kind(st.st_mode)}, not a folder"
    return trust.folder_problem(directory)  # what the build compiles: ours alone


def read_raw(directory):
    """({name: entry} as written, None) or (None, why the table is unreadable); {}
    when there is no table."""
    problem = directory_problem(directory)
    if problem:
        return None, problem
    path = table_path(directory)
    try:
        data = safe_read.read_regular(path, "imports table", TABLE_LIMIT, owned=True)
    except safe_read.UsageError as e:
        if not os.path.lexists(path):
            return {}, None
        return None, str(e)
    try:
        obj = json.loads(data.decode("utf-8"))
    except RecursionError:
        return None, f"{path}: not an imports table (nested too deep)"
    except (UnicodeDecodeError, ValueError) as e:
        return None, f"{path}: not an imports table (not valid JSON: {e})"
    imports = obj.get("imports") if isinstance(obj, dict) else None
    if not isinstance(imports, dict):
        return None, f"{path}: not an imports table (no \"imports\" object)"
    return imports, None


def table_mend(directory):
    path = table_path(directory)
    return f"mv {shlex.quote(path)} {shlex.quote(path + '.bad')} (then import again)"


# The kernel's vDSO compile line an entry carries (kbuild.py keeps only these
# shapes of the tree's kbuild line, and the table is checked again here, being
# input like any other): code generation flags, plain defines, and the few
# undefines of Bazel's defaults; never one that loads code or writes files.
KLINE_FLAG = re.compile(r"-(O[0-3sgz]?|std=[a-z0-9+]+|g[a-z0-9-]*|"
                        r"[fm][A-Za-z0-9][A-Za-z0-9-]*(=[A-Za-z0-9_.,+=-]*)?|"
                        r"D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_]*)?|U_FORTIFY_SOURCE)")
KLINE_UNSAFE = re.compile(r"-f(plugin|profile|dump|debug-prefix-map|macro-prefix-map|"
                          r"file-prefix-map|instrument|auto-profile|record-gcc-switches|"
                          r"sanitize|coverage|test-coverage|stack-usage|callgraph-info|"
                          r"opt-info|save-optimization-record|diagnostics)")
KLINE_ONLY_OURS = ("-U_FORTIFY_SOURCE",)  # appended by kbuild.py, never taken from a tree
# what would make the tree's objects disagree with the program's others on how
# a call passes its arguments or how a struct is laid out: never taken
KLINE_ABI = re.compile(r"-(mabi=|fpack-struct|freg-struct-return|fpcc-struct-return|mregparm|"
                       r"mrtd|fcall-used-|fcall-saved-|ffixed-|m16\b|m32\b|mx32\b)")


def kline_ok(copts):
    """An entry's kbuild copts: a list of at most 400 flags of those shapes."""
    return (isinstance(copts, list) and len(copts) <= 400
            and all(isinstance(c, str) and KLINE_FLAG.fullmatch(c)
                    and not KLINE_UNSAFE.match(c) and not KLINE_ABI.match(c) for c in copts))


def entry_problem(name, e):
    """What is wrong with a table entry's own fields (None: nothing)."""
    if not isinstance(name, str) or not NAME.match(name):
        return "not a valid import name"
    if not isinstance(e, dict):
        return "its entry is not an object"
    checks = (("key", lambda v: isinstance(v, str) and KEY.match(v)),
              ("ident", lambda v: v == ident(name)),
              ("arch", lambda v: v in ARCH_DIRS),
              ("arch_dir", lambda v: v == ARCH_DIRS.get(e.get("arch"))),
              ("source", lambda v: isinstance(v, str)),
              ("patches", lambda v: isinstance(v, list)
               and all(isinstance(p, str) for p in v)),
              ("summary", lambda v: isinstance(v, str)),
              ("meta_sha256", lambda v: isinstance(v, str) and KEY.match(v)),
              ("identity", lambda v: isinstance(v, dict)),
              ("state", lambda v: v in (None, BUILDING)),
              ("kbuild", lambda v: v is None or (isinstance(v, dict)
                                                 and kline_ok(v.get("copts")))))
    for field, ok in checks:
        if not ok(e.get(field)):
            return (f"its entry has a bad {field!r} ({ascii(e.get(field))[:60]})"
                    if field in e else f"its entry has no {field!r}")
    return None


def tree_problem(root_fd, directory, e, glue):
    """(meta, None) for an entry whose tree is whole, else (None, why). The
    cache's own lookup passes meta_sha256 None: no entry knows the hash yet."""
    key = e["key"]
    where = os.path.join(directory, "trees", key) + "/"
    try:
        tree = safe_read.open_dir(root_fd, f"trees/{key}", prefix=os.path.join(directory, ""))
    except FileNotFoundError:
        return None, f"its tree {where} is gone from the cache"
    except (OSError, safe_read.UsageError) as err:
        return None, f"its tree: {getattr(err, 'strerror', None) or err}"
    try:
        return tree_meta(tree, where, e, glue)
    finally:
        os.close(tree)


def read_in(tree, where, rel, what, limit):
    return safe_read.read_regular(rel, what, limit, root=tree, prefix=where, owned=True)


def tree_meta(tree, where, e, glue):
    try:
        raw = read_in(tree, where, "kimport.json", "tree description", META_LIMIT)
    except safe_read.UsageError as err:
        return None, f"its tree is damaged ({err})"
    if e["meta_sha256"] is not None and sha256(raw) != e["meta_sha256"]:  # None: a lookup
        return None, f"its tree is damaged ({where}kimport.json was changed)"
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, f"its tree is damaged ({where}kimport.json is not JSON)"
    if glue and (not isinstance(meta, dict) or meta.get("glue") != glue):
        return None, "its tree was made by another vdsobench (other glue)"
    hashes = meta.get("hashes") if isinstance(meta, dict) else None
    files = meta.get("files") if isinstance(meta, dict) else None
    if (not isinstance(hashes, dict) or not isinstance(files, list)
            or sorted(files) != sorted(list(hashes) + ["kimport.json"])
            or not all(safe_rel(f) for f in files)
            or not isinstance(meta.get("kernel"), str)):
        return None, f"its tree is damaged ({where}kimport.json lists bad files)"
    for rel, want in sorted(hashes.items()):
        try:
            data = read_in(tree, where, rel, "cached file", FILE_LIMIT)
        except safe_read.UsageError as err:
            return None, f"its tree is damaged ({err})"
        if sha256(data) != want:
            return None, f"its tree is damaged ({where}{rel} was changed since its import)"
    loose = untrusted_folder(tree)
    if loose:  # another user could swap a file between this check and the build
        return None, f"its tree's folder {where}{loose}"
    extra = extra_entry(tree, set(files))
    if extra:  # a header added there would be found by the compile's -I{root}/include
        return None, f"its tree is damaged ({where}{ascii(extra)[1:-1]} was added since its import)"
    return meta, None


def untrusted_folder(tree):
    """'REL why' for the first folder of the tree (a directory fd; no link
    followed), itself included, that is not root's or this user's alone."""
    for dirpath, _, _, dirfd in os.fwalk(".", dir_fd=tree, follow_symlinks=False):
        why = trust.stat_problem(os.fstat(dirfd))
        if why:
            rel = os.path.normpath(dirpath)
            return f"{'' if rel == '.' else rel + '/'} {why}".lstrip()
    return None


def extra_entry(tree, files):
    """The first thing under the tree (a directory fd; no link followed) that is
    neither a listed file nor a folder (an empty one is harmless: a tarball's
    folder members make some), else None."""
    for dirpath, dirnames, filenames, dirfd in os.fwalk(".", dir_fd=tree,
                                                         follow_symlinks=False):
        base = os.path.normpath(dirpath)
        for name in sorted(dirnames) + sorted(filenames):
            rel = name if base == "." else f"{base}/{name}"
            st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode) or (stat.S_ISREG(st.st_mode) and rel in files):
                continue
            return rel
    return None


def check(directory, glue, building=""):
    """{"good": {name: (entry, meta)}, "problems": [line], "table": why or None}."""
    out = {"good": {}, "problems": [], "table": None}
    imports, why = read_raw(directory)
    if imports is None:
        mend = (table_mend(directory) if directory_problem(directory) is None else
                "export VDSOBENCH_IMPORTS=<a folder> (or unset it)")
        out["table"] = why
        out["problems"].append(f"{why}: every import left out; mend it with: {mend}")
        return out
    if not imports:
        return out
    try:
        root = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        out["table"] = f"{directory}: {e.strerror}"
        out["problems"].append(f"{out['table']}: every import left out")
        return out
    try:
        loose = trees_problem(root, directory)
        if loose:
            out["table"] = loose
            out["problems"].append(f"{loose}: every import left out")
            return out
        running = None
        for name in sorted(imports, key=str):
            e = imports[name]
            meta = None
            why = entry_problem(name, e)
            mend = f"vdsobench import --remove {shlex.quote(str(name))}"
            if why is None:
                mend = f"{reimport_command(name, e)}, or {mend}"
                if e.get("state") == BUILDING and name not in building.split(","):
                    if running is None:
                        running = import_running(directory)
                    why = ("an import of it is still running" if running else
                           "its import did not finish (interrupted?)")
                else:
                    meta, why = tree_problem(root, directory, e, glue)
            if why is None:
                out["good"][name] = (e, meta)
            else:
                out["problems"].append(left_out(name, why, mend))
    finally:
        os.close(root)
    return out


def trees_problem(root, directory):
    """Why the trees folder (under the directory fd root) is not ours alone, or None."""
    try:
        st = os.stat("trees", dir_fd=root, follow_symlinks=False)
    except FileNotFoundError:
        return None
    why = trust.stat_problem(st)
    return f"{os.path.join(directory, 'trees')} {why}" if why else None


def dwarf_read(meta):
    """Whether import wrote the DWARF writer's header from the tree's image."""
    image = meta.get("image")
    dwarf = image.get("dwarf") if isinstance(image, dict) else None
    header = "include/generated/kimport_dwarf.h"
    return (isinstance(dwarf, dict) and dwarf.get("header") == header
            and header in meta.get("files", []))


def image32(meta):
    """Whether import stored the tree's vdso32 image (vdso32_image.take) for
    i386 +image variants: its 32-bit vDSO builds too (compat), as their data
    page's writer is the tree's update path compiled for i386."""
    image = meta.get("image")
    v32 = image.get("vdso32") if isinstance(image, dict) else None
    return (meta.get("compat") is True and meta.get("writer") != "dwarf"
            and isinstance(v32, dict) and v32.get("file") == "vdso/vdso32.so"
            and v32.get("header") == "include/generated/kimport_image32.h"
            and all(f in meta.get("files", []) for f in (v32["file"], v32["header"])))


def rule_view(checked):
    """What the repository rule needs of each good import."""
    return {"imports": {name: {"ident": e["ident"], "arch": e["arch"],
                               "arch_dir": e["arch_dir"], "kernel": meta["kernel"],
                               "key": e["key"], "files": sorted(meta["files"]),
                               "kline": (e.get("kbuild") or {}).get("copts", []),
                               "image": isinstance(meta.get("image"), dict),
                               "image32": e["arch"] == "x86_64" and image32(meta),
                               "dwarf": dwarf_read(meta),
                               "writer": "dwarf" if meta.get("writer") == "dwarf" else "tree",
                               # its 32-bit vDSO builds (probe.compat_problem): an arm64
                               # tree's compat vDSO, an x86-64 tree's vdso32
                               "compat": (e["arch"] in ("arm64", "x86_64") and
                                          meta.get("compat") is True)}
                        for name, (e, meta) in checked["good"].items()},
            "problems": checked["problems"]}


def main(argv):
    directory, glue, building = (argv + ["", "", ""])[:3]
    if not os.path.isabs(directory):
        view = {"imports": {}, "problems": [
            f"$VDSOBENCH_IMPORTS={directory}: not an absolute path: every import left "
            "out; mend it with: export VDSOBENCH_IMPORTS=$PWD/... (the CLI does that)"]}
    else:
        view = rule_view(check(directory, glue, building))
    json.dump(view, sys.stdout, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
