"""Every Bazel target the Python builds or runs, by one name each, and the
commands a bundle carries: a command, a measurement library and the bundle
name the same binary the same way, and none reads it out of another.

The targets are defined in the BUILD files named by their labels."""

BENCH = "//bench:vdsobench_bench"  # Google Benchmark harness: run, compare, gate
SIM_DRIVER = "//bench:vdsobench_sim_driver"  # sim's cachegrind driver, --list-json
LAYOUT_DRIVER = "//bench:vdsobench_sim_driver_static"  # layout's traced reads
VERIFY = "//verify:vdsobench_verify"  # the correctness checks and the variant list
COUNTERS = "//counters:vdsobench_counters"  # which counter events open here
AGREE = "//kernel_import:vdsobench_agree"  # import --agree
VVAR = "//live:vdsobench_vvar"  # the running kernel's vvar page
IMAGE_CHECK = "//impls/image:vdsobench_image_check"  # a vDSO image's ELF check

# the binaries a bundle carries
BUNDLE_BINARIES = (BENCH, VERIFY, COUNTERS, SIM_DRIVER)
# What the bundle's entry point may run: the commands that need neither
# Bazel, nor valgrind, nor numpy/scipy/matplotlib (review-node: a node's share
# of `recipe patch-review --fleet`).
BUNDLE_COMMANDS = ("list", "verify", "run", "compare", "selftest-stats", "counters",
                   "review-node")
