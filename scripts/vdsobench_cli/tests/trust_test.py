"""cli/trust.py and where it is applied: a folder whose contents the tool
builds or runs (the imports folder, its table and trees, the kbuild cache,
Bazel's caches) must be root's or this user's alone, and so must every folder
above it but a sticky one; otherwise one line naming the folder and the fix,
exit 2, and nothing is built or run."""

import json
import os
import shutil
import stat
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import build, safe_read, trust
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import imports_table
from vdsobench_cli.tests.support import one_line, snapshot, vdsobench

ROOT_ONLY = unittest.skipUnless(os.geteuid() == 0, "another user's folder is made as root")
NOBODY = 65534


class FolderTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-trust-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_ours_alone_is_trusted(self):
        d = self.tmp / "a" / "b"
        d.mkdir(parents=True)
        self.assertIsNone(trust.folder_problem(d))
        self.assertIsNone(trust.folder_problem(d / "not-made-yet"))

    def test_writable_by_others(self):
        d = self.tmp / "open"
        d.mkdir()
        for mode, who in ((0o777, "others"), (0o775, "its group")):
            os.chmod(d, mode)
            why = trust.folder_problem(d)
            self.assertEqual(why, f"{d} may be written by {who} (mode {mode:04o}): make it "
                                  f"yours alone (chown {os.geteuid()} {d} && chmod go-w {d}) "
                                  "or use another folder")

    def test_a_writable_folder_above_is_refused_unless_sticky(self):
        top = self.tmp / "top"
        (top / "inner").mkdir(parents=True)
        os.chmod(top, 0o777)
        self.assertIn(f"{top} may be written by others", trust.folder_problem(top / "inner"))
        os.chmod(top, 0o1777)
        self.assertIsNone(trust.folder_problem(top / "inner"))
        os.chmod(top / "inner", 0o1777)  # the folder itself: never, sticky or not
        self.assertIn("may be written by others", trust.folder_problem(top / "inner"))

    def test_no_folder_is_for_the_caller_to_refuse(self):
        self.assertIsNone(trust.folder_problem("/dev/null"))  # "not a folder", elsewhere
        f = self.tmp / "file"
        f.write_text("")
        os.chmod(self.tmp, 0o777)
        self.assertIn(f"{self.tmp} may be written by others", trust.folder_problem(f / "x"))

    def test_a_link_is_judged_by_where_it_leads(self):
        d = self.tmp / "open"
        d.mkdir(mode=0o700)
        os.chmod(d, 0o777)
        (self.tmp / "link").symlink_to(d)
        self.assertIn(f"{d} may be written", trust.folder_problem(self.tmp / "link"))

    @ROOT_ONLY
    def test_another_users_folder(self):
        d = self.tmp / "theirs"
        d.mkdir()
        os.chown(d, NOBODY, NOBODY)
        self.assertIn(f"{d} is owned by uid {NOBODY}, not by root or this user",
                      trust.folder_problem(d))
        sticky = self.tmp / "sticky-theirs"
        (sticky / "x").mkdir(parents=True)
        os.chown(sticky, NOBODY, NOBODY)
        os.chmod(sticky, 0o1777)  # sticky, but another user's: they may swap x
        self.assertIn(f"{sticky} is owned by uid {NOBODY}", trust.folder_problem(sticky / "x"))

    def test_owned_reads(self):
        f = self.tmp / "f"
        f.write_text("x")
        self.assertEqual(safe_read.read_regular(str(f), "table", 10, owned=True), b"x")
        os.chmod(f, 0o666)
        with self.assertRaises(UsageError) as e:
            safe_read.read_regular(str(f), "table", 10, owned=True)
        self.assertEqual(str(e.exception), f"{f} may be written by others (mode 0666); a table "
                                           "must be root's or this user's alone")
        self.assertEqual(safe_read.read_regular(str(f), "table", 10), b"x")  # not asked


