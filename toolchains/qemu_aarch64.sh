#!/bin/sh
# Run a program built for aarch64 on this (x86-64) machine: the test runner
# of `bazel test --config=arm64` (--run_under) and of `scripts/vdsobench
# ... --arch arm64`. An aarch64 ELF file runs under qemu-aarch64-static
# (qemu-user-static; no binfmt_misc registration needed), an i386 one as
# qemu_i386.sh decides, a 32-bit arm one under qemu_arm.sh; anything else (a
# script, a host binary) runs as it is. The multiarch packages put the
# aarch64 loader at /lib/ld-linux-aarch64.so.1 and the libraries in
# /usr/lib/aarch64-linux-gnu, where the aarch64 loader looks; without them,
# the cross C library's /usr/aarch64-linux-gnu serves as the root.
set -eu
if [ $# -eq 0 ]; then
	echo "usage: qemu_aarch64.sh PROGRAM [ARG...]" >&2
	exit 2
fi
# ELF magic, then e_machine (bytes 18-19, little-endian): 0xb7 is EM_AARCH64
magic=$(od -An -tx1 -N4 "$1" 2>/dev/null | tr -d ' \n' || true)
machine=$(od -An -tx1 -j18 -N2 "$1" 2>/dev/null | tr -d ' \n' || true)
if [ "$magic" = 7f454c46 ] && [ "$machine" = 0300 ]; then
	# 32-bit x86 (--config=i386): natively or under qemu-i386, as it says
	exec /bin/sh "$(dirname "$0")/qemu_i386.sh" "$@"
fi
if [ "$magic" = 7f454c46 ] && [ "$machine" = 2800 ]; then
	# 32-bit arm (--config=arm): under qemu-arm
	exec /bin/sh "$(dirname "$0")/qemu_arm.sh" "$@"
fi
if [ "$magic" != 7f454c46 ] || [ "$machine" != b700 ]; then
	exec "$@"
fi
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
if [ -z "$qemu" ]; then
	echo "qemu_aarch64.sh: $1 is an aarch64 program and neither qemu-aarch64-static" \
		"nor qemu-aarch64 is installed (scripts/vdsobench setup --arch arm64)" >&2
	exit 127
fi
if [ ! -e /lib/ld-linux-aarch64.so.1 ] && [ -z "${QEMU_LD_PREFIX:-}" ]; then
	export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
fi
exec "$qemu" "$@"
