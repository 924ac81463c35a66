"""A tree taken in: its cache key (what it is made of, and the names that
describe it), made (taken, patched, configured, probed, checked and placed
whole under trees/<key>) or found whole in the cache, and the table entry
that names it; with kbuild's line of the tree when asked (kbuild.py)."""

import hashlib
import json
import os
import time
from pathlib import Path

from vdsobench_cli.cli import lifecycle, safe_read
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.core import text as text_mod
from vdsobench_cli.kimport import (compile, imports_table, kbuild, kbuild_patched,
                                   kbuild_tree, names as names_mod, patches as patches_mod, probe,
                                   source as source_mod, stage as stage_mod, store, tree_config,
                                   vdso32_image, vdso_image)


def cache_key(arch_name, identity, patches, source_name=""):
    """The cached tree's key: what it is made of, and the names describe() writes
    into it (kimport.json, kimport_desc.h, the variants' source and summary),
    so that one import's tree never describes another's folder or patch file."""
    # a tree's 32-bit variants (arm64's compat vDSO, x86's vdso32) need the
    # 32-bit compiler: made again once it is there
    compat_cc = (arch_name in compile.COMPAT and
                 os.access(compile.compat_cc(arch_name), os.X_OK))
    blob = json.dumps({"glue": compile.glue_digest(), "arch": arch_name, "source": identity,
                       **({"compat_cc": True} if compat_cc else {}),
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


def make_tree(source, given, arch_name, patches, key, files, image=None, writer="tree"):
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
        if arch_dir == "arm64":  # its compat vDSO's syscall numbers, as kbuild writes them
            tree_config.write_compat_unistd(stage)
        source_text, summary = describe(source, version, patches)
        try:
            with lifecycle.temp_dir(prefix="vdsobench-probe-") as work:
                description = probe.probe(stage, arch_dir, Path(work), given)
            tree_config.write_desc(stage, version, description, source_text, summary)
            probe.syntax_check(stage, arch_dir, given, arch_name, writer)
            # arm64's compat vDSO, the armv7 variants (docs/arm64.md); x86's
            # vdso32, the i386 ones (docs/kernel-import.md)
            compat_why = (probe.compat_problem(stage, given, description, arch_name)
                          if arch_name in compile.COMPAT and writer == "tree" else None)
        except probe.ShimError as e:
            e.version = version  # for take_in: what kbuild builds of it
            raise
        # --vdso-image: the tree's own vdso64.so beside it (vdso_image.py)
        image_meta = image and vdso_image.take(stage, arch_name, *image[:3], config=config,
                                               writer=writer)
        if image and len(image) > 3:  # kbuild's vdso32 image (vdso_image.given)
            image_meta["vdso32"] = vdso32_image.take(stage, image[3], image[2])
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
        if writer == "dwarf":
            meta["writer"] = "dwarf"  # the +image variants alone (imports.bzl)
        if arch_name in compile.COMPAT and writer == "tree":
            meta["compat"] = compat_why is None
            if compat_why:
                meta["compat_why"] = compat_why
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
    writer = "dwarf" if req.writer == "dwarf" and req.image else "tree"
    key = vdso_image.keyed(cache_key(req.arch, identity, req.patches, req.source.name),
                           req.image)
    if writer == "dwarf":
        key = hashlib.sha256(f"{key}+writer:dwarf".encode()).hexdigest()
    found = cached(key)
    try:
        meta, meta_sha = found or make_tree(req.source, req.given, req.arch, req.patches, key,
                                            files, req.image, writer)
    except probe.ShimError as e:
        if e.what == WRITER_UNIT and req.writer != "tree" and e.version is not None:
            image = dwarf_image(req, identity, e)
            if image:
                print(f"{e} (its update path): the +image variants alone, their data page "
                      "written by the DWARF writer from the image's DWARF (docs/image.md)")
                return take_in(req._replace(image=image, writer="dwarf"))
        if not req.kbuild or e.version is None:
            raise
        raise shim_after_kbuild(req, identity, e) from None
    if req.writer == "dwarf" and req.image is None and not req.kbuild:
        raise UsageError(f"import: {req.given}: --writer dwarf needs an image (kbuild's, or "
                         "--vdso-image); nothing imported")
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
    said = []
    rec = kbuild_line(req, identity, meta, said) if req.kbuild else None
    if rec is not None:
        entry["kbuild"] = {"copts": rec["copts"], "key": rec["key"]}
        own = kbuild.line_patches(req.patches) == req.patches
        image_rec = rec
        if req.patched_image and not own and req.image is None:
            # the patches change the code, not the line: the patched tree's
            # own image, kbuild's
            image_rec = patched_kbuild(req, identity, meta)
            own = image_rec is not None
        image = req.image is None and own and kbuild.image_given(image_rec, own=True)
        if image:
            # the tree's own vdso64.so, as its kbuild made it: the +image variants
            # (vdso_image.py), the tree taken again with the image in its key
            return take_in(req._replace(image=image))
    if req.writer == "dwarf" and req.image is None:
        raise UsageError(f"import: {req.given}: --writer dwarf: kbuild made no image of "
                         "it to read the DWARF of; nothing imported")
    entry["identity"]["kbuild"] = kbuild.context(rec, req.kbuild_why or (said or [None])[-1])
    if rec is not None and req.patched_image and kbuild.line_patches(req.patches) != req.patches:
        # the patches change the code: the 32-bit vDSO is the patched tree's
        # (made above with its 64-bit image), not the line's tree's
        own = kbuild_patched.cached_record(rec["key"], req.patches)
        entry["identity"]["kbuild"]["vdso32"] = kbuild.vdso32_of(own) or {
            "built": False, "dir": None, "error": None,
            "why": "kbuild made no image of the patched tree"}
    entry["identity"]["writer"] = meta.get("writer", "tree")
    return entry, meta, found is not None, time.monotonic() - t0


WRITER_UNIT = "kernel/time/vsyscall.c"


def dwarf_image(req, identity, shim):
    """The image of a tree whose update path the shim cannot build, for the
    DWARF writer: --vdso-image's, or the one kbuild made (the patched tree's
    with --patched-image); None without one (shim_after_kbuild() says what
    kbuild did)."""
    if req.image is not None or not req.kbuild:
        return req.image
    rec = kbuild_line(req, identity, {"version": shim.version})
    if rec is None:
        return None
    own = kbuild.line_patches(req.patches) == req.patches
    if req.patched_image and not own:
        rec = patched_kbuild(req, identity, {"version": shim.version})
        own = rec is not None
    try:
        return own and kbuild.image_given(rec, own=True) or None
    except UsageError:
        return None  # an image the check refuses: the shim's error stands


def shim_after_kbuild(req, identity, shim):
    """The error of an import whose tree the shim cannot build (probe.ShimError),
    when kbuild is asked for: kbuild runs all the same (its line and images
    are cached, for a look at the tree's own vDSO), and one line says what it
    built and what the shim could not."""
    try:
        rec = kbuild_line(req, identity, {"version": shim.version})
    except UsageError as e:
        return UsageError(f"{shim}; and its own kbuild failed: {e}")
    if rec is None:
        return shim  # kbuild cannot run here: said why
    folder = kbuild.cache_dir() / rec["key"]
    image = folder / kbuild_tree.IMAGE
    if not image.is_file():
        made = f"kbuild ran (its line in {folder / 'line.json'}) but made no {image.name}"
    elif (folder / kbuild_tree.DBG).is_file():
        made = f"kbuild built {image} and its .dbg"
    else:
        made = f"kbuild built {image}"
    if kbuild.line_patches(req.patches) != list(req.patches):
        # the line is the tree's without the patches, which touch no kbuild input
        made += " of the tree without its patches (the compiler line's)"
    return UsageError(f"import: {req.given}: {made} (Linux {shim.version[3]}, "
                      f"{rec.get('vdso_dir', kbuild.VDSO_DIR)}/), but the shim cannot build "
                      f"this tree's {shim.what}: {shim.first}; nothing imported")


def patched_kbuild(req, identity, meta):
    """kbuild_patched.py's record of the patched tree (its own image), or None
    (said why)."""
    return kbuild_patched.image_record(req.source, kbuild_tree_id(req, identity, []),
                                       series_of(meta), req.patches, config=req.config)


def kbuild_tree_id(req, identity, patches):
    """What names a tree and the patches that shape its line, to kbuild's cache."""
    tree_id = {"source": list(identity), "patches": [imports_table.sha256(p.data)
                                                     for p in patches]}
    if req.source.is_dir():
        tree_id["kbuild_files"] = kbuild.tree_files_sha256(req.source)
    return tree_id


def series_of(meta):
    return ".".join(str(v) for v in meta["version"][:2])


def kbuild_line(req, identity, meta, said=None):
    """kbuild.py's record of the tree's vDSO line (cached), or None (said why,
    and the why appended to said)."""
    patches = kbuild.line_patches(req.patches)

    def say(text):
        print(text)
        if said is not None:
            said.append(text.removeprefix("import: kbuild: "))
    return kbuild.line_for(req.source, kbuild_tree_id(req, identity, patches),
                           series_of(meta), patches, config=req.config, say=say)
