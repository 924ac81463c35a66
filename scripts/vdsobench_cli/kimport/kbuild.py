"""The kernel's own compile line for its vDSO, from the tree's own kbuild.

For an imported tree (`vdsobench import`), with a configuration
(kbuild_config.py: the user's --config FILE, the tree's own .config,
Debian's for the tree's version, the running kernel's, x86_64_defconfig):

    make olddefconfig && make prepare && make -k V=1 arch/x86/entry/vdso/
    (make x86_64_defconfig first instead, where there is none)

then the exact command kbuild ran for the 64-bit vDSO's vclock_gettime.o,
from the .vclock_gettime.o.cmd file kbuild writes beside it (savedcmd_ from
v6.2 on, cmd_ before; the V=1 output carries the same line but interleaved
with everything else). Where that is, arch/x86/entry/vdso/ (v6.1, v6.12) or
its vdso64/ (v7.3), is found by looking at the built tree (kbuild_tree.py).

The line is split (kbuild_line.py) into what the import's read path is
built with and what cannot apply, each with its reason.

Running kbuild runs the tree's Makefiles and scripts, confined: import does
it by default for Debian's own packages (linux-source-X.Y) and for a folder
that is a whole tree (request.default_kbuild), for any other tree when
asked (--kbuild or --config). A folder is built in a copy, never in place.

The result is cached in ~/.cache/vdsobench/kbuild/<key>/ ($VDSOBENCH_KBUILD_CACHE;
line.json, vclock_gettime.o, vdso64.so, vdso64.so.dbg, and vdso32.so{,.dbg}
where kbuild built the 32-bit vDSO: kbuild_vdso32.py), shared by every imports directory,
the key the SHA-256 of the tree's identity (its hash and its patches'), the
configuration's hash and the compiler's path and version: a second import
is a lookup. Patches that touch none of kbuild's inputs (Makefiles, Kbuild,
Kconfig, scripts/, the vDSO's linker scripts) leave the line as it is: such
an import takes the unpatched tree's line (and its objects are the
unpatched tree's: the record's tree.patches is then []).
"""

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from vdsobench_cli.kimport import (kbuild_config, kbuild_inputs, kbuild_kept, kbuild_tree,
                                   kbuild_vdso32, newer_sources, patches as patches_mod,
                                   vdso_image)
from vdsobench_cli.kimport.kbuild_line import NEUTRALISE, classify, parse_cmd
from vdsobench_cli.cli import caches, confine, lifecycle, safe_read, tools
from vdsobench_cli.cli.errors import UsageError

VDSO_DIR = kbuild_tree.VDSO_DIR
DEBIAN_CONFIG = kbuild_config.DEBIAN_CONFIG
TOOLS = ("make", "flex", "bison", "bc")
CONFIG_LIMIT = kbuild_config.CONFIG_LIMIT
CMD_LIMIT = 1 << 20
OUTPUT_LIMIT = 64 << 20  # vclock_gettime.o, vdso64.so{,.dbg}: a few hundred KB
MAKE_TIMEOUT = 1800
# raise with any change to what is kept or dropped: cached lines are made again
# (4: a folder's record lists the files it was compiled from, kbuild_inputs.py;
# 5: the 32-bit vDSO kept and recorded, kbuild_vdso32.py)
FORMAT = 5

def compiler_identity(cc):
    """{path, version}: where the compiler is and its first --version line."""
    path = shutil.which(cc) or cc
    try:
        r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
        version = (r.stdout.splitlines() or ["?"])[0].strip()
    except (OSError, subprocess.SubprocessError) as e:
        version = f"unknown ({e})"
    return {"path": os.path.realpath(path), "version": version}


# kbuild_config.py's, named here as before
config_for = kbuild_config.config_for


