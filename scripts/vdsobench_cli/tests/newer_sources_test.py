"""kimport/newer_sources.py on a fake archive (private_apt.Apt replaced; the
packages are real .deb files made here and unpacked by dpkg-deb): a package
the machine's suites lack is fetched from the newer suites in their order,
appears in the cache whole or not at all (a failure, a package without its
file, an interrupt), is then Debian's tree to kbuild (is_debian, its
configuration), and a version no suite has is one line naming each suite
tried. Nothing here reaches the network."""

import errno
import json
import lzma
import os
import shutil
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import lifecycle, packages, private_apt
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import kbuild, kbuild_config, newer_sources
from vdsobench_cli.tests.support import one_line, vdsobench

URI = "http://archive.example/debian"


def make_deb(where, package, files):
    """A real .deb of package (version 7.9.1-1) holding files {rel: bytes}."""
    root = where / f"{package}-root"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: 7.9.1-1\nArchitecture: all\n"
        "Maintainer: t <t@example.org>\nDescription: t\n")
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    deb = where / f"{package}_7.9.1-1_all.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(root), str(deb)],
                   check=True, capture_output=True)
    return deb


def fake_apt(plan, made):
    """A private_apt.Apt whose suites are plan {suite: {"update": why or None,
    "debs": {package: .deb}}}; made lists the suites it was made for."""
    class Apt:
        def __init__(self, state, suite, uri, arch=None):
            self.suite, self.uri, self.state = suite, uri, state
            made.append(suite)

        def prepare(self):
            pass

        def update(self):
            return plan[self.suite].get("update")

        def show(self, package):
            return "7.9.1-1" if package in plan[self.suite].get("debs", {}) else None

        def names(self, prefix):
            return ["linux-source-7.2", "linux-source-7.3"]

        def download(self, package, into):
            deb = plan[self.suite]["debs"][package]
            return Path(shutil.copy(deb, into))
    return Apt


class FetchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if shutil.which("dpkg-deb") is None:
            raise unittest.SkipTest("no dpkg-deb")
        cls.debs_dir = Path(tempfile.mkdtemp(prefix="vdsobench-debs-"))
        cls.source = make_deb(cls.debs_dir, "linux-source-7.9",
                              {"usr/src/linux-source-7.9.tar.xz": b"not really xz",
                               "usr/share/doc/linux-source-7.9/copyright": b"c"})
        cls.config = make_deb(cls.debs_dir, "linux-config-7.9", {
            f"usr/src/linux-config-7.9/{newer_sources.CONFIG}": lzma.compress(b"CONFIG_X=y\n")})
        cls.empty = make_deb(cls.debs_dir, "linux-source-7.8", {"usr/share/doc/x": b"x"})

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.debs_dir, ignore_errors=True)

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-newer-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.cache = self.tmp / "cache"
        self.made, self.said = [], []
        self.plan = {"trixie-backports": {"debs": {"linux-source-7.9": self.source,
                                                   "linux-config-7.9": self.config}},
                     "sid": {"debs": {}}}
        for patcher in (mock.patch.dict(os.environ, {newer_sources.ENV: str(self.cache)}),
                        mock.patch.object(private_apt, "Apt", fake_apt(self.plan, self.made)),
                        mock.patch.object(private_apt, "archive_uri", return_value=URI),
                        mock.patch.object(packages, "known", return_value=False),
                        mock.patch.object(packages, "same_kind",
                                          return_value=["linux-source-6.1", "linux-source-6.12"])):
            patcher.start()
            self.addCleanup(patcher.stop)

    def fetch(self, package="linux-source-7.9"):
        return newer_sources.fetch(package, "import: t", say=self.said.append)

    def left(self):
        pkgs = self.cache / "pkgs"
        return sorted(os.listdir(pkgs)) if pkgs.is_dir() else []

    def test_fetched_whole_then_a_lookup(self):
        folder = self.fetch()
        tar = folder / "usr/src/linux-source-7.9.tar.xz"
        self.assertEqual(tar.read_bytes(), b"not really xz")
        record = json.loads((folder / newer_sources.RECORD).read_text())
        self.assertEqual((record["suite"], record["version"], record["archive"]),
                         ("trixie-backports", "7.9.1-1", URI))
        self.assertEqual(self.left(), ["linux-source-7.9"])  # no staging, no .deb
        self.assertFalse(list(folder.glob("**/*.deb")))
        self.assertIn("fetching linux-source-7.9 7.9.1-1 from", self.said[0])
        self.assertEqual(newer_sources.tarball("7.9"), tar)
        self.assertTrue(newer_sources.is_fetched(tar))
        self.assertTrue(kbuild.is_debian(tar))
        for other in ("/tmp/linux-source-7.9.tar.xz", self.tmp / "linux-source-7.9.tar.xz"):
            self.assertFalse(kbuild.is_debian(other), other)
        made = list(self.made)
        self.assertEqual(self.fetch(), folder)
        self.assertEqual(self.made, made, "fetched again")

    def test_suites_in_order(self):
        self.plan["trixie-backports"] = {"debs": {}}
        self.plan["sid"] = {"debs": {"linux-source-7.9": self.source}}
        folder = self.fetch()
        self.assertEqual(json.loads((folder / newer_sources.RECORD).read_text())["suite"], "sid")
        self.assertEqual(self.made, ["trixie-backports", "sid"])
        shutil.rmtree(folder)
        self.made.clear()
        self.plan["trixie-backports"] = {"update": "apt-get update exit 100: E: x",
                                         "debs": {"linux-source-7.9": self.source}}
        self.fetch()
        self.assertEqual(self.made, ["trixie-backports", "sid"])

    def test_no_suite_has_it_one_line(self):
        self.plan["sid"]["update"] = "apt-get update exit 100: E: Release file is expired"
        rc, out, err = vdsobench("import", "linux-source-7.7", "--name", "x")
        one_line(self, rc, err, "Debian has no package linux-source-7.7",
                 "machine's own suites (valid: linux-source-6.1, linux-source-6.12)",
                 f"{URI}'s trixie-backports (valid: linux-source-7.2, linux-source-7.3)",
                 "sid (its lists not fetched: apt-get update exit 100: E: Release file")
        self.assertEqual(out, "")
        self.assertEqual(self.left(), [])

    def test_a_failure_or_a_signal_leaves_nothing(self):
        def unpack_then_fail(deb, into):
            real_unpack(deb, into)
            raise UsageError("dpkg-deb -x failed")
        real_unpack = private_apt.unpack
        with mock.patch.object(private_apt, "unpack", unpack_then_fail), \
                self.assertRaises(UsageError):
            self.fetch()
        self.assertEqual(self.left(), [])
        with mock.patch.object(private_apt, "unpack",
                               side_effect=lifecycle.Interrupted(15)), \
                self.assertRaises(lifecycle.Interrupted):
            self.fetch()
        self.assertEqual(self.left(), [])
        with mock.patch.object(private_apt, "unpack",
                               side_effect=OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))), \
                self.assertRaises(UsageError) as e:
            self.fetch()
        self.assertIn("fetching linux-source-7.9 into", str(e.exception))
        self.assertIn("No space left on device", str(e.exception))
        self.assertEqual(self.left(), [])
        self.plan["trixie-backports"]["debs"]["linux-source-7.9"] = self.empty
        with self.assertRaises(UsageError) as e:
            self.fetch()
        self.assertIn("the package has no usr/src/linux-source-7.9.tar.xz", str(e.exception))
        self.assertEqual(self.left(), [])
        self.assertIsNone(newer_sources.tarball("7.9"))

    def test_a_killed_fetchs_staging_is_swept_once_old(self):
        pkgs = self.cache / "pkgs"
        old, new = pkgs / ".staging-old", pkgs / ".staging-new"
        for d in (old, new):
            (d / "usr").mkdir(parents=True)
        hours_ago = time.time() - 2 * newer_sources.STALE_S
        os.utime(old, (hours_ago, hours_ago))
        self.fetch()
        self.assertEqual(self.left(), [".staging-new", "linux-source-7.9"])

    def test_tree_and_its_configuration(self):
        tar = newer_sources.tree_tarball("linux-source-7.9", "import: t", say=self.said.append)
        self.assertEqual(tar, (self.cache / "pkgs/linux-source-7.9/usr/src/"
                               "linux-source-7.9.tar.xz").resolve())
        (conf, data), why = kbuild.config_for("7.9")
        self.assertIsNone(why)
        self.assertEqual((conf["kind"], data), ("debian", b"CONFIG_X=y\n"))
        self.assertTrue(conf["path"].startswith(str(self.cache)), conf["path"])

    def test_a_missing_configuration_is_said_not_fatal(self):
        del self.plan["trixie-backports"]["debs"]["linux-config-7.9"]
        newer_sources.tree_tarball("linux-source-7.9", "import: t", say=self.said.append)
        self.assertIn("Debian has no package linux-config-7.9", self.said[-1])
        self.assertIn("kbuild has no Debian configuration for it", self.said[-1])
        with mock.patch.object(kbuild_config, "PROC_CONFIG", str(self.cache / "none.gz")):
            (conf, data), why = kbuild.config_for("7.9")
        self.assertEqual((conf["kind"], data, why), ("defconfig", None, None))

    def test_the_machines_own_package_is_installed_as_before(self):
        with mock.patch.object(packages, "known", return_value=True), \
                mock.patch.object(packages, "ensure_group") as ensure:
            got = newer_sources.tree_tarball("linux-source-6.12", "import: t")
        ensure.assert_called_once_with(("linux-source-6.12",), "import: t")
        self.assertEqual(got, Path("/usr/src/linux-source-6.12.tar.xz"))
        self.assertEqual(self.made, [])

    def test_cache_others_may_write_is_refused(self):
        self.cache.mkdir()
        os.chmod(self.cache, 0o777)
        with self.assertRaises(UsageError) as e:
            self.fetch()
        self.assertIn(f"cache {self.cache} may be written by others", str(e.exception))
        os.chmod(self.cache, 0o755)


if __name__ == "__main__":
    unittest.main()
