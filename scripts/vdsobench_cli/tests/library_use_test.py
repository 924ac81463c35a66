"""No module uses a command as a library: none builds an argparse.Namespace by
hand to call a command's code (a command parses its own arguments into a typed
value once; what a library needs is a dataclass, as measure/harness.Selection
is for the harness's options), and none captures a command's printed output
with redirect_stdout (a library returns data). Tests may do both: a test that
captures the real CLI's stdout observes a command, it does not reuse it.

ALLOWED_FOR_NOW lists the uses that remain, by file and the top-level function
or class that holds them (issue 29's later parts remove them); a new use fails,
and so does a listed one that is gone, so the list only shrinks."""

import ast
import unittest
from pathlib import Path

from vdsobench_cli.cli.build import ROOT

PACKAGES = (("vdsobench_cli", ROOT / "scripts"), ("reports", ROOT))

CALLS = ("Namespace", "redirect_stdout")
# (file, top-level function or class, call)
ALLOWED_FOR_NOW = (
)


def is_test(path):
    return (path.name.endswith("_test.py") or path.name in ("support.py", "testsupport.py")
            or "tests" in path.parts or "testdata" in path.parts)


def uses(text, filename="<source>"):
    """[(top-level def, call name)] of each Namespace(...) or redirect_stdout(...)
    call in the source, however the name was reached (argparse.Namespace,
    contextlib.redirect_stdout, or imported bare)."""
    found = []
    for top in ast.parse(text, filename).body:
        where = getattr(top, "name", "<module>")
        for node in ast.walk(top):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name in CALLS:
                    found.append((where, name))
    return found


def package_uses():
    found = []
    for package, top in PACKAGES:
        for path in sorted((top / package).rglob("*.py")):
            if not is_test(path.relative_to(ROOT)):
                rel = str(path.relative_to(ROOT))
                found += sorted({(rel, where, name) for where, name in uses(path.read_text(), rel)})
    return found


class LibraryUseTest(unittest.TestCase):
    def test_no_command_is_used_as_a_library(self):
        found = package_uses()
        new = [u for u in found if u not in ALLOWED_FOR_NOW]
        gone = [u for u in ALLOWED_FOR_NOW if u not in found]
        self.assertEqual(new, [], "a hand-built Namespace or a captured stdout: call a "
                         "library that takes typed options and returns data")
        self.assertEqual(gone, [], "fixed (or moved): take these out of ALLOWED_FOR_NOW")

    def test_the_checker_finds_each_form(self):
        source = ("import argparse, contextlib\n"
                  "from argparse import Namespace\n"
                  "def a():\n    return argparse.Namespace(x=1)\n"
                  "def b():\n    return Namespace(x=1)\n"
                  "class C:\n    def m(self):\n"
                  "        with contextlib.redirect_stdout(None):\n            pass\n"
                  "def parse(p):\n    return p.parse_args([])\n")
        self.assertEqual(uses(source), [("a", "Namespace"), ("b", "Namespace"),
                                        ("C", "redirect_stdout")])

    def test_tests_may_capture_a_command(self):
        self.assertTrue(is_test(Path("scripts/vdsobench_cli/tests/support.py")))
        self.assertTrue(is_test(Path("reports/plots_test.py")))
        self.assertFalse(is_test(Path("scripts/vdsobench_cli/fleet/collect.py")))


if __name__ == "__main__":
    unittest.main()
