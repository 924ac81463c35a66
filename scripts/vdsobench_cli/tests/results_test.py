import copy
import datetime
import json
import math
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import atomic, targets
from vdsobench_cli.measure import results
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.tests.support import difference_report, gbench_load, unique_names

FIXTURE = Path(__file__).resolve().parent / "testdata" / "results_small.json"


def fixture():
    return json.loads(FIXTURE.read_text())


class TempDirTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def assert_usage_error(self, fn, *needles):
        with self.assertRaises(UsageError) as cm:
            fn()
        message = str(cm.exception)
        self.assertNotIn("\n", message)
        for needle in needles:
            self.assertIn(needle, message)
        return message


class NamesTest(unittest.TestCase):
    def test_default_path(self):
        when = datetime.datetime(2026, 11, 30, 1, 2, 3, tzinfo=datetime.timezone.utc)
        self.assertEqual(results.default_path("/repo", "tc-bench1", when, "6bcb9d4e5b2d"),
                         Path("/repo/results/runs/tc-bench1-20261130-010203-6bcb9d4e5b2d.json"))

    def test_benchmark_key(self):
        self.assertEqual(results.benchmark_key("sys/vdso/monotonic/hot/cpu0"),
                         ("sys/vdso", "monotonic", "hot", 0))
        self.assertEqual(results.benchmark_key("generic_5_3+rdtscp+always/tai/cold/cpu12"),
                         ("generic_5_3+rdtscp+always", "tai", "cold", 12))

    def test_bad_benchmark_key(self):
        for name in ("monotonic/hot/cpu0", "a/b/c/d", "a/b/c/cpu0_mean", "/b/c/cpu0",
                     "a//c/cpu0", "a/b/c/cpu"):
            with self.subTest(name=name), self.assertRaises(UsageError) as cm:
                results.benchmark_key(name)
            self.assertIn("<variant>/<clock>/<mode>/cpu<N>", str(cm.exception))


class WriteTest(TempDirTest):
    OBJ = {"context": {"x": 1}, "benchmarks": []}

    def test_creates_parent_and_file(self):
        path = self.dir / "results" / "runs" / "a.json"
        atomic.write_atomic(path, self.OBJ)
        text = path.read_text()
        self.assertTrue(text.endswith("}\n"))
        self.assertEqual(json.loads(text), self.OBJ)
        self.assertEqual(os.listdir(path.parent), ["a.json"])
        umask = os.umask(0)
        os.umask(umask)
        self.assertEqual(path.stat().st_mode & 0o777, 0o666 & ~umask)

    def test_never_overwrites_without_force(self):
        path = self.dir / "a.json"
        path.write_text("precious\n")
        self.assert_usage_error(lambda: atomic.write_atomic(path, self.OBJ),
                                f"results file exists: {path} (use --force to overwrite)")
        self.assertEqual(path.read_text(), "precious\n")
        self.assertEqual(os.listdir(self.dir), ["a.json"])

    def test_file_appearing_during_the_write_is_not_clobbered(self):
        path = self.dir / "a.json"
        real_link = os.link

        def link(src, dst):
            Path(dst).write_text("theirs\n")
            return real_link(src, dst)
        with mock.patch.object(atomic.os, "link", side_effect=link):
            self.assert_usage_error(lambda: atomic.write_atomic(path, self.OBJ), "exists")
        self.assertEqual(path.read_text(), "theirs\n")
        self.assertEqual(os.listdir(self.dir), ["a.json"])

    def test_filesystem_without_hard_links(self):
        path = self.dir / "a.json"
        with mock.patch.object(atomic.os, "link", side_effect=PermissionError(1, "no")):
            atomic.write_atomic(path, self.OBJ)
        self.assertEqual(json.loads(path.read_text()), self.OBJ)
        self.assertEqual(os.listdir(self.dir), ["a.json"])

    def test_force_overwrites(self):
        path = self.dir / "a.json"
        path.write_text("old\n")
        atomic.write_atomic(path, self.OBJ, force=True)
        self.assertEqual(json.loads(path.read_text()), self.OBJ)
        self.assertEqual(os.listdir(self.dir), ["a.json"])

    def test_path_is_a_directory(self):
        (self.dir / "d").mkdir()
        for force in (False, True):
            self.assert_usage_error(lambda: atomic.write_atomic(self.dir / "d", self.OBJ, force),
                                    str(self.dir / "d"), "is a directory")
            self.assert_usage_error(lambda: targets.check_writable(self.dir / "d", force),
                                    "is a directory")
        self.assertEqual(os.listdir(self.dir / "d"), [])

    def test_parent_is_a_file(self):
        # Fails even for root, unlike permissions.
        (self.dir / "f").write_text("")
        for path in (self.dir / "f" / "a.json", self.dir / "f" / "sub" / "a.json"):
            for fn in (lambda: atomic.write_atomic(path, self.OBJ),
                       lambda: targets.check_writable(path)):
                self.assert_usage_error(fn, f"cannot write results to {path}")
        self.assertEqual(os.listdir(self.dir), ["f"])

    @unittest.skipIf(os.geteuid() == 0, "root ignores directory permissions")
    def test_unwritable_directory(self):
        locked = self.dir / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        self.addCleanup(locked.chmod, 0o700)
        for fn in (lambda: atomic.write_atomic(locked / "a.json", self.OBJ),
                   lambda: targets.check_writable(locked / "a.json"),
                   lambda: targets.check_writable(locked / "runs" / "a.json")):
            self.assert_usage_error(fn, str(locked), "Permission denied")
        self.assertEqual(os.listdir(locked), [])

    def test_check_writable(self):
        path = self.dir / "results" / "runs" / "a.json"
        targets.check_writable(path)
        self.assertEqual(os.listdir(path.parent), [])
        path.write_text("x")
        self.assert_usage_error(lambda: targets.check_writable(path), "exists", "--force")
        targets.check_writable(path, force=True)
        self.assertEqual(sorted(os.listdir(path.parent)), ["a.json"])


