"""What the tests that run 32-bit arm code under qemu-arm share (arm64's
compat vDSO: arch_arm_test, kernel_import_arm64_test)."""

import shutil

from vdsobench_cli.cli import arch


def arm_missing():
    """Why the live verify cannot run here, or None."""
    if arch.host() != "x86_64":
        return "arm is cross-built on x86-64 hosts only"
    t = arch.Target("arm")
    if t.missing_toolchain():
        return f"no {', '.join(t.missing_toolchain())} (scripts/vdsobench setup --arch arm)"
    if not any(shutil.which(p) for p in arch.QEMU["arm"]):
        return "no qemu-arm-static (scripts/vdsobench setup --arch arm)"
    return None
