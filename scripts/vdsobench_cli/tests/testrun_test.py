import io
import os
import re
import subprocess
import tempfile
import unittest
from unittest import mock
from pathlib import Path

from vdsobench_cli.cli import build
from vdsobench_cli.commands import testrun
from vdsobench_cli.tests.support import cli

BAZEL_OUTPUT = """\
INFO: Build completed, 1 test FAILED, 4 total actions
//impls:layout_test                                             PASSED in 0.3s
//impls:seqlock_test                                   (cached) PASSED in 1.2s
//verify:torture_test                                           FAILED in 2.0s
  /root/.cache/bazel/x/testlogs/verify/torture_test/test.log
//verify:crash_test                                    FAILED TO BUILD
//:top_test                                                     NO STATUS

Executed 2 out of 4 tests: 1 test passes and 1 fails locally.
"""

TAP_LOG = """\
exec ${PAGER:-/usr/bin/less} "$0" || exit 1
Executing tests from //impls:layout_test
-----------------------------------------------------------------------------
TAP version 13
1..4
ok 1 - offsets
ok 2 - sizes
not ok 3 - alignment
# okay, this is a comment
ok 4 - page aligned # SKIP no hugepages
"""


class TapTest(unittest.TestCase):
    def test_count(self):
        self.assertEqual(testrun.count_tap(TAP_LOG), (3, 1))
        self.assertEqual(testrun.count_tap("no tap here\n  ok indented\n"), (0, 0))

    def test_target_counts(self):
        self.assertEqual(testrun.target_counts(True, (5, 0)), (5, 0))
        self.assertEqual(testrun.target_counts(True, (0, 0)), (1, 0))
        self.assertEqual(testrun.target_counts(False, (3, 2)), (3, 2))
        self.assertEqual(testrun.target_counts(False, (3, 0)), (3, 1))
        self.assertEqual(testrun.target_counts(False, (0, 0)), (0, 1))


class SummaryTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(testrun.parse_summary(BAZEL_OUTPUT), [
            ("//impls:layout_test", "PASSED"), ("//impls:seqlock_test", "PASSED"),
            ("//verify:torture_test", "FAILED"), ("//verify:crash_test", "FAILED TO BUILD"),
            ("//:top_test", "NO STATUS")])

    def test_a_target_not_for_this_platform_is_skipped_not_failed(self):
        output = BAZEL_OUTPUT + "//impls/image:fuzz_corpus_test     SKIPPED\n"
        with mock.patch.object(build, "bazel", return_value=(3, output)), \
                mock.patch.object(testrun, "log_text", return_value=""):
            results = testrun.bazel_tests(False, False, io.StringIO())
        skipped = [r for r in results if r[0].startswith("//impls/image:fuzz_corpus_test")]
        self.assertEqual(skipped, [("//impls/image:fuzz_corpus_test (SKIPPED: not for this "
                                    "platform)", 0, 0, [])])
        failed = {r[0] for r in results if r[2]}
        self.assertEqual(failed, {"//verify:torture_test", "//verify:crash_test (FAILED TO "
                                  "BUILD)", "//:top_test (NO STATUS)"})

    def test_logs(self):
        with tempfile.TemporaryDirectory() as d:
            log = Path(d, "impls", "layout_test", "test.log")
            log.parent.mkdir(parents=True)
            log.write_text(TAP_LOG)
            for shard in (1, 2):
                p = Path(d, "top_test", f"shard_{shard}_of_2", "test.log")
                p.parent.mkdir(parents=True)
                p.write_text(f"ok {shard}\n")
            self.assertEqual(testrun.log_text(d, "//impls:layout_test"), TAP_LOG)
            self.assertEqual(testrun.count_tap(testrun.log_text(d, "//:top_test")), (2, 0))
            self.assertEqual(testrun.log_text(d, "//none:gone"), "")


class FailureDetailsTest(unittest.TestCase):
    def test_not_ok_lines_first(self):
        self.assertEqual(testrun.failure_details(TAP_LOG), ["not ok 3 - alignment"])

    def test_log_end_without_not_ok(self):
        self.assertEqual(testrun.failure_details("a\nb\nc\n", n=2), ["b", "c"])


