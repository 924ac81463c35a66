"""kimport/taken_cache.py through tarball.untar(): a tarball's taken files
kept once, the same files (bytes, mode, mtime) from the cache as from tar, a
damaged or hostile entry never used, and nothing but plain files kept."""

import io
import json
import os
import tarfile
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import tarball as tarball_mod, taken_cache

PATTERNS = ["Makefile", "lib/vdso/gettimeofday.c", "include/vdso/*"]


def make_tarball(path, members, links=()):
    """A .tar.xz of linux-x/: the links first (a member under one comes after)."""
    with tarfile.open(path, "w:xz") as t:
        for name, target in links:
            info = tarfile.TarInfo(f"linux-x/{name}")
            info.type, info.linkname = tarfile.SYMTYPE, target
            t.addfile(info)
        for name, data in members.items():
            info = tarfile.TarInfo(f"linux-x/{name}")
            info.size, info.mtime = len(data), 1700000000
            info.mode = 0o755 if name.endswith(".sh") else 0o644
            t.addfile(info, io.BytesIO(data))


def tree(root):
    """{rel: (bytes, mode, mtime)} of the files under root."""
    out = {}
    for p in sorted(Path(root).rglob("*")):
        if p.is_file():
            st = p.stat()
            out[str(p.relative_to(root))] = (p.read_bytes(), st.st_mode & 0o777, st.st_mtime_ns)
    return out


class TakenCacheTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.root = Path(self.tmp.name)
        env = mock.patch.dict(os.environ, {"VDSOBENCH_TAKEN_CACHE": str(self.root / "cache")})
        env.start()
        self.addCleanup(env.stop)
        self.src = self.root / "linux-x.tar.xz"
        make_tarball(self.src, {"Makefile": b"VERSION = 6\n",
                                "lib/vdso/gettimeofday.c": b"/* read */\n",
                                "include/vdso/a.h": b"/* a */\n",
                                "include/vdso/run.sh": b"#!/bin/sh\n",
                                "include/vdso/sub/b.h": b"/* below the glob */\n",
                                "other/c.c": b"/* a patch's */\n"})
        self.calls = []
        real = tarball_mod._untar

        def counted(source, top, patterns, named, into):
            self.calls.append((list(patterns), list(named)))
            return real(source, top, patterns, named, into)
        untar = mock.patch.object(tarball_mod, "_untar", side_effect=counted)
        untar.start()
        self.addCleanup(untar.stop)

    def untar(self, name, named=()):
        into = self.root / name
        into.mkdir()
        self.calls.clear()
        tarball_mod.untar(self.src, PATTERNS, list(named), into)
        return tree(into)

    def entries(self):
        return [p for p in (self.root / "cache").iterdir() if not p.name.startswith(".")]

    def test_the_second_untar_takes_the_same_files_from_the_cache(self):
        named = ["other/c.c", "include/vdso/a.h", "include/vdso/new.h"]
        # what tar alone makes: a name outside the patterns, nothing kept
        want = self.untar("tar", named)
        self.assertEqual(sorted(want), ["Makefile", "include/vdso/a.h", "include/vdso/run.sh",
                                        "lib/vdso/gettimeofday.c", "other/c.c"])
        self.assertEqual(want["include/vdso/run.sh"][1], 0o755 & ~_umask())
        self.assertEqual(self.calls, [(PATTERNS, named)])
        self.assertEqual(self.entries(), [])
        # the patterns' alone: kept
        alone = self.untar("a")
        self.assertEqual(alone, {k: v for k, v in want.items() if k != "other/c.c"})
        self.assertEqual(self.calls, [(PATTERNS, [])])
        self.assertEqual(len(self.entries()), 1)
        # then from the cache, tar only for the name no pattern matches
        self.assertEqual(self.untar("b", named), want)
        self.assertEqual(self.calls, [([], ["other/c.c"])])
        self.assertEqual(self.untar("c", ["include/vdso/a.h"]), alone)
        self.assertEqual(self.calls, [])

    def test_a_damaged_entry_is_untarred_again_and_replaced(self):
        want = self.untar("a")
        entry, = self.entries()
        (entry / taken_cache.FILES / "Makefile").write_bytes(b"VERSION = 9\n")
        self.assertEqual(self.untar("b"), want)
        self.assertEqual(self.calls, [(PATTERNS, [])])
        self.assertEqual(self.untar("c"), want)
        self.assertEqual(self.calls, [])

    def test_a_manifest_naming_a_file_outside_is_not_followed(self):
        want = self.untar("a")
        entry, = self.entries()
        manifest = json.loads((entry / taken_cache.MANIFEST).read_text())
        manifest["files"]["../../escaped"] = manifest["files"].pop("Makefile")
        (entry / taken_cache.MANIFEST).write_text(json.dumps(manifest))
        self.assertEqual(self.untar("b"), want)
        self.assertEqual(self.calls, [(PATTERNS, [])])
        self.assertFalse((self.root / "escaped").exists())

    def test_an_extraction_with_a_link_is_not_kept(self):
        make_tarball(self.src, {"Makefile": b"VERSION = 6\n"},
                     links=[("include/vdso/evil.h", "/etc/passwd")])
        self.untar("a")
        self.assertEqual(self.entries(), [])

    def test_a_link_a_patch_names_beside_an_entry_is_not_written_through(self):
        victim = self.root / "victim"
        victim.mkdir()
        make_tarball(self.src, {"Makefile": b"VERSION = 6\n", "other/f": b"owned\n"},
                     links=[("other", str(victim))])
        self.untar("a")
        self.assertEqual(len(self.entries()), 1)
        try:
            self.untar("b", ["other", "other/f"])
        except UsageError:  # tar may refuse it: either way, nothing through the link
            pass
        self.assertEqual(self.calls, [([], ["other", "other/f"])])  # the entry, then tar
        self.assertEqual(list(victim.iterdir()), [])

    def test_a_cache_that_cannot_be_written_leaves_the_extraction(self):
        (self.root / "cache").write_text("not a folder")
        self.assertEqual(sorted(self.untar("a")), ["Makefile", "include/vdso/a.h",
                                                   "include/vdso/run.sh",
                                                   "lib/vdso/gettimeofday.c"])
        self.assertEqual(self.calls, [(PATTERNS, [])])

    def test_patterns_tar_reads_otherwise_are_not_cached(self):
        self.assertFalse(taken_cache.cacheable(["include/vdso/?.h"]))
        self.assertFalse(taken_cache.cacheable(["include/[a]/*"]))
        self.assertFalse(taken_cache.cacheable([]))
        self.assertTrue(taken_cache.matches("include/vdso/a.h", ["include/vdso/*"]))
        self.assertFalse(taken_cache.matches("include/vdso/sub/b.h", ["include/vdso/*"]))
        self.assertFalse(taken_cache.matches("include/vdsoX/a.h", ["include/vdso/*"]))


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


if __name__ == "__main__":
    unittest.main()
