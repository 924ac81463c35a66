"""A git work tree's own commits as a series of patches, and the tree before
them: `recipe patch-review --source TREE --range BASE..HEAD` (or --base REV,
meaning REV..HEAD). git reads the tree's history through git_run.py
(confined; none of the tree's hooks, config commands or filters run).

    parse(value, option) -> (base, head)  --range's text, checked (pure)
    revision(text, option) -> text        a revision name, checked (pure)
    resolve(tree, base, head, option) -> Range
        BASE and HEAD to commits; the commits of BASE..HEAD, oldest first,
        each with its subject; UsageError (one line) for a revision that
        names no commit, a BASE that is not an ancestor of HEAD, no commit
        in the range, a merge commit in it, or more than MAX_PATCHES
    taken(rng, into) -> (source folder, [patch file])
        each commit's patch (its diff against its parent, as diff-tree
        writes it, under a Subject: line) and BASE's files that import
        takes (source.TAKE for every architecture, and the files the patches
        name), from git's objects as they are (cat-file: no filter, no
        checkout of the user's work tree, no index)

A revision is a name git would take for one (a ref, a hash, HEAD~2,
v6.12^{commit}): letters, digits and _./~^@{}+-, never starting with '-'
(it would be read as an option), at most REV_MAX characters.
"""

import os
import re
from typing import NamedTuple

from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.core import text as text_mod
from vdsobench_cli.kimport import (git_dir, git_run, imports_table, patches as patches_mod,
                                   source as source_mod, stage)

REV = re.compile(r"[A-Za-z0-9_./~^@{}+-]+")
REV_MAX = 200
OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
SHORT = 12
COMMIT_LIMIT = 1 << 20
FILES_MAX = 4000


class Range(NamedTuple):
    tree: str
    text: str  # as given: "v6.12..HEAD"
    base: str  # full commit ids
    head: str
    commits: list  # [(commit id, subject)], oldest first
    read: tuple = ()  # the git dirs a confined git must read besides the tree


def prefix(option):
    return f"recipe patch-review: {text_mod.printable(option, 240)}"


def revision(text, option):
    """text, when it is a revision name (see the top); else UsageError."""
    if text.startswith("-"):
        raise UsageError(f"{prefix(option)}: {text_mod.printable(text, 80)!r} starts with "
                         "'-': a revision, not an option, goes there")
    if not (0 < len(text) <= REV_MAX and REV.fullmatch(text) and ".." not in text):
        raise UsageError(f"{prefix(option)}: {text_mod.printable(text, 80)!r} is not a "
                         f"revision name (valid: letters, digits and _./~^@{{}}+-, at most "
                         f"{REV_MAX}, e.g. v6.12, HEAD~2, 1a2b3c4d)")
    return text


def parse(value, option):
    """(base, head) of BASE..HEAD (BASE.. means BASE..HEAD)."""
    if "..." in value or value.count("..") != 1:
        raise UsageError(f"{prefix(option)}: not BASE..HEAD (valid: two revisions with "
                         "'..' between, e.g. v6.12..HEAD or main..mine)")
    base, head = value.split("..")
    if not base:
        raise UsageError(f"{prefix(option)}: no BASE before '..' (e.g. v6.12..HEAD)")
    return revision(base, option), revision(head or "HEAD", option)


def git_dirs(tree, option):
    """The real paths of the tree's git dir and common dir (a linked
    worktree's are elsewhere), its .git read as data; UsageError for a
    tree without one that can be read."""
    try:
        with git_dir.GitDir.of(tree) as g:
            return tuple(dict.fromkeys(os.readlink(f"/proc/self/fd/{fd}")
                                       for fd in (g.git, g.common)))
    except (git_dir.Unreadable, OSError) as e:
        raise UsageError(f"{prefix(option)}: {text_mod.printable(str(tree))} is not a git "
                         f"work tree git may read ({text_mod.printable(str(e), 160)})") \
            from None


def git(tree, args, option, read, stdin=None):
    """git_run.run with the message's prefix; the Ran."""
    return git_run.run(tree, args, prefix(option), stdin=stdin, read=read)


def first_line(err):
    return text_mod.printable((err.strip().splitlines() or ["no reason given"])[-1], 160)


