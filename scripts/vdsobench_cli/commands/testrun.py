"""`test`: the whole suite (bazel tests + Python unit tests), one count at the end."""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vdsobench_cli.cli import arch, build, lifecycle, packages, project_copy
from vdsobench_cli.cli.errors import CliError, UsageError, one_line

# Bazel's per-target summary line, e.g. "//impls:x_test   (cached) PASSED in 0.1s".
SUMMARY = re.compile(r"^(//\S*|@\S+)\s+(?:\(cached\)\s+)?"
                     r"(PASSED|FLAKY|FAILED TO BUILD|FAILED|TIMEOUT|NO STATUS|INCOMPLETE"
                     r"|REMOTE FAILURE|SKIPPED)\b")
PASSED = ("PASSED", "FLAKY")
RAN = PASSED + ("FAILED", "TIMEOUT")
TAP = re.compile(r"^(not )?ok\b")
# (start directory, top-level directory) for unittest discovery
PY_TEST_DIRS = (("scripts", "scripts"), ("reports", "."))
# What --quick leaves out, with its cost on a 2-core machine (seconds, 2026-12):
# the modules that rebuild or re-import a world of their own. None of them reads
# the variant table's new rows, so the new-variant test's copy runs the rest.
SLOW = {
    "new_variant_test.py": 300,         # a copy of the tree, built (its suite: LONG)
    # 6.12 (kbuild) and 6.1 (the shim's) imported; 6.12's vdso32 verified
    # under qemu-i386: 75 s of it (its i386 build, a torn import, two verifies),
    # and its kbuild vdso32.so as the i386 +image variants: about 11 s more
    "kernel_import_test.py": 556,
    "recipe_test.py": 100,              # each recipe's --quick run, live
    # the attacks on import, 110 s as one module, shared as they ran apart:
    # hostile patches, trees and folders; a tree's headers against the compile;
    # the table's transactions (mocked build); 6.12 imported and attacked
    "kernel_import_attack_test.py": 10,
    "kernel_import_compile_attack_test.py": 15,
    "kernel_import_table_attack_test.py": 5,
    "kernel_import_live_attack_test.py": 240,
    # 6.12 for arm64 (and patched), verify under qemu; its compat vDSO under
    # qemu-arm: 27 s of it (the 32-bit checks of three imports, 4 variants)
    "kernel_import_arm64_test.py": 150,
    # 6.12 unpacked as a folder, kbuilt by default in a copy, a patched image
    "kernel_import_folder_test.py": 135,
    "bundle_test.py": 20,               # a bundle linked (the plain objects) and run
    "patch_review_arm64_test.py": 65,   # 6.12 and patches for arm64, verify under qemu
    "fleet_local_test.py": 100,         # a real Slurm brought up, jobs (its review: LONG)
    # 3 reviews of 6.12 at once (a field added, vdso32 broken, vdso32 wrong:
    # the last verifies both trees' i386 variants, natively or under
    # qemu-i386), a hostile .git's torn one; 150 s here with the caches warm
    # (2026-12-07); with the reorder's too (LONG), 435 s in CI's clean clone
    # (ci21, before the third). Where the kernel runs 32-bit programs the
    # field's review also verifies and times the vdso32 natively: 58 s against
    # 50 s without (warm caches, Rocket Lake KVM guest, 2 cores, 2026-12-07);
    # 190 s in a clean clone's whole suite (ci30)
    "patch_review_isolation_test.py": 400,
    # a series that does not build, one that tears, a --range and its patch
    # files (two --quick timings): 1090 s on 2 busy cores; and on 7.3 the
    # series that does not build and the range: about 360 s more
    "patch_series_review_test.py": 1450,  # the long tier's (LONG)
    # linux-source-7.3 fetched from trixie-backports, kbuilt, its 14 variants
    # built and verified, and its vdso32 image's 4 i386 +image variants under
    # qemu-i386: 222 s from the caches on 2 busy cores (2026-12-07); a new
    # machine adds the download (168 MB) and kbuild (185 s for both, 2026-12-04)
    "kernel_import_today_test.py": 300,
    # 6.1, 6.12 and 7.3 imported (kbuild cached) and their DWARF writers'
    # agree tests; the fallback forced and met, verified (the long tier's)
    "dwarf_agree_test.py": 420,
}
QUICK_SKIP = tuple(SLOW)
# The plain pass runs these beside the other modules, in a process of their
# own: the new-variant test builds and tests a copy of the project with a
# Bazel server, an imports table and (given here) CPU locks of its own, so it
# shares no state with the rest, and it keeps the second core busy while the
# rest waits on one (qemu-user, valgrind, pinned rounds, unpacking a tree).
ALONGSIDE = ("new_variant_test.py",)
# and then these, in that process's turn, from a copy of the project made when
# the pass starts (cli/project_copy.py: a Bazel server, output base and imports
# table of their own; the user's caches, which lock what they write, shared):
# on one core the rest waits on unpacking, kbuild's serial steps, qemu-user
# and valgrind, and these import trees and build variants of their own. With
# the new-variant test they take about as long as the rest (2026-12, 2 cores).
APART = ("kernel_import_test.py", "kernel_import_live_attack_test.py",
         "kernel_import_today_test.py", "kernel_import_folder_test.py")
