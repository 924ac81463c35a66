#!/bin/sh
# Run a test confined (bazel test's --run_under, .bazelrc): a C test that
# links the variant table links the imported trees' code, which never runs
# as root. Through scripts/vdsobench_cli/cli/confine_exec.py, as the CLI runs
# the programs of the build (docs/confinement.md): the sandbox user, namespaces
# of its own, only $TEST_TMPDIR writable (given to that user), Bazel's outputs
# (where the runfiles' links lead) readable. An aarch64 test runs under
# qemu-user in there (qemu_aarch64.sh runs anything else as it is).
set -eu
# its runfiles, the test's own: beside it, as in the source tree
runfiles=$(dirname "$0")/..
opts=
if [ -n "${TEST_TMPDIR:-}" ]; then
	opts="--own $TEST_TMPDIR"
fi
# Bazel's outputs, where the runfiles' links lead (a script test's own link
# too, on its way to the source tree)
real=$(cd "$runfiles" && pwd -P)
case $real in
*/bazel-out/*) opts="$opts --read ${real%%/bazel-out/*}/bazel-out" ;;
esac
# and the source tree, where a script test and the runfiles' source files
# lead: a checkout in a private folder is not otherwise shown
source=$(readlink -f "$runfiles/toolchains/qemu_aarch64.sh")
opts="$opts --read ${source%/toolchains/qemu_aarch64.sh}"
# an i386 test (--config=i386) makes i386's system calls where the kernel runs
# it natively: without i386's rules the filter answers them ENOSYS, and the
# static C library's start crashes (SIGSEGV) before the test says a word
magic=$(od -An -tx1 -N4 "$1" 2>/dev/null | tr -d ' \n' || true)
machine=$(od -An -tx1 -j18 -N2 "$1" 2>/dev/null | tr -d ' \n' || true)
if [ "$magic" = 7f454c46 ] && [ "$machine" = 0300 ]; then
	opts="$opts --abi i386"
fi
# shellcheck disable=SC2086 # $opts: options and folders, none with a space
exec /usr/bin/python3 -I -S "$runfiles/scripts/vdsobench_cli/cli/confine_exec.py" $opts \
	-- /bin/sh "$runfiles/toolchains/qemu_aarch64.sh" "$@"
