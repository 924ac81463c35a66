#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The sim driver's --list-json as the Python side reads it: one JSON line,
# the harness's vocabulary among the rest (the suite's clocks, which the
# default selection takes, first in the clock choices; every mode of `run --modes`;
# the default counter, one some variant reads).
# run: toolchains/qemu_aarch64.sh, which runs an arm64 build under qemu-user
# (bazel test --config=arm64) and a native one as it is
driver=$1 run=$2
out=$("$run" "$driver" --list-json) ||
	{ echo "not ok 1 - $driver --list-json failed"; exit 1; }
printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
text = sys.stdin.read()
d = json.loads(text)
checks = [
    ("one line", text.count("\n") == 0),
    ("the keys before the vocabulary kept, in order",
     list(d)[:5] == ["variants", "floors", "clocks", "modes", "fake_counter_page_offset"]),
    ("default_clocks: the suite clocks, first in the clock choices",
     len(d["default_clocks"]) >= 7
     and d["clocks"][:len(d["default_clocks"])] == d["default_clocks"]
     and "monotonic_raw" in d["default_clocks"]),
    ("bench_modes: every harness mode, the driver modes among them",
     set(d["modes"]) <= set(d["bench_modes"]) and "cold-l2" in d["bench_modes"]
     and len(d["bench_modes"]) == len(set(d["bench_modes"]))),
    ("default_counter: a counter some variant reads",
     d["default_counter"] in {v["counter"] for v in d["variants"]}),
]
for i, (what, ok) in enumerate(checks, 1):
    print(("ok" if ok else "not ok"), i, "-", what)
print("1..%d" % len(checks))
sys.exit(0 if all(ok for _, ok in checks) else 1)
'
