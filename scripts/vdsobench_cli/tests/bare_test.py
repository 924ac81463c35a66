"""The CLI on a machine without numpy, scipy, matplotlib and jsonschema.

Stub packages that raise ImportError stand first on PYTHONPATH, so the
interpreter behaves as a bare Debian install's would (dpkg may still say the
packages are installed: that case must be named too). Every command module
must import, --help must work, `setup --check` must name what cannot be
imported, `list` must work (it needs none of them), and a command that needs
one must say which package, in one line, exit 2, with no traceback.
"""

import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.tests import support as fixtures
from vdsobench_cli import main

SCRIPTS = Path(__file__).resolve().parents[2]
ROOT = SCRIPTS.parent
LAUNCHER = SCRIPTS / "vdsobench"
BLOCKED = ("numpy", "scipy", "matplotlib", "jsonschema")


class BareMachineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.stubs = fixtures.block_modules(Path(cls.tmp.name, "stubs"), BLOCKED)
        cls.env = dict(os.environ, PYTHONPATH=cls.stubs)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def cli(self, *args):
        return subprocess.run([str(LAUNCHER), *args], capture_output=True, text=True,
                              env=self.env, stdin=subprocess.DEVNULL, cwd=self.tmp.name)

    def python(self, code):
        return subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                              env=dict(self.env, PYTHONPATH=f"{self.stubs}:{SCRIPTS}:{ROOT}"),
                              stdin=subprocess.DEVNULL)

    def assert_no_traceback(self, r):
        self.assertNotIn("Traceback", r.stderr + r.stdout)

    def test_stubs_really_block(self):
        # the premise: without it every other test here proves nothing
        for m in BLOCKED:
            r = self.python(f"import {m}")
            self.assertNotEqual(r.returncode, 0, m)
            self.assertIn("ImportError", r.stderr)

    def test_every_module_imports_without_them(self):
        names = sorted(".".join(p.relative_to(SCRIPTS).with_suffix("").parts)
                       for glob in ("*.py", "*/*.py")
                       for p in (SCRIPTS / "vdsobench_cli").glob(glob)
                       if not p.stem.endswith("_test") and p.parent.name != "tests"
                       and p.stem != "__init__")
        names += sorted(f"reports.{p.stem}" for p in (ROOT / "reports").glob("*.py")
                        if not p.stem.endswith("_test"))
        self.assertIn("vdsobench_cli.main", names)
        self.assertIn("vdsobench_cli.core.stats", names)
        self.assertIn("reports.tables", names)
        r = self.python("import importlib\n"
                        f"for n in {names!r}:\n"
                        "    importlib.import_module(n)\n"
                        "print('imported', len(" + repr(names) + "))")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"imported {len(names)}", r.stdout)

    def test_help_of_every_command(self):
        r = self.cli("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        commands = main.parser().commands
        self.assertIn("setup", commands)
        for command in commands:
            r = self.cli(command, "--help")
            self.assertEqual(r.returncode, 0, f"{command}: {r.stderr}")
            self.assert_no_traceback(r)

    def test_setup_check_names_each_blocked_module(self):
        r = self.cli("setup", "--check")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assert_no_traceback(r)
        for m in BLOCKED:
            # either "missing ... python3-M" (not installed) or "python3-M is
            # installed but ... cannot import M" (installed, but blocked)
            self.assertIn(f"python3-{m}", r.stdout)

    def test_list_needs_none_of_them(self):
        r = self.cli("list", "--variants", "generic_5_3+rdtscp+always")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("generic_5_3+rdtscp+always", r.stdout)

    def assert_names_package(self, r, module):
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assert_no_traceback(r)
        lines = r.stderr.splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(module, lines[0])
        self.assertIn(f"python3-{module}", lines[0])

    def test_plot_says_matplotlib(self):
        data = ROOT / "scripts/vdsobench_cli/tests/testdata/results_small.json"
        out = Path(self.tmp.name, "plots")
        r = self.cli("plot", str(data), "--out", str(out))
        self.assert_names_package(r, "matplotlib")
        self.assertFalse(out.exists())

    def test_reading_results_says_jsonschema(self):
        data = ROOT / "scripts/vdsobench_cli/tests/testdata/results_small.json"
        r = self.cli("compare", "--results", str(data), str(data))
        self.assert_names_package(r, "jsonschema")


if __name__ == "__main__":
    unittest.main()
