"""What the tests that run a 32-bit build here share (i386 under
qemu-i386 or natively, arm64's compat vDSO under qemu-arm: arch_i386_test,
arch_arm_test, kernel_import_arm64_test)."""

from vdsobench_cli.cli import arch


def cross_run_missing(name):
    """Why the build of `name` (arm, i386: cross-built on x86-64) cannot run
    here, or None: arch.cannot_run's answer, as patch-review gives it."""
    return arch.cannot_run(name)
