"""The import graph of the CLI package and reports/, built from the sources
(every import, at the top of a module or inside a function): no cycle, the
rooms depend only downward, and no module but the entry point
(scripts/vdsobench) touches sys.path. No test module imports another: shared
helpers live in tests/support.py and reports/testsupport.py.

The rooms, lowest first (docs/building.md says what each holds); a room
imports only rooms before it, and a command imports no other command:

    core      vdsobench_cli/core: the vocabulary, text, statistics, limits
    reports   reports/: pure renderers and reductions
    cli       vdsobench_cli/cli: plumbing (errors, lifecycle, atomic writes,
              Bazel and its labels, confinement, ...)
    kimport   vdsobench_cli/kimport: the imported kernel trees
    measure   vdsobench_cli/measure: measurements and the results format
    fleet     vdsobench_cli/fleet: Slurm, the bundle
    recipes   vdsobench_cli/recipes: experiments and patch-review
    commands  vdsobench_cli/commands: one module a command
    entry     vdsobench_cli/main.py: parses and dispatches to every command
    tests     the test modules and their shared helpers

ALLOWED_FOR_NOW lists the upward edges that remain (issue 29's later parts
remove them); the test fails on a new one and on a listed one that is gone,
so the list only shrinks."""

import ast
import unittest

from vdsobench_cli.cli.build import ROOT

PACKAGES = (("vdsobench_cli", ROOT / "scripts"), ("reports", ROOT))
ROOMS = ("core", "reports", "cli", "kimport", "measure", "fleet", "recipes", "commands",
         "entry", "tests")
# (importer, line of its first import of it, imported): the upward edges left
ALLOWED_FOR_NOW = (
)
# no module of scripts/ or reports/, tests and helpers included, longer: a
# module that outgrows it does more than one job (issue 29)
MAX_MODULE_LINES = 600


def modules(tests=False):
    """{dotted name: (path, is a package)} of the non-test modules (and the
    test modules and their helpers too, with tests)."""
    found = {}
    for package, top in PACKAGES:
        for path in sorted((top / package).rglob("*.py")):
            if "testdata" in path.parts or (path.name.endswith("_test.py") and not tests):
                continue
            parts = list(path.relative_to(top).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def graph(mods):
    """{module: {module it imports: first line}}, within mods."""
    edges = {}
    for name, (path, is_package) in mods.items():
        here = name.split(".") if is_package else name.split(".")[:-1]
        out = edges[name] = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = (".".join(here[:len(here) - node.level + 1] + [node.module or ""])
                        .rstrip(".") if node.level else node.module)
                # `from . import x` imports the module x; `from .m import f`, m
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in node.names]
            for t in targets:
                if t in mods and t != name:
                    out.setdefault(t, node.lineno)
    return edges


def helper_and_test_files():
    """The test modules and the two shared-helper modules, as paths."""
    found = []
    for package, top in PACKAGES:
        found += [p for p in sorted((top / package).rglob("*.py")) if "testdata" not in p.parts
                  and (p.name.endswith("_test.py") or p.name in ("support.py", "testsupport.py"))]
    return found


