"""A tree of links to a kept kbuild tree, linking whole folders where it can
(kbuild_patched.py runs it confined, as the sandbox user).

    python3 -I -S link_farm.py TREE DEST LIST...

DEST is made a folder whose entries are links to TREE's, but that every
folder on the way to a path a LIST names (NUL-separated, relative: the files
kbuild wrote, the files the patches name) is a folder of its own, linked
entry by entry in turn. make then writes its outputs, and git apply its
changes, in folders of DEST, never through a link into TREE (which the
confined build sees read-only: a write there fails, it does not land).

Why not `cp -as`: a kernel tree is ~94,000 files, and a link each took 20 s
of system time on a two-core guest for every patched image; the folders
kbuild and a patch touch hold a few thousand entries.

Standard library only: it runs in isolated mode. Names are bytes, never
decoded; a named path with an empty, "." or ".." part, or an absolute one,
marks nothing (the copies after it are cp's, which refuse those).
"""

import os
import sys


def marked(lists):
    """The relative folders (bytes) on the way to every path the lists name."""
    folders = set()
    for path in lists:
        with open(path, "rb") as f:
            for name in f.read().split(b"\0"):
                parts = name.split(b"/")
                if not name or name.startswith(b"/") or any(
                        p in (b"", b".", b"..") for p in parts):
                    continue
                for i in range(1, len(parts)):
                    folders.add(b"/".join(parts[:i]))
    return folders


def farm(tree, dest, folders, rel=b""):
    """dest made and filled: a link to each entry of tree/rel, but a folder
    for each entry in folders that is a folder there (no link followed)."""
    os.mkdir(dest, 0o755)
    with os.scandir(os.path.join(tree, rel) if rel else tree) as entries:
        for e in entries:
            sub = os.path.join(rel, e.name) if rel else e.name
            if sub in folders and e.is_dir(follow_symlinks=False):
                farm(tree, os.path.join(dest, e.name), folders, sub)
            else:
                os.symlink(os.path.join(tree, sub), os.path.join(dest, e.name))


def main(argv):
    if len(argv) < 3:
        print("usage: link_farm.py TREE DEST LIST...", file=sys.stderr)
        return 2
    tree, dest = os.fsencode(argv[0]), os.fsencode(argv[1])
    farm(tree, dest, marked(argv[2:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
