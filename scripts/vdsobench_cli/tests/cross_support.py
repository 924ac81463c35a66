"""What the tests that run a 32-bit build here share (i386 under
qemu-i386 or natively, arm64's compat vDSO under qemu-arm: arch_i386_test,
arch_arm_test, kernel_import_arm64_test)."""

import shutil

from vdsobench_cli.cli import arch


def cross_run_missing(name):
    """Why the build of `name` (arm, i386: cross-built on x86-64) cannot run
    here, or None: its cross compiler, and qemu-user where the kernel does
    not run its programs itself."""
    if arch.host() != "x86_64":
        return f"{name} is cross-built on x86-64 hosts only"
    t = arch.Target(name)
    if t.missing_toolchain():
        return f"no {', '.join(t.missing_toolchain())} (scripts/vdsobench setup --arch {name})"
    if t.emulated and not any(shutil.which(p) for p in arch.QEMU[name]):
        return f"no {arch.QEMU[name][0]} (scripts/vdsobench setup --arch {name})"
    return None