def cache_key(tree_identity, config_sha, compiler):
    blob = json.dumps({"format": FORMAT, "tree": tree_identity, "config": config_sha,
                       "compiler": compiler}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def is_debian(source):
    """Whether SOURCE is Debian's own source package tarball (trusted to run):
    /usr/src's, or one fetched from Debian's newer suites (newer_sources.py)."""
    return (re.fullmatch(r"/usr/src/linux-source-\d+\.\d+\.tar\.xz", str(source)) is not None
            or newer_sources.is_fetched(source))


def tree_files_sha256(tree):
    """{file: SHA-256 or None} of what shapes a directory tree's line
    (kbuild_tree.line_files): part of its kbuild cache key."""
    out = {}
    for rel in kbuild_tree.line_files(tree):
        try:
            out[rel] = hashlib.sha256(safe_read.read_regular(
                str(Path(tree) / rel), "kbuild file", CMD_LIMIT)).hexdigest()
        except UsageError:
            out[rel] = None
    return out


def missing_tools():
    return [t for t in TOOLS if shutil.which(t) is None]


# What a developer's tree holds from its own builds, which kbuild makes again
# in the copy as it needs: left out of it. A built tree is gigabytes of
# objects, and vmlinux.o with its debug information passes the confined
# copy's 1 GiB file limit (confine_exec.FSIZE). Names no source file has;
# the top's outputs by their whole path (arch/x86/kernel/vmlinux.lds.S is a
# source).
BUILT_ANYWHERE = ("*.o", "*.a", "*.ko", "*.mod", "*.mod.c", "*.dwo", "*.gcno", "*.so.dbg",
                  "*.tmp")
BUILT_AT_TOP = ("./.git", "./vmlinux", "./vmlinux.*", "./.tmp_vmlinux*", "./System.map",
                "./Module.symvers", "./modules.order", "./modules.builtin*")


def copy_excludes():
    """tar's options that leave .git and BUILT_* out of a folder's copy."""
    return (["--anchored", *(f"--exclude={p}" for p in BUILT_AT_TOP), "--no-anchored",
             *(f"--exclude={p}" for p in BUILT_ANYWHERE)])


def unpack(source, into):
    """A tarball whole, its one top folder stripped (names literal), or a tree's
    files but .git and its builds' outputs (copy_excludes()), into the new
    folder `into`: confined, as the sandbox user whose tree it then is
    (kbuild writes into it)."""
    if Path(source).is_dir():
        # $4 on: the excludes, which tar must read before -c's folder
        script = ('src=$1 dst=$2 tar=$3; shift 3; mkdir "$dst" && '
                  '"$tar" -C "$src" "$@" -c . | "$tar" -x -C "$dst" --no-same-owner')
        what = "copy"
    else:
        script = ('mkdir "$2" && "$3" -x -f "$1" -C "$2" --strip-components=1 '
                  '--no-same-owner --no-same-permissions')
        what = "tar"
    tar = tools.path("tar", "kbuild")
    excludes = copy_excludes() if what == "copy" else []
    r = lifecycle.run(confine.command(["sh", "-c", script, "sh", source, into, tar,
                                       *excludes], write=[Path(into).parent]),
                      capture_output=True, text=True, errors="replace")
    if r.returncode != 0:
        raise UsageError(f"kbuild: {source}: {what} failed "
                         f"({(r.stderr.strip() or '?')[:200]})")


def make(tree, targets, log, work, read=()):
    """make TARGETS in tree, confined: it runs the tree's Makefiles and host
    programs as the sandbox user, writing only in work (and reading the
    folders `read` besides tree)."""
    jobs = str(max(1, min(os.cpu_count() or 1, 16)))
    cmd = [tools.path("make", "kbuild"), "-C", str(tree), f"-j{jobs}", "ARCH=x86_64"]
    env = dict(os.environ, LC_ALL="C", KBUILD_BUILD_TIMESTAMP="vdsobench",
               KBUILD_BUILD_USER="vdsobench", KBUILD_BUILD_HOST="vdsobench")
    proc = lifecycle.popen(confine.command(cmd + targets, write=[work], read=[tree, *read]),
                           stdout=log, stderr=subprocess.STDOUT, env=env)
    with lifecycle.owned(proc):
        try:
            return proc.wait(MAKE_TIMEOUT)
        except subprocess.TimeoutExpired:
            lifecycle.stop(proc)
            return f"timed out after {MAKE_TIMEOUT} s"


def tail(log, n=3):
    log.seek(0)
    lines = log.read().decode(errors="replace").strip().splitlines()
    return " | ".join(line.strip() for line in lines[-n:])[:400] or "?"


def why_failed(log, rc):
    """Why make failed, in one line: its exit status, then the first tool's
    error line (the compiler's, ld's: kbuild_vdso32.error_line), else the
    first target make says failed, else the log's last lines. make's own
    last lines only say that a sub-make failed."""
    if isinstance(rc, str):
        return f"({rc}): {tail(log)}"
    log.seek(0)
    first = kbuild_vdso32.error_line(log.read().decode(errors="replace"))
    return f"(exit {rc}): {first if first != '?' else tail(log)}"


def folder(path):
    """An fd of a folder a confined step wrote in, not itself a link."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        raise UsageError(f"kbuild: {path}: {e.strerror} (not a folder: the tree's build "
                         "left a link or a file there)") from None


def put(dir_fd, name, data):
    """data as the file name in the folder dir_fd, whatever a confined step
    left under that name (a link, a FIFO) removed first."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=dir_fd)
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o644, dir_fd=dir_fd)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def run_kbuild(src, config_data, work, log):
    """kbuild in src; (an fd of the build folder, the 32-bit vDSO's failure
    or None: make_vdso's). config_data None: kbuild's own x86_64_defconfig."""
    build_fd = folder(src)
    if config_data is not None:
        put(build_fd, ".config", config_data)
    first = ["olddefconfig"] if config_data is not None else [kbuild_config.DEFCONFIG]
    for targets in (first, ["prepare"]):
        rc = make(src, targets, log, work)
        if rc != 0:
            os.close(build_fd)
            raise UsageError(f"kbuild: make {' '.join(targets)} failed "
                             f"{why_failed(log, rc)}")
    try:
        return build_fd, make_vdso(src, build_fd, log, work, "kbuild: make")
    except BaseException:
        os.close(build_fd)
        raise


