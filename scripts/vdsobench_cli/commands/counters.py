"""`counters`: which counter events libpfm knows and which open here, in which mode."""

import json
import subprocess
import sys

from vdsobench_cli.cli import arch, build, labels, lifecycle, packages
from vdsobench_cli.cli.errors import Failure, UsageError, one_line

NAME = "vdsobench_counters"


def parse(text):
    """The binary's --json object; Failure if it is not the expected shape."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise Failure(f"{NAME} --json: not JSON: {e}") from None
    events = data.get("events") if isinstance(data, dict) else None
    if not isinstance(events, list) or not all(
            isinstance(e, dict) and isinstance(e.get("name"), str) for e in events):
        raise Failure(f"{NAME} --json: expected an object with an \"events\" array "
                      "of objects with a \"name\"")
    return data


def header(data):
    pmus = ", ".join(data.get("pmus") or []) or "none detected"
    paranoid = data.get("paranoid")
    return [f"libpfm {data.get('libpfm', '?')}; PMUs: {pmus}",
            f"perf_event_paranoid {'unknown' if paranoid is None else paranoid}; "
            f"mode {data.get('mode', '?')}: {data.get('mode_reason', '')}"]


def table(events):
    rows = [["EVENT", "LIBPFM NAME", "OPENS", "REASON"]]
    rows += [[e["name"], (e.get("fstr") or "-") if e.get("valid") else "-",
              "yes" if e.get("opens") else "no", e.get("reason") or ""] for e in events]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join([*(c.ljust(w) for c, w in zip(r, widths)), r[3]]).rstrip()
             for r in rows]
    opened = sum(bool(e.get("opens")) for e in events)
    lines.append(f"{len(events)} events, {opened} open here")
    return lines


def message(stderr):
    """The binary's last stderr line, without its own program-name prefix."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    text = lines[-1] if lines else "no message"
    return one_line(text.removeprefix(f"{NAME}: "))


def report(returncode, stdout, stderr, as_json=False, out=sys.stdout):
    """Print the binary's answer; its exit 2 (a bad name or flag) stays exit 2."""
    if returncode == 2:
        raise UsageError(message(stderr))
    if returncode != 0:
        raise Failure(f"{NAME} failed (exit {returncode}): {message(stderr)}")
    if as_json:
        print(stdout, end="", file=out)
        return 0
    data = parse(stdout)
    print("\n".join(header(data) + table(data["events"])), file=out)
    return 0


def run(args):
    packages.ensure_setup()
    build.build([labels.COUNTERS])
    cmd = build.program(labels.COUNTERS) + ["--json"]
    if args.all:
        cmd.append("--all")
    try:
        r = lifecycle.run(cmd + args.events, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, errors="replace")
    except OSError as e:
        raise Failure(f"cannot run {cmd[0]}: {e.strerror}") from None
    return report(r.returncode, r.stdout, r.stderr, args.json)


def add_parser(sub):
    p = sub.add_parser("counters", help="list counter events and whether each opens here",
                       description="For each event: libpfm's name for it, whether "
                                   "perf_event_open() counts it on this machine and if not "
                                   "why; with the detected PMUs, perf_event_paranoid and the "
                                   "counting mode (user+kernel or user). Exit 2 if libpfm "
                                   "does not know an EVENT.")
    p.add_argument("events", nargs="*", metavar="EVENT",
                   help="libpfm or perf event names, e.g. cycles, L1-dcache-load-misses, "
                        "amd64_fam19h_zen3::RETIRED_INSTRUCTIONS (default: a few generic "
                        "events and one of the detected PMU's)")
    p.add_argument("--all", action="store_true",
                   help="every event of every PMU libpfm detected")
    p.add_argument("--json", action="store_true", help="print the binary's JSON object")
    arch.add_argument(p, "ask this architecture's build")
    p.set_defaults(func=run)
