"""Which configuration kbuild builds a tree's vDSO with (kimport/kbuild_config.py):
--config FILE, the tree's own .config, Debian's, the running kernel's,
x86_64_defconfig, the first there is; each read as input."""

import gzip
import lzma
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import kbuild_config, newer_sources


class OrderTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.d = Path(tmp.name)
        self.tree = self.d / "linux"
        self.tree.mkdir()
        (self.d / "given").write_bytes(b"CONFIG_GIVEN=y\n")
        (self.tree / ".config").write_bytes(b"CONFIG_TREE=y\n")
        (self.d / "debian.xz").write_bytes(lzma.compress(b"CONFIG_DEBIAN=y\n"))
        (self.d / "config.gz").write_bytes(gzip.compress(b"CONFIG_RUNNING=y\n"))
        for patcher in (mock.patch.object(kbuild_config, "DEBIAN_CONFIG",
                                          str(self.d / "debian.xz")),
                        mock.patch.object(kbuild_config, "PROC_CONFIG", str(self.d / "config.gz")),
                        mock.patch.object(newer_sources, "config", return_value=None)):
            patcher.start()
            self.addCleanup(patcher.stop)

    def got(self, given=None, tree=None):
        found, why = kbuild_config.config_for("6.12", given, tree)
        self.assertIsNone(why)
        conf, data = found
        return conf["kind"], data

    def test_the_first_there_is(self):
        self.assertEqual(self.got(str(self.d / "given"), self.tree),
                         ("given", b"CONFIG_GIVEN=y\n"))
        self.assertEqual(self.got(None, self.tree), ("tree", b"CONFIG_TREE=y\n"))
        tarball = self.d / "linux.tar.xz"  # a tarball has no .config of its own
        self.assertEqual(self.got(None, tarball), ("debian", b"CONFIG_DEBIAN=y\n"))
        os.unlink(self.d / "debian.xz")
        self.assertEqual(self.got(None, tarball), ("running", b"CONFIG_RUNNING=y\n"))
        os.unlink(self.d / "config.gz")
        self.assertEqual(self.got(None, tarball), ("defconfig", None))

    def test_each_names_its_configuration_in_the_block(self):
        said = {kind: kbuild_config.whose({"kind": kind, "path": path}) for kind, path in (
            ("given", "/home/u/my.config"), ("tree", "/home/u/linux/.config"),
            ("debian", "/usr/src/linux-config-6.12/config.amd64_none_amd64.xz"),
            ("running", "/proc/config.gz"), ("defconfig", "x86_64_defconfig"))}
        self.assertEqual(said, {"given": "your config my.config",
                                "tree": "the tree's own .config",
                                "debian": "Debian's config config.amd64_none_amd64.xz",
                                "running": "the running kernel's /proc/config.gz",
                                "defconfig": "kbuild's x86_64_defconfig"})

    def test_a_trees_config_that_is_a_link_is_refused(self):
        os.unlink(self.tree / ".config")
        os.symlink("/etc/shadow", self.tree / ".config")
        with self.assertRaises(UsageError) as e:
            kbuild_config.config_for("6.12", None, self.tree)
        self.assertIn(".config", str(e.exception))

    def test_a_running_config_past_the_cap_is_refused_unread(self):
        os.unlink(self.d / "debian.xz")
        (self.d / "config.gz").write_bytes(gzip.compress(b"#" * (kbuild_config.CONFIG_LIMIT + 1)))
        conf, why = kbuild_config.config_for("6.12")
        self.assertIsNone(conf)
        self.assertIn("over 4 MiB", why)
        (self.d / "config.gz").write_bytes(b"not gzip")
        conf, why = kbuild_config.config_for("6.12")
        self.assertIn("not gzip", why)

    def test_defconfig_keys_apart_from_every_file(self):
        os.unlink(self.d / "debian.xz")
        os.unlink(self.d / "config.gz")
        (conf, _), _ = kbuild_config.config_for("6.12")
        (again, _), _ = kbuild_config.config_for("6.1")
        self.assertEqual(conf["sha256"], again["sha256"])
        empty = kbuild_config.record("given", "x", b"")[0][0]
        self.assertNotEqual(conf["sha256"], empty["sha256"])


if __name__ == "__main__":
    unittest.main()
