"""What patch-review measured, on what (patch_review.py): the block's first
lines and patch-review.json's. The tree's commit and the files not as
committed, from its .git read as data (git_dir.py, git_index.py: running
git in someone else's repository runs their hooks and config); the
compiler and the compile line (the project's, or the tree's kbuild's);
the machine."""

import os
import shutil
import subprocess
from pathlib import Path

from vdsobench_cli.cli import arch
from vdsobench_cli.core import text as text_mod, uarch
from vdsobench_cli.kimport import git_dir, git_index, kbuild_config, store
from vdsobench_cli.recipes.review_parts import VCLOCKS, verdict

from reports import review

MEASURED = "the tree's lib/vdso read path, rebuilt in userspace against a shim"

# what an import writes beside the files it takes: never the tree's
GENERATED = ("include/generated/", "kimport.json")


def git_dirty(source, meta):
    """git_index.Changes of the files the read path was built from (the
    unpatched tree's, as taken) against the tree's index: edits not
    committed, named; none for a tarball."""
    if not os.path.isdir(source):
        return git_index.Changes()
    taken = sorted(f for f in (meta.get("hashes") or {}) if not f.startswith(GENERATED))
    return git_index.changed(source, taken)


def git_head(source):
    """git_dir.Head of a tree given as a folder, read from its .git as data
    (running git in someone else's repository runs their hooks and config);
    an empty one for a tarball."""
    return git_dir.head(source) if os.path.isdir(source) else git_dir.Head()


def compiler():
    """(path, version) of the C compiler the build uses (Bazel's local
    toolchain: $CC or gcc on PATH)."""
    path = shutil.which(os.environ.get("CC") or "gcc") or "gcc"
    try:
        r = subprocess.run([path, "-dumpfullversion"], capture_output=True, text=True,
                           timeout=30, stdin=subprocess.DEVNULL)
        version = r.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        version = None
    return path, version


def machine(s, cpu):
    m = uarch.machine(s.fingerprint)
    return {"cpu": m["label"], "microcode": m["microcode"], "kernel": m["kernel"],
            "hypervisor": m["hypervisor"] or "bare metal", "counter": arch.timed_counter(),
            "cpu_pinned": cpu}


def compile_line(kb):
    """The Compiler: line's name of the line, from an import's kbuild context
    (kbuild.context): the kernel's, with its configuration, or the project's
    and why not the kernel's."""
    if kb.get("line"):
        return (f"the kernel's vDSO line (the tree's kbuild, "
                f"{kbuild_config.whose(kb.get('config') or {})})")
    line = "the project's userspace build line (Bazel opt, -O2)"
    if kb.get("why"):
        line += f": {text_mod.printable(kb['why'], 120)}"
    return line


def provenance(s, metas, names, source, patches, subjects, checked, rng=None):
    """What was measured, on what: the block's first lines and the JSON's.
    names: the imports (before, after) of the tree and the patched tree;
    rng: the --range (git_range.Range) the tree and patches were taken from."""
    before, after = names
    meta = metas.get(after) or metas[before]  # a series' walk may stop before the last
    cc_path, cc_version = compiler()
    build_flags = (s.fingerprint.get("build") or {})
    # a range's tree is BASE's commit, taken from git's objects: nothing dirty
    head = git_dir.Head(rng.base) if rng else git_head(source)
    if head.commit:
        ref = f"BASE of {rng.text}" if rng else head.ref or "detached HEAD"
        s.say(f"git: {head.commit} ({text_mod.printable(ref)})")
    elif head.why and head.why != git_dir.NO_GIT:
        s.say(f"git: the commit was not read: {text_mod.printable(head.why)}")
    dirty = git_dirty(source, metas[before]) if head.commit and not rng \
        else git_index.Changes()
    if dirty.files:
        s.say(f"git: {len(dirty.files)} of the files built from are not as committed: "
              f"{text_mod.printable(', '.join(dirty.files), 300)}")
    elif dirty.why:
        s.say(f"git: whether the tree is as committed was not read: "
              f"{text_mod.printable(dirty.why)}")
    verify_lines, paravirt = {}, {}
    for (label, v), rec in checked.items():
        if v.split("+")[1] != "fake":
            continue
        mode = v.rsplit("@", 1)[1] if "@" in v else None
        if mode in VCLOCKS:
            paravirt.setdefault(label, {}).setdefault(verdict(rec), []).append(
                (mode, rec.get("status") == "PASS"))
        else:
            verify_lines[label] = (rec.get("status") == "PASS", verdict(rec))
    # the same tree in the paravirtual modes where they ran, a verdict once
    # for the modes that share it: "...; pvclock, hvclock: PASS (...)"
    for label, verdicts in paravirt.items():
        ok, text = verify_lines.get(label, (True, ""))
        for said, modes in verdicts.items():
            ok = ok and all(passed for _, passed in modes)
            text += f"; {', '.join(m for m, _ in modes)}: {said}"
        verify_lines[label] = (ok, text.lstrip("; "))
    table = store.read_table()
    # the tree's line where a series' walk stopped before the patched tree
    kb = (table.get(after) or table.get(before) or {}).get("identity", {}).get("kbuild") or {}
    line = compile_line(kb)
    if kb.get("line"):
        cc_path = (kb.get("compiler") or {}).get("path") or cc_path
    return {"subject": subjects[0], "patches": len(patches), "subjects": list(subjects),
            "patch_files": [Path(p).name for p in patches],
            "measured": MEASURED,
            "tree": f"Linux {meta['kernel']}", "commit": head.commit,
            "git_ref": head.ref,
            "commit_why": head.why if head.why != git_dir.NO_GIT else None,
            "dirty": [text_mod.printable(f, 200) for f in dirty.files or []],
            "dirty_why": dirty.why,
            "source": text_mod.printable(str(rng.tree if rng else source)),
            "range": rng.text if rng else None,
            "commits": [oid for oid, _ in rng.commits] if rng else None,
            "compiler": f"gcc {cc_version}" if cc_version else cc_path,
            "compiler_path": cc_path, "compiler_version": cc_version,
            "line": line, "kbuild": kb or None,
            "flags": {k: build_flags.get(k) for k in ("compilation_mode", "copts", "conlyopts")},
            "machine": machine(s, None), "verify": verify_lines, "torn": None,
            "unverified": None, "code": None, "sim": [], "rows": [], "page": [], "why": [],
            "notes": [],
            "target": review.TARGET}
