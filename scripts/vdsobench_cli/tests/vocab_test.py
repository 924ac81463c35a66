"""The vocabulary (core/vocab.py): each name parsed and written one way, one
failure (BadName); its lists against the C side's own tables, as the sim
driver prints them (bench/sim_driver.c --list-json), and the architecture's
counter against the harness's default; then one definition of each word in
the Python sources."""

import ast
import re
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import arch, build, labels
from vdsobench_cli.measure import sim
from vdsobench_cli.core import vocab
from reports import run_table

ROOTS = (build.ROOT / "scripts" / "vdsobench_cli", build.ROOT / "reports")
CORE = "scripts/vdsobench_cli/core/"


class AgreesWithCTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        build.build([labels.SIM_DRIVER])
        cls.catalog = sim.catalog(build.binary_path(labels.SIM_DRIVER))

    def test_clocks_and_modes_are_the_harness_tables(self):
        self.assertEqual(vocab.CLOCKS, tuple(self.catalog["default_clocks"]))
        self.assertEqual(vocab.BENCH_MODES, tuple(self.catalog["bench_modes"]))

    def test_default_counter(self):
        # the harness picks the timed counter at run time, as arch does from cpuinfo
        self.assertEqual(self.catalog["default_counter"], arch.timed_counter())
        self.assertEqual(arch.default_variants(), f"*+{arch.default_counter()}+always")


def sources():
    for root in ROOTS:
        for path in sorted(root.rglob("*.py")):
            if not path.name.endswith("_test.py"):
                yield path, path.read_text()


def segment(lines, node):
    return "\n".join(lines[node.lineno - 1:node.end_lineno])


def defining(predicate):
    """Where in the sources predicate(node, its lines) says a word is defined."""
    found = []
    for path, text in sources():
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if predicate(node, lines):
                found.append(f"{path.relative_to(build.ROOT)}:{node.lineno}")
    return found


# Opens with O_NONBLOCK that read nothing of a file, each with the reason.
NONBLOCK_NOT_READING = {
    "scripts/vdsobench_cli/kimport/imports_table.py:import_running":
        "a probe of the table's lock file (flock), nothing read",
    "scripts/vdsobench_cli/measure/clocksource.py:write_current":
        "a write of the clocksource's name (a FIFO must not block it), nothing read",
}


def nonblocking_opens():
    """["path:function"] of each function (or "path:" for module level) whose code
    names O_NONBLOCK, os.O_NONBLOCK or a bare O_NONBLOCK."""
    found = set()
    for path, text in sources():
        rel = path.relative_to(build.ROOT)
        tree = ast.parse(text)
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr == "O_NONBLOCK") or (
                    isinstance(node, ast.Name) and node.id == "O_NONBLOCK"):
                up = node
                while up in parents and not isinstance(up, (ast.FunctionDef,
                                                            ast.AsyncFunctionDef)):
                    up = parents[up]
                found.add(f"{rel}:{getattr(up, 'name', '')}")
    return sorted(found)