class FailureReportsTest(unittest.TestCase):
    OUTPUT = ("..F.E\n" + "=" * 70 + "\nFAIL: test_a (m.C.test_a)\n" + "-" * 70 +
              "\nTraceback (most recent call last):\n" +
              "".join(f"  frame {i}\n" for i in range(50)) + "AssertionError: 1 != 2\n\n" +
              "=" * 70 + "\nERROR: test_b (m.C.test_b)\n" + "-" * 70 +
              "\nValueError: bad\n\n" + "-" * 70 + "\nRan 5 tests in 0.1s\n\n"
              "FAILED (failures=1, errors=1)\n")

    def test_each_failure_with_its_cause(self):
        a, b = testrun.failure_reports(self.OUTPUT, lines=5)
        self.assertEqual(a.splitlines()[0], "FAIL: test_a (m.C.test_a)")
        self.assertEqual(a.splitlines()[1], "  [...]")
        self.assertEqual(a.splitlines()[-1], "AssertionError: 1 != 2")
        self.assertEqual(len(a.splitlines()), 7)
        self.assertEqual(b.splitlines()[0], "ERROR: test_b (m.C.test_b)")
        self.assertEqual(b.splitlines()[-1], "ValueError: bad")  # not the summary after it
        self.assertEqual(testrun.failure_reports("....\nOK\n"), [])


class UnittestOutputTest(unittest.TestCase):
    def test_ok(self):
        self.assertEqual(testrun.parse_unittest("....\nRan 4 tests in 0.1s\n\nOK\n", 0), (4, 0))

    def test_failures(self):
        out = "Ran 10 tests in 0.2s\n\nFAILED (failures=2, errors=1, skipped=1)\n"
        self.assertEqual(testrun.parse_unittest(out, 1), (7, 3))

    def test_a_nested_suites_summary_is_not_the_outer_one(self):
        # what CI printed when the new-variant test's inner suite failed:
        # the outer summary (486 tests, 1 failure) is the one that counts
        out = ("Ran 136 tests in 11.5s\n\nFAILED (failures=1)\n...\n"
               "Ran 486 tests in 1162.7s\n\nFAILED (failures=1, skipped=2)\n")
        self.assertEqual(testrun.parse_unittest(out, 1), (485, 1))
        out = "Ran 136 tests in 11.5s\n\nFAILED (failures=3)\n.\nRan 486 tests in 9s\n\nOK\n"
        self.assertEqual(testrun.parse_unittest(out, 0), (486, 0))

    def test_the_failed_tests_are_named(self):
        out = ("F.E\n=====\nFAIL: test_a (pkg.a_test.ATest.test_a)\n---\nTraceback ...\n"
               "=====\nERROR: test_b (pkg.b_test.BTest.test_b)\n---\n"
               "=====\nFAIL: test_a (pkg.a_test.ATest.test_a)\n"
               "Ran 3 tests in 1s\n\nFAILED (failures=1, errors=1)\n")
        self.assertEqual(testrun.failed_unittests(out),
                         ["test_a (pkg.a_test.ATest.test_a)", "test_b (pkg.b_test.BTest.test_b)"])
        self.assertEqual(testrun.failed_unittests("Ran 1 test\n\nOK\n"), [])

    def test_crash_without_counts(self):
        self.assertEqual(testrun.parse_unittest("Segmentation fault\n", -11), (0, 1))


if __name__ == "__main__":
    unittest.main()


