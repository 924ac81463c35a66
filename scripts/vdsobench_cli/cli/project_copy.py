"""A copy of the project as it is on disk, for a suite that needs a Bazel
server and output base of its own beside the project's (the new-variant
test's copy, tests/new_variant_test.py). What is copied is what git would
see: the tracked files and the new ones it does not ignore, as they are now
(an edit not yet committed included), never bazel-* or an imports table.
The copy shares the user's caches (Bazel's disk cache, ~/.cache/vdsobench),
each of which locks what it writes.

    files(root)           [relative Path] git lists, or None (no git work tree)
    make(root, dest)      the copy made under dest; dest
    remove(copy)          its Bazel server stopped and output base removed
                          (`bazel clean --expunge`: not left in ~/.cache/bazel),
                          then the copy
"""

import shutil
import subprocess
from pathlib import Path

from vdsobench_cli.cli import lifecycle, tools


def files(root):
    git = tools.find("git")
    if git is None or not (Path(root) / ".git").exists():
        return None
    r = lifecycle.run([git, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                      cwd=root, capture_output=True, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        return None
    return [Path(p.decode()) for p in r.stdout.split(b"\0") if p]


def make(root, dest, listed=None):
    root, dest = Path(root), Path(dest)
    for rel in listed if listed is not None else files(root) or []:
        src = root / rel
        # a deleted file git still tracks, a link (the project has none to copy)
        if src.is_file() and not src.is_symlink() and not rel.parts[0].startswith("bazel-"):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def remove(copy):
    copy = Path(copy)
    if (copy / "WORKSPACE").is_file() and tools.have("bazel"):
        lifecycle.run([tools.find("bazel"), "clean", "--expunge"], cwd=copy,
                      capture_output=True, stdin=subprocess.DEVNULL)
    shutil.rmtree(copy, ignore_errors=True)