def commit_of(tree, rev, option, read):
    r = git(tree, ["rev-parse", "--verify", "--quiet", "--end-of-options",
                   f"{rev}^{{commit}}"], option, read)
    oid = r.out.decode(errors="replace").strip()
    if r.rc != 0 or not OID.fullmatch(oid):
        raise UsageError(f"{prefix(option)}: {rev!r} names no commit in "
                         f"{text_mod.printable(str(tree))}")
    return oid


def resolve(tree, base, head, option):
    """The Range (see the top), checked."""
    read = git_dirs(tree, option)
    b, h = commit_of(tree, base, option, read), commit_of(tree, head, option, read)
    r = git(tree, ["merge-base", "--is-ancestor", b, h], option, read)
    if r.rc == 1:
        raise UsageError(f"{prefix(option)}: {base} is not an ancestor of {head}: the "
                         "range would hold commits that are not on HEAD's history")
    if r.rc != 0:
        raise UsageError(f"{prefix(option)}: git merge-base failed: {first_line(r.err)}")
    r = git(tree, ["rev-list", "--reverse", "--parents", f"{b}..{h}"], option, read)
    if r.rc != 0:
        raise UsageError(f"{prefix(option)}: git rev-list failed: {first_line(r.err)}")
    rows = [line.split() for line in r.out.decode(errors="replace").splitlines()]
    commits = checked_commits(rows, option)
    subjects = subjects_of(tree, [c for c, _ in commits], option, read)
    return Range(str(tree), f"{base}..{head}", b, h, list(zip((c for c, _ in commits),
                                                              subjects)), read)


def checked_commits(rows, option):
    """[(commit, parent)] of rev-list --parents' rows: none, a merge, a root
    commit (no parent) or too many are one line."""
    if not rows:
        raise UsageError(f"{prefix(option)}: no commits in the range: nothing to review")
    if len(rows) > patches_mod.MAX_PATCHES:
        raise UsageError(f"{prefix(option)}: {len(rows)} commits: at most "
                         f"{patches_mod.MAX_PATCHES} in a series")
    out = []
    for row in rows:
        if not row or not all(OID.fullmatch(x) for x in row):
            raise UsageError(f"{prefix(option)}: git rev-list wrote what is not a commit list")
        if len(row) > 2:
            raise UsageError(f"{prefix(option)}: commit {row[0][:SHORT]} is a merge (of "
                             f"{len(row) - 1} parents): a series of patches has none")
        out.append((row[0], row[1] if len(row) == 2 else None))
    return out


def batch(tree, oids, option, read):
    """{oid: (type, bytes)} of git cat-file --batch: the raw objects."""
    r = git(tree, ["cat-file", "--batch"], option, read,
            stdin="".join(f"{o}\n" for o in oids).encode())
    if r.rc != 0:
        raise UsageError(f"{prefix(option)}: git cat-file failed: {first_line(r.err)}")
    return parse_batch(r.out, option)


def parse_batch(out, option):
    """{oid: (type, bytes)} from cat-file --batch's output (pure)."""
    found, i = {}, 0
    while i < len(out):
        end = out.find(b"\n", i)
        head = out[i:end].decode(errors="replace").split() if end >= 0 else []
        if len(head) != 3 or not OID.fullmatch(head[0]) or not head[2].isdigit():
            raise UsageError(f"{prefix(option)}: git cat-file wrote what is not an object")
        size = int(head[2])
        if end + 1 + size + 1 > len(out):
            raise UsageError(f"{prefix(option)}: git cat-file's object is cut short")
        found[head[0]] = (head[1], bytes(out[end + 1:end + 1 + size]))
        i = end + 1 + size + 1
    return found


def subject(raw):
    """A commit object's subject, as git's %s: its message's first paragraph
    on one line (pure)."""
    _, _, message = raw.decode("utf-8", "replace").partition("\n\n")
    lines = []
    for line in message.splitlines():
        if not line.strip():
            if lines:
                break
            continue
        lines.append(line.strip())
    return text_mod.printable(" ".join(lines), 200)


def subjects_of(tree, oids, option, read):
    objs = batch(tree, oids, option, read)
    if any(objs.get(o, ("",))[0] != "commit" for o in oids):
        raise UsageError(f"{prefix(option)}: git cat-file did not give every commit")
    return [subject(objs[o][1]) for o in oids]