class LoadTest(TempDirTest):
    def write(self, text):
        path = self.dir / "r.json"
        path.write_text(text)
        return path

    def assert_rejected(self, obj_or_text, *needles):
        text = obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text)
        path = self.write(text)
        message = self.assert_usage_error(lambda: results.load(path), *needles)
        self.assertTrue(message.startswith(f"{path}: "), message)
        return message

    def test_fixture_is_valid(self):
        obj = results.load(FIXTURE)
        self.assertEqual(obj["context"]["vdsobench"]["schema"], results.SCHEMA_ID)
        names = {b["run_name"] for b in obj["benchmarks"]}
        self.assertIn("sys/vdso/monotonic/hot/cpu0", names)
        for name in names:
            results.benchmark_key(name)

    def test_not_json(self):
        self.assert_rejected('{"context": }', "not valid JSON", "line 1")

    def test_truncated(self):
        text = FIXTURE.read_text()
        self.assert_rejected(text[:len(text) // 2], "not valid JSON (truncated?)")

    def test_empty(self):
        self.assert_rejected("\n", "empty file")

    def test_not_an_object(self):
        self.assert_rejected([1, 2], "expected a JSON object at the top, found an array")

    def test_missing_file(self):
        self.assert_usage_error(lambda: results.load(self.dir / "none.json"),
                                "none.json", "No such file")

    def test_not_utf8(self):
        path = self.dir / "r.json"
        path.write_bytes(b"\xff\xfe{}")
        self.assert_usage_error(lambda: results.load(path), "not UTF-8")

    def test_missing_top_level_keys(self):
        for key in ("context", "benchmarks"):
            obj = fixture()
            del obj[key]
            with self.subTest(key=key):
                self.assert_rejected(obj, f"top level: missing '{key}'")

    def test_wrong_type(self):
        obj = fixture()
        obj["benchmarks"][3]["name"] = 3
        self.assert_rejected(obj, "benchmarks[3].name: expected a string, found a whole number")

    def test_bad_name(self):
        obj = fixture()
        obj["benchmarks"][0]["name"] = "BM_vdso"
        self.assert_rejected(obj, 'benchmarks[0].name: "BM_vdso" is not '
                                  "<variant>/<clock>/<mode>/cpu<N>")
        obj = fixture()
        obj["benchmarks"][3]["name"] = obj["benchmarks"][3]["run_name"]
        self.assert_rejected(obj, "benchmarks[3].name", "cpu<N>_<aggregate>")

    def test_wrong_schema_version(self):
        obj = fixture()
        obj["context"]["vdsobench"]["schema"] = "vdsobench-results/0"
        self.assert_rejected(obj, 'context.vdsobench.schema: expected "vdsobench-results/1", '
                                  'found "vdsobench-results/0"')

    def test_missing_vdsobench_parts(self):
        for key in ("schema", "fingerprint", "warnings", "pinning", "counters", "selection",
                    "command"):
            obj = fixture()
            del obj["context"]["vdsobench"][key]
            with self.subTest(key=key):
                self.assert_rejected(obj, f"context.vdsobench: missing '{key}'")

    def test_counters(self):
        obj = fixture()
        obj["context"]["vdsobench"]["counters"]["available"] = "yes"
        self.assert_rejected(obj, "context.vdsobench.counters.available: expected true or false")

    def test_user_counter_must_be_a_number(self):
        obj = fixture()
        obj["benchmarks"][1]["cycles"] = "many"
        self.assert_rejected(obj, "benchmarks[1].cycles: expected a number, found a string")

    def test_bad_enum(self):
        obj = fixture()
        obj["benchmarks"][2]["time_unit"] = "fortnights"
        self.assert_rejected(obj, 'benchmarks[2].time_unit: expected one of "ns", "us"')

    def test_no_benchmarks(self):
        obj = fixture()
        obj["benchmarks"] = []
        self.assert_rejected(obj, "benchmarks:")


# ---- Google Benchmark's tools/compare.py reading our files ---------------------------------
# A re-statement of what tools/gbench/util.py (load_benchmark_results,
# sort_benchmark_results) and report.py (partition_benchmarks, get_difference_report,
# print_difference_report's aggregates-only filter, the geomean of non-aggregates) read
# from each benchmark entry. Fields compare.py requires are indexed, so a missing one fails.

def gbench_sort(data):
    benchmarks = data["benchmarks"]
    for key in (lambda b: b.get("repetition_index", -1),
                lambda b: 1 if b.get("run_type") == "aggregate" else 0,
                lambda b: b.get("per_family_instance_index", -1),
                lambda b: b.get("family_index", -1)):
        benchmarks = sorted(benchmarks, key=key)
    return dict(data, benchmarks=benchmarks)


def geomean(data):
    times = [(b["real_time"], b["cpu_time"]) for b in data["benchmarks"]
             if b.get("run_type") != "aggregate"]
    return [math.exp(sum(math.log(t[i]) for t in times) / len(times)) for i in (0, 1)]


class CompareToolTest(unittest.TestCase):
    def setUp(self):
        self.base = gbench_sort(gbench_load(FIXTURE))
        slower = copy.deepcopy(self.base)
        for b in slower["benchmarks"]:
            b["real_time"] *= 1.25
            b["cpu_time"] *= 1.25
        self.slower = slower

    def test_difference_report(self):
        report = difference_report(self.base, self.slower)
        self.assertEqual([r["name"] for r in report], unique_names(self.base))
        for r in report:
            self.assertEqual(r["time_unit"], "ns")
            for m in r["measurements"]:
                self.assertAlmostEqual(m["time"], 0.25)
                self.assertAlmostEqual(m["cpu"], 0.25)
        iterations = [r for r in report if r["run_type"] == "iteration"]
        self.assertTrue(iterations)
        for r in iterations:
            self.assertEqual(len(r["measurements"]), 3, r["name"])
            self.assertEqual(r["aggregate_name"], "")

    def test_aggregates_only_view(self):
        report = difference_report(self.base, self.slower)
        aggregates = [r for r in report if r["run_type"] == "aggregate"]
        self.assertEqual({r["aggregate_name"] for r in aggregates},
                         {"mean", "median", "stddev", "cv"})
        for r in aggregates:
            self.assertTrue(r["name"].endswith("_" + r["aggregate_name"]), r["name"])
            self.assertEqual(len(r["measurements"]), 1)

    def test_sort_puts_repetitions_before_aggregates(self):
        family = [b for b in self.base["benchmarks"] if b["family_index"] == 0]
        self.assertEqual([b.get("repetition_index") for b in family][:3], [0, 1, 2])
        self.assertEqual({b["run_type"] for b in family[3:]}, {"aggregate"})

    def test_filter_by_run_name(self):
        data = gbench_load(FIXTURE, "^sys/vdso/")
        self.assertTrue(data["benchmarks"])
        self.assertEqual({b["run_name"] for b in data["benchmarks"]},
                         {"sys/vdso/monotonic/hot/cpu0"})

    def test_geomean_of_repetitions(self):
        ratio = [s / b for s, b in zip(geomean(self.slower), geomean(self.base))]
        self.assertAlmostEqual(ratio[0], 1.25)
        self.assertAlmostEqual(ratio[1], 1.25)

    def test_schema_requires_what_compare_reads(self):
        # A file load() accepts always has every field the functions above index.
        for index, field in ((0, "name"), (0, "real_time"), (0, "cpu_time"), (0, "time_unit"),
                             (0, "iterations"), (0, "run_type"), (0, "run_name"),
                             (3, "aggregate_name")):
            obj = fixture()
            del obj["benchmarks"][index][field]
            with self.subTest(field=field), self.assertRaises(UsageError) as cm:
                results.validate(obj, "x")
            self.assertIn(f"benchmarks[{index}]: missing '{field}'", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
