"""A new layout, a new counter and a new clock: one file and one table row each
(the clock: one row of common/clocks.h), nothing else.

impls/variants.bzl promises "add a layout or a counter here and nowhere else".
This test keeps the promise honest: in a copy of the project it adds a
throwaway layout (a copy of generic_5_3.c under a new name) and a throwaway
counter (a copy of lfence_rdtsc.h, which every x86-64 CPU runs), each as
exactly one new file plus one row in the table, and checks that every command
picks them up: list, verify (the new rows and the known-bad control; every
variant through every check is the C suite checks_test's), the test suite
as far as a new row reaches it (`test --quick --table-readers`: every C suite
and the arm64 group's cross build, and the Python modules that read the table
as a whole, testrun.TABLE_READS; the others name their variants, and the whole
quick suite again here took about 11 minutes of two busy cores), run (with
the counter's floor), compare, layout --diff, sim and gate --update-baseline.

Then, last, the clock: OTHER_CLOCKS' last row (the boottime alarm clock),
moved to SUITE_CLOCKS, a real id no layout serves (the syscall path answers
it) and that a machine without an RTC refuses (the system's subjects then say
so); run, sim and layout must measure and trace it. It comes after the suite
because every C file includes common/clocks.h: with the row moved first, the
copy's suite rebuilt everything, where with the table's rows alone it builds
little more than the new variants (the rest is the disk cache's).

It builds the copy (minutes on two cores), so it runs once, in the plain
suite; inside the copy's own suite it skips itself.
"""

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli import build, project_copy
from vdsobench_cli.core import clocks
from vdsobench_cli.tests import support as fixtures
from vdsobench_cli.tests.support import NESTED, long_tier

LAYOUT, COUNTER = "throwaway_layout", "throwaway_counter"


def clock_to_move(text):
    """OTHER_CLOCKS' last row (the boottime alarm clock in the tree as committed;
    in a tree that has already moved it, the row before), or None."""
    others = clocks.parse(text)["OTHER_CLOCKS"]
    return others[-1].name if others else None


def add_row(text, table, row):
    """The table's dict literal with one more row at its end."""
    start = text.index(f"{table} = {{")
    end = text.index("\n}", start)
    return text[:end] + f"\n    {row}" + text[end:]


