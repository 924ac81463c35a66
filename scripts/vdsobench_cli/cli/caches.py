"""The tool's own caches under ~/.cache/vdsobench/, each movable by a
variable of its own: folder(ENV, NAME, WHAT) is $ENV, else
~/.cache/vdsobench/NAME, made when missing, a folder and not a link, that
only root or this user may write, nor anyone else any folder above it
(trust.py): what is kept there is built, unpacked and run. Anything else is
one line starting with WHAT (UsageError, exit 2).

    kbuild    $VDSOBENCH_KBUILD_CACHE  (kimport/kbuild.py: kbuild's lines, objects,
              and the last trees it built in, kbuild_patched.py's)
    debian    $VDSOBENCH_DEBIAN_CACHE  (kimport/newer_sources.py: the packages
              fetched from Debian's newer suites, and their private apt state)
    taken     $VDSOBENCH_TAKEN_CACHE   (kimport/taken_cache.py: the files import
              takes from a tarball, once per tarball)
"""

import os
from pathlib import Path

from vdsobench_cli.cli import trust
from vdsobench_cli.cli.errors import UsageError


def folder(env, name, what):
    """$env, else ~/.cache/vdsobench/name: made, a folder, trusted."""
    d = Path(os.environ.get(env) or Path.home() / ".cache" / "vdsobench" / name)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{what}: cache {d}: {e.strerror or e}") from None
    if d.is_symlink() or not d.is_dir():
        raise UsageError(f"{what}: cache {d} is not a folder")
    problem = trust.folder_problem(d)
    if problem:
        raise UsageError(f"{what}: cache {problem}")
    return d
