#!/usr/bin/env bash
# usage: impls/image/fuzz.sh [SECONDS]
# The vDSO image's one parser and its loader (impls/image/check.c,
# alternatives.c, loader.c) under libFuzzer with ASan and UBSan for SECONDS
# (default 25) in two workers (libFuzzer's -fork=2: a 2-core CI machine's
# second core idled through one worker's 45 s), seeded with the crafted
# images (impls/image/testdata): a step of .ci/run. A crash, a sanitizer
# report or a disagreement between the check and the loader (fuzz_image.c)
# ends it with exit 1 and keeps the input that did it, named on the last
# line; exit 0 when the time ran out clean.
# Needs clang-14 and libclang-rt-14-dev, which `scripts/vdsobench setup --fuzz`
# installs (run first, here).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seconds=${1:-25}
case $seconds in
'' | *[!0-9]* | 0)
	echo "fuzz.sh: SECONDS '$seconds': not a whole number of seconds above 0" >&2
	exit 2
	;;
esac
scripts/vdsobench setup --fuzz >/dev/null || exit $?
bazel build --color=no --curses=no --noshow_progress //impls/image:image_fuzzer || exit 1
work=$(mktemp -d /tmp/vdsobench-fuzz-XXXXXX) || exit 1
mkdir -p "$work/corpus" "$work/found"
# the fuzzer writes what it grows into the first folder only: the seeds stay
"$(bazel info bazel-bin 2>/dev/null)/impls/image/image_fuzzer_bin" \
	-fork=2 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$work/found/" "$work/corpus" impls/image/testdata
status=$?
if [ "$status" -ne 0 ] || [ -n "$(ls -A "$work/found")" ]; then
	echo "fuzz.sh: the image fuzzer failed (exit $status); its input: $work/found" >&2
	exit 1
fi
rm -rf "$work"
