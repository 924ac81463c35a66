"""What the attacks on `vdsobench import` share (the kernel_import_*attack_test
modules): a victim folder no import may touch, a fake kernel tree, every
hostile patch, a workspace with an imports folder of the test's own, Debian's
6.12 untarred, and a table entry."""

import os
import shutil
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.kimport import (bazel_sync, imports_table, names as names_mod,
                                   source as source_mod, store, tarball as tarball_mod)
from vdsobench_cli.tests.support import one_line, snapshot, tarball, vdsobench


MAKEFILE = "VERSION = 6\nPATCHLEVEL = 12\nSUBLEVEL = 1\nEXTRAVERSION =\n"


def make_victim(parent):
    """A folder no import may touch: a file, a subfolder, the names patches aim at."""
    victim = Path(parent) / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "f").write_text("keep\n")
    (victim / "sub" / "g").write_text("keep too\n")
    return victim


def fake_tree(parent, name="tree"):
    """A tree shaped like a kernel's where import looks first (it never gets past
    the checks these tests make fail)."""
    tree = Path(parent) / name
    for rel in source_mod.expand(source_mod.REQUIRED, "x86"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text("a\n")
    (tree / "Makefile").write_text(MAKEFILE)
    return tree


def hostile_patches(victim):
    """{what: patch text}: every way a patch may name a path out of the tree or a
    link, in git's and diff -u's forms."""
    up = "../" * 24 + str(victim).lstrip("/")
    hunk = "@@ -1 +1 @@\n-keep\n+owned\n"
    return {
        "a symlink to a folder out of the tree": (
            "diff --git a/include/generated b/include/generated\nnew file mode 120000\n"
            f"index 0000000..1111111\n--- /dev/null\n+++ b/include/generated\n@@ -0,0 +1 @@\n"
            f"+{victim}\n\\ No newline at end of file\n"),
        "a link made by a mode change": (
            "diff --git a/Makefile b/Makefile\nold mode 100644\nnew mode 120000\n"),
        "a link in the index line": (
            "diff --git a/x b/x\nindex 1111111..2222222 120000\n--- a/x\n+++ b/x\n" + hunk),
        "a submodule": ("diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..1111111\n"),
        "../ in ---/+++": f"--- a/{up}/f\n+++ b/{up}/f\n" + hunk,
        "an absolute path (b//path)": f"--- a/{victim}/f\n+++ b/{victim}/f\n" + hunk,
        "../ after diff --git": (f"diff --git a/Makefile b/{up}/f\n--- a/Makefile\n"
                                 f"+++ b/{up}/f\n" + hunk),
        "rename to ../": ("diff --git a/Makefile b/Makefile\nsimilarity index 100%\n"
                          f"rename from Makefile\nrename to {up}/renamed\n"),
        "copy to an absolute path": ("diff --git a/Makefile b/Makefile\nsimilarity index 100%\n"
                                     f"copy from Makefile\ncopy to {victim}/copied\n"),
        "git-quoted ../ (octal escapes)": (
            'diff --git "a/Makefile" "b/\\056\\056/\\056\\056/x"\n--- "a/Makefile"\n'
            '+++ "b/\\056\\056/\\056\\056/x"\n' + hunk),
        "git-quoted control character": '--- "a/lib/\\033x"\n+++ "b/lib/\\033x"\n' + hunk,
        "a bad quoted escape": '--- "a/lib/\\q"\n+++ "b/lib/\\q"\n' + hunk,
        "a tar wildcard": "--- a/include/*\n+++ b/include/*\n" + hunk,
        "a name tar takes for an option": ("--- a/--to-command=sh\n+++ b/--to-command=sh\n"
                                           + hunk),
        "no folder to strip": "--- Makefile\n+++ Makefile\n" + hunk,
        "a binary patch": ("diff --git a/Makefile b/Makefile\nindex 1111111..2222222 100644\n"
                           "GIT binary patch\nliteral 1000000000\nzcmeAS@N?(olHy`uVBq!ia0vp^\n\n"),
        "what import writes (include/generated/)": (
            "--- /dev/null\n+++ b/include/generated/.autoconf.h.kimport-tmp/x\n"
            "@@ -0,0 +1 @@\n+x\n"),
        "what import writes (kimport.json)": (
            "--- /dev/null\n+++ b/kimport.json\n@@ -0,0 +1 @@\n+{}\n"),
        "a header after a hunk": ("--- a/Makefile\n+++ b/Makefile\n" + hunk
                                  + f"--- a/{up}/f\n+++ b/{up}/f\n" + hunk),
    }


def write_patch(directory, i, text):
    path = Path(directory) / f"{i:04d}-hostile.patch"
    path.write_text(text)
    return str(path)


class Workspace:
    """A victim, a source tree and an imports folder of the test's own."""

    def __init__(self, test):
        tmp = tempfile.mkdtemp(prefix="vdsobench-attack-")
        test.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        self.tmp = Path(tmp)
        self.victim = make_victim(tmp)
        self.tree = fake_tree(tmp)
        self.imports = self.tmp / "imports"
        self.before = self.outside()
        saved = os.environ.get(store.DIR_ENV)
        os.environ[store.DIR_ENV] = str(self.imports)
        test.addCleanup(self.restore, saved)

    @staticmethod
    def restore(saved):
        if saved is None:
            os.environ.pop(store.DIR_ENV, None)
        else:
            os.environ[store.DIR_ENV] = saved
        bazel_sync.sync_env()

    def outside(self):
        return snapshot(self.victim), snapshot(self.tree)

    def check(self, test, rc, err, *needles):
        """Refused (exit 2, one line), the victim and the source as they were, no
        table written, and the imports folder still listed."""
        one_line(test, rc, err, *needles)
        test.assertEqual(self.outside(), self.before, "something outside was written")
        test.assertFalse((self.imports / imports_table.TABLE).exists(), "a table was written")
        leftovers = [p.name for p in (self.imports / "trees").glob(".*")] \
            if (self.imports / "trees").is_dir() else []
        test.assertEqual(leftovers, [], "a staged tree was left behind")
        rc, out, err = vdsobench("import", "--list")
        test.assertEqual((rc, err), (0, ""), out)


def untarred_612(tmp):
    """Debian's 6.12, only what import takes, in tmp/linux-6.12 (about 13 s), or
    SkipTest."""
    src = tarball("6.12")
    if src is None:
        raise unittest.SkipTest("no /usr/src/linux-source-6.12.tar.xz (as root: "
                                "scripts/vdsobench setup --kernel-sources)")
    tree = Path(tmp) / "linux-6.12"
    tree.mkdir()
    tarball_mod.untar(src, source_mod.expand(source_mod.TAKE, "x86"), [], tree)
    return tree


def entry(name, key="0" * 64, **fields):
    e = {"key": key, "ident": names_mod.ident(name), "arch": "x86_64", "arch_dir": "x86",
         "kernel": "6.12.1", "source": "/src", "patches": [], "summary": "s",
         "meta_sha256": "0" * 64, "identity": {"name": name}}
    e.update(fields)
    return e
