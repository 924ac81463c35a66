"""Bazel invocations, run from the repository root with output captured."""

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

from vdsobench_cli.cli import abi32, arch, bazel_env, confine, lifecycle, tools, trust
from vdsobench_cli.cli.errors import Failure, UsageError

ROOT = Path(__file__).resolve().parents[3]
# Present only in a relocatable bundle (`vdsobench bundle`): there the
# binaries are prebuilt in bin/ and nothing is built or installed.
BUNDLE_MANIFEST = ROOT / "BUNDLE.json"

# The line a build action's own check prints when it refuses its input
# (kernel_import/check_objects.py): the command's one line, exit 2.
REFUSED = "vdsobench-refused: "

# Plain text for captured output; progress lines would only bloat it.
FLAGS = ["--color=no", "--curses=no", "--noshow_progress"]


# .bazelrc's --disk_cache, shared by every checkout here; Bazel 4 never
# shrinks it, so prune_disk_cache() drops what no build wrote for this long.
DISK_CACHE = Path.home() / ".cache" / "vdsobench" / "bazel-disk"
# where Bazel keeps its output bases (the binaries the tool runs), as it does
OUTPUT_ROOT = Path.home() / ".cache" / "bazel"
DISK_CACHE_DAYS = 30


def prune_disk_cache(now=None, days=DISK_CACHE_DAYS):
    """Remove the disk cache's files older than `days`; return how many.

    A removed entry costs its action a rebuild, no more: a build that has the
    file open keeps reading it whole, and one that looks for it after is told
    it is missing, a cache miss."""
    cutoff = (time.time() if now is None else now) - days * 86400
    removed = 0
    for parent, _, files in os.walk(DISK_CACHE):
        for name in files:
            path = os.path.join(parent, name)
            try:
                if os.lstat(path).st_mtime < cutoff:
                    os.unlink(path)
                    removed += 1
            except OSError:
                pass  # gone already, or not ours to remove: leave it
    return removed


def tail(text, n=40):
    return "\n".join(text.rstrip("\n").splitlines()[-n:])


def bundled():
    """True when running from an unpacked bundle rather than the repository."""
    return BUNDLE_MANIFEST.is_file()


def bundle_manifest():
    """The bundle's BUNDLE.json as a dict (bundled() must be true)."""
    import json
    try:
        return json.loads(BUNDLE_MANIFEST.read_text())
    except (OSError, ValueError) as e:
        raise Failure(f"{BUNDLE_MANIFEST}: unreadable bundle manifest ({e}); "
                      "unpack the bundle again") from None


def check_caches():
    """UsageError, once per process, for a cache of Bazel's (what it builds, what
    the tool then runs) that another user could write (cli/trust.py)."""
    if _caches_checked:
        return
    for d in (DISK_CACHE, OUTPUT_ROOT):
        problem = trust.folder_problem(d)
        if problem:
            raise UsageError(f"Bazel's cache: {problem}")
    _caches_checked.append(True)


_caches_checked = []


