"""Whether this kernel runs 32-bit x86 programs: the 32-bit vDSO (vdso32)
is mapped only into them, and only a kernel with IA32 emulation runs them
(CONFIG_IA32_EMULATION, not turned off by ia32_emulation=0 or
CONFIG_IA32_EMULATION_DEFAULT_DISABLED; some guest kernels have it built
and still refuse: execve says ENOEXEC).

No compiler is asked: PROGRAM is a whole i386 ELF executable, 96 bytes,
that makes the 32-bit exit system call (int $0x80, eax 1) with status 32,
which only a 32-bit process can. probe() runs it once per process.

    PROGRAM         the executable's bytes
    probe()         (True, "") where it ran and said 32, else (False, why):
                    one phrase, for a line and the results' fingerprint
    ENV             the variable that tells toolchains/qemu_i386.sh the
                    answer (native or qemu) instead of its asking again
"""

import errno
import functools
import os
import platform
import struct
import subprocess
import tempfile

BASE = 0x08048000
EHDR, PHDR = 52, 32
# mov $1, %eax; mov $32, %ebx; int $0x80
CODE = bytes.fromhex("b801000000" "bb20000000" "cd80")
STATUS = 32
ENV = "VDSOBENCH_ABI32"


def _program():
    size = EHDR + PHDR + len(CODE)
    ident = b"\x7fELF" + bytes([1, 1, 1, 0]) + bytes(8)  # ELFCLASS32, LSB, v1, SysV
    ehdr = ident + struct.pack("<HHIIIIIHHHHHH", 2, 3, 1, BASE + EHDR + PHDR, EHDR, 0, 0,
                               EHDR, PHDR, 1, 0, 0, 0)  # ET_EXEC, EM_386
    phdr = struct.pack("<IIIIIIII", 1, 0, BASE, BASE, size, size, 5, 0x1000)  # PT_LOAD, R+X
    return ehdr + phdr + CODE


PROGRAM = _program()


@functools.lru_cache(maxsize=None)
def probe():
    if platform.machine() != "x86_64":
        return False, f"not an x86-64 machine ({platform.machine()})"
    fd, path = tempfile.mkstemp(prefix="vdsobench-abi32-")
    try:
        os.write(fd, PROGRAM)
        os.fchmod(fd, 0o700)
        os.close(fd)
        fd = None
        r = subprocess.run([path], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except OSError as e:
        if e.errno == errno.ENOEXEC:
            return False, ("the kernel does not run 32-bit programs (execve: Exec format "
                           "error): no IA32 emulation here")
        return False, f"a 32-bit program could not be started ({e.strerror})"
    except subprocess.TimeoutExpired:
        return False, "a 32-bit program did not exit within 10 s"
    finally:
        if fd is not None:
            os.close(fd)
        os.unlink(path)
    return verdict(r.returncode)


def verdict(returncode):
    if returncode == STATUS:
        return True, ""
    return False, (f"a 32-bit program exited {returncode}, not {STATUS}: the kernel did "
                   "not run it as one")


if __name__ == "__main__":
    # toolchains/qemu_i386.sh: exit 0 where i386 programs run natively
    raise SystemExit(0 if probe()[0] else 1)
