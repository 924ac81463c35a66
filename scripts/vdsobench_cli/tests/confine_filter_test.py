"""confine_exec.py's system-call filter, per ABI: the classic BPF it installs
run here by a small interpreter of the few instructions it uses, on every
rule (its own machine's, arm64's, and 32-bit x86's beside x86-64's for an
i386 program), then for real: a 64-bit program's 32-bit system call gets
ENOSYS, confined; an i386 program runs where the kernel runs one."""

import os
import platform
import struct
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli import abi32, confine
from vdsobench_cli.cli import confine_exec as cx

ALLOW, ENOSYS, EPERM, EAFNOSUPPORT = 0x7FFF0000, 0x50026, 0x50001, 0x50061
X86_64, AARCH64, I386 = (cx.FILTERED[a][0] for a in ("x86_64", "aarch64", "i386"))
AF_UNIX, AF_INET, AF_VSOCK = 1, 2, 40
TIOCSTI, TCGETS = 0x5412, 0x5401


def run(prog, arch, nr, args=(0, 0, 0, 0, 0, 0)):
    """What the filter returns for one system call: struct seccomp_data is
    nr (offset 0), arch (4), ip (8), args (16 + 8 i, little-endian)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = prog[pc]
        pc += 1
        if code == 0x20:  # BPF_LD|BPF_W|BPF_ABS
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == 0x15:  # BPF_JMP|BPF_JEQ|BPF_K
            pc += jt if acc == k else jf
        elif code == 0x45:  # BPF_JMP|BPF_JSET|BPF_K
            pc += jt if acc & k else jf
        elif code == 0x06:  # BPF_RET|BPF_K
            return k
        else:
            raise AssertionError(f"instruction {code:#x} the interpreter does not know")


class FilterRulesTest(unittest.TestCase):
    def test_x86_64_alone(self):
        prog = cx.filter_program("x86_64")
        self.assertEqual(run(prog, X86_64, 0), ALLOW)  # read
        self.assertEqual(run(prog, X86_64, 41, (AF_INET, 1, 0, 0, 0, 0)), ALLOW)
        for fam in (AF_UNIX, AF_VSOCK):
            self.assertEqual(run(prog, X86_64, 41, (fam, 1, 0, 0, 0, 0)), EAFNOSUPPORT)
        for nr in (425, 248, 249, 250):  # io_uring_setup, add_key, request_key, keyctl
            self.assertEqual(run(prog, X86_64, nr), EPERM, nr)
        self.assertEqual(run(prog, X86_64, 16, (2, TIOCSTI, 0, 0, 0, 0)), EPERM)
        self.assertEqual(run(prog, X86_64, 16, (2, TCGETS, 0, 0, 0, 0)), ALLOW)
        self.assertEqual(run(prog, X86_64, 0x40000000 | 41), ENOSYS)  # x32
        # a 64-bit program's int $0x80, and any other ABI: nothing at all
        for arch in (I386, AARCH64):
            for nr in (0, 1, 3, 102, 359):
                self.assertEqual(run(prog, arch, nr), ENOSYS, (arch, nr))

    def test_an_i386_program_gets_the_same_rules_in_its_numbers(self):
        prog = cx.filter_program("x86_64", ("i386",))
        self.assertEqual(run(prog, I386, 3), ALLOW)  # read
        self.assertEqual(run(prog, I386, 359, (AF_INET, 1, 0, 0, 0, 0)), ALLOW)
        for fam in (AF_UNIX, AF_VSOCK):
            self.assertEqual(run(prog, I386, 359, (fam, 1, 0, 0, 0, 0)), EAFNOSUPPORT)
        # socketcall (its family in memory), io_uring, the keyring
        for nr in (102, 425, 286, 287, 288):
            self.assertEqual(run(prog, I386, nr), EPERM, nr)
        self.assertEqual(run(prog, I386, 54, (2, TIOCSTI, 0, 0, 0, 0)), EPERM)
        self.assertEqual(run(prog, I386, 54, (2, TCGETS, 0, 0, 0, 0)), ALLOW)
        # x86-64's rules stand beside them, and a third ABI still gets nothing
        self.assertEqual(run(prog, X86_64, 41, (AF_UNIX, 1, 0, 0, 0, 0)), EAFNOSUPPORT)
        self.assertEqual(run(prog, X86_64, 0x40000000), ENOSYS)
        self.assertEqual(run(prog, AARCH64, 0), ENOSYS)

    def test_arm64(self):
        prog = cx.filter_program("aarch64")
        self.assertEqual(run(prog, AARCH64, 63), ALLOW)  # read
        self.assertEqual(run(prog, AARCH64, 198, (AF_UNIX, 1, 0, 0, 0, 0)), EAFNOSUPPORT)
        self.assertEqual(run(prog, AARCH64, 219), EPERM)
        self.assertEqual(run(prog, AARCH64, 29, (2, TIOCSTI, 0, 0, 0, 0)), EPERM)
        self.assertEqual(run(prog, X86_64, 0), ENOSYS)

    def test_every_jump_fits_its_eight_bits(self):
        for prog in (cx.filter_program("x86_64", ("i386",)), cx.filter_program("aarch64")):
            self.assertLess(len(prog), 4096)
            self.assertTrue(all(jt < 256 and jf < 256 for _, jt, jf, _ in prog))


class AbiOfTest(unittest.TestCase):
    """confine.abi_of(): --abi i386 for an i386 ELF file on x86-64 alone, read
    through safe_read (a FIFO refused, not waited on)."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-compat-"))
        self.addCleanup(subprocess.run, ["rm", "-rf", str(self.tmp)])

    def test_only_an_i386_elf_file_on_x86_64(self):
        i386 = self.tmp / "i386"
        i386.write_bytes(abi32.PROGRAM)
        self.assertEqual(confine.abi_of(str(i386), "x86_64"), ["--abi", "i386"])
        self.assertEqual(confine.abi_of(str(i386), "aarch64"), [])
        (self.tmp / "link").symlink_to(i386)  # as execve follows it
        self.assertEqual(confine.abi_of(str(self.tmp / "link"), "x86_64"), ["--abi", "i386"])
        self.assertEqual(confine.abi_of("/bin/sh", "x86_64"), [])
        self.assertEqual(confine.abi_of("sh", "x86_64"), [])
        self.assertEqual(confine.abi_of(str(self.tmp / "absent"), "x86_64"), [])
        short = self.tmp / "short"
        short.write_bytes(abi32.PROGRAM[:19])
        self.assertEqual(confine.abi_of(str(short), "x86_64"), [])
        cmd = confine.command([str(i386)])
        self.assertEqual(cmd[cmd.index("--") - 2:cmd.index("--")] == ["--abi", "i386"],
                         platform.machine() == "x86_64")

    def test_a_fifo_is_not_waited_on(self):
        fifo = self.tmp / "fifo"
        os.mkfifo(fifo)
        self.assertEqual(confine.abi_of(str(fifo), "x86_64"), [])

    def test_the_trampoline_takes_no_other_abi(self):
        for bad in ("aarch64", "x32", "../i386"):
            with self.assertRaises(cx.Refused):
                cx.parse(["--abi", bad, "--", "/bin/true"])
        if platform.machine() == "x86_64":
            self.assertEqual(cx.parse(["--abi", "i386", "--", "/bin/true"])[0]["abi"], ["i386"])