# What a new row of impls/variants.bzl can change (test --quick --table-readers,
# which the new-variant test's copy runs): every C suite (checks_test takes
# every variant through every check) and the Python modules that read the
# table as a whole, known by these words in their source: the list command, the
# table loaded, the default variants, a pattern over every layout. The others
# name their variants, and a new row is none of them.
TABLE_READS = re.compile("|".join((r'"list"', r"variants(_mod)?\.load\(", r"default_variants\(",
                                    r"""["']\*\+""", r'"\*"')))
# test --long: what CI's 30 minutes (2 cores) do not hold, each a second path
# through code the plain pass covers; the tests skip without LONG_ENV, saying
# so. {module: what of it, and what covers that path in the plain pass}
LONG_ENV = "VDSOBENCH_LONG"
LONG = {
    "patch_series_review_test.py": "seven reviews of a series, 6.12's and 7.3's "
                                   "(patch_series_test, git_range_test, review_range_test: "
                                   "the logic)",
    "new_variant_test.py": "the copy's own suites (its rows listed, verified, run, compared, "
                           "laid out, simulated and gated stay)",
    "fleet_local_test.py": "a review on the cluster's nodes (fleet_review_test: the report; "
                           "the cluster's runs stay)",
    "patch_review_arm64_test.py": "reviews for arm64 (kernel_import_arm64_test: its imports "
                                  "and verify under qemu)",
    "kernel_import_test.py": "6.1's kbuild (6.1 imported, verified and torn: the shim's build; "
                             "6.12's and 7.3's kbuild); a tree reading the counter with an "
                             "unordered rdtsc() (RDTSCP's read: the plain pass's); the torn "
                             "tree's vdso32 image under --arch i386 (the plain pass: its "
                             "good +image variants)",
    "dwarf_agree_test.py": "the DWARF writer against 6.1's, 6.12's and 7.3's own, and its "
                           "fallback verified (dwarf_layout_test: the layout, on recorded "
                           "pahole output)",
    "kernel_import_live_attack_test.py": "a constructor and malloc replaced, refused by "
                                         "the build's object check (the plain pass: an "
                                         "ifunc's resolver; check_objects_test: each kind)",
    "patch_review_isolation_test.py": "a review of a patch that changes no code (the "
                                      "plain pass: a field added, vdso32 broken and wrong, "
                                      "a hostile .git; review_parts_test: identical code)",
    "recipe_test.py": "patch-review's own seed (patch_review_isolation_test: three reviews "
                      "of 6.12; every other recipe's --quick run stays)",
}
# architectures built for verify alone, and why their C suites are not run
NO_C_SUITES = {"i386": "//... is not built for it (verify and the harness are: no :i386 "
                       "Google Benchmark, libpfm4 or hwloc here); verify --arch i386 "
                       "checks every variant, bazel test --config=i386 //bench:all "
                       "//counters:all the harness's suites",
               "arm": "its C suites are not built (no arm g++ and no armhf Google "
                      "Benchmark, libpfm4 or hwloc here, which //... needs); verify "
                      "--arch arm checks every variant"}
# test --asan fuzzes the vDSO image's reading this long (seconds)
FUZZ_SECONDS = 25  # in two workers (fuzz.sh)
# the harness's CPU lock folder (bench/cpu_lock.h), given to ALONGSIDE's process
LOCK_DIR_ENV = "VDSOBENCH_LOCK_DIR"
# bazel test exit statuses: 0 all passed, 3 some test failed, 4 no test targets.
BAZEL_OK = (0, 3, 4)


