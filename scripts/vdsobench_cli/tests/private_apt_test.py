"""cli/private_apt.py: package names checked before any command (hostile ones
are one line, exit 2, and nothing runs), the machine's archive read from its
sources files, and the private apt's command lines, environment and
configuration, which name none of the machine's apt configuration or state
(and apt itself, asked with apt-config, agrees). Nothing here downloads."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import private_apt
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import newer_sources
from vdsobench_cli.tests.support import one_line, vdsobench

HOSTILE = ["linux-source-7.3 -o", "-oDebug::pkgAcquire=1", "--allow-unauthenticated",
           "linux-source-7.3;rm -rf /", "linux-source-07.3", "linux-source-7.3\n",
           "linux-image-7.3", "linux-source-7.3*", "linux-source-7.*", "", "linux-source-7.3/sid",
           "../linux-source-7.3", "linux-source-7.3=7.3.4-1", "linux-source-7.3:amd64",
           "linux-source-7.3.4", "linux-source-100.1", "linux-source-7", "LINUX-SOURCE-7.3",
           "linux-source-7.3\x1b[2J", "linux-sourcé-7.3", None, 7.3]
# what the machine's apt is: none of it may be named by the private one
SYSTEM = ("/etc/apt", "/var/lib/apt", "/var/cache/apt", "/var/log/apt", "/var/lib/dpkg")


class NameTest(unittest.TestCase):
    def test_valid_names(self):
        for name in ("linux-source-7.3", "linux-config-7.3", "linux-source-7.2",
                     "linux-source-6.12", "linux-config-10.0"):
            self.assertEqual(private_apt.check_package(name, "t"), name)

    def test_hostile_names_are_one_line(self):
        for name in HOSTILE:
            with self.assertRaises(UsageError) as e:
                private_apt.check_package(name, "import")
            msg = str(e.exception)
            self.assertEqual(len(msg.splitlines()), 1, repr(name))
            self.assertNotIn("\x1b", msg)
            self.assertIn("valid: linux-source-X.Y or linux-config-X.Y", msg)

    def test_hostile_names_run_nothing(self):
        """Refused before the cache, the archive or any command is touched."""
        boom = mock.Mock(side_effect=AssertionError("ran"))
        real = private_apt.Apt
        with mock.patch.object(private_apt, "Apt", boom), \
                mock.patch.object(private_apt.lifecycle, "popen", boom), \
                mock.patch.object(newer_sources, "cache_dir", boom), \
                mock.patch.object(private_apt, "archive_uri", boom):
            for name in HOSTILE:
                for call in (newer_sources.fetch, newer_sources.tree_tarball):
                    with self.assertRaises(UsageError, msg=repr(name)):
                        call(name, "import")
            apt = real.__new__(real)  # its own calls check too
            for name in ("-o", "linux-source-7.3 x"):
                with self.assertRaises(UsageError):
                    apt.show(name)
                with self.assertRaises(UsageError):
                    apt.download(name, "/nonexistent")
        boom.assert_not_called()

    def test_hostile_source_on_the_command_line(self):
        with mock.patch.object(private_apt, "Apt", side_effect=AssertionError("ran")):
            for given in ("linux-source-7.3 --allow-unauthenticated", "-oAPT::x=1",
                          "linux-source-7.3;id"):
                rc, out, err = vdsobench("import", "--name", "x", "--", given)
                one_line(self, rc, err, "no such kernel tree or tarball")
                self.assertEqual(out, "")


class ArchiveTest(unittest.TestCase):
    def sources(self, **files):
        d = Path(tempfile.mkdtemp(prefix="vdsobench-sources-"))
        self.addCleanup(shutil.rmtree, d)
        for name, text in files.items():
            (d / name).write_text(text)
        return [str(d / "debian.sources"), str(d / "sources.list")]

    def test_deb822_first_suite_not_security(self):
        paths = self.sources(**{"debian.sources": (
            "Types: deb\nURIs: http://security.example/debian-security\n"
            "Suites: bookworm-security\nComponents: main\n\n"
            "Types: deb\n# a comment\nURIs: http://mirror.example/debian/\n"
            "Suites: bookworm bookworm-updates\nComponents: main\n"
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")})
        self.assertEqual(private_apt.archive_uri(paths), "http://mirror.example/debian")

    def test_disabled_stanza_and_one_line_format(self):
        paths = self.sources(**{"debian.sources": (
            "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nEnabled: no\n"),
            "sources.list": ("# deb http://commented.example/debian bookworm main\n"
                             "deb-src http://src.example/debian bookworm main\n"
                             "deb [arch=amd64 signed-by=/k.gpg] https://on.example/debian "
                             "bookworm main\n")})
        self.assertEqual(private_apt.archive_uri(paths), "https://on.example/debian")

    def test_hostile_uri_is_never_taken(self):
        paths = self.sources(**{"sources.list": (
            "deb http://x.example/debian\"];Dir::Etc=/etc/apt; bookworm main\n"
            "deb ftp://old.example/debian bookworm main\n")})
        with self.assertRaises(UsageError) as e:
            private_apt.archive_uri(paths)
        self.assertIn("no Debian archive in", str(e.exception))
        self.assertEqual(len(str(e.exception).splitlines()), 1)

    def test_this_machines_archive(self):
        if not any(os.path.isfile(p) for p in private_apt.SOURCES):
            self.skipTest("no Debian sources on this machine")
        self.assertRegex(private_apt.archive_uri(), r"^(https?|file)://")


class InvocationTest(unittest.TestCase):
    def setUp(self):
        self.state = Path(tempfile.mkdtemp(prefix="vdsobench-apt-")) / "apt" / "sid"
        self.addCleanup(shutil.rmtree, self.state.parents[1])
        self.apt = private_apt.Apt(self.state, "trixie-backports", "http://deb.debian.org/debian",
                                   arch="amd64")

    def everything(self):
        """Every word the private apt is started with: argv, env, its files."""
        words = [*self.apt.argv("update"), *self.apt.argv("download", "linux-source-7.3"),
                 *self.apt.argv("show", "linux-source-7.3", tool="apt-cache")]
        env = self.apt.env()
        words += [f"{k}={v}" for k, v in env.items() if k not in os.environ or
                  os.environ[k] != v]
        words += [f"{rel}:{text}" for rel, text in self.apt.files().items()]
        return "\n".join(words)

    def test_names_none_of_the_machines_apt(self):
        text = self.everything()
        for system in SYSTEM:
            self.assertNotIn(system, text)
        self.assertEqual(self.apt.env()["APT_CONFIG"], str(self.state / "apt.conf"))
        conf = self.apt.files()["apt.conf"]
        for key, value in re.findall(r'^(Dir::\S+) "([^"]*)";$', conf, re.M):
            if value.startswith("/"):
                self.assertTrue(value.startswith(str(self.state) + "/"), (key, value))
        self.assertEqual(self.apt.files()["etc/sources.list"],
                         "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring"
                         ".gpg] http://deb.debian.org/debian trixie-backports main\n")

    def test_apt_reads_only_the_private_configuration(self):
        """apt-config, started as the private apt is: every folder it would use is
        under the state folder, and none of the machine's hooks is read."""
        if shutil.which("apt-config") is None:
            self.skipTest("no apt-config")
        self.apt.prepare()
        r = subprocess.run(["apt-config", "dump"], env=self.apt.env(), capture_output=True,
                           text=True, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr)
        dirs = dict(re.findall(r'^(Dir::(?:Etc|State|Cache|Log)(?:::\w+)?) "(.*)";$',
                               r.stdout, re.M))
        for key in ("Dir::Etc", "Dir::State", "Dir::Cache", "Dir::Log", "Dir::State::status"):
            self.assertTrue(dirs[key].startswith(str(self.state) + "/"), (key, dirs[key]))
        self.assertNotRegex(r.stdout, r"(?m)^(APT::Update::Post-Invoke|DPkg::Post-Invoke)")
        self.assertEqual(r.stderr, "")

    def test_values_apt_would_misread_are_refused(self):
        for state, suite, uri in (("/tmp/a\"b", "sid", "http://x/d"),
                                  ("/tmp/a;b", "sid", "http://x/d"),
                                  ("relative", "sid", "http://x/d"),
                                  ("/tmp/a", "sid main", "http://x/d"),
                                  ("/tmp/a", "sid", "http://x/d ]")):
            with self.assertRaises(UsageError):
                private_apt.Apt(state, suite, uri, arch="amd64")


if __name__ == "__main__":
    unittest.main()
