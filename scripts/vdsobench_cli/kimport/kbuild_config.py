"""Which kernel configuration a tree's kbuild builds its vDSO with, in this
order (the first there is):

    given      --config FILE
    tree       the tree's own .config (a folder given as SOURCE: a
               developer's tree, configured as they build it)
    debian     Debian's linux-config-X.Y of the tree's version
               (/usr/src/linux-config-X.Y/config.amd64_none_amd64.xz, or the
               same fetched with a newer tree, newer_sources.py)
    running    the running kernel's, /proc/config.gz
    defconfig  none: kbuild's own x86_64_defconfig

    config_for(series, given, tree)  ({kind, path, sha256}, text or None for
                                     defconfig), None; or None, why
    whose(conf)                      the words the block names it by

Every file is read as input (a regular file, no link, a cap): a tree's
.config is the tree's, and /proc/config.gz is gzip like any other.
"""

import hashlib
import lzma
import os
import zlib
from pathlib import Path

from vdsobench_cli.cli import safe_read
from vdsobench_cli.kimport import newer_sources

DEBIAN_CONFIG = "/usr/src/linux-config-{series}/config.amd64_none_amd64.xz"
PROC_CONFIG = "/proc/config.gz"
DEFCONFIG = "x86_64_defconfig"
CONFIG_LIMIT = 4 << 20
WHOSE = {"given": "your config {name}", "tree": "the tree's own .config",
         "debian": "Debian's config {name}", "running": "the running kernel's {path}",
         "defconfig": "kbuild's {name}"}


def record(kind, path, data):
    return ({"kind": kind, "path": str(path),
             "sha256": hashlib.sha256(data if data is not None else
                                      DEFCONFIG.encode()).hexdigest()}, data), None


def config_for(series, given=None, tree=None):
    """The configuration (see above): (({kind, path, sha256}, text), None),
    or (None, why) when one that is there cannot be read as one."""
    if given:
        return record("given", os.path.abspath(given),
                      safe_read.read_regular(given, "--config", CONFIG_LIMIT))
    if tree is not None and Path(tree).is_dir() and os.path.lexists(Path(tree, ".config")):
        path = Path(tree, ".config")
        return record("tree", path, safe_read.read_regular(
            str(path), "the tree's .config", CONFIG_LIMIT, follow=False))
    path = DEBIAN_CONFIG.format(series=series)
    if not os.path.isfile(path):
        path = str(newer_sources.config(series) or path)  # fetched with its tree
    if os.path.isfile(path):
        raw = safe_read.read_regular(path, "Debian configuration", CONFIG_LIMIT)
        try:
            return record("debian", path, lzma.decompress(raw))
        except lzma.LZMAError as e:
            return None, f"{path}: not xz ({e})"
    if os.path.isfile(PROC_CONFIG):
        raw = safe_read.read_regular(PROC_CONFIG, "the running kernel's config", CONFIG_LIMIT)
        unpack = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip's header and trailer
        try:
            data = unpack.decompress(raw, CONFIG_LIMIT + 1)
        except zlib.error as e:
            return None, f"{PROC_CONFIG}: not gzip ({e})"
        if len(data) > CONFIG_LIMIT or not unpack.eof:
            return None, f"{PROC_CONFIG}: over {CONFIG_LIMIT >> 20} MiB unpacked, or cut short"
        return record("running", PROC_CONFIG, data)
    return record("defconfig", DEFCONFIG, None)


def whose(conf):
    """'Debian's config config.amd64_none_amd64.xz', 'kbuild's x86_64_defconfig'."""
    path = str(conf.get("path", "?"))
    return WHOSE.get(conf.get("kind"), "a config {name}").format(name=Path(path).name, path=path)
