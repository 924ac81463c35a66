"""`import`: a kernel tree's own vDSO read path and update path, with patches on
top, as a variant, measured and checked without booting it.

    vdsobench import SOURCE [--patch FILE]... --name NAME [--arch x86_64|arm64]

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

Where it lives: the imports directory, $VDSOBENCH_IMPORTS (made absolute) or
.vdsobench-imports/ in the repository (it ignores itself in git), holds
imports.json (the table: name -> tree) and trees/<key>/, one per source and
patch series, keyed by their SHA-256 (a tarball's is remembered by path, size,
mtime, ctime and inode) and the names that describe it (the source's and the
patches' file names), so a second import of the same thing is a table entry.
Bazel reads the table through the @vdso_imports repository rule
(third_party/vdso_imports/repo.bzl), which every command of this CLI re-runs
when the table or its trees change (VDSOBENCH_IMPORTS_DIGEST); a clean clone
has no table and builds as it always did.

What it takes in is hostile until checked (other people's trees and patches,
run as root):
- every file it reads is a regular file within a size cap, opened without
  blocking (safe_read); inside a source tree no symbolic link is followed;
- every path a patch names (---/+++, diff --git, rename and copy headers,
  git's quoted names too) is a normalised relative path of safe characters,
  checked before anything is copied, and no patch may create or change a
  symbolic link (kernel trees have none where import looks; a link that
  stays inside the tree could still be made to point out by the next patch
  or a later file, so none at all is the rule that needs no resolving);
- the staged tree is checked after it is taken and after the patches (no
  link, no device, only safe names), and import writes into it only through
  no-follow opens and renames, never through what is there;
- names handed to tar are literal (only TAKE's own /* patterns are globs).
The table is changed under a lock (imports/.lock), each change a transaction
on the table as it is then: a failed or interrupted import puts back only
its own entry; the names a run keeps for its whole length (patch-review's)
are held (reserved.py), and `import` refuses them meanwhile. imports_table.py
checks the table and the trees (each file's hash) whenever they are read,
here and in the repository rule: a bad entry is left out, with one line
naming it and the command that mends it.
"""

import argparse
import contextlib
import hashlib
import json
import os
import time
from pathlib import Path

from vdsobench_cli.cli import arch, build, labels, lifecycle, packages, safe_read
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.core import text as text_mod
from vdsobench_cli.kimport import (bazel_sync, compile, imports_table, kbuild,
                                   names as names_mod, patches as patches_mod, probe, request,
                                   reserved as reserved_mod, source as source_mod,
                                   stage as stage_mod, store, tree_config, vdso_image)

ROOT = build.ROOT
MB = 1 << 20


# ---- import -----------------------------------------------------------------------------

