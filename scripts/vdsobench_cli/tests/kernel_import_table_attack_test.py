"""Attacks on the imports table (issue 18): its transactions, with the build
mocked (a failing import takes out only its own entry, whatever another did
meanwhile), and what import and the other commands print of it, which came
from files, trees and patches."""

import io
import os
import signal
import sys
import unittest
from unittest import mock

from vdsobench_cli.cli import build
from vdsobench_cli.kimport import bazel_sync, imports_table, store, txn
from vdsobench_cli.cli.errors import Failure
from vdsobench_cli.tests.support import one_line, vdsobench
from vdsobench_cli.tests.import_attacks import Workspace, entry


ESCAPES = "\x1b]0;owned\x07\x1b[2J\u202e\x85\r"


def printable_out(test, text):
    """Every line of text prints as what it is: no control character, escape or
    bidi override reaches the terminal."""
    for line in text.splitlines():
        test.assertTrue(line.isprintable(), ascii(line))


class EscapesTest(unittest.TestCase):
    """What import prints of its table, and the warnings of the other commands,
    came from files, trees and patches: escapes printed as escapes."""

    def setUp(self):
        self.ws = Workspace(self)

    def test_import_list(self):
        hostile = entry("a", kernel="6.12" + ESCAPES, summary="s" + ESCAPES,
                        patches=[f"/p/0001-{ESCAPES}.patch"])
        checked = {"good": {"a": (hostile, {"kernel": "6.12", "files": []})}, "problems": [f"import kernel:x{ESCAPES} "
                                                                 "left out: bad"]}
        with mock.patch.object(bazel_sync, "state", return_value=checked), \
                mock.patch.object(bazel_sync, "sync_env"):
            rc, out, err = vdsobench("import", "--list")
        self.assertEqual(rc, 0, err)
        printable_out(self, out)
        self.assertIn("\\x1b]0;owned", out)  # shown, not acted on
        bazel_sync._left_out[:] = [f"import kernel:x{ESCAPES} left out"]
        err = io.StringIO()
        with mock.patch.object(sys, "stderr", err):
            bazel_sync.warn("list")
        bazel_sync._left_out[:] = []
        printable_out(self, err.getvalue())

    def test_machine_warnings(self):
        from vdsobench_cli.measure import machine_warnings
        fp = {"cpus": {"online": [0], "governors": {"0": "powersave" + ESCAPES}},
              "clocksource": {"current": "hpet" + ESCAPES}, "arch": "x86_64",
              "hypervisor": {"vendor": "KVM" + ESCAPES}}
        lines = machine_warnings.format_warnings(
            machine_warnings.check(fp, True, [0], sample_s=0, root=str(self.ws.tmp))
            + [{"id": "read-back", "message": "from a results file" + ESCAPES}])
        self.assertTrue(lines)
        printable_out(self, "\n".join(lines))


