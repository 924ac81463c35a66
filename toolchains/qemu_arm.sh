#!/bin/sh
# Run a program built for 32-bit arm (--config=arm) on this x86-64 machine:
# the test runner of `bazel test --config=arm` (through qemu_aarch64.sh, the
# one confined.sh calls, which hands an ELF file of e_machine 40, EM_ARM,
# here) and of `scripts/vdsobench ... --arch arm`. PROGRAM runs under
# qemu-arm-static (qemu-user-static): the programs are static, no arm loader
# is needed. qemu-arm's default CPU is ARMv8's AArch32 (-march=armv8-a code
# runs); it has no AArch32 generic timer in user mode, so CNTVCT's mrrc is
# SIGILL there (verify's counter trap answers it: verify/cntvct_trap_arm.c).
set -eu
if [ $# -eq 0 ]; then
	echo "usage: qemu_arm.sh PROGRAM [ARG...]" >&2
	exit 2
fi
qemu=$(command -v qemu-arm-static || command -v qemu-arm || true)
if [ -z "$qemu" ]; then
	echo "qemu_arm.sh: $1 is a 32-bit arm program and neither qemu-arm-static" \
		"nor qemu-arm is installed (scripts/vdsobench setup --arch arm)" >&2
	exit 127
fi
exec "$qemu" "$@"