class DiskCachePruneTest(unittest.TestCase):
    """The shared disk cache loses what no build wrote for DISK_CACHE_DAYS."""

    def test_old_entries_go_new_ones_stay(self):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(build, "DISK_CACHE", Path(tmp)):
            now = 1_800_000_000
            (Path(tmp) / "ac").mkdir()
            (Path(tmp) / "cas").mkdir()
            old, new = Path(tmp, "cas", "old"), Path(tmp, "ac", "new")
            for path, age_days in ((old, build.DISK_CACHE_DAYS + 1),
                                   (new, build.DISK_CACHE_DAYS - 1)):
                path.write_text("blob")
                os.utime(path, (now - age_days * 86400,) * 2)
            self.assertEqual(build.prune_disk_cache(now=now), 1)
            self.assertFalse(old.exists())
            self.assertTrue(new.exists())

    def test_no_cache_yet(self):
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(build, "DISK_CACHE", Path(tmp, "absent")):
            self.assertEqual(build.prune_disk_cache(), 0)

    def test_bazelrc_names_the_same_cache(self):
        rc = (build.ROOT / ".bazelrc").read_text()
        line = next(line for line in rc.splitlines() if line.startswith("build --disk_cache="))
        path = line.split("=", 1)[1]
        self.assertEqual(Path(path.replace("~", str(Path.home()), 1)), build.DISK_CACHE)


def made_package(tmp, name, modules):
    """A made-up test package tmp/name: {module file: its text}; its folder."""
    pkg = Path(tmp, name)
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for file, text in modules.items():
        (pkg / file).write_text(text)
    return pkg


