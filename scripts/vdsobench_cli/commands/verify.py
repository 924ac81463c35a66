"""`verify`: run vdsobench_verify on chosen variants, one line per result."""

import json
import subprocess
import sys

from vdsobench_cli.cli import (arch, build, labels, lifecycle, packages, ranged,
                               variants as variants_mod)
from vdsobench_cli.core import vocab
from vdsobench_cli.measure import live
from vdsobench_cli.cli.errors import Failure

# SKIP: the variant's counter read does not exist on this CPU (RDTSCP,
# CNTVCTSS_EL0), said with the reason; it neither passes nor fails
STATUSES = ("PASS", "FAIL", "CAUGHT", "MISSED", "SKIP")


def describe(rec, reasons):
    status, name = rec.get("status"), rec.get("variant")
    # how the variant ran where that is not the usual way ("RDTSCP emulated:
    # this CPU has none": the counter trap's, verify/tsc_trap.h)
    note = rec.get("note")
    note = f" [{note}]" if isinstance(note, str) and note else ""
    if status == "PASS":
        return f"PASS   {name}  ({rec.get('seconds', 0):.1f} s){note}"
    if status == "FAIL":
        return f"FAIL   {name}  {rec.get('first_failure')}{note}"
    if status == "SKIP":
        # not run at all (reason), or a check the control needs did not run
        why = rec.get("reason") or rec.get("first_failure")
        return f"SKIP   {name}  (not available here: {why})"
    why = reasons.get(name) or "yes"
    if status == "CAUGHT":
        return f"CAUGHT {name}  (known bad: {why}) {rec.get('first_failure')}{note}"
    return f"MISSED {name}  (known bad: {why}) no check flagged it"


def report(lines, expected, reasons, returncode, as_json=False, out=sys.stdout,
           summary_extra=None):
    """Print each result as it arrives; return the exit status. summary_extra:
    keys the JSON summary line gains (the emulation record).

    Strict on purpose: a missing summary, a missing variant or a nonzero exit
    of the binary means the run cannot be trusted, so it fails.
    """
    counts = dict.fromkeys(STATUSES, 0)
    seen, summary, problems = set(), None, []
    for line in lines:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            rec = None
        if as_json:
            if summary_extra and isinstance(rec, dict) and "summary" in rec:
                line = json.dumps(dict(rec, **summary_extra), separators=(",", ":"))
            print(line.rstrip("\n"), file=out, flush=True)
        if not isinstance(rec, dict):
            if not as_json and line.strip():
                print(line.rstrip("\n"), file=out, flush=True)
            continue
        if "summary" in rec:
            summary = rec["summary"]
            continue
        if rec.get("status") not in STATUSES:
            problems.append(f"unknown status {rec.get('status')!r} for {rec.get('variant')}")
            continue
        counts[rec["status"]] += 1
        seen.add(rec.get("variant"))
        if not as_json:
            print(describe(rec, reasons), file=out, flush=True)
    if summary is None:
        problems.append("vdsobench_verify ended without a summary")
    problems += [f"no result for {n}" for n in expected if n not in seen]
    if returncode() != 0:
        problems.append(f"vdsobench_verify exited with status {returncode()}")
    if not as_json:
        for p in problems:
            print(f"verify: {p}", file=out)
        print(f"verify: {counts['PASS']} PASS, {counts['FAIL']} FAIL, "
              f"{counts['CAUGHT']} CAUGHT (known bad), {counts['MISSED']} MISSED"
              + (f", {counts['SKIP']} SKIP (not available here)"
                 if counts["SKIP"] else ""), file=out)
    else:
        for p in problems:
            print(f"vdsobench: verify: {p}", file=sys.stderr)
    return 1 if problems or counts["FAIL"] or counts["MISSED"] else 0


def run(args):
    packages.ensure_setup()
    _, chosen = variants_mod.choose(args.variants, "verify")
    names = [v["name"] for v in chosen]
    reasons = {v["name"]: v.get("known_bad") for v in chosen}
    cmd = build.program(labels.VERIFY) + ["--json"]
    if args.duration_ms is not None:
        cmd += ["--duration-ms", str(args.duration_ms)]
    if args.clock_mode != "tsc":
        cmd += ["--clock-mode", args.clock_mode]
    # under qemu-user: one line that says so (and, for i386, why the kernel
    # does not run the programs itself), the record in the JSON summary
    emu = arch.emulation()
    if emu and not args.json:
        print(f"verify: {arch.emulation_line()}", flush=True)
    try:
        proc = lifecycle.popen(cmd + names, stdout=subprocess.PIPE, text=True, errors="replace")
    except OSError as e:
        raise Failure(f"cannot run {cmd[0]}: {e.strerror}") from None
    with lifecycle.owned(proc):  # stopped with us on a signal
        status = report(proc.stdout, names, reasons, proc.wait, args.json,
                        summary_extra={"emulation": emu} if emu else None)
    if not args.json and not args.variants and arch.current().native and args.clock_mode == "tsc":
        status = max(status, live_line(variants_mod.load()))
    return status


def live_line(registry, out=sys.stdout):
    """The "live" line: the layout that models the running kernel against the
    kernel's own data page (layout --live has the whole map); skipped with
    the reason where no layout models it or the page cannot be read."""
    try:
        result, dumped, why = live.live_check(registry)
    except Failure as e:
        print(f"live: skipped: {e}", file=out)
        return 0
    if result is None:
        print(f"live: skipped: {why}", file=out)
        return 0
    if result.get("why"):
        print(f"live: skipped: {result['why']}", file=out)
        return 0
    if result["matches"]:
        print(f"live: PASS   {result['layout']} matches the running kernel "
              f"{dumped.get('kernel')} (its data page, decoded and checked; layout --live "
              "shows it)", file=out)
        return 0
    bad = ", ".join(c["what"] for c in result["checks"] if not c["ok"])
    print(f"live: FAIL   {result['layout']} does not match the running kernel "
          f"{dumped.get('kernel')}: {bad}", file=out)
    return 1


def add_parser(sub):
    p = sub.add_parser("verify", help="correctness and concurrency checks, PASS/FAIL per variant",
                       description="Run the correctness and concurrency checks on the chosen "
                                   "variants (all by default). Exit 1 if a correct variant "
                                   "FAILs or a known-bad one is MISSED.")
    p.add_argument("variants", nargs="*", metavar="VARIANT",
                   help="exact name or glob, e.g. 'generic_*+rdtscp+*' (default: all)")
    p.add_argument("--duration-ms", type=ranged.DURATION_MS, metavar="N",
                   help=f"time per concurrency check, in milliseconds "
                        f"({ranged.DURATION_MS.valid})")
    p.add_argument("--clock-mode", choices=vocab.CLOCK_MODES, default="tsc",
                   metavar="tsc|pvclock|hvclock",
                   help="the simulated clocksource: tsc (default); pvclock: kvm-clock, the x86 "
                        "variants reading a simulated KVM host's pvclock page; hvclock: "
                        "Hyper-V's TSC page the same way (the page made invalid, the host "
                        "rewriting it mid-read); what does not model it is SKIP")
    p.add_argument("--json", action="store_true", help="pass the binary's JSON lines through")
    arch.add_argument(p, "check this architecture's build (correctness under qemu-user is as "
                      'native)')
    p.set_defaults(func=run)