def paths(doc):
    """(clock, kind) of every traced path anywhere in layout's JSON."""
    if isinstance(doc, dict):
        if "clock" in doc and "kind" in doc:
            yield doc["clock"], doc["kind"]
        for v in doc.values():
            yield from paths(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from paths(v)


def move_clock_row(text, name):
    """common/clocks.h with clock name's row moved from OTHER_CLOCKS to the end
    of SUITE_CLOCKS (each row a line, continued with a backslash but the last)."""
    lines = text.splitlines()
    row = next(i for i, line in enumerate(lines) if line.lstrip().startswith(f'X("{name}",'))
    was_last = not lines[row].rstrip().endswith("\\")
    moved = lines.pop(row).rstrip(" \\")
    if was_last:  # its predecessor is the table's last row now
        lines[row - 1] = lines[row - 1].rstrip(" \\")
    suite = next(i for i, line in enumerate(lines) if line.startswith("#define SUITE_CLOCKS("))
    last = next(i for i in range(suite, len(lines)) if not lines[i].rstrip().endswith("\\"))
    lines[last] += " \\"
    lines.insert(last + 1, moved)
    return "\n".join(lines) + "\n"


@unittest.skipIf(os.environ.get(NESTED), "already inside the copy this test made")
class NewVariantTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        listed = project_copy.files(build.ROOT)
        if listed is None:
            raise unittest.SkipTest("the project is no git work tree: nothing says which "
                                    "of its files to copy")
        cls.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-new-variant-")
        cls.root = project_copy.make(build.ROOT, Path(cls.tmp.name, "vdsobench"), listed)
        impls = cls.root / "impls"
        # exactly one new file each ...
        shutil.copy(impls / "layouts" / "generic_5_3.c", impls / "layouts" / f"{LAYOUT}.c")
        shutil.copy(impls / "counters" / "lfence_rdtsc.h", impls / "counters" / f"{COUNTER}.h")
        # ... and one row each
        table = (impls / "variants.bzl").read_text()
        table = add_row(table, "LAYOUTS", f'"{LAYOUT}": ("layouts/{LAYOUT}.c", "6.12"),')
        table = add_row(table, "COUNTERS", f'"{COUNTER}": "x86_64",')
        (impls / "variants.bzl").write_text(table)
        cls.env = dict(os.environ, **{NESTED: "1"})

    @classmethod
    def tearDownClass(cls):
        project_copy.remove(cls.root)  # its Bazel output base too
        cls.tmp.cleanup()

    def cli(self, *args, check=True):
        r = subprocess.run([str(self.root / "scripts" / "vdsobench"), *args], cwd=self.root,
                           env=self.env, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        if check:
            self.assertEqual(r.returncode, 0, f"{' '.join(args)}:\n{r.stdout[-3000:]}"
                                              f"{r.stderr[-3000:]}")
        return r

    def test_1_the_copy_differs_by_two_files_and_two_rows(self):
        diff = subprocess.run(["diff", "-r", "-q", "-x", "bazel-*", "-x", "__pycache__",
                               str(build.ROOT / "impls"), str(self.root / "impls")],
                              capture_output=True, text=True).stdout.splitlines()
        self.assertEqual(sorted(diff), sorted([
            f"Only in {self.root}/impls/counters: {COUNTER}.h",
            f"Only in {self.root}/impls/layouts: {LAYOUT}.c",
            f"Files {build.ROOT}/impls/variants.bzl and {self.root}/impls/variants.bzl differ"]))

    def test_2_list(self):
        r = self.cli("list", "--json")
        names = {v["name"] for v in json.loads(r.stdout)}
        self.assertIn(f"{LAYOUT}+lfence_rdtsc+always", names)
        self.assertIn(f"generic_6_10+{COUNTER}+auto", names)
        self.assertIn(f"{LAYOUT}+{COUNTER}+always", names)
        r = self.cli("list")
        self.assertIn(f"floor/{COUNTER}", r.stdout)

    def test_3_verify_every_variant(self):
        def records(*args):
            r = self.cli("verify", "--json", *args, check=False)
            return {x["variant"]: x for x in map(json.loads, r.stdout.splitlines())
                    if "variant" in x}
        # the new rows and the known-bad control: every variant through every
        # check is checks_test's, which the copy's C suites run (test_9)
        listed = json.loads(self.cli("list", "--json").stdout)
        bad = sorted({v["layout"] for v in listed if v.get("known_bad")})
        found = records("--duration-ms", "100", f"{LAYOUT}+*", f"*+{COUNTER}+*",
                        *(f"{layout}+*" for layout in bad))
        self.assertTrue(bad and found, listed)
        # a concurrency check the load starved of reads judged nothing: those
        # variants again, with time enough for their readers (verify --json's
        # "starved"), as a user would
        starved = [v for v, x in found.items() if any(c.get("starved") for c in x["checks"])]
        if starved:
            found.update(records("--duration-ms", "2000", *starved))
        for name in (f"{LAYOUT}+{COUNTER}+always", f"{LAYOUT}+fake+auto",
                     f"x86_gtod+{COUNTER}+always"):
            self.assertEqual(found[name]["status"], "PASS", found[name])
        statuses = {v: x["status"] for v, x in found.items()}
        self.assertFalse({v: st for v, st in statuses.items()
                          if st not in ("PASS", "SKIP", "CAUGHT")}, statuses)
        self.assertIn("CAUGHT", statuses.values())  # the known-bad control still is

    def test_4_run_and_its_floor(self):
        out = Path(self.tmp.name, "run.json")
        self.cli("run", "--variants", f"{LAYOUT}+{COUNTER}+always,floor/{COUNTER}",
                 "--clocks", "monotonic", "--repetitions", "1", "--min-time", "0.01",
                 "--out", str(out))
        runs = {b["run_name"] for b in json.loads(out.read_text())["benchmarks"]}
        self.assertTrue(any(n.startswith(f"{LAYOUT}+{COUNTER}+always/monotonic/hot/")
                            for n in runs), runs)
        self.assertTrue(any(n.startswith(f"floor/{COUNTER}/none/hot/") for n in runs), runs)

    def test_5_compare(self):
        # plumbing: a row for the new variant, never a verdict from live timing
        r = self.cli("compare", "generic_5_3+lfence_rdtsc+always", f"{LAYOUT}+{COUNTER}+always",
                     "--clocks", "monotonic", "--rounds", "6", "--format", "json", check=False)
        self.assertIn(r.returncode, fixtures.LIVE_COMPARE_EXITS, r.stderr[-3000:])
        rows = json.loads(r.stdout)["rows"]
        self.assertTrue(any(row.get("variant") == f"{LAYOUT}+{COUNTER}+always" for row in rows),
                        rows)

    def test_6_layout_diff(self):
        r = self.cli("layout", "--diff", "generic_5_3", LAYOUT, "--format", "json")
        diff = json.loads(r.stdout)
        self.assertEqual([v["layout"] for v in diff["variants"]], ["generic_5_3", LAYOUT])
        # a copy: the same fields at the same offsets, the same lines per clock
        a, b = diff["variants"]
        self.assertEqual(a["fields"], b["fields"])

    def test_7_sim(self):
        r = self.cli("sim", f"{LAYOUT}+{COUNTER}+always", "--clocks", "monotonic",
                     "--modes", "hot", "--format", "json")
        rows = json.loads(r.stdout)
        rows = rows["rows"] if isinstance(rows, dict) else rows
        self.assertTrue(any(row["variant"].startswith(LAYOUT) for row in rows), rows)

    def test_8_gate_update_baseline_records_the_new_layout(self):
        baseline = Path(self.tmp.name, "baseline.json")
        shutil.copy(self.root / "results" / "baselines" / "ci.json", baseline)
        self.cli("gate", "--update-baseline", "--baseline", str(baseline), "--only", "sim",
                 "--clocks", "monotonic", "--modes", "hot")
        rows = json.loads(baseline.read_text())["sim"]["rows"]
        # the baseline's selection names layouts with rdtscp: a simulated count,
        # the same on any CPU (sim runs the fake twin: valgrind never meets
        # the RDTSCP)
        self.assertIn(f"{LAYOUT}+rdtscp+always", {r["variant"] for r in rows})

    def test_a_the_new_clock_is_measured_and_traced(self):
        # the clock's one row, moved: the same lines (but for the
        # continuations), the clock now the suite's last
        path = self.root / "common" / "clocks.h"
        text = path.read_text()
        self.clock = clock_to_move(text)
        if self.clock is None:
            self.skipTest("common/clocks.h has no OTHER_CLOCKS row left to move into the suite")
        path.write_text(move_clock_row(text, self.clock))

        def rows(path):
            text = path.read_text()
            return (sorted(line.rstrip(" \\") for line in text.splitlines()),
                    clocks.parse(text))
        (before, old), (after, new) = (rows(build.ROOT / "common" / "clocks.h"), rows(path))
        self.assertEqual(before, after)
        self.assertEqual(new["SUITE_CLOCKS"],
                         old["SUITE_CLOCKS"] + (clocks.BY_NAME[self.clock],))
        self.assertNotIn(self.clock, [c.name for c in new["OTHER_CLOCKS"]])
        # verify: every check takes the clock from the table (its class, its
        # edges under the fake counter, the system's answer or refusal)
        names = [f"{LAYOUT}+{COUNTER}+always", f"{LAYOUT}+fake+always"]
        r = self.cli("verify", "--json", "--duration-ms", "100", *names, check=False)
        found = {x["variant"]: x["status"] for x in map(json.loads, r.stdout.splitlines())
                 if "variant" in x}
        self.assertEqual(found, dict.fromkeys(names, "PASS"), r.stdout[-3000:])
        # run: the variant reads it through its syscall path (no layout serves
        # it); the system's vDSO either answers it or is skipped, saying why
        out = Path(self.tmp.name, "clock.json")
        self.cli("run", "--variants", f"{LAYOUT}+{COUNTER}+always,sys/vdso",
                 "--clocks", self.clock,
                 "--repetitions", "1", "--min-time", "0.01", "--out", str(out))
        results = json.loads(out.read_text())
        runs = {b["run_name"] for b in results["benchmarks"]}
        self.assertTrue(any(n.startswith(f"{LAYOUT}+{COUNTER}+always/{self.clock}/hot/")
                            for n in runs), runs)
        refused = f"sys/vdso/{self.clock}: the system refuses the clock"
        self.assertTrue(any(n.startswith(f"sys/vdso/{self.clock}/") for n in runs)
                        or refused in out.read_text(), runs)
        r = self.cli("sim", f"{LAYOUT}+{COUNTER}+always", "--clocks", self.clock, "--modes", "hot",
                     "--format", "json")
        rows = json.loads(r.stdout)
        rows = rows["rows"] if isinstance(rows, dict) else rows
        self.assertIn(self.clock, {row["clock"] for row in rows})
        r = self.cli("layout", LAYOUT, "--format", "json")
        self.assertIn((self.clock, "syscall"), set(paths(json.loads(r.stdout))))

    @long_tier("the copy's C suites and table-reading modules, about 7 min on 2 cores")
    def test_9_the_suite_that_reads_the_table(self):
        r = self.cli("test", "--quick", "--table-readers", check=False)
        last = r.stdout.strip().splitlines()[-1]
        self.assertRegex(last, r"^\d+ passed, 0 failed$", r.stdout[-4000:])
        self.assertEqual(r.returncode, 0)


if __name__ == "__main__":
    unittest.main()