def imported_tests(text, filename="<source>"):
    """[(line, module)] for each test module (a name ending in _test) that the
    source imports, in any form: import a.b_test, from a.b_test import x,
    from a import b_test, from . import b_test, from .b_test import x."""
    found = []
    for node in ast.walk(ast.parse(text, filename)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names = [base] + [f"{base.rstrip('.')}.{a.name}".lstrip(".") for a in node.names]
        else:
            continue
        found += [(node.lineno, n) for n in names if n.rsplit(".", 1)[-1].endswith("_test")]
    return found


def room(module):
    """The room of a dotted module name; None for one outside every room."""
    parts = module.split(".")
    if (parts[-1].endswith("_test") or parts[-1] in ("support", "testsupport")
            or parts[:2] == ["vdsobench_cli", "tests"]):
        return "tests"
    if parts[0] == "reports":
        return "reports"
    if module == "vdsobench_cli.main":
        return "entry"
    if module == "vdsobench_cli":
        return "core"  # the package itself: its docstring only
    if parts[0] == "vdsobench_cli" and parts[1] in ROOMS:
        return parts[1]
    return None


def upward(edges):
    """[(importer, line, imported)] for each edge into a later room, or from one
    command to another."""
    found = []
    for a, out in sorted(edges.items()):
        for b, line in sorted(out.items()):
            ra, rb = room(a), room(b)
            if ROOMS.index(rb) > ROOMS.index(ra) or (ra == rb == "commands"
                                                       and b != "vdsobench_cli.commands"):
                found.append((a, line, b))
    return found


def cycle(edges):
    """One import cycle as [a, b, ..., a], or None."""
    state = {}

    def visit(v, path):
        state[v] = "open"
        for w in edges[v]:
            if state.get(w) == "open":
                return path[path.index(w):] + [w]
            if w not in state:
                found = visit(w, path + [w])
                if found:
                    return found
        state[v] = "done"
        return None

    for v in sorted(edges):
        if v not in state:
            found = visit(v, [v])
            if found:
                return found
    return None


class ImportGraphTest(unittest.TestCase):
    def test_no_cycle(self):
        mods = modules()
        self.assertIn("vdsobench_cli.main", mods)
        self.assertIn("vdsobench_cli.core.vocab", mods)
        edges = graph(mods)
        found = cycle(edges)
        self.assertIsNone(found, found and " -> ".join(
            f"{a} (line {edges[a][b]})" for a, b in zip(found, found[1:])) + f" -> {found[-1]}")

    def test_every_module_has_a_room(self):
        mods = modules(tests=True)
        self.assertIn("vdsobench_cli.tests.support", mods)
        self.assertEqual([m for m in mods if room(m) is None], [],
                         "a new folder of the package must be placed in ROOMS")

    def test_rooms_depend_downward(self):
        found = upward(graph(modules(tests=True)))
        allowed = set(ALLOWED_FOR_NOW)
        new = [e for e in found if e not in allowed]
        gone = [e for e in ALLOWED_FOR_NOW if e not in found]
        self.assertEqual(new, [], "an import into a later room (or between commands): "
                         + "; ".join(f"{a} line {n} imports {b}" for a, n, b in new))
        self.assertEqual(gone, [], "fixed (or moved): take these out of ALLOWED_FOR_NOW")

    def test_the_checker_finds_an_upward_edge(self):
        self.assertEqual(upward({"vdsobench_cli.cli.x": {"vdsobench_cli.measure.y": 3},
                                 "vdsobench_cli.measure.y": {"vdsobench_cli.core.z": 1},
                                 "reports.r": {"vdsobench_cli.core.z": 2},
                                 "vdsobench_cli.main": {"vdsobench_cli.commands.c": 4}}),
                         [("vdsobench_cli.cli.x", 3, "vdsobench_cli.measure.y")])
        self.assertEqual(upward({"reports.r": {"vdsobench_cli.cli.errors": 5}}),
                         [("reports.r", 5, "vdsobench_cli.cli.errors")])

    def test_no_command_imports_another(self):
        self.assertEqual(upward({"vdsobench_cli.commands.a": {"vdsobench_cli.commands.b": 7}}),
                         [("vdsobench_cli.commands.a", 7, "vdsobench_cli.commands.b")])
        self.assertEqual(room("vdsobench_cli.main"), "entry")
        self.assertEqual(room("reports.plots_test"), "tests")
        self.assertEqual(room("reports.testsupport"), "tests")

    def test_the_checker_finds_a_cycle(self):
        self.assertEqual(cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}),
                         ["a", "b", "c", "a"])
        self.assertIsNone(cycle({"a": {"b": 1}, "b": {}, "c": {"a": 1, "b": 2}}))

    def test_relative_imports_resolve(self):
        edges = graph(modules())
        # `from .errors import ...` and `from . import lifecycle`, one each
        self.assertIn("vdsobench_cli.cli.errors", edges["vdsobench_cli.cli.arch"])
        self.assertIn("vdsobench_cli.cli.lifecycle", edges["vdsobench_cli.cli.errors"])
        self.assertIn("vdsobench_cli.core.text", edges["vdsobench_cli.cli.errors"])

    def test_no_test_module_imports_another(self):
        sources = helper_and_test_files()
        names = {p.name for p in sources}
        self.assertIn("import_graph_test.py", names)
        self.assertIn("plots_test.py", names)
        self.assertTrue({"support.py", "testsupport.py"} <= names)
        found = [f"{p.relative_to(ROOT)}:{line}: imports {module}" for p in sources
                 for line, module in imported_tests(p.read_text(), str(p))]
        self.assertEqual(found, [], "a shared helper belongs in tests/support.py or "
                         "reports/testsupport.py:\n" + "\n".join(found))

    def test_the_checker_finds_a_test_import(self):
        for source in ("from vdsobench_cli.tests.run_test import vdsobench",
                       "import reports.plots_test", "from reports import merge_test",
                       "from . import run_test", "from .fleet_test import SubmitTest",
                       "def f():\n    from vdsobench_cli.tests import live_test\n"):
            with self.subTest(source=source):
                self.assertEqual(len(imported_tests(source)), 1, imported_tests(source))
        self.assertEqual(imported_tests("from vdsobench_cli.tests import support\n"
                                      "from reports.testsupport import fixture\n"
                                      "import vdsobench_cli.commands.testrun\n"
                                      "from vdsobench_cli.measure import results"), [])

    def test_no_module_over_the_limit(self):
        long = {m: n for m, (path, _) in modules(tests=True).items()
                if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
        self.assertEqual(long, {}, f"over {MAX_MODULE_LINES} lines: split by job")
        self.assertGreater(len(modules(tests=True)), 100)  # it read the tree

    def test_only_the_entry_point_sets_the_path(self):
        touched = [str(path.relative_to(ROOT)) for path, _ in modules().values()
                   if "sys.path" in path.read_text()
                   # the bundle's launcher is its own entry point, a string here
                   and path.name != "bundle.py"]
        self.assertEqual(touched, [])


if __name__ == "__main__":
    unittest.main()
