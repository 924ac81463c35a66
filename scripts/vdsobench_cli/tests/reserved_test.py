"""The names patch-review holds for its whole run (kimport/reserved.py and
txn.reserved): a second holder waits and says whom for, a killed
one blocks nobody, what a killed one left in the table goes when the next
begins, nothing is left under the names however the block ends, and
`import` / `import --remove` refuse a held name in one line. No Bazel, no
tree: a throwaway imports folder and its table."""

import json
import os
import signal
import subprocess
import sys
import unittest
from pathlib import Path

from vdsobench_cli.cli import build
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import bazel_sync, names, reserved, store, txn
from vdsobench_cli.recipes import patch_review
from vdsobench_cli.tests.support import ImportsDir, cli, one_line

NAMES = list(patch_review.RESERVED)
# a hang guard for a child that should have said something by now, never a timing
WAIT_S = 60
HOLDER = """
import sys, time
from vdsobench_cli.kimport import reserved
with reserved.hold(sys.argv[1], sys.argv[2].split(","), sys.argv[3],
                   lambda text: print("said:", text, flush=True)):
    print("holding", flush=True)
    if sys.argv[4] == "stay":
        time.sleep(600)
"""


def entry(name):
    """An entry as the table writes it (its tree need not exist here)."""
    return {"key": "0" * 64, "ident": names.ident(name), "arch": "x86_64",
            "arch_dir": "x86", "kernel": "6.12.1", "source": "/nowhere", "patches": [],
            "summary": "", "meta_sha256": "0" * 64, "identity": {}}


class Case(unittest.TestCase):
    def setUp(self):
        self.dir = ImportsDir()
        self.addCleanup(self.dir.close)
        self.d = Path(self.dir.tmp.name)

    def holder(self, who, stay=True):
        """A child process holding NAMES; its first line read."""
        env = dict(os.environ, PYTHONPATH=f"{build.ROOT / 'scripts'}:{build.ROOT}")
        p = subprocess.Popen([sys.executable, "-c", HOLDER, str(self.d), ",".join(NAMES),
                              who, "stay" if stay else "go"], env=env,
                             stdout=subprocess.PIPE, text=True)
        self.addCleanup(p.wait)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        self.addCleanup(p.stdout.close)
        return p

    def first_line(self, p):
        old = signal.signal(signal.SIGALRM, lambda *_: p.kill())
        signal.alarm(WAIT_S)
        try:
            return p.stdout.readline().strip()
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)

    def table(self):
        return json.loads((self.d / store.TABLE).read_text())["imports"]


class HoldTest(Case):
    def test_second_waits_and_says_whom_for(self):
        with reserved.hold(str(self.d), NAMES, "patch-review", print):
            p = self.holder("second")
            said = self.first_line(p)
            self.assertRegex(said, r"^said: waiting for patch-review \(pid \d+, since "
                                   r"\d\d:\d\d:\d\d\) to finish: one run at a time uses "
                                   "patch-review-before, ")
            self.assertIsNone(p.poll(), "the second did not wait")
        self.assertEqual(self.first_line(p), "holding")  # once the first let go
        self.assertRegex(reserved.holder(str(self.d), "patch-review-after"),
                         rf"^second \(pid {p.pid}, ")

    def test_holder_names_only_held_names(self):
        self.assertIsNone(reserved.holder(str(self.d), "patch-review-after"))  # no file yet
        with reserved.hold(str(self.d), NAMES, "patch-review", print):
            self.assertRegex(reserved.holder(str(self.d), "patch-review-after"),
                             rf"^patch-review \(pid {os.getpid()}, since ")
            self.assertIsNone(reserved.holder(str(self.d), "mine"))
        self.assertIsNone(reserved.holder(str(self.d), "patch-review-after"))

    def test_a_killed_holder_blocks_nobody(self):
        p = self.holder("killed")
        self.assertEqual(self.first_line(p), "holding")
        self.assertIsNotNone(reserved.holder(str(self.d), "patch-review-before"))
        p.kill()
        p.wait()
        said = []
        with reserved.hold(str(self.d), NAMES, "next", said.append):
            pass
        self.assertEqual(said, [])

    def test_a_lock_file_that_is_a_link_or_fifo(self):
        os.symlink("/etc/hostname", self.d / reserved.LOCK)
        with self.assertRaises(OSError):
            with reserved.hold(str(self.d), NAMES, "x", print):
                pass
        self.assertIsNone(reserved.holder(str(self.d), NAMES[0]))
        os.unlink(self.d / reserved.LOCK)
        os.mkfifo(self.d / reserved.LOCK)
        with self.assertRaises(OSError):
            with reserved.hold(str(self.d), NAMES, "x", print):
                pass


class TableTest(Case):
    def test_a_lock_that_cannot_be_opened_is_one_line(self):
        os.mkfifo(self.d / reserved.LOCK)
        with self.assertRaises(UsageError) as caught:
            with txn.reserved(NAMES, "patch-review", print):
                self.fail("held through a FIFO")
        self.assertIn(f"cannot open {reserved.LOCK} (it is no regular file)",
                      str(caught.exception))

    def test_leftovers_swept_and_nothing_left_however_it_ends(self):
        bazel_sync.save({"patch-review-before": entry("patch-review-before"),
                                   "mine": entry("mine")})
        with self.assertRaises(RuntimeError):
            with txn.reserved(NAMES, "patch-review", print):
                self.assertEqual(set(self.table()), {"mine"}, "a killed run's entry stayed")
                bazel_sync.save(dict(self.table(),
                                               **{n: entry(n) for n in NAMES}))
                raise RuntimeError("the review failed")
        self.assertEqual(set(self.table()), {"mine"})
        self.assertIsNone(reserved.holder(str(self.d), NAMES[0]))

    def test_import_refuses_a_held_name(self):
        tree = self.d / "tree"
        tree.mkdir()
        with reserved.hold(str(self.d), NAMES, "patch-review", print):
            rc, _, err = cli("import", "--remove", "patch-review-after")
            one_line(self, rc, err, "--remove patch-review-after: patch-review (pid "
                     f"{os.getpid()}", "is using that import")
            rc, _, err = cli("import", str(tree), "--name", "patch-review-before")
            one_line(self, rc, err, "--name patch-review-before: patch-review (pid")
        rc, _, err = cli("import", "--remove", "patch-review-after")
        one_line(self, rc, err, "no such import")  # free again: refused for what it is


if __name__ == "__main__":
    unittest.main()
