"""A copy of the project's work tree for a process that needs a Bazel server,
an imports table and CPU locks of its own: the files git tracks and the new
ones it does not ignore (the tree as it is, edits included), without the
bazel-* links and the imports folder, which are the copy's own.

files(root) lists them (None, with why, outside a git work tree); refresh()
makes dst hold exactly those files, keeping dst itself (Bazel's output base
is named after the workspace's path, so a copy kept at one path builds
incrementally, and from .bazelrc's shared disk cache when new).
"""

import os
import shutil
import subprocess
from pathlib import Path

from vdsobench_cli.cli import lifecycle, tools


def files(root):
    """(the relative paths git would carry, None) or (None, why)."""
    git = tools.find("git")
    if git is None:
        return None, tools.missing("git")
    r = subprocess.run([git, "-C", str(root), "ls-files", "-z", "--cached", "--others",
                        "--exclude-standard"], capture_output=True, stdin=subprocess.DEVNULL,
                       env=dict(os.environ, GIT_OPTIONAL_LOCKS="0"))
    if r.returncode != 0:
        return None, f"not a git work tree ({r.stderr.decode(errors='replace').strip()})"
    paths = [Path(p.decode(errors="surrogateescape")) for p in r.stdout.split(b"\0") if p]
    return [p for p in paths if not p.parts[0].startswith("bazel-")], None


def refresh(root, dst, names):
    """dst (made when missing) holding exactly root's names, regular files only
    (a deleted file git still tracks is left out); its own Bazel links and
    output base stay, everything else is replaced."""
    dst = Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    for entry in dst.iterdir():
        if entry.name.startswith("bazel-"):
            continue
        with lifecycle.critical():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    for rel in names:
        src = Path(root, rel)
        if src.is_file() and not src.is_symlink():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    return dst
