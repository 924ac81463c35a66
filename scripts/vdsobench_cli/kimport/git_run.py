"""git, run on a work tree that is hostile input (`recipe patch-review
--range` reads a tree's history with it: git_range.py).

Git in someone else's repository runs what the repository says: its hooks,
its config's commands (core.fsmonitor, a diff driver's command or textconv,
a filter's smudge, what an [include] pulls in), and the user's own config's
helpers. Here git runs none of them:

- only plumbing that starts no other program for what it is asked here:
  rev-parse, rev-list, merge-base, cat-file (the raw object: no filter),
  ls-tree and diff-tree (no external diff, no textconv: --no-ext-diff
  --no-textconv, which every caller's diff options carry);
- hooks off (core.hooksPath=/dev/null), no fsmonitor, no system or global
  config (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null, and HOME an
  empty folder of its own), replace refs ignored, pathspecs literal, no
  pager; safe.directory=* because it runs as another user than the tree's
  owner, which is the point;
- confined (cli/confine.py): as the sandbox user, in namespaces of its own
  (no network), everything read-only but an empty scratch folder, the tree
  and its git dirs readable;
- under limits: memory, CPU time, a wall-clock timeout, and its output cut
  at a cap (a commit's diff can be made as large as one likes).

    run(tree, args, what, limit=OUTPUT_LIMIT, stdin=None, read=())
        -> Ran(rc, out bytes, err text); UsageError (one line, naming what)
           when git cannot be run, runs out of its limits or its time, or
           writes more than limit bytes
"""

import os
import resource
import select
import subprocess
import tempfile
import time
from typing import NamedTuple

from vdsobench_cli.cli import confine, lifecycle, tools
from vdsobench_cli.cli.errors import UsageError

OPTIONS = ("--no-pager", "--no-replace-objects", "--literal-pathspecs",
           "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
           "-c", "safe.directory=*", "-c", "core.pager=cat")
# git's limits: a hostile repository that makes it loop or grow ends in one line
LIMITS = {"as": 2 << 30, "cpu": 60, "fsize": 16 << 20}
TIMEOUT_S = 120
OUTPUT_LIMIT = 64 << 20
ERR_LIMIT = 4096
CHUNK = 1 << 16


class Ran(NamedTuple):
    rc: int
    out: bytes
    err: str


def environment(tree):
    """What git gets of ours (confine_exec keeps only these GIT_ settings)."""
    return dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null",
                GIT_CEILING_DIRECTORIES=os.path.dirname(os.path.abspath(tree)))


def argv(git, tree, args):
    """git's own command line: the options above, then args."""
    return [git, *OPTIONS, "-C", str(tree), *args]


def run(tree, args, what, limit=OUTPUT_LIMIT, stdin=None, read=()):
    """git args in tree, confined (see the top). stdin: bytes for its input."""
    git = tools.path("git", what)
    with confine.scratch(prefix="vdsobench-git-") as home, \
            tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as err:
        given.write(stdin or b"")
        given.seek(0)
        cmd = confine.command(argv(git, tree, args), write=[home], read=[tree, *read])
        rc, out = capped(cmd, environment(tree), given, err, limit, what)
        err.seek(0)
        text = err.read(ERR_LIMIT).decode(errors="replace")
    if rc == confine.REFUSED:
        line = next((x for x in text.splitlines() if x.startswith("vdsobench-confine: ")),
                    None)
        if line:
            raise UsageError(f"{what}: git could not be started confined: {line}")
    if rc < 0:
        raise UsageError(f"{what}: git ran out of its limits (signal {-rc}: CPU time, "
                         "memory or file size)")
    return Ran(rc, out, text)


def capped(cmd, env, stdin, err, limit, what):
    """(exit status, stdout) of cmd under LIMITS, its stdout read to limit
    bytes and TIMEOUT_S; UsageError past either (its process group stopped)."""
    def preexec():
        for res, value in ((resource.RLIMIT_AS, LIMITS["as"]),
                           (resource.RLIMIT_CPU, LIMITS["cpu"]),
                           (resource.RLIMIT_FSIZE, LIMITS["fsize"])):
            resource.setrlimit(res, (value, value))

    proc = lifecycle.popen(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=err, env=env,
                           preexec_fn=preexec)
    out = bytearray()
    deadline = time.monotonic() + TIMEOUT_S
    with lifecycle.owned(proc):
        fd = proc.stdout.fileno()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                lifecycle.stop(proc)
                raise UsageError(f"{what}: git took over {TIMEOUT_S} s")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            out += chunk
            if len(out) > limit:
                lifecycle.stop(proc)
                raise UsageError(f"{what}: git wrote over {limit} bytes")
        try:
            rc = proc.wait(max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            lifecycle.stop(proc)
            raise UsageError(f"{what}: git took over {TIMEOUT_S} s") from None
    return rc, bytes(out)
