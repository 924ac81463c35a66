"""verify/trap_vm.sh without a boot: a bad --arch, CPU model, --console or
--save-console file is one line and exit 2 before anything is installed,
built or downloaded; --help says the usage; and its verdict on made-up
consoles (--console): a native, trapped run passes, and a run that was not
native or not trapped fails. The boot itself (minutes of TCG) is never a step
of `test`: docs/verify.md names the runs and what they printed."""

import os
import subprocess
import tempfile
import unittest

from vdsobench_cli.cli import build
from vdsobench_cli.tests.support import one_line

SCRIPT = str(build.ROOT / "verify" / "trap_vm.sh")


def trap_vm(*argv, path=None):
    """(exit status, stdout, stderr); with path, PATH is that folder alone."""
    env = {"PATH": path} if path else None
    r = subprocess.run(["/bin/bash", SCRIPT, *argv], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, env=env, timeout=30)
    return r.returncode, r.stdout, r.stderr


class ArgumentsTest(unittest.TestCase):
    def setUp(self):
        # nothing on PATH: a check that let a value through would go on to
        # setup, bazel and apt-get, and fail otherwise than with 2
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.empty = tmp.name

    def bad(self, argv, *needles):
        rc, out, err = trap_vm(*argv, path=self.empty)
        one_line(self, rc, err, "trap_vm.sh:", *needles)
        self.assertEqual(out, "")

    def test_bad_arch_names_it_and_the_valid_ones(self):
        for value in ("arm64", "", "x86_64; reboot", "i386\nsecond line", "-" * 500):
            self.bad(["--arch", value], "--arch", "x86_64, i386")
        self.bad(["--arch=riscv64"], "'riscv64'", "x86_64, i386")

    def test_arch_without_a_value(self):
        self.bad(["--arch"], "--arch needs a value: x86_64 or i386")

    def test_bad_cpu_names_it(self):
        for value in ("", "max -rdtscp", "max;id", "$(id)", "max\n-rdtscp"):
            self.bad([value], "CPU '", "not a qemu CPU model")
            self.bad(["--arch", "i386", value], "not a qemu CPU model")

    def test_one_cpu_model_and_known_options_only(self):
        self.bad(["max", "max,-rdtscp"], "one CPU model", "usage:")
        self.bad(["--cpu", "max"], "unknown option '--cpu'", "usage:")

    def test_help(self):
        rc, out, err = trap_vm("--help")
        self.assertEqual((rc, err), (0, ""))
        self.assertTrue(out.startswith("usage: verify/trap_vm.sh [--arch x86_64|i386] "
                                       "[--console FILE | --save-console FILE] [CPU]\n"),
                        out)
        self.assertIn("IA32 emulation", out)

    def test_bad_console_file(self):
        self.bad(["--console"], "--console needs a file")
        for value in (os.path.join(self.empty, "none"), self.empty, "x\ny"):
            self.bad(["--console", value], "--console '", "not a readable file")

    def test_bad_save_console(self):
        self.bad(["--save-console"], "--save-console needs a file")
        for value in (os.path.join(self.empty, "no", "such"), self.empty):
            self.bad(["--save-console", value], "--save-console '",
                     "not a file that can be written")
        self.bad(["--console", __file__, "--save-console", os.path.join(self.empty, "c")],
                 "not both")

    def test_save_console_never_writes_over_or_through(self):
        # a file, a link to one outside, a dangling link and a FIFO: each
        # refused before anything runs, and left as it was
        outside = os.path.join(self.empty, "outside")
        with open(outside, "w") as f:
            f.write("keep\n")
        taken = {"file": outside, "link": os.path.join(self.empty, "link"),
                 "dangling": os.path.join(self.empty, "dangling"),
                 "fifo": os.path.join(self.empty, "fifo")}
        os.symlink(outside, taken["link"])
        os.symlink(os.path.join(self.empty, "nowhere"), taken["dangling"])
        os.mkfifo(taken["fifo"])
        for kind, path in taken.items():
            with self.subTest(kind=kind):
                self.bad(["--save-console", path], "--save-console '", "it exists")
        with open(outside) as f:
            self.assertEqual(f.read(), "keep\n")
        self.assertFalse(os.path.exists(os.path.join(self.empty, "nowhere")))
        self.assertEqual(sorted(os.listdir(self.empty)),
                         ["dangling", "fifo", "link", "outside"])

    def test_good_arguments_get_past_the_checks(self):
        # the same empty PATH: accepted, it stops at the first tool it needs
        for argv in ([], ["--arch", "i386"], ["--arch=x86-64", "max,-rdtscp"],
                     ["max,+rdtscp,-invtsc", "--arch", "i686"],
                     ["--save-console", os.path.join(self.empty, "console.txt")]):
            rc, _, err = trap_vm(*argv, path=self.empty)
            self.assertNotIn(rc, (0, 2), err)
            self.assertFalse([line for line in err.splitlines()
                              if line.startswith("trap_vm.sh:")], err)