def x86_64_int80_program():
    """A static x86-64 ELF executable that makes i386's exit (int $0x80, eax
    1, ebx 32), then exits with the low byte of what that returned: 32 where
    the 32-bit call ran, 218 (-ENOSYS) where the filter refused it."""
    base, ehdr, phdr = 0x400000, 64, 56
    code = bytes.fromhex("b801000000" "bb20000000" "cd80"  # int $0x80 exit(32)
                         "89c7" "b83c000000" "0f05")  # exit(eax)
    size = ehdr + phdr + len(code)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    head = ident + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, base + ehdr + phdr, ehdr, 0, 0,
                               ehdr, phdr, 1, 0, 0, 0)
    load = struct.pack("<IIQQQQQQ", 1, 5, 0, base, base, size, size, 0x1000)
    return head + load + code


@unittest.skipUnless(platform.machine() == "x86_64", "x86-64's compat ABI")
class LiveTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-compat-live-"))
        os.chmod(self.tmp, 0o755)
        self.addCleanup(subprocess.run, ["rm", "-rf", str(self.tmp)])

    def program(self, name, data):
        path = self.tmp / name
        path.write_bytes(data)
        path.chmod(0o755)
        return str(path)

    def test_a_64_bit_programs_32_bit_call_is_refused(self):
        path = self.program("int80", x86_64_int80_program())
        unconfined = subprocess.run([path]).returncode
        r = subprocess.run(confine.command([path]), capture_output=True, timeout=60)
        # where the kernel runs the 32-bit call (32), the filter refuses it;
        # a kernel without IA32 emulation refuses it first (SIGSEGV), and
        # the rules are the interpreter's to check (above)
        self.assertIn(unconfined, (32, -11))
        self.assertEqual(r.returncode, 218 if unconfined == 32 else unconfined, r.stderr)

    def test_an_i386_program_runs_confined_where_the_kernel_runs_one(self):
        runs, why = abi32.probe()
        if not runs:
            self.skipTest(why)
        path = self.program("abi32", abi32.PROGRAM)
        r = subprocess.run(confine.command([path]), capture_output=True, timeout=60)
        self.assertEqual(r.returncode, abi32.STATUS, r.stderr)


if __name__ == "__main__":
    unittest.main()