def parse_summary(output):
    """[(label, status)] from bazel test's output."""
    found = {}
    for line in output.splitlines():
        m = SUMMARY.match(line)
        if m:
            found[m.group(1)] = m.group(2)
    return list(found.items())


def count_tap(text):
    """(ok lines, not-ok lines)."""
    good = bad = 0
    for line in text.splitlines():
        m = TAP.match(line)
        if m:
            bad += bool(m.group(1))
            good += not m.group(1)
    return good, bad


def target_counts(passed, tap):
    """A target's (passed, failed), such that a failure never counts as zero."""
    good, bad = tap
    if passed:
        return (good or 1), bad
    return good, max(bad, 1)


def log_text(testlogs, label):
    """All test.log files of a target (more than one when sharded)."""
    package, _, name = label.lstrip("/@").partition(":")
    target_dir = Path(testlogs, package, name)
    return "\n".join(p.read_text(errors="replace") for p in sorted(target_dir.rglob("test.log")))


def failure_details(text, n=5):
    """The first `not ok` lines, or else how the log ends (a crash, an abort)."""
    lines = text.splitlines()
    return [line for line in lines if line.startswith("not ok")][:n] or lines[-n:]


def parse_unittest(output, returncode):
    # unittest prints its own summary last: a test that runs another suite
    # (the new-variant test runs the whole suite in a copy) prints one of
    # its own earlier, so only the last "Ran N tests" and what follows count.
    ran = list(re.finditer(r"^Ran (\d+) tests?", output, re.M))
    total = int(ran[-1].group(1)) if ran else 0
    tail = output[ran[-1].end():] if ran else output
    # Only unittest's closing "FAILED (failures=1, errors=2)" line: test output may
    # contain the same words.
    verdict = re.search(r"^FAILED \((.*)\)$", tail, re.M)
    bad = sum(int(n) for n in re.findall(r"(?:failures|errors|unexpected successes)=(\d+)",
                                         verdict.group(1) if verdict else ""))
    if returncode != 0 and bad == 0:
        bad = 1
    return total - min(bad, total), bad


def failure_reports(output, n=10, lines=30):
    """Each failure's report as unittest printed it (its header and traceback),
    the first n, each cut to its last `lines` lines: CI's log is all there is
    of a clean machine's run, and a name alone does not say why."""
    blocks = re.split(r"^={50,}\n", output, flags=re.M)[1:]
    out = []
    for b in blocks[:n]:
        b = re.split(r"^-{50,}\nRan \d+ tests?", b, flags=re.M)[0].rstrip("\n")
        body = b.splitlines()
        out.append("\n".join(body[:1] + (["  [...]"] if len(body) > lines + 1 else [])
                             + body[1:][-lines:]))
    return out


def failed_unittests(output, n=20):
    """The failed tests' names, from unittest's "FAIL: name (module.Class.name)"
    headers (a nested suite's own failures among them, as it printed them)."""
    names = re.findall(r"^(?:FAIL|ERROR): (\S+ \(\S+\))", output, re.M)
    return list(dict.fromkeys(names))[:n]


def bazel_tests(asan, quick, out):
    args = ["//...", "--test_output=errors", "--test_summary=short"]
    if asan:
        # only the suites run under the sanitizers: the binaries no test
        # needs (the harness, verify, the sim driver) are the plain build's
        args += ["--config=asan", "--build_tests_only"]
    # another architecture's build: its tests run under qemu-user
    # (.bazelrc's --run_under, toolchains/confined.sh: every test confined)
    flags = arch.current().bazel_flags()
    if asan:
        # the sanitizers' build is neither line's code (ASan instruments every
        # load), so it keeps the project's plain line
        flags = [f for f in flags if f not in arch.LINES["kernel"]]
    args += flags
    if quick:
        args.append("--test_tag_filters=-slow")
    print(f"test: bazel test {' '.join(args)}", file=out, flush=True)
    rc, output = build.bazel("test", args)
    results = []
    for label, status in parse_summary(output):
        if status == "SKIPPED":  # incompatible with the platform (x86-64's alone)
            results.append((f"{label} (SKIPPED: not for this platform)", 0, 0, []))
            continue
        # Targets that did not run this time may have a stale log: ignore it.
        text = log_text(build.ROOT / "bazel-testlogs", label) if status in RAN else ""
        good, bad = target_counts(status in PASSED, count_tap(text))
        details = failure_details(text) if bad else []
        results.append((f"{label} ({status})" if status not in RAN else label, good, bad,
                        details))
    if rc not in BAZEL_OK:
        print(build.tail(output), file=out)
    if rc not in (0, 4) and not any(r[2] for r in results):
        results.append((f"bazel test (exit {rc})", 0, 1, []))
    return results