# a console as the VM's init writes it, cut to one line of each kind
RUN = {
    "i386": ("\x1bc\x1b[?7l=== kernel x86_64, checks_test ELF class 01\r\n",
             "# checks_test built for i386, 32-bit pointers"),
    "x86_64": ("=== kernel x86_64, checks_test ELF class 02\n",
               "# checks_test built for x86-64, 64-bit pointers"),
}
TAP = [
    "ok 1 - EDX bit 27 of leaf 0x80000001 set: RDTSCP runs",
    "ok 2 - x86_gtod+rdtsc+always exact: 168 calls: exact to the nanosecond, "
    "158 reads trapped; getres, gettimeofday, time",
    "ok 3 - x86_gtod+rdtscp+always edges: 9 edge cases: leap second; 64 reads "
    "trapped, 64 of them RDTSCPs emulated (this CPU has none)",
    "ok 4 - x86_gtod+fake+always exact: 28 calls: exact to the nanosecond",
    "not ok 5 - x86_gtod_raw_branch+rdtscp+always (known bad) caught by the "
    "concurrency checker: 376725 reads",
    "ok 6 - RDTSC answers the chosen value",
]


def console(arch, tap):
    head, abi = RUN[arch]
    return (head + "=== checks_test begins\n" + abi + "\n" + "\n".join(tap)
            + "\n1..6\n=== checks_test exit 1\n")


class ConsoleTest(unittest.TestCase):
    def judge(self, text, *argv):
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write(text)
            f.flush()
            return trap_vm("--console", f.name, *argv)

    def test_a_native_trapped_run_passes(self):
        for arch in RUN:
            rc, out, err = self.judge(console(arch, TAP), "--arch", arch)
            self.assertEqual((rc, err), (0, ""), out)
            self.assertIn(f"{RUN[arch][1][2:]}\n", out)
            self.assertIn(f"trap_vm.sh: {arch}: 4 trap cases, 3 exact and edges checks "
                          "(2 through the trap, 1 with RDTSCP emulated) under -cpu max; "
                          "1 system or known-bad lines left to TCG's clock\n", out)

    def fails(self, text, needle, *argv):
        rc, out, err = self.judge(text, *argv)
        self.assertEqual(rc, 1, out + err)
        self.assertIn(needle, err)
        self.assertNotIn("answered every read", out)

    def test_not_native_fails(self):
        # the x86-64 build, or one that did not say which it is, or no boot
        self.fails(console("x86_64", TAP), "did not run the i386 checks_test natively",
                   "--arch", "i386")
        self.fails(console("i386", TAP).replace("# checks_test built for i386, 32-bit "
                                                "pointers\n", ""),
                   "natively", "--arch", "i386")
        # the init's own word: a 64-bit ELF, or no word at all
        self.fails(console("i386", TAP).replace("ELF class 01", "ELF class 02"),
                   "natively", "--arch", "i386")
        self.fails(console("i386", TAP).split("=== kernel x86_64, checks_test ELF class 01")[1],
                   "natively", "--arch", "i386")
        self.fails("Kernel panic - not syncing: VFS: Unable to mount root fs\n",
                   "checks_test did not run in the VM", "--arch", "i386")

    def test_not_trapped_fails(self):
        bracketed = TAP[:]
        bracketed[1] = bracketed[1].replace(
            "exact to the nanosecond, 158 reads trapped",
            "bracketed by ordered counter reads (no trap: prctl(PR_SET_TSC, "
            "PR_TSC_SIGSEGV) refused: Invalid argument)")
        skipped = TAP[:2] + [
            "ok 3 - x86_gtod+rdtscp+always edges: needs the fake counter (see "
            "x86_gtod+fake+always) or the counter trap (no RDTSC fault)"] + TAP[3:]
        refused = TAP + ["ok 7 - the trap's own cases # SKIP no trap here: PR_SET_TSC "
                         "accepted, but RDTSC does not fault here"]
        failed = TAP[:1] + ["not " + TAP[1]] + TAP[2:]
        fake_only = [TAP[0], TAP[3]]
        for tap, needle in ((bracketed, "(no trap: "), (skipped, "or the counter trap"),
                            (refused, "# SKIP no trap here"), (failed, "not ok 2"),
                            (fake_only, "no check read its counter through the trap")):
            self.fails(console("i386", tap), needle, "--arch", "i386")


if __name__ == "__main__":
    unittest.main()