def cache_key(arch_name, identity, patches, source_name=""):
    """The cached tree's key: what it is made of, and the names describe() writes
    into it (kimport.json, kimport_desc.h, the variants' source and summary),
    so that one import's tree never describes another's folder or patch file."""
    blob = json.dumps({"glue": compile.glue_digest(), "arch": arch_name, "source": identity,
                       "patches": [imports_table.sha256(p.data) for p in patches],
                       "named": [source_name, *(p.path.name for p in patches)]},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def describe(source, version, patches):
    """(source text for list, one-line summary)."""
    names = [text_mod.printable(p.path.name, 200) for p in patches]
    with_patches = f" + {', '.join(names)}" if names else ""
    source_name = text_mod.printable(source.name, 200)
    kernel = text_mod.printable(version[3], 40)
    return (f"lib/vdso/gettimeofday.c, kernel/time/vsyscall.c of {source_name} "
            f"(Linux {kernel}){with_patches}",
            f"imported: Linux {kernel} from {source_name}" +
            (f" with {len(names)} patch{'es' if len(names) > 1 else ''}" if names else ""))


def make_tree(source, given, arch_name, patches, key, files, image=None):
    """trees/<key>/: the taken files, patched, configured and probed. The folder
    appears whole (renamed into place) or not at all; a damaged one of that key
    is replaced. (meta, SHA-256 of its kimport.json)."""
    arch_dir = source_mod.ARCH_DIRS[arch_name]
    trees = store.trees_dir()
    stage = Path(lifecycle.new_temp_dir(trees, ".staging-"))
    try:
        stage_mod.take_files(source, given, arch_dir, patches, files, stage)
        patches_mod.apply_patches(stage, patches)
        stage_mod.check_stage(stage, given, arch_dir, " with its patches")  # what they made
        version = tree_config.kernel_version((stage / "Makefile").read_text(errors="replace"))
        if version is None:
            raise UsageError(f"import: {given}: its Makefile names no VERSION, PATCHLEVEL "
                             "and SUBLEVEL of a kernel (plain numbers, 2.6 to 9.99, "
                             f"SUBLEVEL 0 to {tree_config.SUBLEVEL_MAX})")
        config, skipped = tree_config.configuration(stage, arch_dir)
        found = tree_config.features(stage)
        tree_config.write_autoconf(stage, config, found)
        tree_config.write_includes(stage)
        source_text, summary = describe(source, version, patches)
        with lifecycle.temp_dir(prefix="vdsobench-probe-") as work:
            description = probe.probe(stage, arch_dir, Path(work), given)
        tree_config.write_desc(stage, version, description, source_text, summary)
        probe.syntax_check(stage, arch_dir, given, arch_name)
        # --vdso-image: the tree's own vdso64.so beside it (vdso_image.py)
        image_meta = image and vdso_image.take(stage, arch_name, *image)
        meta = {"glue": compile.glue_digest(), "kernel": version[3], "version": list(version[:3]),
                "arch": arch_name, "arch_dir": arch_dir, "config": config,
                "kconfig_skipped": skipped, "features": found, "probe": description,
                "source": source_text, "summary": summary,
                "patches": [{"name": p.path.name, "sha256": imports_table.sha256(p.data),
                             "subject": p.subject, "files": [f for f, _ in p.targets]}
                            for p in patches],
                "hashes": {rel: source_mod.file_sha256(stage / rel)
                           for rel in stage_mod.stage_files(stage, given)}}
        if image_meta:
            meta["image"] = image_meta
        meta["files"] = sorted(list(meta["hashes"]) + ["kimport.json"])
        raw = (json.dumps(meta, indent=1) + "\n").encode()
        stage_mod.write_inside(stage, "kimport.json", raw)
        stage_mod.place(stage, trees / key)
    except BaseException:
        lifecycle.discard(str(stage), "dir")
        raise
    return meta, imports_table.sha256(raw)


def cached(key):
    """(meta, SHA-256 of its kimport.json) of a whole cached tree of that key, else
    None: a damaged one (a file edited, gone or a link) is made again."""
    d = str(store.imports_dir())
    try:
        root = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        meta, why = imports_table.tree_problem(root, d, {"key": key, "meta_sha256": None},
                                               compile.glue_digest())
        if meta is None:
            return None
        raw = safe_read.read_regular(f"trees/{key}/kimport.json", "tree description",
                                     imports_table.META_LIMIT, root=root)
    except UsageError:
        return None
    finally:
        os.close(root)
    return meta, imports_table.sha256(raw)


def take_in(req):
    """The table entry for a request: its tree made (or found whole in the cache).
    (entry, meta, cached, seconds); nothing is registered yet. Under the lock."""
    t0 = time.monotonic()
    store.sweep_stale(store.trees_dir())  # what a killed import left
    files = None
    if req.source.is_dir():
        named = sorted({n for p in req.patches for n in p.names})
        taken = source_mod.expand(source_mod.TAKE, source_mod.ARCH_DIRS[req.arch])
        files = source_mod.read_tree(req.source, taken, named)
        identity = ("tree", source_mod.tree_sha256(files))
    else:
        identity = ("tarball", source_mod.tarball_sha256(req.source))
    key = vdso_image.keyed(cache_key(req.arch, identity, req.patches, req.source.name),
                           req.image)
    found = cached(key)
    meta, meta_sha = found or make_tree(req.source, req.given, req.arch, req.patches, key,
                                        files, req.image)
    entry = {"key": key, "ident": names_mod.ident(req.name), "arch": req.arch,
             "arch_dir": source_mod.ARCH_DIRS[req.arch], "kernel": meta["kernel"],
             "source": str(req.source), "patches": [str(p.path) for p in req.patches],
             "summary": meta["summary"], "meta_sha256": meta_sha,
             "identity": {"name": req.name, "key": key, "kernel": meta["kernel"],
                          "arch": req.arch, "source": str(req.source),
                          "source_kind": identity[0], "source_sha256": identity[1],
                          "patches": [{"name": p.path.name, "path": str(p.path),
                                       "sha256": imports_table.sha256(p.data),
                                       "subject": p.subject} for p in req.patches]}}
    rec = kbuild_line(req, identity, meta) if req.kbuild else None
    if rec is not None:
        entry["kbuild"] = {"copts": rec["copts"], "key": rec["key"]}
        image = kbuild.own_image(rec, own=kbuild.line_patches(req.patches) == req.patches)
        if image is not None and req.image is None:
            # the tree's own vdso64.so, as its kbuild made it: the +image variants
            # (vdso_image.py), the tree taken again with the image in its key
            return take_in(req._replace(image=vdso_image.given(str(image))))
    entry["identity"]["kbuild"] = kbuild.context(rec)
    return entry, meta, found is not None, time.monotonic() - t0


def kbuild_line(req, identity, meta):
    """kbuild.py's record of the tree's vDSO line (cached), or None (said why)."""
    patches = kbuild.line_patches(req.patches)
    tree_id = {"source": list(identity), "patches": [imports_table.sha256(p.data)
                                                     for p in patches]}
    if req.source.is_dir():
        tree_id["kbuild_files"] = kbuild.tree_files_sha256(req.source)
    series = ".".join(str(v) for v in meta["version"][:2])
    return kbuild.line_for(req.source, tree_id, series, patches, config=req.config)


# ---- changing the table: transactions under the lock -------------------------------------

def set_entries(changes, building):
    """Put changes ({name: entry, or None to remove}) into the table as it is now;
    {name: its entry before} (None: it had none)."""
    imports = store.read_table()
    before = {n: imports.get(n) for n in changes}
    for n, e in changes.items():
        if e is None:
            imports.pop(n, None)
        else:
            imports[n] = dict(e, state=imports_table.BUILDING) if building else e
    bazel_sync.save(imports)
    return before


def put_back(before):
    """Each of these names back to its entry before (re-reading the table: the
    other entries stay as they are now)."""
    with lifecycle.critical():
        try:
            set_entries(before, building=False)
        except CliErrors:
            pass  # the table cannot be read or written: nothing of ours to put back


def commit(changes, check=None):
    """Set changes in the table (under the lock) and build the project with them;
    check() then, inside the transaction. On any failure or interrupt only these
    names are put back, and (but after a signal) the previous build is rebuilt.
    Returns (the entries before, what check returned)."""
    added = {n: e for n, e in changes.items() if e is not None}
    before = None
    try:
        # a signal between the table's write and `before` would leave the
        # entries building with nothing to put them back: it waits till here
        with lifecycle.critical():
            before = set_entries(changes, building=True)
        with bazel_sync.building(added):
            # kernel_import/check_objects.py, a step of the build, refuses a tree
            # whose objects would run code uncalled: before anything links them
            build.build([labels.VERIFY])
            result = check() if check else None
        set_entries(added, building=False)
    except BaseException as e:
        if before is None:
            raise
        put_back(before)
        if not isinstance(e, lifecycle.Interrupted) and not lifecycle.pending():
            build.bazel("build", arch.current().bazel_flags() + [labels.VERIFY])
        raise
    return before, result


CliErrors = (Failure, UsageError)


def built_variants(name):
    """The import's variant names as the build made them; Failure if it made none
    (Bazel saw another table than this one), inside the transaction: undone."""
    names = names_mod.variant_names(name)
    if not names:
        raise Failure(f"import: {names_mod.layout_of(name)}: the build made no variants of "
                      f"it (Bazel did not see the table in {store.imports_dir()}?); nothing "
                      "imported")
    return names


@contextlib.contextmanager
def temporary(wanted):
    """Import {name: (SOURCE, [patch paths])} for the length of a block (the
    patch-review recipe's before and after), built; those names are put back
    as they were afterwards, whatever happens. Yields {name: meta}."""
    reqs = [request.request(given, patch_paths, name)
            for name, (given, patch_paths) in wanted.items()]
    d = store.writable_dir()
    packages.ensure_setup()
    metas, entries = {}, {}
    with store.table_lock(d):
        for req in reqs:
            entries[req.name], metas[req.name], _, _ = take_in(req)
        before, _ = commit(entries)
    try:
        yield metas
    finally:
        with store.table_lock(d):
            put_back(before)


@contextlib.contextmanager
def reserved(names, who, say):
    """The names this run's for the block (reserved.py: one such run at a time,
    the next waits and says so through say): what a killed run left under them
    is removed first, and nothing is left under them at the end, however the
    block ends."""
    d = store.writable_dir()
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(reserved_mod.hold(d, names, who, say))
        except OSError as e:
            raise store.refuse_dir(f"cannot open {reserved_mod.LOCK} ({e.strerror or e})") from None
        drop(d, names)
        try:
            yield
        finally:
            drop(d, names)


def drop(d, names):
    """These names out of the table (not rebuilt: the next build leaves them out)."""
    with store.table_lock(d):
        try:
            if any(n in store.read_table() for n in names):
                with lifecycle.critical():
                    set_entries(dict.fromkeys(names), building=False)
        except CliErrors:
            pass  # the table cannot be read or written: nothing of ours to take out


def check_free(d, name, what):
    """UsageError when a run holds name (reserved.py); under the table's lock."""
    who = reserved_mod.holder(d, name)
    if who:
        raise UsageError(f"import: {what} {name}: {who} is using that import and removes "
                         "it when it ends; choose another name, or wait for it")


def do_import(args):
    req = request.request(args.source, args.patch or [], args.name, args.kbuild, args.config,
                  args.vdso_image)
    d = store.writable_dir()
    packages.ensure_setup()
    with store.table_lock(d):
        check_free(d, req.name, "--name")
        entry, meta, from_cache, t_tree = take_in(req)
        old = store.read_table().get(req.name)
        replaced = isinstance(old, dict) and old.get("key") != entry["key"]
        t1 = time.monotonic()
        _, names = commit({req.name: entry}, lambda: built_variants(req.name))
        t_build = time.monotonic() - t1
    how = (f"the tree from the cache in {t_tree:.1f} s" if from_cache else
           f"the tree taken, patched and probed in {t_tree:.1f} s")
    print(f"import: {names_mod.layout_of(req.name)}: {text_mod.printable(meta['summary'], None)}"
          f"{' (replaces the previous import of that name)' if replaced else ''}")
    counters, inlines = ({n.split("+")[i] for n in names} for i in (1, 2))
    print(f"import: {how}, built in {t_build:.1f} s; {len(names)} variants: "
          f"{names_mod.layout_of(req.name)}+{{{','.join(sorted(counters))}}}"
          f"+{{{','.join(sorted(inlines))}}}")
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
    from vdsobench_cli.cli import variants
    build.build([labels.AGREE])
    registry = {v["name"] for v in variants.load()}
    if not any(n.startswith(f"{layout}+fake+") for n in registry):
        layouts = sorted({n.split("+")[0] for n in registry if not names_mod.is_import(n)})
        raise UsageError(f"import: --agree {layout}: not a layout (valid: "
                         f"{', '.join(layouts)})")
    status, lines = 0, []
    for inline in ("always", "auto"):
        a, b = f"{names_mod.layout_of(name)}+fake+{inline}", f"{layout}+fake+{inline}"
        if a not in registry or b not in registry:
            continue
        r = lifecycle.run(build.program(labels.AGREE) + [a, b], capture_output=True, text=True,
                          errors="replace")
        if r.returncode not in (0, 1):
            raise Failure(f"import: vdsobench_agree {a} {b} failed (exit {r.returncode}): "
                          f"{build.tail(r.stderr, 1)}")
        status = max(status, r.returncode)
        lines += r.stdout.splitlines()
    return status, lines


def do_list():
    store.readable_dir()
    checked = bazel_sync.state()
    if not checked["good"] and not checked["problems"]:
        table = text_mod.printable(store.table_path(), None)
        print(f"import: no imported trees ({table} has none)")
        return 0
    # every field came from the table, a tree or a patch: printable() before print
    for name, (e, _) in sorted(checked["good"].items()):
        print(text_mod.printable(f"{names_mod.layout_of(name)}  Linux {e['kernel']}  "
                                 f"{e['summary']}  [{e['key'][:12]}]", None))
        for p in e["patches"]:
            print(f"    patch {text_mod.printable(p, None)}")
    for line in checked["problems"]:
        print(text_mod.printable(line, None))
    return 0


def do_remove(name):
    d = store.writable_dir()
    with store.table_lock(d):
        check_free(d, name, "--remove")
        imports = store.read_table()
        if name not in imports:
            raise UsageError(f"import: --remove {name}: no such import (valid: "
                             f"{', '.join(sorted(map(str, imports))) or 'none imported'})")
        set_entries({name: None}, building=False)  # never undone: it cannot break a build
        build.build([labels.VERIFY])
    print(f"import: removed {names_mod.layout_of(name)} (its tree stays in the cache, "
          f"{store.imports_dir() / 'trees'})")
    return 0


def run(args):
    if args.list:
        return do_list()
    if args.remove:
        return do_remove(args.remove)
    if args.agree and args.name and not args.source:
        store.readable_dir()
        if args.name not in bazel_sync.imported_names():
            raise UsageError(f"import: --name {args.name}: no such import (valid: "
                             f"{', '.join(bazel_sync.imported_names()) or 'none imported'})")
        return check_agreement(args)
    if not args.source or not args.name:
        raise UsageError("import: SOURCE and --name are required (or --list, --remove NAME, "
                         "or --name NAME --agree LAYOUT for an import made before)")
    return do_import(args)


def add_parser(sub):
    # Every command builds through Bazel, which must see the imports table as it
    # is now: the one thing this module does for the others.
    bazel_sync.sync_env()
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
               f"The cache: ${store.DIR_ENV}, else .vdsobench-imports/ in the repository.")
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
    p.add_argument("--kbuild", action=argparse.BooleanOptionalAction, default=None,
                   help="run the tree's own kbuild (make olddefconfig prepare "
                        "arch/x86/entry/vdso/, about a minute once, then cached) and build "
                        "the read path with its vclock_gettime.o line; the default for "
                        "Debian's linux-source-X.Y, asked for any other tree (it runs the "
                        "tree's Makefiles)")
    p.add_argument("--config", metavar="FILE",
                   help="the kernel configuration kbuild uses (implies --kbuild); else "
                        "Debian's for the tree's version, /usr/src/linux-config-X.Y/"
                        "config.amd64_none_amd64.xz")
    p.add_argument("--vdso-image", metavar="FILE",
                   help="the tree's own vdso64.so (kbuild's, or its .dbg): stored beside "
                        "the import and mapped as the variants "
                        "kernel:NAME+{rdtsc,lfence_rdtsc,rdtscp,fake}+image (x86_64)")
    p.add_argument("--list", action="store_true", help="the imported trees, and exit")
    p.add_argument("--remove", metavar="NAME", help="forget an import (its variants go)")
    arch.add_argument(p, "the architecture whose vDSO to take: x86_64, or arm64 (its "
                         "arch/arm64 vDSO headers through the arm64 shim, cross-built, "
                         "verified under qemu-user; without kbuild's line or an image)")
    p.set_defaults(func=run)