def make_vdso(src, build_fd, log, work, what, read=()):
    """make -k V=1 VDSO_DIR/ in src: None where it built, kbuild's error line
    where only the 32-bit vDSO failed (the 64-bit image built:
    kbuild_vdso32.only_vdso32), else UsageError ("WHAT VDSO_DIR/ failed")."""
    rc = make(src, ["-k", "V=1", VDSO_DIR + "/"], log, work, read)
    if rc == 0:
        return None
    if not isinstance(rc, str):
        log.seek(0)
        failure = kbuild_vdso32.only_vdso32(log.read().decode(errors="replace"), build_fd)
        if failure:
            return failure
    raise UsageError(f"{what} {VDSO_DIR}/ failed {why_failed(log, rc)}")


def same_compiler(cc, compiler):
    """Whether the compiler a .cmd names is `compiler` (compiler_identity's):
    a plain name found on this PATH, resolving to its path. Never run to ask:
    kbuild wrote the name, and a tree's Makefile can make it a program of its
    own in the folder it writes, which root would then run."""
    if "/" in cc:
        return False
    path = shutil.which(cc)
    return path is not None and os.path.realpath(path) == compiler["path"]


def extract(build_fd, compiler, vdso32_failure=None):
    """The record of a finished kbuild: compiler, line, kept and dropped flags,
    the 32-bit vDSO's (kbuild_vdso32.record; vdso32_failure: make_vdso's);
    UsageError for a line run by another compiler than `compiler`, the one
    import builds with (a tree's Makefile chose it)."""
    vdso = kbuild_tree.vdso64_dir(build_fd)
    cmd_file = kbuild_tree.paths(vdso)["cmd"]
    text = safe_read.read_regular(cmd_file, "kbuild command file", CMD_LIMIT,
                                  root=build_fd).decode(errors="replace")
    cc, argv = parse_cmd(text, cmd_file)
    if not same_compiler(cc, compiler):
        shown = ascii(cc)[1:-1]  # its end: the program's name, past a long folder's
        shown = shown if len(shown) <= 80 else "..." + shown[-77:]
        raise UsageError(f"kbuild: {cmd_file}: the line runs {shown}, not "
                         f"{compiler['path']} (the compiler import builds with): a tree's "
                         "kbuild must use it; nothing imported")
    kept, dropped = classify(argv)
    config = safe_read.read_regular(".config", "kbuild's .config", CONFIG_LIMIT, root=build_fd)
    return {"compiler": compiler, "vdso_dir": vdso,
            "options": image_options(config),
            "vdso32": kbuild_vdso32.record(build_fd, config, vdso32_failure),
            "line": " ".join(shlex.quote(w) for w in [cc] + argv),
            "copts": kept + [f for f, _ in NEUTRALISE],
            "dropped": dropped,
            "neutralised": [list(n) for n in NEUTRALISE]}


def image_options(config):
    """{option: bool} of vdso_image.OPTIONS in a .config as olddefconfig left
    it: what the image was built with."""
    text = config.decode(errors="replace")
    return {name: bool(re.search(rf"^CONFIG_{name}=y$", text, re.M)) for name in vdso_image.OPTIONS}