def fuzz(out):
    """The vDSO image's parser and loader under libFuzzer, ASan and UBSan for
    FUZZ_SECONDS, seeded with the crafted images (impls/image/fuzz.sh): one
    result, or one that says why it did not run (clang-14 missing, not root)."""
    if packages.missing(packages.FUZZ_PACKAGES):
        print("test: the image fuzzer did not run: clang-14 and libclang-rt-14-dev are "
              "missing (as root: scripts/vdsobench setup --fuzz)", file=out)
        return ("impls/image fuzz (not run: no clang-14)", 0, 0, [])
    print(f"test: impls/image/fuzz.sh {FUZZ_SECONDS}", file=out, flush=True)
    r = lifecycle.run([str(build.ROOT / "impls" / "image" / "fuzz.sh"), str(FUZZ_SECONDS)],
                      cwd=build.ROOT, stdin=subprocess.DEVNULL, capture_output=True,
                      text=True, errors="replace")
    if r.returncode != 0:
        print(build.tail(r.stderr + r.stdout, 20), file=out)
    return ("impls/image fuzz", int(r.returncode == 0), int(r.returncode != 0),
            build.tail(r.stderr, 1).splitlines() if r.returncode else [])


def quick_modules(d, top, skip=QUICK_SKIP, reading=None):
    """The test modules discovery would find under d, as dotted names from top,
    less those in skip; with reading (a pattern), only those whose source has it."""
    root = build.ROOT / top
    return [".".join(p.relative_to(root).with_suffix("").parts)
            for p in sorted((build.ROOT / d).rglob("*_test.py")) if p.name not in skip
            and (reading is None or reading.search(p.read_text(errors="replace")))]


# `python3 -m unittest` that also records each module's time (cli/timed_unittest.py)
UNITTEST = ["/usr/bin/python3", "-m", "vdsobench_cli.cli.timed_unittest"]
# the slowest modules named after a Python pass, with their seconds
SLOWEST_SHOWN = 8


def unittest_command(d, top, quick, table=False):
    if not quick:
        return [*UNITTEST, "discover", "-s", d, "-t", top, "-p", "*_test.py"]
    return [*UNITTEST, *quick_modules(d, top, reading=TABLE_READS if table else None)]


def unittest_lanes(d, top, quick, copyable=True, table=False):
    """The processes of one directory's pass as lanes run at once, each a list
    of (command, own CPU lock folder, from the copy) run one after another:
    ALONGSIDE's modules then APART's (from the copy) in one lane, the rest in
    the other; one command when there is none of them (--quick, reports/).
    Not copyable (no git work tree to list): APART's modules with the rest."""
    def named(names):
        return [m for m in quick_modules(d, top, skip=())
                if f"{m.rsplit('.', 1)[-1]}.py" in names]
    beside, apart = named(ALONGSIDE), named(APART) if copyable else []
    if quick or not beside + apart:
        return [[(unittest_command(d, top, quick, table), False, False)]]
    first = [([*UNITTEST, *beside], True, False)] if beside else []
    later = [([*UNITTEST, *apart], True, True)] if apart else []
    return [first + later,
            [([*UNITTEST, *quick_modules(d, top, skip=ALONGSIDE + (APART if apart else ()))],
              False, False)]]