class QuickTest(unittest.TestCase):
    def test_quick_leaves_out_the_slow_modules_only(self):
        full = testrun.quick_modules("scripts", "scripts", skip=())
        quick = testrun.quick_modules("scripts", "scripts")
        self.assertIn("vdsobench_cli.tests.new_variant_test", full)
        self.assertIn("vdsobench_cli.tests.testrun_test", quick)
        self.assertEqual(sorted(set(full) - set(quick)),
                         sorted(f"vdsobench_cli.tests.{m[:-3]}" for m in testrun.SLOW))
        for m in testrun.SLOW:  # each names a module that exists
            self.assertTrue((testrun.build.ROOT / "scripts/vdsobench_cli/tests" / m).is_file(), m)
        self.assertIn("reports.tables_test", testrun.quick_modules("reports", "."))

    def test_commands(self):
        self.assertEqual(testrun.unittest_command("reports", ".", False)[3:],
                         ["discover", "-s", "reports", "-t", ".", "-p", "*_test.py"])
        quick = testrun.unittest_command("scripts", "scripts", True)
        self.assertEqual(quick[:3],
                         ["/usr/bin/python3", "-m", "vdsobench_cli.cli.timed_unittest"])
        self.assertNotIn("discover", quick)
        self.assertNotIn("vdsobench_cli.tests.new_variant_test", quick)

    def test_the_plain_pass_runs_the_new_variant_copy_beside_the_rest(self):
        (beside, apart), (rest,) = testrun.unittest_lanes("scripts", "scripts", False)
        self.assertEqual(beside[1:], (True, False))  # its own CPU lock folder, from here
        self.assertEqual(beside[0][3:], ["vdsobench_cli.tests.new_variant_test"])
        self.assertEqual(apart[1:], (True, True))  # then, in the same lane, the copy's
        self.assertEqual(apart[0][3:], ["vdsobench_cli.tests.kernel_import_folder_test",
                                        "vdsobench_cli.tests.kernel_import_live_attack_test",
                                        "vdsobench_cli.tests.kernel_import_test",
                                        "vdsobench_cli.tests.kernel_import_today_test"])
        self.assertEqual(rest[1:], (False, False))
        full = testrun.quick_modules("scripts", "scripts", skip=())
        self.assertEqual(sorted(beside[0][3:] + apart[0][3:] + rest[0][3:]),
                         sorted(full))  # each module once
        self.assertEqual(testrun.unittest_lanes("scripts", "scripts", True),
                         [[(testrun.unittest_command("scripts", "scripts", True), False, False)]])
        self.assertEqual(testrun.unittest_lanes("reports", ".", False),
                         [[(testrun.unittest_command("reports", ".", False), False, False)]])
        # no git work tree to copy: the apart modules run with the rest
        (beside2,), (rest2,) = testrun.unittest_lanes("scripts", "scripts", False,
                                                       copyable=False)
        self.assertEqual(beside2, beside)
        self.assertEqual(sorted(rest2[0][3:]), sorted(apart[0][3:] + rest[0][3:]))

    def test_the_table_readers_are_the_modules_that_read_the_whole_table(self):
        with tempfile.TemporaryDirectory() as tmp:
            made_package(tmp, "t", {
                "lists_test.py": 'ARGV = ["list", "--json"]\n',
                "loads_test.py": "rows = variants_mod.load()\n",
                "pattern_test.py": "ARGV = ['verify', '*+fake+always']\n",
                "defaults_test.py": "names = arch.default_variants()\n",
                "named_test.py": 'ARGV = ["verify", "x86_gtod+fake+always"]\n'})
            with mock.patch.object(testrun.build, "ROOT", Path(tmp)):
                self.assertEqual(testrun.quick_modules("t", ".", reading=testrun.TABLE_READS),
                                 ["t.defaults_test", "t.lists_test", "t.loads_test",
                                  "t.pattern_test"])
                self.assertEqual(testrun.unittest_lanes("t", ".", True, table=True),
                                 [[([*testrun.UNITTEST, "t.defaults_test", "t.lists_test",
                                     "t.loads_test", "t.pattern_test"], False, False)]])
        # this project's: the table's own tests among them, a module naming its variants not
        mine = testrun.quick_modules("scripts", "scripts", reading=testrun.TABLE_READS)
        self.assertIn("vdsobench_cli.tests.variants_test", mine)
        self.assertIn("vdsobench_cli.tests.gate_test", mine)
        self.assertNotIn("vdsobench_cli.tests.verify_test", mine)

    def test_two_processes_counted_as_one_pass(self):
        # made-up test folders run as the plain pass runs them: a failure in
        # either lane is counted and named, every step's tests counted, and a
        # step from the copy runs there (a git work tree's files, copied)
        with tempfile.TemporaryDirectory() as tmp:
            made_package(tmp, "two", {
                "a_test.py": "import os, unittest\n"
                             "class A(unittest.TestCase):\n"
                             "    def test_locks(self):\n"
                             "        self.assertTrue(os.path.isdir("
                             "os.environ['VDSOBENCH_LOCK_DIR']))\n",
                "b_test.py": "import unittest\n"
                             "class B(unittest.TestCase):\n"
                             "    def test_ok(self): pass\n"
                             "    def test_bad(self): self.fail('b')\n",
                "c_test.py": "import os, unittest\n"
                             "class C(unittest.TestCase):\n"
                             "    def test_from_the_copy(self):\n"
                             "        here = os.path.dirname(os.path.dirname(__file__))\n"
                             "        self.assertEqual(os.getcwd(), here)\n"
                             "        self.assertNotEqual(here, os.environ['MADE'])\n"})
            subprocess.run(["git", "init", "-q", tmp], check=True)
            lanes = [[([*testrun.UNITTEST, "two.a_test"], True, False),
                      ([*testrun.UNITTEST, "two.c_test"], True, True)],
                     [([*testrun.UNITTEST, "two.b_test"], False, False)]]
            out = io.StringIO()
            scripts = str(testrun.build.ROOT / "scripts")
            with mock.patch.dict(os.environ, PYTHONPATH=scripts, MADE=tmp), \
                    mock.patch.object(testrun, "PY_TEST_DIRS", (("two", "."),)), \
                    mock.patch.object(testrun, "unittest_lanes",
                                      lambda d, top, quick, copyable, table: lanes), \
                    mock.patch.object(testrun.build, "ROOT", Path(tmp)):
                (label, good, bad, failed), = testrun.python_tests(out)
        self.assertEqual((label, good, bad), ("python unittest (two)", 3, 1), out.getvalue())
        self.assertRegex(out.getvalue(), r"the most CPU \(Bazel's server not counted\): "
                                         r"\w+_test \d+ s")
        # each lane's wall time, the slower one the pass's
        self.assertRegex(out.getvalue(), r"\(two\): the lanes took ALONGSIDE and APART's "
                                         r"\d+ s, the rest \d+ s\n")
        # every lane's tests, by module, class and name, the copy's among them
        tests = re.search(r"the slowest tests: (.*)", out.getvalue()).group(1)
        self.assertEqual(sorted(t.split()[0] for t in tests.split(", ")),
                         ["a_test.A.test_locks", "b_test.B.test_bad", "b_test.B.test_ok",
                          "c_test.C.test_from_the_copy"])
        self.assertEqual(failed, ["test_bad (two.b_test.B.test_bad)"])

    def test_module_times_are_recorded_and_named(self):
        # a real run of the timed runner on a made-up test folder: unittest's
        # own summary unchanged (parse_unittest reads it), the times written
        with tempfile.TemporaryDirectory() as tmp:
            pkg = made_package(tmp, "made", {
                "slow_test.py": "import time, unittest\n"
                                "class T(unittest.TestCase):\n"
                                "    @classmethod\n"
                                "    def setUpClass(cls):\n"
                                "        time.sleep(0.3)\n"
                                "    def test_a(self):\n"
                                "        pass\n"
                                "    def test_b(self):\n"
                                "        self.assertEqual(1, 2)\n",
                "quick_test.py": "import unittest\nclass Q(unittest.TestCase):\n"
                                 "    def test_q(self):\n        pass\n"})
            times, cpu = Path(tmp, "times.json"), Path(tmp, "cpu.json")
            each = Path(tmp, "each.json")
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(
                [tmp, str(testrun.build.ROOT / "scripts")]),
                VDSOBENCH_TEST_TIMES=str(times), VDSOBENCH_TEST_CPU=str(cpu),
                VDSOBENCH_TEST_EACH=str(each))
            r = subprocess.run([*testrun.UNITTEST, "discover", "-s", str(pkg), "-t", tmp,
                                "-p", "*_test.py"], env=env, capture_output=True, text=True)
            self.assertEqual(testrun.parse_unittest(r.stderr, r.returncode), (2, 1))
            got, used = testrun.read_times(times), testrun.read_times(cpu)
            tests = testrun.read_times(each)
        self.assertEqual(set(got), {"made.slow_test", "made.quick_test"})
        self.assertGreaterEqual(got["made.slow_test"], 0.3)  # its setUpClass counts
        # a sleep is wall time, not CPU; each module's CPU is counted, none negative
        self.assertEqual(set(used), set(got))
        self.assertLess(used["made.slow_test"], got["made.slow_test"])
        self.assertTrue(all(v >= 0 for v in used.values()), used)
        self.assertEqual(testrun.slowest(got, 1), f"slow_test {got['made.slow_test']:.0f} s")
        # each test by its id; the class's first test carries its setUpClass
        self.assertEqual(set(tests), {"made.slow_test.T.test_a", "made.slow_test.T.test_b",
                                      "made.quick_test.Q.test_q"})
        self.assertGreaterEqual(tests["made.slow_test.T.test_a"], 0.3)
        self.assertLess(tests["made.slow_test.T.test_b"], 0.3)
        self.assertAlmostEqual(sum(tests.values()), sum(got.values()), delta=0.2)
        self.assertEqual(testrun.slowest(tests, 1, parts=3),
                         f"slow_test.T.test_a {tests['made.slow_test.T.test_a']:.0f} s")

    def test_times_read_back_are_checked(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp, "t.json")
            self.assertEqual(testrun.read_times(path), {})  # never written
            path.write_text('{"a": 1.5, "b": "x", "c": true}')
            self.assertEqual(testrun.read_times(path), {"a": 1.5})
            path.write_text("[1, 2]")
            self.assertEqual(testrun.read_times(path), {})
        self.assertEqual(testrun.slowest({}), "")
        self.assertEqual(testrun.slowest({"p.a_test": 2.0, "p.b_test": 30.4, "p.c_test": 2.0}),
                         "b_test 30 s, a_test 2 s, c_test 2 s")