def current_key(top, key, source):
    """A tree's kbuild key: for a folder, the key of the state of the files
    its cached kbuild was compiled from (kbuild_inputs.py)."""
    if not Path(source).is_dir():
        return key
    return kbuild_inputs.current_key(key, lambda k: cached(top / k), source)


def cached(cache_dir):
    try:
        raw = safe_read.read_regular(str(cache_dir / "line.json"), "kbuild record", CMD_LIMIT,
                                     owned=True)
        rec = json.loads(raw)
    except (UsageError, ValueError, OSError):
        return None
    return rec if isinstance(rec, dict) and rec.get("format") == FORMAT else None


def cache_dir():
    """$VDSOBENCH_KBUILD_CACHE, else ~/.cache/vdsobench/kbuild: shared by every
    imports directory (the import tests make their own) and checkout; its
    lines and images are built and run (caches.folder: trusted)."""
    return caches.folder("VDSOBENCH_KBUILD_CACHE", "kbuild", "kbuild")


# A patch that touches none of these leaves kbuild's line as it is (the line
# depends on the Makefiles, kbuild's scripts and the configuration, not on the
# code): its import takes the unpatched tree's line, and kbuild runs once per
# tree, not once per patch series.
LINE_INPUTS = re.compile(r"(^|/)(Makefile[^/]*|Kbuild[^/]*|Kconfig[^/]*|[^/]*\.mk)$|"
                         r"^scripts/|^include/config/|^arch/[^/]+/entry/vdso/[^/]*\.lds")


def line_patches(patches):
    """The patches that can change the line: all of them if one touches kbuild."""
    touches = any(LINE_INPUTS.search(n) for p in patches for n in p.names)
    return list(patches) if touches else []


class Setup(NamedTuple):
    """What every kbuild of a tree here starts from: the configuration
    (config_for's record and text) and the compiler."""
    conf: dict
    data: bytes
    compiler: dict

    def key(self, tree_identity):
        return cache_key(tree_identity, self.conf["sha256"], self.compiler)


def setup(series, config=None, say=print, tree=None):
    """The Setup of a kbuild here, or None with one line said why it cannot run.
    tree: the source, whose own .config comes second (kbuild_config.py)."""
    conf, why = kbuild_config.config_for(series, config, tree)
    if conf is None:
        say(f"import: kbuild: {why}; built with the project's line")
        return None
    missing = missing_tools()
    if missing:
        say(f"import: kbuild: {' '.join(missing)} missing (scripts/vdsobench setup "
            f"--kernel-sources installs them); built with the project's line")
        return None
    return Setup(*conf, compiler_identity("gcc"))


def line_for(source, tree_identity, series, patches, config=None, say=print):
    """The kbuild record of a tree (from the cache, or kbuild run once): what
    import records. None, with one line said, when kbuild cannot run here."""
    how = setup(series, config, say, tree=source)
    if how is None:
        return None
    top = cache_dir()
    key = current_key(top, how.key(tree_identity), source)
    with key_lock(top, key, say):
        rec = cached(top / key)
        if rec is not None:
            return dict(rec, cached=True)
        return made(source, tree_identity, patches, how, top / key, say)


@contextlib.contextmanager
def key_lock(top, key, say):
    """flock on top/KEY.lock: two imports of one tree and configuration at once
    (two reviews, two checkouts) run kbuild once, the second finding the
    first's record, and neither replaces the folder the other reads."""
    with kbuild_kept.try_lock(top, key) as (held, fd):
        if not held:
            say("import: kbuild: waiting for another import's kbuild of this tree")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield


def made(source, tree_identity, patches, how, final, say):
    """kbuild run on the tree, its record and objects kept in the cache's
    folder final, named by the key (the caller holds key_lock). The tree,
    a tarball's unpacked or a folder's copied (the user's tree untouched),
    is built in place and, unpatched, kept there too (kbuild_patched.py
    builds a patched tree's image again from it)."""
    top, key = final.parent, final.name
    t0 = time.monotonic()
    # in the cache's folder, so that the tree kept is a rename away
    with kbuild_kept.building(top, key) as work, \
            tempfile.TemporaryFile() as log:
        work = Path(work)
        src = work / "src"
        unpack(source, src)
        patches_mod.apply_patches(src, patches, confined=work)
        since = time.time()
        say(f"import: kbuild: make olddefconfig prepare {VDSO_DIR}/ with the "
            f"{how.conf['kind']} configuration {how.conf['path']} (about a minute the "
            "first time)")
        build_fd, vdso32_failure = run_kbuild(src, how.data, work, log)
        try:
            rec = extract(build_fd, how.compiler, vdso32_failure)
            rec.update(format=FORMAT, key=key, config=how.conf, tree=tree_identity,
                       source=str(source), seconds=round(time.monotonic() - t0, 1),
                       made=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            if Path(source).is_dir() and not patches:
                # what its cached record holds while unchanged (a patched
                # copy's files are not the folder's: its key has the patches)
                rec["inputs"] = kbuild_inputs.recorded(build_fd, source)
            tree = None if patches else (src, since)
            keep(build_fd, rec, top, final, tree)
        finally:
            os.close(build_fd)
    return dict(rec, cached=False)


def keep(build_fd, rec, top, final, tree=None):
    """The record and kbuild's objects into the cache folder final, whole or not
    at all: read as hostile (kbuild ran the tree's code), regular files only.
    tree: (folder, since) of an in-tree build to keep there too
    (kbuild_kept.keep_tree)."""
    stage = Path(lifecycle.new_temp_dir(top, ".staging-"))
    try:
        found = kbuild_tree.paths(rec["vdso_dir"])
        v32 = rec.get("vdso32") or {}
        own32 = ([f"{v32['dir']}/{kbuild_tree.IMAGE32}", f"{v32['dir']}/{kbuild_tree.DBG32}"]
                 if v32.get("built") else [])
        for rel in (found["obj"], found["image"], found["dbg"], *own32):
            try:
                data = safe_read.read_regular(rel, "kbuild's output", OUTPUT_LIMIT,
                                              root=build_fd)
            except UsageError:
                continue  # not made (an older tree), or not a regular file
            (stage / Path(rel).name).write_bytes(data)
        (stage / "line.json").write_text(json.dumps(rec, indent=1) + "\n")
        if tree is not None:
            kbuild_kept.keep_tree(*tree, stage)
        lifecycle.replace_dir(stage, final)
    except BaseException:
        lifecycle.discard(str(stage), "dir")
        raise
    if tree is not None:
        kbuild_kept.prune_trees(top, final.name)


def own_image(rec, own):
    """The vdso64.so kbuild made for this tree, or None: only when the image is
    this tree's (own: not the unpatched tree's, whose line a series that
    leaves kbuild alone takes). Its .dbg instead where it holds the same code
    (vdso_image.shipped_by): its .symtab places the data pages, which from
    v6.15 a stripped image cannot say."""
    folder = cache_dir() / rec["key"]
    image, dbg = folder / kbuild_tree.IMAGE, folder / kbuild_tree.DBG
    if not own or not image.is_file():
        return None
    if dbg.is_file() and vdso_image.shipped_by(dbg.read_bytes(), image.read_bytes()):
        return dbg
    return image


def own_image32(rec, own):
    """The bytes of the vdso32 image kbuild made beside own_image()'s (its .dbg
    where it holds the same code), or None."""
    folder = cache_dir() / rec["key"]
    image, dbg = folder / kbuild_tree.IMAGE32, folder / kbuild_tree.DBG32
    if not own or not image.is_file() or not (rec.get("vdso32") or {}).get("built"):
        return None
    so = safe_read.read_regular(str(image), "kbuild's vdso32.so", OUTPUT_LIMIT)
    if dbg.is_file():
        data = safe_read.read_regular(str(dbg), "kbuild's vdso32.so.dbg", OUTPUT_LIMIT)
        if vdso_image.shipped_by(data, so):
            return data
    return so


def image_given(rec, own):
    """own_image()'s, as vdso_image.given() reads --vdso-image FILE, with the
    options kbuild built it with and its vdso32 image; None without one."""
    image = own_image(rec, own)
    return image and vdso_image.given(str(image), rec.get("options"), own_image32(rec, own))


def context(rec, why=None):
    """What results name of a kbuild record: the configuration, the compiler and
    the whole line; with none, built with the project's line, and why (what
    kbuild did not run for, or what it said)."""
    if not rec:
        return {"line": None, "why": why or "kbuild was not run"}
    return {"config": rec["config"], "compiler": rec["compiler"], "line": rec["line"],
            "key": rec["key"], "dropped": [f for f, _ in rec["dropped"]],
            "vdso32": vdso32_of(rec)}


def vdso32_of(rec):
    """A kbuild record's 32-bit vDSO (kbuild_vdso32.record) with the key of
    the cache folder its images are in; None for a record without one."""
    v32 = (rec or {}).get("vdso32")
    return dict(v32, key=rec["key"]) if isinstance(v32, dict) else None