def slowest(times, n=SLOWEST_SHOWN, parts=1):
    """'new_variant_test 490 s, kernel_import_test 420 s, ...' of a pass's
    {module: seconds}, the n slowest, each named by its last parts dotted
    names (3 for a test's id: module, class, test); '' for none."""
    top = sorted(times.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return ", ".join(f"{'.'.join(m.split('.')[-parts:])} {s:.0f} s" for m, s in top)


def read_times(path):
    """The {module: seconds} timed_unittest wrote, or {} (it did not get to)."""
    try:
        times = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    return {m: s for m, s in times.items() if isinstance(m, str)
            and isinstance(s, (int, float)) and not isinstance(s, bool)} if isinstance(
                times, dict) else {}


def one_process(tops, command, own_locks, tmp, root, long=False):
    """(CompletedProcess, {module: seconds}, {module: CPU seconds}, {test id:
    seconds}) of one unittest process of a pass, run from the project at
    root; long: the long tier too."""
    times = Path(tempfile.mkdtemp(dir=tmp), "times.json")
    cpu, each = times.with_name("cpu.json"), times.with_name("each.json")
    # from the root, with top first on the path (as discovery puts it there)
    # and the other top after it: the CLI package imports reports/ from the
    # root, and reports/ imports the CLI package's core/
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [*(str(root / t) for t in tops), os.environ.get("PYTHONPATH")])),
        VDSOBENCH_TEST_TIMES=str(times), VDSOBENCH_TEST_CPU=str(cpu),
        VDSOBENCH_TEST_EACH=str(each))
    if long:
        env[LONG_ENV] = "1"
    if own_locks:
        env[LOCK_DIR_ENV] = tempfile.mkdtemp(dir=tmp, prefix="cpu-locks-")
    r = lifecycle.run(command, cwd=root, env=env, stdin=subprocess.DEVNULL,
                      capture_output=True, text=True, errors="replace")
    return r, read_times(times), read_times(cpu), read_times(each)


def one_lane(tops, lane, tmp, copy, long=False):
    """[one_process()] of a lane's steps in turn; a step from the copy runs
    there, and the copy goes (its Bazel output base too) after its last."""
    try:
        return [one_process(tops, command, own_locks, tmp, copy if in_copy else build.ROOT,
                            long) for command, own_locks, in_copy in lane]
    finally:
        if copy is not None and any(step[2] for step in lane):
            project_copy.remove(copy)


def timed(f, *args):
    """(f(*args), its wall-clock seconds)."""
    start = time.monotonic()
    return f(*args), time.monotonic() - start


def lane_times(lanes, seconds):
    """'ALONGSIDE and APART's 1466 s, the rest 1430 s' of a pass's lanes."""
    names = ["ALONGSIDE and APART's" if any(own for _, own, _ in lane) else "the rest"
             for lane in lanes]
    return ", ".join(f"{n} {s:.0f} s" for n, s in zip(names, seconds))


def python_tests(out, quick=False, table=False, long=False):
    results = []
    for d, top in PY_TEST_DIRS:
        tops = [top] + [t for _, t in PY_TEST_DIRS if t != top]
        listed = None if quick else project_copy.files(build.ROOT)
        lanes = unittest_lanes(d, top, quick, copyable=listed is not None, table=table)
        with tempfile.TemporaryDirectory(prefix="vdsobench-test-times-") as tmp:
            # made now, so that it is the tree this pass tests
            copy = (project_copy.make(build.ROOT, Path(tmp, "vdsobench"), listed)
                    if any(step[2] for lane in lanes for step in lane) else None)
            done = lifecycle.parallel(lambda i: timed(one_lane, tops, lanes[i], tmp, copy,
                                                      long),
                                      range(len(lanes)), len(lanes))
        if len(lanes) > 1:
            # the pass takes its slower lane's time: where a module moves to
            # balance them (ALONGSIDE and APART's, and the rest)
            print(f"test: python unittest ({d}): the lanes took "
                  f"{lane_times(lanes, [done[i][1] for i in range(len(lanes))])}", file=out)
        done = [step for i in range(len(lanes)) for step in done[i][0]]
        runs = [r for r, _, _, _ in done]
        took = slowest({m: t for _, times, _, _ in done for m, t in times.items()})
        if took:
            print(f"test: python unittest ({d}): the slowest modules: {took}", file=out)
        # side by side on two cores a module's wall time is mostly its
        # neighbours': its CPU (Bazel's server's not counted) is its own
        cpu = slowest({m: t for _, _, times, _ in done for m, t in times.items()})
        if cpu and len(lanes) > 1:
            print(f"test: python unittest ({d}): the most CPU (Bazel's server not "
                  f"counted): {cpu}", file=out)
        # where the next cut of CI's time is: CI's log is all there is of it
        each = slowest({t: s for *_, times in done for t, s in times.items()}, parts=3)
        if each and not quick:
            print(f"test: python unittest ({d}): the slowest tests: {each}", file=out)
        counts = [parse_unittest(r.stderr, r.returncode) for r in runs]
        good, bad = sum(c[0] for c in counts), sum(c[1] for c in counts)
        failed = [r for r, c in zip(runs, counts) if c[1]]
        for r in failed:
            print("\n\n".join(failure_reports(r.stderr)) or build.tail(r.stderr), file=out)
        results.append((f"python unittest ({d})", good, bad,
                        [n for r in failed for n in failed_unittests(r.stderr)][:20]))
    return results


