import errno
import io
import json
import platform
import subprocess
import unittest

from vdsobench_cli.cli import build, labels
from vdsobench_cli.commands import counters
from vdsobench_cli.tests import support
from vdsobench_cli.cli.errors import Failure, UsageError

NO_PMU = ("perf_event_open: No such file or directory (ENOENT): no hardware PMU visible, "
          "as in a VM without a virtual PMU")

# As vdsobench_counters --json prints it on a VM without a virtual PMU.
DATA = {
    "libpfm": "4.13.0",
    "pmus": ["perf", "perf_raw", "amd64_fam19h_zen3"],
    "paranoid": 2,
    "mode": "user+kernel",
    "mode_reason": "euid 0 with CAP_PERFMON counts the kernel whatever "
                   "perf_event_paranoid (2) says",
    "events": [
        {"name": "cycles", "fstr": "perf::PERF_COUNT_HW_CPU_CYCLES", "valid": True,
         "opens": False, "reason": NO_PMU},
        {"name": "L1-dcache-load-misses", "fstr": "perf::PERF_COUNT_HW_CACHE_L1D:READ:MISS",
         "valid": True, "opens": False, "reason": NO_PMU},
        {"name": "task-clock", "fstr": "perf::PERF_COUNT_SW_TASK_CLOCK", "valid": True,
         "opens": True, "reason": ""},
        {"name": "amd64_fam19h_zen3::L2_PREFETCH_HIT_L3", "fstr": "", "valid": False,
         "opens": False, "reason": "libpfm cannot encode 'amd64_fam19h_zen3::L2_PREFETCH_HIT_L3'"
                                   ": invalid or missing unit mask"},
    ],
}
TEXT = json.dumps(DATA)


class ParseTest(unittest.TestCase):
    def test_object(self):
        self.assertEqual(counters.parse(TEXT), DATA)

    def test_not_json(self):
        with self.assertRaisesRegex(Failure, "not JSON"):
            counters.parse("libpfm 4.13.0; PMUs: perf")

    def test_wrong_shape(self):
        for text in ("[]", "{}", '{"events": [1]}', '{"events": [{"fstr": "x"}]}'):
            with self.assertRaisesRegex(Failure, "events"):
                counters.parse(text)


class HeaderTest(unittest.TestCase):
    def test_lines(self):
        self.assertEqual(counters.header(DATA), [
            "libpfm 4.13.0; PMUs: perf, perf_raw, amd64_fam19h_zen3",
            "perf_event_paranoid 2; mode user+kernel: euid 0 with CAP_PERFMON counts the "
            "kernel whatever perf_event_paranoid (2) says"])

    def test_unknown_paranoid_and_no_pmus(self):
        lines = counters.header({"libpfm": "4.13.0", "pmus": [], "paranoid": None,
                                 "mode": "user", "mode_reason": "r", "events": []})
        self.assertEqual(lines[0], "libpfm 4.13.0; PMUs: none detected")
        self.assertTrue(lines[1].startswith("perf_event_paranoid unknown; mode user: r"))


class TableTest(unittest.TestCase):
    def setUp(self):
        self.lines = counters.table(DATA["events"])

    def test_heading_rows_and_total(self):
        self.assertEqual(len(self.lines), 1 + len(DATA["events"]) + 1)
        self.assertEqual(self.lines[0].split(), ["EVENT", "LIBPFM", "NAME", "OPENS", "REASON"])
        self.assertEqual(self.lines[-1], "4 events, 1 open here")

    def test_row_content(self):
        cycles = self.lines[1].split(None, 3)
        self.assertEqual(cycles, ["cycles", "perf::PERF_COUNT_HW_CPU_CYCLES", "no", NO_PMU])
        self.assertEqual(self.lines[3].split(), ["task-clock", "perf::PERF_COUNT_SW_TASK_CLOCK",
                                                 "yes"])

    def test_invalid_event_has_no_libpfm_name(self):
        row = self.lines[4].split(None, 3)
        self.assertEqual(row[1:3], ["-", "no"])
        self.assertIn("invalid or missing unit mask", row[3])

    def test_columns_aligned(self):
        opens, reason = self.lines[0].index("OPENS"), self.lines[0].index("REASON")
        for line in self.lines[1:-1]:
            self.assertIn(line[opens - 2:opens + 3], ("  yes", "  no "), line)
            if len(line) > reason:  # an event that opens has no reason
                self.assertRegex(line[reason - 2:reason + 1], r"^  \S", line)

    def test_empty(self):
        self.assertEqual(counters.table([])[-1], "0 events, 0 open here")


class ReportTest(unittest.TestCase):
    def report(self, rc, stdout="", stderr="", as_json=False):
        out = io.StringIO()
        status = counters.report(rc, stdout, stderr, as_json, out)
        return status, out.getvalue().splitlines()

    def test_table(self):
        status, out = self.report(0, TEXT)
        self.assertEqual(status, 0)
        self.assertTrue(out[0].startswith("libpfm 4.13.0"))
        self.assertEqual(out[-1], "4 events, 1 open here")

    def test_json_passes_through(self):
        status, out = self.report(0, TEXT + "\n", as_json=True)
        self.assertEqual(status, 0)
        self.assertEqual(out, [TEXT])

    def test_bad_event_is_usage_error_with_one_line(self):
        line = ("vdsobench_counters: libpfm cannot encode 'cylces': event not found; "
                "--all lists the events libpfm knows here\n")
        with self.assertRaises(UsageError) as cm:
            self.report(2, stderr=line)
        self.assertEqual(str(cm.exception), "libpfm cannot encode 'cylces': event not found; "
                                            "--all lists the events libpfm knows here")

    def test_other_exit_is_failure(self):
        with self.assertRaisesRegex(Failure, r"exit 1\): libpfm: pfm_initialize"):
            self.report(1, stderr="vdsobench_counters: libpfm: pfm_initialize: not supported\n")


class SeccompTest(unittest.TestCase):
    """`counters` under a seccomp filter that refuses perf_event_open (Docker's
    and systemd's do, with EPERM or ENOSYS): each event's reason names the
    filter, never perf_event_paranoid, whatever the errno."""

    @classmethod
    def setUpClass(cls):
        if platform.machine() not in ("x86_64", "aarch64"):
            raise unittest.SkipTest(f"no seccomp filter written for {platform.machine()}")
        # built (and Bazel's server started) outside the filter, which its
        # children, the tests it runs, would otherwise inherit
        build.build([labels.COUNTERS])

    def events(self, err):
        argv = [str(build.ROOT / "scripts" / "vdsobench"), "counters", "--json", "task-clock",
                "cycles"]
        r = subprocess.run(support.seccomp_cmd(err) + argv, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)["events"]

    def test_the_filter_is_named(self):
        for err in (errno.EPERM, errno.EACCES, errno.ENOSYS):
            with self.subTest(errno.errorcode[err]):
                for e in self.events(err):
                    self.assertFalse(e["opens"], e)
                    self.assertIn(f"({errno.errorcode[err]})", e["reason"])
                    self.assertIn("seccomp filter", e["reason"])
                    self.assertIn("Seccomp: 2", e["reason"])
                    self.assertNotIn("perf_event_paranoid", e["reason"])

    def test_without_a_filter_none_is_named(self):
        r = subprocess.run([str(build.ROOT / "scripts" / "vdsobench"), "counters", "--json",
                            "task-clock", "cycles"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        for e in json.loads(r.stdout)["events"]:
            self.assertNotIn("seccomp", e["reason"])


if __name__ == "__main__":
    unittest.main()