class TransactionTest(unittest.TestCase):
    """The table's transactions, with the build mocked: a failing import takes
    out only its own entry, whatever another did meanwhile."""

    def setUp(self):
        self.ws = Workspace(self)
        store.writable_dir()
        bazel_sync.save({"a": entry("a")})

    def test_failing_build_puts_back_only_its_own_entry(self):
        def failing_build(targets):
            raw = store.read_table()
            self.assertEqual(raw["c"]["state"], imports_table.BUILDING)
            self.assertEqual(os.environ[bazel_sync.BUILDING_ENV], "c")
            bazel_sync.save(dict(raw, b=entry("b")))  # another import, meanwhile
            raise Failure("bazel build failed")

        with mock.patch.object(build, "build", side_effect=failing_build), \
                mock.patch.object(build, "bazel", return_value=(0, "")), \
                self.assertRaises(Failure):
            txn.commit({"c": entry("c")})
        self.assertEqual(sorted(store.read_table()), ["a", "b"])
        self.assertNotIn(bazel_sync.BUILDING_ENV, os.environ)

    def test_interrupt_puts_back_and_does_not_rebuild(self):
        from vdsobench_cli.cli import lifecycle
        with mock.patch.object(build, "build",
                               side_effect=lifecycle.Interrupted(signal.SIGINT)), \
                mock.patch.object(build, "bazel") as bazel, \
                self.assertRaises(lifecycle.Interrupted):
            txn.commit({"a": entry("a", key="1" * 64)})
        self.assertEqual(store.read_table(), {"a": entry("a")})
        bazel.assert_not_called()

    def test_an_import_that_made_no_variants_fails(self):
        """As with a relative $VDSOBENCH_IMPORTS before: Bazel saw no table."""
        with mock.patch.object(build, "build"), \
                mock.patch.object(build, "bazel", return_value=(0, "")), \
                mock.patch("vdsobench_cli.cli.variants.load", return_value=[]), \
                self.assertRaises(Failure) as e:
            txn.commit({"c": entry("c")}, lambda: txn.built_variants("c"))
        self.assertIn("made no variants", str(e.exception))
        self.assertEqual(sorted(store.read_table()), ["a"])

    def test_every_name_being_built_is_kept(self):
        """patch-review builds two imports at once: both are in BUILDING_ENV, and
        neither may be left out as an import that never finished."""
        b = imports_table.BUILDING
        bazel_sync.save({"x": entry("x", state=b), "y": entry("y", state=b),
                                   "z": entry("z", state=b)})
        problems = imports_table.check(str(self.ws.imports), None, "x,y")["problems"]
        unfinished = [p for p in problems if "did not finish" in p or "still running" in p]
        self.assertEqual(len(unfinished), 1, problems)
        self.assertIn("kernel:z", unfinished[0])

    def test_success_clears_the_building_state(self):
        with mock.patch.object(build, "build"):
            txn.commit({"c": entry("c")})
        self.assertNotIn("state", store.read_table()["c"])

    def test_the_lock_is_exclusive(self):
        import fcntl
        with store.table_lock(self.ws.imports):
            fd = os.open(self.ws.imports / imports_table.LOCK, os.O_RDONLY)
            try:
                with self.assertRaises(BlockingIOError):
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.assertTrue(imports_table.import_running(str(self.ws.imports)))
            finally:
                os.close(fd)
        self.assertFalse(imports_table.import_running(str(self.ws.imports)))

    def test_bad_entries_are_left_out_one_line_each(self):
        """The checker both the CLI and the repository rule use."""
        bad = {"key": entry("k", key="../../etc"),
               "ident": entry("i", ident='x"])\ngenrule(name = "p", cmd = "touch /x")\n#'),
               "state": entry("state", state=imports_table.BUILDING), "type": 5,
               "bad name": entry("bad name"), "gone": entry("gone")}
        bazel_sync.save(bad)
        checked = bazel_sync.state()
        self.assertEqual(checked["good"], {})
        self.assertEqual(len(checked["problems"]), len(bad))
        for line in checked["problems"]:
            self.assertEqual(len(line.splitlines()), 1)
            self.assertIn("mend it with: ", line)
        text = "\n".join(checked["problems"])
        for needle in ("kernel:key left out: its entry has a bad 'key'",
                       "its import did not finish", "kernel:'bad name'",
                       "kernel:gone left out: its tree", "--remove type"):
            self.assertIn(needle, text)

    def test_unreadable_table_is_refused_for_writing(self):
        for body in (b'{"version": 1, "imports": {"a": {"key"', b"\xff", b"[]",
                     b"[" * 100000 + b"]" * 100000):
            (self.ws.imports / imports_table.TABLE).write_bytes(body)
            with self.subTest(body[:40]):
                self.assertEqual(bazel_sync.state()["good"], {})
                rc, _, err = vdsobench("import", "--remove", "a")
                one_line(self, rc, err, "not an imports table", "mv ")
                self.assertEqual((self.ws.imports / imports_table.TABLE).read_bytes(), body)