def run(args, out=sys.stdout):
    target = arch.current()
    if args.table_readers and not args.quick:
        raise UsageError("test: --table-readers narrows --quick's Python modules; give "
                         "--quick with it")
    if args.long and (args.quick or args.asan):
        raise UsageError(f"test: --long adds to the whole Python pass; --"
                         f"{'quick' if args.quick else 'asan'} leaves it out: give one or the "
                         "other")
    if target.name in NO_C_SUITES:
        raise UsageError(f"test --arch {target.name}: {NO_C_SUITES[target.name]}")
    if args.asan and target.emulated:
        raise UsageError(f"test: --asan with --arch {target.name}: the sanitizers are not "
                         "set up under qemu-user (LeakSanitizer dies there); give one or "
                         "the other")
    results = []
    try:
        packages.ensure_setup()
        if target.native:
            packages.ensure_test_groups(out)
    except CliError as e:
        # Keep going: CI reads the final count, which must still come last.
        print(f"test: setup: {one_line(e)}", file=out)
        results.append(("setup", 0, 1, []))
    build.prune_disk_cache()
    results += bazel_tests(args.asan, args.quick, out)
    if args.asan and target.native:
        results.append(fuzz(out))
    if not args.asan and target.native:
        # the Python tests run the plain build's binaries: an ASan pass of
        # them would repeat the plain pass, minutes for nothing; another
        # architecture's pass, the host's Python against the same code
        results += python_tests(out, args.quick, args.table_readers, args.long)
    for label, good, bad, details in results:
        word = "FAIL" if bad else "PASS" if good else "SKIP"
        print(f"{word}  {label}  {good} passed, {bad} failed", file=out)
        for line in details:
            print(f"      {line}", file=out)
    passed = sum(r[1] for r in results)
    failed = sum(r[2] for r in results)
    print(f"{passed} passed, {failed} failed", file=out, flush=True)
    return 0 if failed == 0 else 1


def add_parser(sub):
    p = sub.add_parser("test", help="the whole test suite; last line 'N passed, N failed'",
                       description="Install what is missing, run bazel test //... and the "
                                   "Python unit tests; the last line is 'N passed, N failed'.")
    p.add_argument("--asan", action="store_true",
                   help="only the C tests, built with ASan + UBSan, and the vDSO image's "
                        "parser fuzzed for 25 s in two workers (the Python tests use the "
                        "plain build; run them without --asan)")
    p.add_argument("--quick", action="store_true",
                   help="skip bazel tests tagged \"slow\" and the slow Python modules "
                        "(the new-variant copy, the kernel imports and their attacks, the "
                        "recipes, the bundle: about 17 of the Python tests' 20 minutes on "
                        "2 cores); everything else runs (see docs/building.md)")
    p.add_argument("--table-readers", action="store_true",
                   help="with --quick: of the Python modules, only those that read the "
                        "variant table as a whole (TABLE_READS in commands/testrun.py: what "
                        "a new row of impls/variants.bzl can change; the C suites all run)")
    p.add_argument("--long", action="store_true",
                   help="the long tier too: the reviews and kernel builds past CI's 30 "
                        "minutes, each a second path through code the plain pass covers "
                        "(LONG in commands/testrun.py: a series, the fleet's and arm64's "
                        "reviews, patch-review's seed, 6.1's kbuild, the new-variant "
                        "copy's suites; about 35 minutes more on 2 cores)")
    arch.add_argument(p, "run this architecture's C suites instead (bazel test --config=arm64 "
                      "under qemu-user; the Python tests are the host's: run them without "
                      '--arch)')
    p.set_defaults(func=run)
