"""--cpu-lock: one measurement per CPU at a time.

The harness takes an advisory lock per pinned CPU (bench/cpu_lock.h: a flock
on /run/lock/vdsobench/cpuN.lock, or a private directory; $VDSOBENCH_LOCK_DIR
chooses one) for its whole run, the writer's CPU included. A second run
pinned to a held CPU waits for it and says so once, or with --cpu-lock=fail
refuses in one line (exit 1). This gives run and compare the option and
turns what the harness recorded ("cpu_lock" in its context) into warnings:

  cpu_lock_waited       it waited for another vdsobench run pinned there
  cpu_lock_unavailable  no lock could be taken: another run may have shared
                        the CPU unseen
"""

POLICIES = ("wait", "fail", "off")
HELP = ("another vdsobench pinned to one of these CPUs: wait for it (default; said "
        "once, and recorded in the warnings), fail (exit 1), or off")


def add_argument(parser):
    parser.add_argument("--cpu-lock", choices=POLICIES, metavar="wait|fail|off", help=HELP)


def warnings(harness):
    """[{"id", "message", ...}] from the harness's context (its "cpu_lock")."""
    lock = (harness or {}).get("cpu_lock") or {}
    out = [{"id": "cpu_lock_waited",
            "message": f"waited {w['seconds']:.1f} s for CPU {w['cpu']}, held by "
                       f"{w['holder']}: another vdsobench measurement was pinned there",
            "cpu": w["cpu"], "seconds": w["seconds"], "holder": w["holder"]}
           for w in lock.get("waited") or []]
    if lock.get("error"):
        out.append({"id": "cpu_lock_unavailable",
                    "message": f"{lock['error']}: measured without the CPU lock, so another "
                               "vdsobench run may have shared the CPU unseen"})
    return out
