"""The 32-bit probe: its program is a well-formed i386 executable whose one
instruction sequence is the 32-bit exit with status 32 (read back with
readelf and objdump where binutils are here), and the probe's reading of
each outcome. Whether this machine runs it is the machine's: not asserted,
only that the answer is one of the two and the fingerprint records it."""

import errno
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

from vdsobench_cli.cli import abi32
from vdsobench_cli.measure import fingerprint


class ProgramTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.NamedTemporaryFile(prefix="abi32-", delete=False)
        tmp.write(abi32.PROGRAM)
        tmp.close()
        self.path = tmp.name
        self.addCleanup(lambda: __import__("os").unlink(self.path))

    @unittest.skipUnless(shutil.which("readelf"), "no readelf")
    def test_an_i386_executable_loaded_whole(self):
        out = subprocess.run(["readelf", "-h", "-l", "-W", self.path], capture_output=True,
                             text=True).stdout
        self.assertRegex(out, r"Class:\s+ELF32")
        self.assertRegex(out, r"Machine:\s+Intel 80386")
        self.assertRegex(out, r"Type:\s+EXEC")
        self.assertRegex(out, r"Entry point address:\s+0x8048054")
        self.assertRegex(out, r"LOAD\s+0x000000 0x08048000 0x08048000 0x00060 0x00060 R E")

    @unittest.skipUnless(shutil.which("objdump"), "no objdump")
    def test_the_32_bit_exit_with_status_32(self):
        out = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386",
                              "--start-address=84", self.path], capture_output=True,
                             text=True).stdout
        code = [line.split("\t")[-1].split() for line in out.splitlines() if "\t" in line]
        self.assertEqual(code, [["mov", "$0x1,%eax"], ["mov", "$0x20,%ebx"], ["int", "$0x80"]])


class ProbeTest(unittest.TestCase):
    def setUp(self):
        abi32.probe.cache_clear()
        self.addCleanup(abi32.probe.cache_clear)

    def probe(self, **outcome):
        abi32.probe.cache_clear()  # once per process: each outcome its own
        with mock.patch.object(abi32.platform, "machine", return_value="x86_64"), \
                mock.patch.object(abi32.subprocess, "run", **outcome):
            return abi32.probe()

    def test_each_outcome(self):
        self.assertEqual(self.probe(return_value=subprocess.CompletedProcess([], 32)),
                         (True, ""))
        runs, why = self.probe(side_effect=OSError(errno.ENOEXEC, "Exec format error"))
        self.assertFalse(runs)
        self.assertIn("execve: Exec format error): no IA32 emulation here", why)
        runs, why = self.probe(return_value=subprocess.CompletedProcess([], 139))
        self.assertEqual((runs, why), (False, "a 32-bit program exited 139, not 32: the "
                                              "kernel did not run it as one"))
        runs, why = self.probe(side_effect=PermissionError(errno.EACCES, "Permission denied"))
        self.assertIn("could not be started (Permission denied)", why)
        abi32.probe.cache_clear()
        with mock.patch.object(abi32.platform, "machine", return_value="aarch64"):
            self.assertEqual(abi32.probe(), (False, "not an x86-64 machine (aarch64)"))

    def test_recorded_in_the_fingerprint(self):
        facts = fingerprint.machine_facts([0], "/", None)["abi32"]
        self.assertIn(facts["runs"], (True, False))
        self.assertEqual(facts["runs"], facts["why"] == "")
        with tempfile.TemporaryDirectory() as root:
            self.assertIsNone(fingerprint.abi32_info(root))


if __name__ == "__main__":
    unittest.main()
