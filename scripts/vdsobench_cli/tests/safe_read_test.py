"""safe_read, the one reader of user files, on files made here: a regular file
only (a FIFO refused without blocking, a device never opened, a symbolic link
refused where it must be), the size cap before and while reading, a missing
file as the caller asks, and the same lines through inputs and fleet_slurm."""

import os
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli import inputs, safe_read
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.fleet import fleet_slurm


class ReadRegularTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="vdsobench-safe-read-")
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)
        self.file = self.dir / "f.json"
        self.file.write_bytes(b"0123456789")

    def refused(self, fn, *needles):
        with self.assertRaises(UsageError) as cm:
            fn()
        line = str(cm.exception)
        self.assertEqual(len(line.splitlines()), 1, line)
        for needle in needles:
            self.assertIn(needle, line)
        return line

    def test_a_regular_file_is_read(self):
        self.assertEqual(safe_read.read_regular(str(self.file), "baseline", 10), b"0123456789")
        with safe_read.open_regular(self.file, "baseline", 10) as f:
            self.assertEqual(f.read(), b"0123456789")

    def test_the_kinds_refused(self):
        fifo = self.dir / "fifo"
        os.mkfifo(fifo)  # opened, it would block: never opened
        link = self.dir / "link"
        link.symlink_to(self.file)
        cases = ((fifo, True, "is a named pipe (FIFO); a baseline must be a regular file"),
                 (self.dir, True, "is a directory; a baseline"),
                 ("/dev/null", True, "is a character device; a baseline"),
                 (link, False, "is a symbolic link; a baseline must be a regular file"))
        for path, follow, needle in cases:
            with self.subTest(path=str(path)):
                self.refused(lambda: safe_read.read_regular(path, "baseline", 99, follow=follow),
                             str(path), needle)
                self.refused(lambda: safe_read.open_regular(path, "baseline", follow=follow),
                             needle)
        # followed, a link to a regular file is read; to a FIFO, it says so
        self.assertEqual(safe_read.read_regular(link, "baseline", 99), b"0123456789")
        link.unlink()
        link.symlink_to(fifo)
        self.refused(lambda: safe_read.read_regular(link, "baseline", 99),
                     "named pipe (FIFO) (through a symbolic link)")

    def test_the_cap_before_and_while_reading(self):
        self.refused(lambda: safe_read.read_regular(self.file, "patch", 9),
                     f"{self.file}: 10 bytes is larger than the 9 bytes a patch may be")
        # /proc says 0 bytes, and holds more: the read stops one byte past the cap
        self.refused(lambda: safe_read.read_regular("/proc/self/status", "status", 8),
                     "/proc/self/status: more than the 8 bytes a status may be "
                     "(stopped reading there)")

    def test_missing(self):
        gone = self.dir / "gone"
        self.refused(lambda: safe_read.read_regular(gone, "baseline", 9),
                     f"{gone}: No such file or directory")
        self.refused(lambda: safe_read.read_regular(gone, "baseline", 9, missing="no baseline"),
                     "no baseline")
        self.assertIsNone(safe_read.read_regular(gone, "baseline", 9, missing=False))
        self.assertIsNone(safe_read.open_regular(gone, "baseline", missing=False))

    def test_inputs_and_fleet_read_through_it(self):
        fifo = self.dir / "fifo"
        os.mkfifo(fifo)
        for fn in (lambda: inputs.read_bytes(str(fifo), "baseline", 99),
                   lambda: fleet_slurm.read_left(fifo, "baseline", 99),
                   lambda: fleet_slurm.open_left(fifo, "baseline")):
            self.refused(fn, f"{fifo}: is a named pipe (FIFO); a baseline must be a regular file")
        self.assertEqual(inputs.read_bytes(str(self.file), "baseline", 10), b"0123456789")
        self.assertIsNone(fleet_slurm.read_left(self.dir / "gone", "log", 4))
        self.refused(lambda: fleet_slurm.read_left(self.file, "log", 4), "larger than the 4 bytes")
        # with tail, a long log's last bytes
        self.assertEqual(fleet_slurm.read_left(self.file, "log", 4, tail=True), b"6789")
        with fleet_slurm.open_left(self.file, "log") as f:
            self.assertEqual(f.read(3), b"012")


if __name__ == "__main__":
    unittest.main()
