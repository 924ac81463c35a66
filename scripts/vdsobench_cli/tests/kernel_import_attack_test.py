"""Attacks on `vdsobench import` (issue 18), each as a hostile user would try it:
build the hostile input, run the real command in an imports folder of the
test's own, and check that nothing outside it changed (a victim folder,
snapshotted before and after, and the source tree), that the command ended
with exit 2 and one line, and that what it left still works (`import --list`,
`list`, a build).

AttackTest needs neither Bazel nor a kernel tarball: a patch, a source tree
or tarball, or an imports folder that is hostile is refused before anything
is built. The other attacks: kernel_import_compile_attack_test (the tree's
headers against the compile), kernel_import_table_attack_test (the table's
transactions, escapes), kernel_import_live_attack_test (a working table).
"""

import hashlib
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import time
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import build, packages
from vdsobench_cli.kimport import (bazel_sync, compile, flow, imports_table, patch_parse,
                                   patches as patches_mod, source as source_mod,
                                   stage as stage_mod, store, tarball as tarball_mod,
                                   tree_config)
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.tests import support
from vdsobench_cli.tests.support import cli, one_line, vdsobench
from vdsobench_cli.tests.import_attacks import MAKEFILE, Workspace, hostile_patches, write_patch


class AttackTest(unittest.TestCase):
    """No Bazel and no tarball: each hostile input is refused before a build."""

    def setUp(self):
        self.ws = Workspace(self)

    def test_hostile_patches_are_refused_before_anything_is_copied(self):
        for i, (what, text) in enumerate(hostile_patches(self.ws.victim).items()):
            with self.subTest(what):
                path = write_patch(self.ws.tmp, i, text)
                rc, _, err = vdsobench("import", str(self.ws.tree), "--patch", path,
                                       "--name", "x")
                self.ws.check(self, rc, err, path)

    def test_paths_hidden_by_other_line_ends_are_seen(self):
        """git ends a line at \\n only: a \\v, \\f, \\x1c, \\x85, U+2028 in a
        header is part of its path, which is refused (str.splitlines() hid it)."""
        up = "../" * 24 + str(self.ws.victim).lstrip("/")
        hunk = "@@ -1 +1 @@\n-VERSION = 6\n+VERSION = 7\n"
        for i, sep in enumerate(("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
                                 "\u2029", "\r")):
            with self.subTest(sep=ascii(sep)):
                path = write_patch(self.ws.tmp, i, f"--- a/Makefile{sep}/{up}/f\n"
                                   f"+++ b/Makefile{sep}/{up}/f\n" + hunk)
                rc, _, err = vdsobench("import", str(self.ws.tree), "--patch", path,
                                       "--name", "x")
                self.ws.check(self, rc, err, path, "not a plain path inside the tree")
        # a hunk whose body a form feed would have cut short: its last line read as
        # a header, the real header after it hidden inside the hunk
        path = write_patch(self.ws.tmp, 99, (
            "--- a/Makefile\n+++ b/Makefile\n@@ -1,2 +1,2 @@\n-VERSION = 6\x0c\n"
            f"+VERSION = 7\n PATCHLEVEL = 12\n--- a/{up}/f\n+++ b/{up}/f\n"
            "@@ -1 +1 @@\n-keep\n+owned\n"))
        rc, _, err = vdsobench("import", str(self.ws.tree), "--patch", path, "--name", "x")
        self.ws.check(self, rc, err, path, "not a plain path inside the tree")

    def test_series_is_bounded(self):
        """Caps on patches, paths per patch and in the series, a path's length and
        the series' size: one line before git or tar are given any of it."""
        hunk = "@@ -1 +1 @@\n-a\n+b\n"
        one = write_patch(self.ws.tmp, 0, "--- a/Makefile\n+++ b/Makefile\n" + hunk)
        many_paths = write_patch(self.ws.tmp, 1, "".join(
            f"--- a/lib/f{n}\n+++ b/lib/f{n}\n" + hunk for n in range(201)))
        long = "a/" + "/".join(["d" * 200] * 3)
        long_path = write_patch(self.ws.tmp, 2, f"--- {long}\n+++ {long}\n" + hunk)
        series = [write_patch(self.ws.tmp, 10 + k, "".join(
            f"--- a/lib/s{k}_{n}\n+++ b/lib/s{k}_{n}\n" + hunk for n in range(150)))
            for k in range(7)]
        cases = (([one] * 101, "at most 100 patches"),
                 ([many_paths], "names over 200 paths"),
                 ([long_path], "names a path of over 400 bytes"),
                 (series, "the series names over 1000 paths"))
        for paths, needle in cases:
            with self.subTest(needle):
                argv = [a for p in paths for a in ("--patch", p)]
                rc, _, err = vdsobench("import", str(self.ws.tree), *argv, "--name", "x")
                self.ws.check(self, rc, err, needle)
        with mock.patch.object(patches_mod, "SERIES_LIMIT", 1000):
            rc, _, err = vdsobench("import", str(self.ws.tree), "--patch", series[0],
                                   "--name", "x")
            self.ws.check(self, rc, err, "the series is over")

    def test_git_apply_runs_under_limits(self):
        """A git apply that would run long or grow is stopped: one line."""
        path = write_patch(self.ws.tmp, 0, "--- a/Makefile\n+++ b/Makefile\n"
                           "@@ -1 +1 @@\n-VERSION = 6\n+VERSION = 7\n")
        fake_git = self.ws.tmp / "bin" / "git"
        fake_git.parent.mkdir()
        fake_git.write_text("#!/bin/sh\nexec sleep 60\n")
        fake_git.chmod(0o755)
        with mock.patch.object(patches_mod, "APPLY_TIMEOUT_S", 1), \
                support.tool_at("git", fake_git):
            t0 = time.monotonic()
            rc, _, err = vdsobench("import", str(self.ws.tree), "--patch", path, "--name", "x")
        self.assertLess(time.monotonic() - t0, 20)
        self.ws.check(self, rc, err, "git apply took over 1 s")
        fake_git.write_text("#!/bin/sh\nexec head -c 20000000 /dev/zero > big\n")
        with support.tool_at("git", fake_git):
            rc, _, err = vdsobench("import", str(self.ws.tree), "--patch", path, "--name", "x")
        self.ws.check(self, rc, err, "git apply ran out of its limits")

    def test_preprocessor_opens_by_name_are_refused(self):
        """__has_include and #pragma GCC dependency open a file that gcc -H does not
        list (a FIFO blocks, an existence oracle): refused in the tree's files, and
        in what a patch makes."""
        header = self.ws.tree / "include" / "vdso" / "datapage.h"
        for i, text in enumerate(('#if __has_include("/etc/shadow")\n#endif',
                                  "#if __has_include_next(<x.h>)\n#endif",
                                  '#pragma GCC dependency "/tmp/fifo"',
                                  '  %:  pragma GCC \\\ndependency "/tmp/fifo"',
                                  '_Pragma("GCC dependency \\"/tmp/fifo\\"")')):
            with self.subTest(text):
                header.write_text(text + "\n")
                self.ws.before = self.ws.outside()
                rc, _, err = vdsobench("import", str(self.ws.tree), "--name", f"p{i}")
                self.ws.check(self, rc, err, "include/vdso/datapage.h has",
                              "opens files by name")
        header.write_text("a\n")
        self.ws.before = self.ws.outside()
        path = write_patch(self.ws.tmp, 0, "--- a/include/vdso/datapage.h\n"
                           "+++ b/include/vdso/datapage.h\n@@ -1 +1 @@\n-a\n"
                           '+#if __has_include("/etc/shadow")\n')
        rc, _, err = vdsobench("import", str(self.ws.tree), "--patch", path, "--name", "pp")
        self.ws.check(self, rc, err, "with its patches: include/vdso/datapage.h has")

    def test_absurd_versions_are_refused(self):
        """A Makefile's version reaches tables and names: bounded, plain digits."""
        for i, (v, p, s) in enumerate((("99999999999999999999", "1", "0"), ("6", "12", "1000"),
                                       ("1", "0", "0"), ("2", "4", "0"), ("10", "0", "0"),
                                       ("6", "100", "0"), ("-6", "12", "1"), ("6", "1_2", "1"),
                                       ("\u0666", "12", "1"), ("6", "12", "1\x1b[2J"),
                                       ("6", "", "1"), ("6", "12", "0x10"))):
            with self.subTest(version=(v, p, s)):
                (self.ws.tree / "Makefile").write_text(
                    f"VERSION = {v}\nPATCHLEVEL = {p}\nSUBLEVEL = {s}\nEXTRAVERSION =\n")
                self.ws.before = self.ws.outside()
                rc, _, err = vdsobench("import", str(self.ws.tree), "--name", f"v{i}")
                self.ws.check(self, rc, err, "names no VERSION, PATCHLEVEL and SUBLEVEL",
                              "2.6 to 9.99")
        for text, want in (("VERSION = 2\nPATCHLEVEL = 6\nSUBLEVEL = 39\n", (2, 6, 39)),
                           ("VERSION = 9\nPATCHLEVEL = 99\nSUBLEVEL = 999\n", (9, 99, 999)),
                           (MAKEFILE, (6, 12, 1))):
            self.assertEqual(tree_config.kernel_version(text)[:3], want)

    def test_tarball_memo_is_not_fooled_by_touch(self):
        """An edit in place, its mtime set back (touch -d): hashed again, as is a
        memo whose value is not a hash."""
        path = self.ws.tmp / "memo.tar.xz"  # only hashed here: any bytes do
        path.write_bytes(os.urandom(2000))
        writable = store.writable_dir()
        first = source_mod.tarball_sha256(path)
        st = path.stat()
        data = bytearray(path.read_bytes())
        data[600] ^= 1  # inside the member's body: same size
        with open(path, "r+b") as f:
            f.write(bytes(data))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        self.assertEqual(path.stat().st_mtime_ns, st.st_mtime_ns)
        second = source_mod.tarball_sha256(path)
        self.assertNotEqual(first, second)
        self.assertEqual(second, hashlib.sha256(bytes(data)).hexdigest())
        memo_path = writable / "sources.json"
        memo = json.loads(memo_path.read_text())
        memo = {k: "../../x\x1b" for k in memo}
        memo_path.write_text(json.dumps(memo))
        self.assertEqual(source_mod.tarball_sha256(path), second)
        many = {f"/t/{i}:1:1:1:1:1": "0" * 64 for i in range(200)}
        memo_path.write_text(json.dumps(many))
        self.assertEqual(source_mod.tarball_sha256(path), second)
        self.assertLessEqual(len(json.loads(memo_path.read_text())), source_mod.MEMO_ENTRIES)

    def test_a_file_added_to_a_cached_tree_is_noticed(self):
        """A header added to trees/<key>/ would be found by the compile's
        -I{root}/include before the shim's: the tree is damaged, made again."""
        key = "e" * 64
        tree = store.writable_dir() / "trees" / key
        (tree / "include" / "vdso").mkdir(parents=True)
        (tree / "include" / "vdso" / "datapage.h").write_text("x\n")
        meta = {"glue": compile.glue_digest(), "kernel": "6.12.1",
                "hashes": {"include/vdso/datapage.h": hashlib.sha256(b"x\n").hexdigest()}}
        meta["files"] = ["include/vdso/datapage.h", "kimport.json"]
        (tree / "kimport.json").write_text(json.dumps(meta))
        self.assertIsNotNone(flow.cached(key))
        for extra, make in (("include/vdso/evil.h", lambda p: p.write_text("#error\n")),
                            ("include/vdso/link.h", lambda p: p.symlink_to("/etc/passwd")),
                            ("include/asm/x.h", lambda p: (p.parent.mkdir(),
                                                           p.write_text("x"))),
                            ("fifo", os.mkfifo)):
            with self.subTest(extra):
                path = tree / extra
                make(path)
                self.assertIsNone(flow.cached(key))
                root = os.open(self.ws.imports, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    _, why = imports_table.tree_problem(root, str(self.ws.imports),
                                                        {"key": key, "meta_sha256": None}, None)
                finally:
                    os.close(root)
                self.assertIn(f"{extra} was added since its import", why)
                path.unlink()
        self.assertIsNotNone(flow.cached(key))
        (tree / "include" / "empty").mkdir()  # as a tarball's folder members make
        self.assertIsNotNone(flow.cached(key))

    def test_killed_imports_leftovers_are_swept_under_the_lock(self):
        """.staging-* and .damaged-* of an import killed by SIGKILL: removed by the
        next import, which holds the lock; one made after it took it is kept."""
        trees = store.writable_dir() / "trees"
        old = [trees / ".staging-dead1", trees / ".damaged-dead2"]
        for d in old:
            (d / "include").mkdir(parents=True)
            (d / "include" / "x.h").write_text("x")
            os.utime(d, (time.time() - 60,) * 2)
        victim_link = trees / ".staging-link"
        victim_link.symlink_to(self.ws.victim)
        os.utime(victim_link, (time.time() - 60,) * 2, follow_symlinks=False)
        store.sweep_stale(trees)  # without the lock: nothing
        self.assertTrue(all(d.exists() for d in old))
        with store.table_lock(self.ws.imports):
            young = trees / ".staging-live"
            young.mkdir()
            os.utime(young, (time.time() + 5,) * 2)
            store.sweep_stale(trees)
            self.assertEqual(sorted(p.name for p in trees.iterdir()),
                             [".staging-link", ".staging-live"])
        self.assertEqual(self.ws.outside(), self.ws.before)

    def test_patch_that_deletes_what_import_needs(self):
        """Checked again after the patches: one line, not a traceback later."""
        path = write_patch(self.ws.tmp, 0, (
            "diff --git a/lib/vdso/gettimeofday.c b/lib/vdso/gettimeofday.c\n"
            "deleted file mode 100644\nindex 7898192..0000000\n"
            "--- a/lib/vdso/gettimeofday.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"))
        rc, _, err = vdsobench("import", str(self.ws.tree), "--patch", path, "--name", "x")
        self.ws.check(self, rc, err, "with its patches", "no lib/vdso/gettimeofday.c")

    def test_names_reach_the_terminal_printable(self):
        patch = patch_parse.Patch(Path("/p/0001-\x1b[2J.patch"), b"", [], [], "s")
        text = "".join(flow.describe(Path("/s/a\x1b]0;x\x07b"),
                                              (6, 12, 1, "6.12.1"), [patch]))
        self.assertTrue(text.isprintable() and text.isascii(), text)
        self.assertEqual(tree_config.kernel_version(MAKEFILE.replace(
            "EXTRAVERSION =", "EXTRAVERSION = -rc1\x1b[31m"))[3], "6.12.1-rc1")

    def test_patch_that_is_no_regular_file(self):
        """A FIFO, /dev/zero, a 17 MB sparse file: refused at once, without reading
        (its own process, with a memory cap: a regression must not take the machine)."""
        fifo = self.ws.tmp / "fifo"
        os.mkfifo(fifo)
        big = self.ws.tmp / "big.patch"
        with open(big, "wb") as f:
            f.truncate(17 << 20)
        for path, needle in ((fifo, "is a named pipe (FIFO)"), ("/dev/zero", "is a character device"),
                             (big, "larger than the 16 MB")):
            with self.subTest(str(path)):
                r = subprocess.run(
                    [sys.executable, str(build.ROOT / "scripts" / "vdsobench"), "import",
                     str(self.ws.tree), "--patch", str(path), "--name", "x"],
                    capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
                    preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (2 << 30,) * 2))
                self.ws.check(self, r.returncode, r.stderr, needle)

    def test_source_that_is_no_tree_or_tarball(self):
        fifo = self.ws.tmp / "fifo"
        os.mkfifo(fifo)
        for source, needle in ((fifo, "is a named pipe (FIFO)"), ("/dev/zero", "is a character device")):
            with self.subTest(str(source)):
                rc, _, err = vdsobench("import", str(source), "--name", "x")
                self.ws.check(self, rc, err, needle, "valid: a directory")

    def test_table_that_is_a_fifo(self):
        """Read by every command (to tell Bazel what to build): never waited on."""
        self.ws.imports.mkdir()
        os.mkfifo(self.ws.imports / imports_table.TABLE)
        for argv, rc_want in ((("import", "--list"), 0), (("import", "--remove", "x"), 2)):
            with self.subTest(argv):
                r = subprocess.run([sys.executable, str(build.ROOT / "scripts" / "vdsobench"),
                                    *argv], capture_output=True, text=True, timeout=120,
                                   stdin=subprocess.DEVNULL)
                self.assertEqual(r.returncode, rc_want, r.stderr)
                self.assertIn("is a named pipe (FIFO)", r.stdout + r.stderr)
                self.assertLessEqual(len(r.stderr.splitlines()), 1, r.stderr)

    def test_link_in_the_source_tree(self):
        """A symbolic link on the way in a directory SOURCE (a folder or a file of
        those taken) is refused, not followed."""
        (self.ws.tree / "include" / "vdso" / "evil.h").symlink_to(self.ws.victim / "f")
        self.ws.before = self.ws.outside()
        rc, _, err = vdsobench("import", str(self.ws.tree), "--name", "x")
        self.ws.check(self, rc, err, "include/vdso/evil.h: is a symbolic link")
        os.unlink(self.ws.tree / "include" / "vdso" / "evil.h")
        shutil.rmtree(self.ws.tree / "lib")
        (self.ws.tree / "lib").symlink_to(self.ws.victim)
        self.ws.before = self.ws.outside()
        rc, _, err = vdsobench("import", str(self.ws.tree), "--name", "x")
        self.ws.check(self, rc, err, "lib: is a symbolic link, not a folder")

    def test_undecodable_name_in_the_source_tree(self):
        """A file name that is no UTF-8 (a byte 0xff) where import looks, or a
        folder of that name on the way, in a directory SOURCE: one line naming
        it, as a tarball's member of that name is, nothing imported."""
        bad = os.fsdecode(b"bad\xff.h")
        for where in ("include/vdso", "arch/x86/include/asm/vdso"):
            with self.subTest(where):
                path = self.ws.tree / where / bad
                path.write_text("x\n")
                self.ws.before = self.ws.outside()
                rc, _, err = vdsobench("import", str(self.ws.tree), "--name", "x")
                self.ws.check(self, rc, err, ascii(f"{where}/{bad}"),
                              "a file name import does not take")
                os.unlink(path)
        self.ws.before = self.ws.outside()
        path = self.tarball([(tarfile.TarInfo(f"linux-x/{n}"), b"a\n") for n in
                             source_mod.expand(source_mod.REQUIRED, "x86")]
                            + [(tarfile.TarInfo(f"linux-x/include/vdso/{bad}"), b"x\n")])
        rc, _, err = vdsobench("import", str(path), "--name", "x")
        self.ws.check(self, rc, err, ascii(f"include/vdso/{bad}"),
                      "a file name import does not take")

    def tarball(self, members, name="hostile.tar.xz"):
        path = self.ws.tmp / name
        with tarfile.open(path, "w:xz") as tar:
            for member, body in members:
                if isinstance(body, bytes):
                    member.size = len(body)
                tar.addfile(member, io.BytesIO(body) if isinstance(body, bytes) else None)
        return path

    def test_tarball_with_links(self):
        """A link member (to the victim) that TAKE's globs match, and a member under
        it that a patch names: refused, nothing written through it."""
        def member(name, kind=tarfile.REGTYPE, target=""):
            m = tarfile.TarInfo(f"linux-x/{name}")
            m.type, m.linkname = kind, target
            return m

        path = self.tarball([
            (member("Makefile"), MAKEFILE.encode()),
            (member("include/vdso/evil", tarfile.SYMTYPE, str(self.ws.victim)), None),
            (member("include/vdso/evil/f"), b"owned\n"),
            (member("include/vdso/data.h", tarfile.SYMTYPE, str(self.ws.victim / "f")), None)])
        patch = write_patch(self.ws.tmp, 0, "--- a/include/vdso/evil/f\n"
                            "+++ b/include/vdso/evil/f\n@@ -1 +1 @@\n-owned\n+more\n")
        rc, _, err = vdsobench("import", str(path), "--patch", patch, "--name", "x")
        self.ws.check(self, rc, err, str(path))

    def test_unreadable_tarballs_say_why(self):
        """Each tarball that is none: one line naming the file and what is wrong,
        from import and from patch-review --source, before anything is printed."""
        patch = write_patch(self.ws.tmp, 0, "--- a/Makefile\n+++ b/Makefile\n"
                            "@@ -1 +1 @@\n-VERSION = 6\n+VERSION = 7\n")
        for what, path, needles in support.garbage_tarballs(self.ws.tmp):
            with self.subTest(what):
                rc, _, err = vdsobench("import", str(path), "--name", "x")
                self.ws.check(self, rc, err, str(path), *needles)
                self.assertNotIn("tar exit", err)
                if what == "a tarball cut short":
                    continue  # its first member reads: the recipe's untar says it
                rc, out, err = vdsobench("recipe", "patch-review", "--source", str(path),
                                         "--patch", patch)
                self.assertEqual(out, "", err)  # refused before the banner
                self.ws.check(self, rc, err, str(path), *needles)

    def test_tarball_top_that_tar_would_read_as_an_option(self):
        path = self.tarball([(tarfile.TarInfo("--to-command=sh/Makefile"), b"x")], "opt.tar.xz")
        rc, _, err = vdsobench("import", str(path), "--name", "x")
        self.ws.check(self, rc, err, "not a kernel source tarball")

    def test_tar_takes_patch_names_literally(self):
        """untar() itself: a name from a patch is no glob, whatever checked it."""
        members = [(tarfile.TarInfo(f"linux-x/lib/{n}"), b"x\n") for n in ("a1", "a2")]
        path = self.tarball(members, "lit.tar.xz")
        into = self.ws.tmp / "into"
        into.mkdir()
        tarball_mod.untar(path, ["Makefile"], ["lib/a*"], into)
        self.assertEqual(list(into.rglob("*")), [], "a patch's name was a wildcard")
        tarball_mod.untar(path, ["lib/*"], [], into)
        self.assertEqual(sorted(p.name for p in (into / "lib").iterdir()), ["a1", "a2"])

    def test_writes_never_follow_a_link(self):
        """write_inside(): a linked folder on the way is refused; a link (or a hard
        link) at the name is replaced, never written through."""
        stage = self.ws.tmp / "stage"
        (stage / "include").mkdir(parents=True)
        (stage / "include" / "generated").symlink_to(self.ws.victim)
        with self.assertRaises(UsageError) as e:
            stage_mod.write_inside(stage, "include/generated/autoconf.h", "x")
        self.assertIn("include/generated: is a symbolic link", str(e.exception))
        (stage / "kimport.json").symlink_to(self.ws.victim / "f")
        os.link(self.ws.victim / "sub" / "g", stage / "hard")
        stage_mod.write_inside(stage, "kimport.json", "{}")
        stage_mod.write_inside(stage, "hard", "x")
        self.assertEqual((stage / "kimport.json").read_text(), "{}")
        self.assertFalse((stage / "kimport.json").is_symlink())
        self.assertEqual(self.ws.outside(), self.ws.before)

    def test_a_link_left_in_the_staged_tree_is_refused(self):
        stage = self.ws.tmp / "stage"
        (stage / "include").mkdir(parents=True)
        (stage / "include" / "generated").symlink_to(self.ws.victim)
        with self.assertRaises(UsageError) as e:
            stage_mod.stage_files(stage, "SRC")
        self.assertIn("include/generated is a symbolic link", str(e.exception))
        os.unlink(stage / "include" / "generated")
        (stage / "include" / 'a"b').write_text("x")
        with self.assertRaises(UsageError) as e:
            stage_mod.stage_files(stage, "SRC")
        self.assertIn("a file name import does not take", str(e.exception))

    def test_generated_c_strings_stay_one_line(self):
        """A source folder named with a newline must not start a directive in
        kimport_desc.h."""
        text = tree_config.c_string('x"\n#include </etc/shadow>\\??=')
        self.assertNotIn("\n", text)
        self.assertEqual(text.count('"'), 2)
        self.assertNotIn("??", text)

    def test_patch_parser_follows_hunks(self):
        """Hunk lines that look like headers (a removed '-- a/x', an added '++ b/x')
        are not headers; a quoted name is unquoted."""
        text = ("--- a/lib/f.c\n+++ b/lib/f.c\n@@ -1,2 +1,2 @@\n--- a/../x\n+++ b/../x\n"
                " ctx\n"
                'diff --git "a/lib/t\\tx" "b/lib/t\\tx"\n')
        with self.assertRaises(patch_parse.PatchError):  # a tab: not a safe name
            patch_parse.parse_patch(text)
        targets, names = patch_parse.parse_patch(text.rsplit("diff", 1)[0])
        self.assertEqual((targets, names), ([("lib/f.c", ["@@ -1,2 +1,2 @@"])], ["lib/f.c"]))
        self.assertEqual(patch_parse.unquote('"a/\\303\\251 b" rest'), ("a/\xe9 b", " rest"))

    def test_subject_is_recorded(self):
        data = "From x\nSubject: [PATCH 2/3] vdso: \x1b[31mred\n\n---\n--- a/f\n+++ b/f\n"
        self.assertEqual(patches_mod.patch_subject(data, "/p/0002-x.patch"), "vdso: \\x1b[31mred")
        self.assertEqual(patches_mod.patch_subject("--- a/f\n", "/p/x.patch"), "x.patch")
        folded = "Subject: [PATCH] vdso: a subject long enough\n to be folded\n\nbody\n"
        self.assertEqual(patches_mod.patch_subject(folded, "/p/x.patch"),
                         "vdso: a subject long enough to be folded")

    def test_imports_folder_that_is_no_folder(self):
        plain = self.ws.tmp / "plain"
        plain.write_text("")
        for bad in (str(plain), "/dev/null"):
            os.environ[store.DIR_ENV] = bad
            for argv in (("import", str(self.ws.tree), "--name", "x"), ("import", "--list"),
                         ("import", "--remove", "x")):
                with self.subTest(bad=bad, argv=argv):
                    rc, _, err = vdsobench(*argv)
                    one_line(self, rc, err, bad, "not a folder")
        self.assertEqual(plain.read_text(), "")

    def test_read_only_imports_folder(self):
        ro = self.ws.tmp / "ro"
        ro.mkdir()
        if subprocess.run(["chattr", "+i", str(ro)], capture_output=True).returncode != 0:
            self.skipTest("no chattr +i here (not root, or not ext4)")
        self.addCleanup(subprocess.run, ["chattr", "-i", str(ro)])
        for d in (ro, ro / "sub"):
            os.environ[store.DIR_ENV] = str(d)
            with self.subTest(str(d)):
                rc, _, err = vdsobench("import", str(self.ws.tree), "--name", "x")
                one_line(self, rc, err, str(d), "cannot keep imports")
        self.assertEqual(list(ro.iterdir()), [])

    def test_a_tmpdir_another_user_may_write_is_refused(self):
        """Every command makes its folders in $TMPDIR: import compiles the tree in
        one and hands others to the sandbox user. In a folder another user may
        write, they could swap in one of theirs (a link where gcc writes, where
        root chowns). One line, before anything is made there; a sticky folder
        of root's (/tmp) is fine."""
        if os.geteuid() != 0:
            self.skipTest("another user's folder is made as root")
        for mode, owner in ((0o777, 0), (0o755, 65534), (0o1777, 65534)):
            tmp = self.ws.tmp / f"tmp-{mode:o}-{owner}"
            tmp.mkdir()
            os.chown(tmp, owner, owner)
            os.chmod(tmp, mode)
            with self.subTest(tmp.name), mock.patch.dict(os.environ, {"TMPDIR": str(tmp)}):
                rc, _, err = cli("import", str(self.ws.tree), "--name", "x")
                one_line(self, rc, err, f"$TMPDIR: {tmp} ")
                self.assertEqual(list(tmp.iterdir()), [])
        sticky = self.ws.tmp / "sticky"
        sticky.mkdir(mode=0o1777)
        os.chmod(sticky, 0o1777)
        with mock.patch.dict(os.environ, {"TMPDIR": str(sticky)}):
            rc, _, err = cli("import", str(self.ws.tree), "--name", "x")
        self.assertNotIn("$TMPDIR", err)  # the fake tree's own refusal, later

    def test_relative_imports_folder_is_made_absolute(self):
        """Bazel's repository rule would resolve it elsewhere (and see no table):
        the CLI hands it the absolute path, and the rule's checker refuses a
        relative one."""
        cwd = os.getcwd()
        self.addCleanup(os.chdir, cwd)
        os.chdir(self.ws.tmp)
        os.environ[store.DIR_ENV] = "rel"
        bazel_sync.sync_env()
        self.assertEqual(os.environ[store.DIR_ENV], str(self.ws.tmp / "rel"))
        out = io.StringIO()
        with mock.patch("sys.stdout", out):
            imports_table.main(["rel"])
        self.assertEqual(json.loads(out.getvalue())["imports"], {})
        self.assertIn("not an absolute path", out.getvalue())

    def test_package_that_does_not_exist(self):
        if shutil.which("apt-cache") is None or not packages.known("linux-source-6.12"):
            self.skipTest("no apt-cache, or its lists have no linux-source-6.12")
        rc, out, err = vdsobench("import", "linux-source-9.99", "--name", "x")
        one_line(self, rc, err, "no package linux-source-9.99", "linux-source-6.12")
        self.assertEqual(out, "")

    def test_failed_install_is_one_line(self):
        with mock.patch.object(packages, "apt", return_value=(100, "Reading...\nE: Unable to "
                                                              "fetch\nmore\n")), \
                mock.patch.object(packages, "add_architectures"), \
                mock.patch.object(packages, "missing", return_value=["x"]), \
                mock.patch("sys.stdout", io.StringIO()), self.assertRaises(Failure) as e:
            packages.install(["x"])
        self.assertIn("E: Unable to fetch", str(e.exception))
        self.assertEqual(len(str(e.exception).splitlines()), 1)
