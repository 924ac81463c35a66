#!/bin/sh
# Run a program built for 32-bit x86 (--config=i386) on this x86-64 machine:
# the test runner of `bazel test --config=i386` (through qemu_aarch64.sh, the
# one confined.sh calls, which hands an ELF file of e_machine 3, EM_386, here)
# and of `scripts/vdsobench ... --arch i386`. PROGRAM runs natively where the
# kernel runs 32-bit programs (IA32 emulation: scripts/vdsobench_cli/cli/
# abi32.py asks it, or $VDSOBENCH_ABI32=native|qemu says, as the CLI does),
# else under qemu-i386-static. The programs are static: no i386 loader.
set -eu
if [ $# -eq 0 ]; then
	echo "usage: qemu_i386.sh PROGRAM [ARG...]" >&2
	exit 2
fi
how=${VDSOBENCH_ABI32:-}
if [ -z "$how" ]; then
	abi32=$(dirname "$0")/../scripts/vdsobench_cli/cli/abi32.py
	if /usr/bin/python3 -I -S "$abi32" 2>/dev/null; then
		how=native
	else
		how=qemu
	fi
fi
if [ "$how" = native ]; then
	exec "$@"
fi
qemu=$(command -v qemu-i386-static || command -v qemu-i386 || true)
if [ -z "$qemu" ]; then
	echo "qemu_i386.sh: $1 is an i386 program, this kernel does not run 32-bit" \
		"programs and neither qemu-i386-static nor qemu-i386 is installed" \
		"(scripts/vdsobench setup --arch i386)" >&2
	exit 127
fi
exec "$qemu" "$@"