class OneDefinitionTest(unittest.TestCase):
    def test_no_clock_list(self):
        # the clocks are common/clocks.h's rows (core/clocks.py): no Python literal
        # lists the suite's clocks, in any order
        def clock_list(node, _):
            items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", ())
            return (isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict))
                    and {e.value for e in items if isinstance(e, ast.Constant)}
                    >= set(vocab.CLOCKS))
        self.assertEqual(defining(clock_list), [])

    def test_the_clock_list_check_finds_a_literal(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            Path(d, "m.py").write_text(f"LABELS = {dict.fromkeys(vocab.CLOCKS, 'X')!r}\n")
            with mock.patch.object(build, "ROOT", Path(d)), \
                    mock.patch(f"{__name__}.ROOTS", (Path(d),)):
                with self.assertRaises(AssertionError):
                    self.test_no_clock_list()

    def test_one_reader_opens_without_blocking(self):
        # a reader of user files of its own would open them with O_NONBLOCK (a FIFO
        # must not block it): only safe_read does, through its NONBLOCK flags
        self.assertEqual([f for f in nonblocking_opens() if f not in NONBLOCK_NOT_READING],
                         ["scripts/vdsobench_cli/cli/safe_read.py:"])
        self.assertLessEqual(set(NONBLOCK_NOT_READING), set(nonblocking_opens()))

    def test_the_reader_check_finds_an_open(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            Path(d, "m.py").write_text("import os\nfrom os import O_NONBLOCK\n"
                                       "def mine(p):\n    return os.open(p, os.O_RDONLY | "
                                       "os.O_NONBLOCK)\nFLAGS = O_NONBLOCK\n")
            with mock.patch.object(build, "ROOT", Path(d)), \
                    mock.patch(f"{__name__}.ROOTS", (Path(d),)):
                self.assertEqual(nonblocking_opens(), ["m.py:", "m.py:mine"])

    def test_one_benchmark_name_parser(self):
        # a split at the last three slashes, or a cpu<N> part read by hand
        pattern = re.compile(r'rsplit\("/", 3\)|"cpu\(|\]\[3:\]|split\("/"\)\[2\]')

        def parser(node, text):
            return isinstance(node, ast.FunctionDef) and pattern.search(segment(text, node))
        self.assertEqual([p.split(":")[0] for p in defining(parser)], [CORE + "vocab.py"])

    def test_one_machine_label(self):
        # a function reading the fingerprint's hypervisor record (it has "vendor"
        # and "present") and its cpu one
        def label(node, text):
            if not isinstance(node, ast.FunctionDef):
                return False
            body = segment(text, node)
            return 'get("hypervisor") or {}' in body and 'get("cpu") or {}' in body
        self.assertEqual([p.split(":")[0] for p in defining(label)], [CORE + "uarch.py"])


class BenchmarkNameTest(unittest.TestCase):
    def test_parse_and_format_round_trip(self):
        for name, key in (("sys/vdso/monotonic/hot/cpu0", ("sys/vdso", "monotonic", "hot", 0)),
                          ("generic_5_3+rdtscp+always/tai/cold-l2/cpu12",
                           ("generic_5_3+rdtscp+always", "tai", "cold-l2", 12)),
                          ("floor/empty/none/hot/cpu3", ("floor/empty", "none", "hot", 3))):
            self.assertEqual(vocab.parse_benchmark(name), key)
            self.assertEqual(vocab.benchmark(*key), name)
            self.assertEqual(vocab.subject(name), key[0])

    def test_one_failure_for_every_bad_name(self):
        for name in ("no/cpu/here", "a/b/c/cpu", "a/b/c/cpux1", "a//c/cpu1", "/b/c/cpu1",
                     "a/b/c/cpu1/", "monotonic/hot/cpu1", "a/b/c/cpu\u0661", ""):
            with self.subTest(name=name):
                with self.assertRaisesRegex(vocab.BadName, "is not <variant>/<clock>/<mode>"):
                    vocab.parse_benchmark(name)
                # the table's reader shows such a name ungrouped instead
                self.assertIsNone(run_table.split_name(name))

    def test_group(self):
        key = vocab.GroupKey.parse("monotonic/hot/cpu1")
        self.assertEqual((key.clock, key.mode, key.cpu), ("monotonic", "hot", 1))
        self.assertEqual(str(vocab.GroupKey("tai", "cold", 7)), "tai/cold/cpu7")
        for key in ("monotonic/hot", "monotonic/hot/1", "a/monotonic/hot/cpu1"):
            with self.assertRaises(vocab.BadName):
                vocab.GroupKey.parse(key)

    def test_group_key_is_a_value(self):
        """Frozen, hashable, ordered by clock, mode, cpu; the row sets the CPU
        aside; str() and parse() are each other's inverse."""
        a, b = vocab.GroupKey("monotonic", "hot", 1), vocab.GroupKey.parse("monotonic/hot/cpu1")
        self.assertEqual(a, b)
        self.assertEqual({a: 1}[b], 1)
        self.assertEqual(a.row, ("monotonic", "hot"))
        self.assertLess(vocab.GroupKey("monotonic", "hot", 0), a)
        self.assertEqual(vocab.GroupKey.parse(str(a)), a)
        self.assertEqual(str(vocab.GroupKey("tai", "hot")), "tai/hot")
        self.assertEqual(vocab.GroupKey.of_row({"clock": "tai", "mode": "hot", "cpu": 2}),
                         vocab.GroupKey("tai", "hot", 2))
        with self.assertRaises(AttributeError):
            a.cpu = 2


class VariantNameTest(unittest.TestCase):
    def test_split_and_join(self):
        self.assertEqual(vocab.split_variant("x86_gtod+lfence_rdtsc+auto"),
                         ("x86_gtod", "lfence_rdtsc", "auto"))
        self.assertEqual(vocab.variant("x86_gtod", "fake", "auto"), "x86_gtod+fake+auto")
        self.assertEqual(vocab.variant("*", "rdtscp"), "*+rdtscp+always")
        for name in ("x86_gtod", "a+b", "a+b+c+d", "a++c"):
            with self.assertRaisesRegex(vocab.BadName, "LAYOUT\\+COUNTER\\+INLINE"):
                vocab.split_variant(name)

    def test_layout_of(self):
        self.assertEqual(vocab.layout_of("kernel:6.12+rdtscp+always"), "kernel:6.12")
        self.assertEqual(vocab.layout_of("sys/vdso"), "sys/vdso")


if __name__ == "__main__":
    unittest.main()
