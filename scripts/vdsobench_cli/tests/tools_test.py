"""cli/tools.py: the programs the CLI runs are Debian's, by absolute path, and
PATH is never asked: with a PATH whose first folder has a fake of every one
(and of python3, which the imports' repository rule runs), each command part
that runs one still runs the real one, and no fake ever runs. A tool that is
missing is one line naming its package."""

import hashlib
import io
import os
import subprocess
import tarfile
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import build, tools
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.measure import pahole, sim
from vdsobench_cli.kimport import (bazel_sync, compile, kbuild, objcmp, patches, store,
                                   tarball as tarball_mod)
from vdsobench_cli.measure import code_metrics, fingerprint
from vdsobench_cli.tests import support


class TableTest(unittest.TestCase):
    def test_absolute_paths_and_packages(self):
        for name, (places, package) in tools.TOOLS.items():
            self.assertTrue(places and all(os.path.isabs(p) for p in places), name)
            self.assertRegex(package, r"^[a-z0-9][a-z0-9.+-]+$", name)

    def test_a_missing_tool_is_one_line_naming_its_package(self):
        with support.missing_tool("pahole"):
            self.assertFalse(tools.have("pahole"))
            with self.assertRaises(UsageError) as e:
                tools.path("pahole", "layout")
        line = str(e.exception)
        self.assertEqual(len(line.splitlines()), 1)
        for needle in ("layout: pahole not found", "/nonexistent/pahole", "Debian's dwarves"):
            self.assertIn(needle, line)


class NoPathTest(unittest.TestCase):
    """Fakes first on PATH, each logging its name: none may run."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="vdsobench-tools-")
        self.addCleanup(tmp.cleanup)
        self.tmp = Path(tmp.name)
        fakes = self.tmp / "bin"
        fakes.mkdir()
        self.log = self.tmp / "ran.log"
        for name in [*tools.TOOLS, "python3"]:
            fake = fakes / name
            fake.write_text(f"#!/bin/sh\necho {name} >> {self.log}\nexit 97\n")
            fake.chmod(0o755)
        path = mock.patch.dict(os.environ, {"PATH": f"{fakes}:{os.environ['PATH']}"})
        path.start()
        self.addCleanup(path.stop)

    def tearDown(self):
        ran = self.log.read_text().split() if self.log.exists() else []
        self.assertEqual(ran, [], "a program was found through PATH")

    def test_bazel(self):
        rc, out = build.bazel("info", ["workspace"])
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.strip().splitlines()[-1], str(build.ROOT))

    def test_git(self):
        if not (build.ROOT / ".git").exists():
            self.skipTest("a copy of the project without its history (new_variant_test's)")
        out, why = fingerprint.git(build.ROOT, "rev-parse", "HEAD")
        self.assertRegex(out or why, r"^[0-9a-f]{40}\s*$")

    def test_tar_prlimit_and_git_apply(self):
        tarball = self.tmp / "t.tar.gz"
        with tarfile.open(tarball, "w:gz") as tar:
            m = tarfile.TarInfo("linux-x/Makefile")
            m.size = len(b"VERSION = 6\n")
            tar.addfile(m, io.BytesIO(b"VERSION = 6\n"))
        tree = self.tmp / "tree"
        tree.mkdir()
        tarball_mod.untar(tarball, ["Makefile"], [], tree)
        patch = self.tmp / "p.patch"
        patch.write_text("--- a/Makefile\n+++ b/Makefile\n@@ -1 +1 @@\n-VERSION = 6\n"
                         "+VERSION = 7\n")
        patches.apply_patches(tree, patches.check_patches([str(patch)]))
        self.assertEqual((tree / "Makefile").read_text(), "VERSION = 7\n")

    def test_gcc_objdump(self):
        src, obj = self.tmp / "f.c", self.tmp / "f.o"
        src.write_text("int f(int x) { return x + 1; }\n")
        self.tmp.chmod(0o755)  # objdump runs confined, as another user (a build's outputs)
        subprocess.run([compile.tree_cc("x86"), "-O2", "-c", str(src), "-o", str(obj)],
                       check=True)
        self.assertIn("f", objcmp.disassemble(obj))
        self.assertEqual(code_metrics.tool("objdump"), tools.path("objdump"))

    def test_pahole_valgrind_setarch_make(self):
        self.assertRegex(pahole.pahole(["--version"]), r"^v?\d")
        self.assertRegex(sim.valgrind_version(), r"^\d")
        argv = sim.Runner("/bin/true", str(self.tmp)).command("s", "c", "hot", 1, "out")
        self.assertEqual(argv[0], tools.path("setarch"))
        self.assertEqual(argv[3], tools.path("valgrind"))
        with open(self.tmp / "make.log", "wb") as log:
            self.assertEqual(kbuild.make(self.tmp, ["--version"], log, self.tmp), 0)

    def test_the_imports_repository_rule_runs_debians_python(self):
        """@vdso_imports's rule checks the table with /usr/bin/python3, as the
        CLI does (another imports folder makes Bazel run it again)."""
        imports = self.tmp / "imports"
        imports.mkdir()
        digest = hashlib.sha256(str(imports).encode()).hexdigest()
        with mock.patch.dict(os.environ, {store.DIR_ENV: str(imports),
                                          bazel_sync.DIGEST_ENV: digest}):
            rc, out = build.bazel("query", ["@vdso_imports//:all"])
        self.assertEqual(rc, 0, out)
        self.assertNotIn("could not be checked", out)


if __name__ == "__main__":
    unittest.main()