class LongTierTest(unittest.TestCase):
    """test --long: the tier CI's 30 minutes do not hold, one table
    (testrun.LONG) that the tests' own marks match, run only when asked."""

    def test_the_table_is_the_modules_that_mark_a_test_long(self):
        tests = testrun.build.ROOT / "scripts" / "vdsobench_cli" / "tests"
        marked = {p.name for p in tests.glob("*_test.py")
                  if re.search(r"^ *@long_tier\(", p.read_text(), re.M)}
        self.assertEqual(marked, set(testrun.LONG))
        self.assertTrue(set(testrun.LONG) <= set(testrun.SLOW))

    def run_made_up(self, long):
        """Whether a long-tier test of a made-up package ran, and its pass's
        counts, as the plain pass runs it with and without --long."""
        with tempfile.TemporaryDirectory() as tmp:
            made_package(tmp, "lt", {
                "l_test.py": "import os, unittest\n"
                             "from vdsobench_cli.tests.support import long_tier\n"
                             "class L(unittest.TestCase):\n"
                             "    @long_tier('made up')\n"
                             "    def test_long(self):\n"
                             "        open(os.environ['MARK'], 'w').close()\n"
                             "    def test_plain(self): pass\n"})
            mark = Path(tmp, "ran")
            out = io.StringIO()
            lanes = [[([*testrun.UNITTEST, "lt.l_test"], False, False)]]
            root = testrun.build.ROOT  # support.py imports reports/ from the root
            with mock.patch.dict(os.environ, PYTHONPATH=os.pathsep.join(
                    [str(root / "scripts"), str(root)]),
                                 MARK=str(mark)), \
                    mock.patch.object(testrun, "PY_TEST_DIRS", (("lt", "."),)), \
                    mock.patch.object(testrun, "unittest_lanes",
                                      lambda d, top, quick, copyable, table: lanes), \
                    mock.patch.object(testrun.build, "ROOT", Path(tmp)):
                os.environ.pop(testrun.LONG_ENV, None)
                (_, good, bad, _), = testrun.python_tests(out, long=long)
            return mark.exists(), good, bad

    def test_run_only_with_long(self):
        self.assertEqual(self.run_made_up(False), (False, 2, 0))  # the skip counts as run
        self.assertEqual(self.run_made_up(True), (True, 2, 0))

    def test_long_with_quick_or_asan_is_one_line(self):
        for other in ("--quick", "--asan"):
            with self.subTest(other):
                rc, out, err = cli("test", "--long", other)
                self.assertEqual(rc, 2)
                self.assertEqual(out, "")
                self.assertEqual(err.strip().splitlines(), [
                    f"vdsobench: error: test: --long adds to the whole Python pass; {other} "
                    "leaves it out: give one or the other"])