@ROOT_ONLY
class ImportsFolderAttackTest(unittest.TestCase):
    """The issue's case: $VDSOBENCH_IMPORTS a folder of nobody's, mode 0777,
    holding a well-formed table: every command refuses it before any build."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-trust-imports-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        os.chmod(self.tmp, 0o755)
        self.imports = self.tmp / "imports"
        (self.imports / "trees").mkdir(parents=True)
        (self.imports / imports_table.TABLE).write_text(json.dumps(
            {"version": 1, "imports": {"evil": {"key": "0" * 64}}}))
        patcher = mock.patch.dict(os.environ, {"VDSOBENCH_IMPORTS": str(self.imports)})
        patcher.start()
        self.addCleanup(patcher.stop)

    def refused(self, argv, folder, why):
        before = snapshot(self.tmp)
        with mock.patch.object(build, "bazel", side_effect=AssertionError("Bazel ran")):
            rc, _, err = vdsobench(*argv)
        one_line(self, rc, err, f"{folder} {why}", "make it yours alone")
        self.assertEqual(snapshot(self.tmp), before)

    def test_another_users_open_folder(self):
        os.chown(self.imports, NOBODY, NOBODY)
        os.chmod(self.imports, 0o777)
        for argv in (["verify", "generic_6_10+fake+always"], ["list"], ["import", "--list"],
                     ["run", "--list"]):
            with self.subTest(argv[0]):
                self.refused(argv, self.imports, f"is owned by uid {NOBODY}")

    def test_a_folder_above_it(self):
        os.chmod(self.tmp, 0o777)
        self.refused(["list"], self.tmp, "may be written by others")

    def test_a_link_another_user_may_point_elsewhere(self):
        """$VDSOBENCH_IMPORTS through a link that leads to a folder of root's:
        judged only where it led, it passed, though the link is another user's
        (or sits in their folder), who could point it at a table of theirs
        between the check and the build. Refused in one line."""
        theirs = self.tmp / "theirs"
        theirs.mkdir()
        link = self.tmp / "link"
        link.symlink_to(self.imports)
        os.lchown(link, NOBODY, NOBODY)
        held = theirs / "held"
        held.symlink_to(self.imports)  # root's link, in their folder
        os.chown(theirs, NOBODY, NOBODY)
        for path, why in ((link, f"{link} is a link owned by uid {NOBODY}"),
                          (held, f"{theirs} is owned by uid {NOBODY}")):
            with self.subTest(path.name), \
                    mock.patch.dict(os.environ, {"VDSOBENCH_IMPORTS": str(path)}):
                before = snapshot(self.tmp)
                with mock.patch.object(build, "bazel", side_effect=AssertionError("Bazel ran")):
                    rc, _, err = vdsobench("import", "--list")
                one_line(self, rc, err, why)
                self.assertEqual(snapshot(self.tmp), before)
        os.lchown(link, 0, 0)  # root's link in root's folder: fine
        with mock.patch.dict(os.environ, {"VDSOBENCH_IMPORTS": str(link)}):
            self.assertIsNone(trust.folder_problem(link))

    def test_a_table_or_tree_others_may_write_is_left_out(self):
        os.chmod(self.imports / imports_table.TABLE, 0o666)
        checked = imports_table.check(str(self.imports), "")
        self.assertIn("may be written by others (mode 0666)", checked["table"])
        os.chmod(self.imports / imports_table.TABLE, 0o644)
        os.chmod(self.imports / "trees", 0o777)
        checked = imports_table.check(str(self.imports), "")
        self.assertEqual(checked["good"], {})
        self.assertIn(f"{self.imports / 'trees'} may be written by others", checked["table"])


@ROOT_ONLY
class CachesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-trust-cache-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_kbuild_cache_others_may_write(self):
        from vdsobench_cli.kimport import kbuild
        d = self.tmp / "kb"
        d.mkdir()
        os.chmod(d, 0o777)
        with mock.patch.dict(os.environ, {"VDSOBENCH_KBUILD_CACHE": str(d)}), \
                self.assertRaises(UsageError) as e:
            kbuild.cache_dir()
        self.assertTrue(str(e.exception).startswith(f"kbuild: cache {d} may be written by "
                                                    "others"), e.exception)

    def test_bazels_caches(self):
        d = self.tmp / "disk"
        d.mkdir()
        os.chown(d, NOBODY, NOBODY)
        with mock.patch.object(build, "DISK_CACHE", d), \
                mock.patch.object(build, "_caches_checked", []), \
                self.assertRaises(UsageError) as e:
            build.check_caches()
        self.assertIn(f"Bazel's cache: {d} is owned by uid {NOBODY}", str(e.exception))
        self.assertTrue(stat.S_ISDIR(os.stat(d).st_mode))


if __name__ == "__main__":
    unittest.main()