def patch_text(oid, subject_line, diff):
    """A patch git apply and import read: a Subject: line (the commit's
    message is left out: its body could hold lines that read as a diff),
    then the diff (pure)."""
    return (f"From {oid} Mon Sep 17 00:00:00 2001\nSubject: [PATCH] {subject_line}\n\n"
            "---\n").encode() + diff


def diff_of(rng, oid, option):
    r = git(rng.tree, ["diff-tree", "-r", "-p", "--root", "--no-ext-diff", "--no-textconv",
                       "--no-color", "--no-renames", "--binary", "--src-prefix=a/",
                       "--dst-prefix=b/", "--no-commit-id", oid], option, rng.read)
    if r.rc != 0:
        raise UsageError(f"{prefix(option)}: git diff-tree {oid[:SHORT]} failed: "
                         f"{first_line(r.err)}")
    if not r.out.strip():
        raise UsageError(f"{prefix(option)}: commit {oid[:SHORT]} changes no file's text "
                         "(empty, or a mode alone): nothing of it to review")
    return r.out


def taken(rng, into, option):
    """(BASE's files as a folder, [each commit's patch file]) in the folder
    into: what import is given for the range (see the top)."""
    folder = os.path.join(into, "patches")
    os.mkdir(folder)
    paths = []
    for n, (oid, subject_line) in enumerate(rng.commits, 1):
        path = os.path.join(folder, f"{n:04d}-{oid[:SHORT]}.patch")
        with open(path, "xb") as f:
            f.write(patch_text(oid, subject_line, diff_of(rng, oid, option)))
        paths.append(path)
    try:
        named = {n for p in patches_mod.check_patches(paths) for n in p.names}
    except UsageError as e:
        raise UsageError(f"{prefix(option)}: {text_mod.printable(str(e), 300)}") from None
    tree = os.path.join(into, f"linux-{rng.base[:SHORT]}")
    os.mkdir(tree)
    export(rng, wanted_files(named), tree, option)
    return tree, paths


def wanted_files(named):
    """(folders whose files are taken, files taken): source.TAKE for every
    architecture, and the files the patches name."""
    folders, files = set(), set(named)
    for arch_dir in imports_table.ARCH_DIRS.values():
        for p in source_mod.expand(source_mod.TAKE, arch_dir):
            (folders.add(p[:-2]) if p.endswith("/*") else files.add(p))
    return sorted(folders), sorted(files)


def listed(out, wanted, option):
    """[(path, blob id)] of ls-tree -r -z's entries that import takes: a
    regular file named, or directly in a folder taken (pure). A link there
    is one line, as import says of a tree's."""
    folders, files = set(wanted[0]), set(wanted[1])
    found = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        fields, rel = meta.decode(errors="replace").split(), name.decode("utf-8", "replace")
        if len(fields) != 3 or not OID.fullmatch(fields[2]):
            raise UsageError(f"{prefix(option)}: git ls-tree wrote what is not a tree list")
        if rel not in files and rel.rpartition("/")[0] not in folders:
            continue
        if fields[0] == "120000":
            raise UsageError(f"{prefix(option)}: {text_mod.printable(rel, 160)} is a "
                             "symbolic link in BASE: import takes no links")
        if fields[1] != "blob":
            continue  # a submodule: a folder in a checkout, no file
        source_mod.taken_name(f"{prefix(option)}: BASE", rel)
        found.append((rel, fields[2]))
    if len(found) > FILES_MAX:
        raise UsageError(f"{prefix(option)}: BASE has over {FILES_MAX} files import takes")
    return found


def export(rng, wanted, into, option):
    """BASE's wanted files written into the folder into, from git's objects."""
    r = git(rng.tree, ["ls-tree", "-r", "-z", "--full-tree", rng.base, "--",
                       *wanted[0], *wanted[1]], option, rng.read)
    if r.rc != 0:
        raise UsageError(f"{prefix(option)}: git ls-tree failed: {first_line(r.err)}")
    entries = listed(r.out, wanted, option)
    objs = batch(rng.tree, sorted({oid for _, oid in entries}), option, rng.read)
    for rel, oid in entries:
        kind, data = objs.get(oid, (None, b""))
        if kind != "blob" or len(data) > source_mod.FILE_LIMIT:
            raise UsageError(f"{prefix(option)}: BASE's {text_mod.printable(rel, 160)}: "
                             "no blob of at most "
                             f"{source_mod.FILE_LIMIT // imports_table.MB} MB")
        stage.write_inside(into, rel, data)