class FuzzStepTest(unittest.TestCase):
    """test --asan's fuzz step as one result: not run (said why) without
    clang-14, passed or failed with the fuzzer's own last line."""

    def step(self, missing, rc=0, stderr=""):
        import io
        import subprocess
        out = io.StringIO()
        done = subprocess.CompletedProcess([], rc, "", stderr)
        with mock.patch.object(testrun.packages, "missing", return_value=missing), \
                mock.patch.object(testrun.lifecycle, "run", return_value=done) as run:
            result = testrun.fuzz(out)
        return result, out.getvalue(), run

    def test_without_clang_it_says_so(self):
        result, out, run = self.step(["clang-14"])
        self.assertEqual(result, ("impls/image fuzz (not run: no clang-14)", 0, 0, []))
        self.assertIn("setup --fuzz", out)
        run.assert_not_called()

    def test_pass_and_fail(self):
        result, _, run = self.step([])
        self.assertEqual(result, ("impls/image fuzz", 1, 0, []))
        self.assertEqual(run.call_args[0][0][1:], [str(testrun.FUZZ_SECONDS)])
        result, out, _ = self.step([], 1, "fuzz.sh: the image fuzzer failed (exit 77); "
                                         "its input: /tmp/x\n")
        self.assertEqual(result[1:], (0, 1, ["fuzz.sh: the image fuzzer failed (exit 77); "
                                             "its input: /tmp/x"]))
