"""A patched tree's own vDSO image, as its kbuild builds it, in seconds.

A patch that leaves kbuild's line alone (kbuild.line_patches() is []) still
changes the code the kernel ships: the image of the patched tree is kbuild's
to make. kbuild.made() keeps the tree it built in (a tarball's, unpatched) in
its cache folder, with the list of the files kbuild wrote there; the patched
tree is then built again from it:

    a tree of links to the kept one (link_farm.py: a link per folder that
    neither kbuild nor a patch touches), but a copy of each file kbuild made
    (a compile writes its output in place: through a link it would write in
    the kept tree, which the confined build sees read-only) and of each file
    a patch names; the patches applied (git apply, as import applies them);
    make -k V=1 arch/x86/entry/vdso/ (kbuild.make_vdso: a patch that breaks
    only the 32-bit vDSO is recorded as such, the 64-bit image kept)

make reads the sources' times through the links and rebuilds what the
patches touch: the tree of links is made where the kept tree was built
(kbuild_kept.building()), so the tools prepare builds, objtool and
resolve_btfids, whose own build keeps absolute paths, are found built (a
tree kept from elsewhere has them rebuilt: ~10 s on two cores for 6.12). Where no
tree is kept (a tree pruned; a cache from before), kbuild runs whole on the
tree once more (a tarball's unpacked, a folder's copied), keeping it.
Confined as every kbuild.

    image_record(source, tree_identity, series, patches, config, say)
        kbuild's record of the patched tree (cached under its own key, the
        unpatched tree's and the patches'), None where kbuild cannot run
"""

import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from vdsobench_cli.cli import confine, lifecycle
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import kbuild, kbuild_kept, kbuild_tree, patches as patches_mod

FORMAT = 1
# $1 the kept tree, $2 the patched one, $3 kbuild's files, $4 the patches'
# files to copy, $5 every name the patches give; $6 python3, $7 link_farm.py
FARM = ('"$6" -I -S "$7" "$1" "$2" "$3" "$5" && cd "$1" && '
        'xargs -0 -r cp -a --parents --remove-destination -t "$2" -- < "$3" && '
        'xargs -0 -r cp --parents --remove-destination -t "$2" -- < "$4"')
LINK_FARM = Path(__file__).resolve().with_name("link_farm.py")


def patches_key(base_key, patches):
    blob = json.dumps([FORMAT, base_key, [hashlib.sha256(p.data).hexdigest()
                                          for p in patches]])
    return hashlib.sha256(blob.encode()).hexdigest()


def image_record(source, tree_identity, series, patches, config=None, say=print):
    """kbuild's record of source with patches (code only: their line is the
    tree's), its vdso64.so that tree's own; None, said why, where kbuild
    cannot run here."""
    how = kbuild.setup(series, config, say, tree=source)
    if how is None:
        return None
    top = kbuild.cache_dir()
    base_key = kbuild.current_key(top, how.key(tree_identity), source)
    key = patches_key(base_key, patches)
    with kbuild.key_lock(top, key, say):
        rec = kbuild.cached(top / key)
        if rec is not None:
            return dict(rec, cached=True)
        with kbuild.key_lock(top, base_key, say):
            base = top / base_key
            if not kept(base):
                say("import: kbuild: the tree's built tree is not kept (pruned, or an "
                    "older cache): kbuild runs on it whole once more")
                kbuild.made(source, tree_identity, [], how, base, say)
            if kept(base):
                os.utime(base / kbuild_kept.MADE)  # used: pruned last
                return rebuilt(base, patches, how, top / key, say)
        ident = dict(tree_identity, patches=[hashlib.sha256(p.data).hexdigest()
                                             for p in patches])
        return kbuild.made(source, ident, patches, how, top / key, say)


def cached_record(base_key, patches):
    """The patched tree's record made before (image_record's), or None: a
    lookup, nothing built."""
    return kbuild.cached(kbuild.cache_dir() / patches_key(base_key, patches))


def kept(base):
    return (base / kbuild_kept.TREE).is_dir() and (base / kbuild_kept.MADE).is_file()


def copied(tree, patches):
    """The files the patches name that the kept tree has as regular files,
    below folders that are no links (git apply refuses to write past a
    link; safe_read.open_dir walks them so): NUL-separated, for FARM's
    copies."""
    root = os.open(tree, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return b"\0".join(name.encode() for name in sorted({n for p in patches for n in p.names})
                          if kbuild_tree.regular_file(root, name))
    finally:
        os.close(root)


def rebuilt(base, patches, how, final, say):
    """The patched tree built from base's kept tree, kept in final."""
    t0 = time.monotonic()
    tree = base / kbuild_kept.TREE
    say(f"import: kbuild: the patched tree's {kbuild.VDSO_DIR}/, from the tree's kept "
        "build (seconds)")
    # where the kept tree was built: make finds the tools built (kbuild_kept.py)
    with kbuild_kept.building(final.parent, base.name) as work, \
            tempfile.TemporaryFile() as log:
        work = Path(work)
        src, names, named = work / "src", work / "patched.list", work / "named.list"
        names.write_bytes(copied(tree, patches))
        named.write_bytes(b"\0".join(sorted({n.encode() for p in patches for n in p.names})))
        argv = ["sh", "-c", FARM, "sh", str(tree), str(src), str(base / kbuild_kept.MADE),
                str(names), str(named), sys.executable, str(LINK_FARM)]
        r = lifecycle.run(confine.command(argv, write=[work], read=[base]),
                          capture_output=True, text=True, errors="replace")
        if r.returncode != 0:
            raise UsageError(f"kbuild: the patched tree's links to {tree} were not made "
                             f"({(r.stderr.strip() or '?')[:200]})")
        patches_mod.apply_patches(src, patches, confined=work)
        build_fd = kbuild.folder(src)
        try:
            failure = kbuild.make_vdso(src, build_fd, log, work,
                                       "kbuild: the patched tree: make", read=[base])
            rec = kbuild.extract(build_fd, how.compiler, failure)
            rec.update(format=kbuild.FORMAT, key=final.name, config=how.conf,
                       tree={"base": base.name, "patches": [
                           hashlib.sha256(p.data).hexdigest() for p in patches]},
                       source=str(tree), incremental=True,
                       seconds=round(time.monotonic() - t0, 1),
                       made=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            kbuild.keep(build_fd, rec, final.parent, final)
        finally:
            os.close(build_fd)
    return dict(rec, cached=False)