def bazel(command, args):
    """Run `bazel COMMAND FLAGS ARGS`; return (exit status, combined output)."""
    if bundled():
        raise Failure(f"bazel {command}: not in a bundle; use the repository for this")
    problem = bazel_env.proc_problem() or bazel_env.output_root_problem()
    if problem:
        raise UsageError(problem)
    check_caches()
    try:
        r = lifecycle.run([tools.path("bazel", "vdsobench"), command, *FLAGS, *args], cwd=ROOT,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace")
    except OSError as e:
        raise Failure(f"cannot run bazel ({e.strerror}); "
                      "run scripts/vdsobench setup") from None
    return r.returncode, r.stdout


def check_toolchain():
    """One line, before Bazel, when the current --arch is cross-built here and
    its compiler is missing (as `setup --check --arch` would find): Bazel's
    own report of it is a dozen lines of its toolchain resolution."""
    target = arch.current()
    missing = target.missing_toolchain()
    if missing:
        raise UsageError(f"--arch {target.name}: the cross compiler is not installed "
                         f"({', '.join(missing)} not in {arch.CROSS_BIN}): install it as "
                         f"root with scripts/vdsobench setup --arch {target.name}")


def build(targets):
    if bundled():
        # prebuilt: say so if one went missing rather than fail to run it
        for label in targets:
            if not label.startswith("-") and not binary_path(label).is_file():
                raise Failure(f"{binary_path(label)} is missing from the bundle; "
                              "unpack it again")
        return
    check_toolchain()
    args = arch.current().bazel_flags() + list(targets)
    done = _reused[-1] if _reused else None
    key = (tuple(args), tuple(sorted((k, v) for k, v in os.environ.items()
                                     if k.startswith("VDSOBENCH_"))))
    if done is not None and done.get(key) is not None and done[key] == stamps(targets):
        return
    rc, out = bazel("build", args)
    if rc != 0:
        refused = [line for line in out.splitlines() if line.startswith(REFUSED)]
        if refused:  # a check of the build's own refused its input: that, not Bazel's dump
            raise UsageError(refused[0].removeprefix(REFUSED))
        print(tail(out), file=sys.stderr)
        raise Failure(f"bazel build {' '.join(args)} failed (exit {rc})")
    if done is not None:
        done[key] = stamps(targets)


# reusing()'s builds, innermost last: {(flags and targets, the environment):
# stamps() of their outputs just after}
_reused = []


@contextlib.contextmanager
def reusing():
    """Within it, build() of the same targets, with the same flags and the
    same VDSOBENCH_* environment (the imports table as the @vdso_imports rule
    sees it), is not asked of Bazel again while their outputs are the files
    it left (a review asks for the verify driver a dozen times, 0.4 s each).
    A build by another process (another output file, or another time) is
    asked for again; an edit of the project's own sources in the meantime
    is the next command's to build."""
    _reused.append({})
    try:
        yield
    finally:
        _reused.pop()


def stamps(targets):
    """(device, inode, size, mtime) of each target's output, or None where a
    target is a flag or its output is missing: then nothing is reused."""
    out = []
    for label in targets:
        if label.startswith("-"):
            return None
        try:
            st = os.stat(binary_path(label))
        except OSError:
            return None
        out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


_bin_dirs = {}


def bin_dir(flags=None):
    """Where Bazel puts the binaries of the build these flags select (default: the
    current --arch's). bazel-bin follows the last build, whichever it was, so a
    configuration of its own asks Bazel (once per process)."""
    flags = tuple(arch.current().bazel_flags() if flags is None else flags)
    if not flags:
        return ROOT / "bazel-bin"
    if flags not in _bin_dirs:
        rc, out = bazel("info", [*flags, "bazel-bin"])
        lines = [line for line in out.splitlines() if line.startswith("/")]
        if rc != 0 or not lines:
            raise Failure(f"bazel info {' '.join(flags)} bazel-bin failed (exit {rc}): "
                          f"{tail(out, 1)}")
        _bin_dirs[flags] = Path(lines[-1])
    return _bin_dirs[flags]


def binary_path(label):
    """//pkg/sub:name -> <root>/bazel-bin/pkg/sub/name (the current --arch's build)"""
    package, _, name = label.lstrip("/").partition(":")
    name = name or package.rsplit("/", 1)[-1]
    return ROOT / "bin" / name if bundled() else bin_dir() / package / name


def program(label, write=()):
    """The command line that starts a built binary here, confined (every program
    of the build links the imported trees' code: confine.py): the binary
    itself, or, for an architecture this machine emulates, the qemu-user runner
    and it. write: the folders it may write (confine.scratch's)."""
    path = str(binary_path(label))
    target = arch.current()
    if bundled() or not target.emulated:
        return confine.command([path], write=write)
    if target.name == "i386":
        # the kernel was asked once (abi32.probe) and said no: the runner,
        # started for every program, is told so rather than asking again
        os.environ[abi32.ENV] = "qemu"
    return confine.command([str(ROOT / arch.RUNNERS[target.name]), path], write=write)
