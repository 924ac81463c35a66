"""patch-review's arm64 side: the same tree and patches imported for arm64
(arch/arm64's vDSO headers through the arm64 shim, cross-built) and checked
under qemu-user, where correctness and code are as good as natively and a
time is the emulator's, so nothing here is timed.

review(source, patches, quick) -> {
  "arch": "arm64",
  "emulator": "qemu-aarch64-static 7.2.22" or None (natively),
  "counter": the read the kernel's vDSO would make here: "cntvctss" where the
      CPU has FEAT_ECV, else "isb_cntvct_dep" (qemu-user has none),
  "counter_why": why that one (verify's SKIP reason for cntvctss),
  "verify": {"after": (ok, text), "before": (ok, text)},
  "torn": None or where the patched tree failed verify,
  "code": "identical" or [what differs] or None,
  "code_why": None or why the code was not compared,
  "instructions": [(clock, before, after)]: instructions executed per call,
      net of the harness's empty call (qemu's instruction log),
  "page": [lines]: the data page, the trees' DWARF before against after,
  "not_counted": {"after"/"before": detail}: the real counter's system
      check failed under qemu-user, the only check that did (TIMING_CHECKS):
      the emulator's clock, not the patch, so the side still passes,
  "notes": [lines]: a step that could not be made (the others were),
  "missing": None or why arm64 was not checked (what is missing and the
      setup command, or the import's own line),
}
Everything is plain data for reports/cover_letter_arm64.py. Nothing raises
for a missing tool or a patch that does not import for arm64: the line says.
"""

import json

from vdsobench_cli.cli import arch, build, labels, lifecycle, packages, tools
from vdsobench_cli.cli.errors import Failure, UsageError, one_line
from vdsobench_cli.kimport import names as names_mod, txn
from vdsobench_cli.measure import code_metrics
from vdsobench_cli.recipes import review_parts

from reports import struct_diff
from vdsobench_cli.core import vocab

ARCH = "arm64"
BEFORE, AFTER = "patch-review-arm64-before", "patch-review-arm64-after"
# patch_review's, not read from it: patch_review is to import this module
CLOCKS = list(vocab.CLOCKS)
QUICK_CLOCKS = ["realtime", "monotonic", "monotonic_raw"]
# the kernel's read with FEAT_ECV (nop; mrs CNTVCTSS_EL0) and without it
# (isb; mrs cntvct_el0), both followed by the ordering dependency
ECV_COUNTER, PLAIN_COUNTER = arch.TIMED_COUNTER[ARCH][1:]
SETUP = f"scripts/vdsobench setup --arch {ARCH}"
# the verify binary's durations (ms), recipe_session.verify_one's: the
# nomask test patch is caught at the quick one under qemu-user
DURATION_MS, QUICK_DURATION_MS, SYSTEM_MS = 300, 100, 200


def result(**given):
    """The dict's every key, so that a reader never has to ask which are there."""
    out = {"arch": ARCH, "emulator": None, "counter": None, "counter_why": None,
           "verify": {}, "torn": None, "code": None, "code_why": None,
           "instructions": [], "page": [], "not_counted": {}, "notes": [], "missing": None}
    out.update(given)
    return out


def missing(target=None):
    """Why arm64 cannot be checked here, with the command that fixes it, or None.
    Natively (an arm64 host) nothing is missing."""
    t = target or arch.Target(ARCH)
    if t.native:
        return None
    why = arch.cannot_run(ARCH, t)
    if why:
        return why
    try:
        libs = packages.missing([n for n in packages.CROSS_PACKAGES[ARCH] if ":" in n])
    except Failure as e:
        return f"the arm64 libraries cannot be checked: {e}"
    if libs:
        return f"the arm64 libraries are missing: {', '.join(libs)} (as root: {SETUP})"
    return None


def variant(name, counter):
    return f"{names_mod.layout_of(name)}+{counter}+always"


def verify(variants, quick):
    """{variant: verify's JSON record} from one run of the verify binary for
    the current arch (under qemu-user when emulated, as `verify --arch arm64`)."""
    build.build([labels.VERIFY])
    cmd = [*build.program(labels.VERIFY), "--duration-ms",
           str(QUICK_DURATION_MS if quick else DURATION_MS), "--system-ms", str(SYSTEM_MS),
           *variants]
    r = lifecycle.run(cmd, capture_output=True, text=True, errors="replace")
    recs = {}
    for line in r.stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("variant") in variants:
            recs[rec["variant"]] = rec
    return {v: recs.get(v) or {"status": f"no result (verify exited {r.returncode})"}
            for v in variants}


def the_counter(recs):
    """(counter, why) the kernel would read on this CPU: cntvctss when verify
    could run it (FEAT_ECV: HWCAP2_ECV in AT_HWCAP2), else the plain read."""
    ecv = recs[variant(AFTER, ECV_COUNTER)]
    if ecv.get("status") == "SKIP":
        return PLAIN_COUNTER, (f"{ECV_COUNTER} SKIP: {ecv.get('reason') or 'no FEAT_ECV'}; "
                               "the kernel reads isb; mrs cntvct_el0")
    return ECV_COUNTER, "FEAT_ECV: the kernel reads CNTVCTSS_EL0"


# Under qemu-user the system check compares the emulated counter, which qemu
# derives from the host's clock, with the host's clock, within tolerances made
# for a VM: on a loaded 2-core guest the unpatched 6.12 tree failed it
# (MONOTONIC 74 us off, 50 us allowed), the patched one too, in the same run.
# It judges the emulator's timing, not the patch: a failure of it alone is
# recorded (not_counted), not a FAIL.
TIMING_CHECKS = ("system",)


def timing_only(rec):
    """The detail of a failed record whose only failed checks are timing
    ones, else None."""
    bad = [c for c in rec.get("checks", []) if not c.get("ok") and not c.get("skipped")]
    if rec.get("status") == "FAIL" and bad and all(c["name"] in TIMING_CHECKS for c in bad):
        return "; ".join(f"{c['name']}: {c['detail']}" for c in bad)
    return None


def side(recs, name, counter, emulated=True):
    """(ok, text, the failed record or None, the timing checks' failure not
    counted or None) of one tree: PASS with the checks either counter ran,
    or the first failure, the fake counter's first."""
    fake, real = recs[variant(name, "fake")], recs[variant(name, counter)]
    if fake.get("status") != "PASS":
        return False, review_parts.verdict(fake), fake, None
    note = timing_only(real) if emulated else None
    if real.get("status") != "PASS" and note is None:
        return False, f"{counter}: {review_parts.verdict(real)}", real, None
    ran = [c["name"] for rec in (fake, real) for c in rec.get("checks", [])
           if not c.get("skipped") and c.get("ok")]
    text = f"PASS ({', '.join(dict.fromkeys(ran))})"
    if note:
        text += "; system not counted"
    return True, text, None, note


def reader_object(name, counter):
    v = {"layout": names_mod.layout_of(name), "counter": counter, "inline": "always"}
    return names_mod.object_of(v, build.bin_dir(), unit="reader.o")


def code(counter):
    """(review_parts.code_comparison of the two readers, None) or (None, why)."""
    sides = []
    for name in (BEFORE, AFTER):
        obj = reader_object(name, counter)
        if not obj.is_file():
            return None, f"no reader object for {variant(name, counter)}"
        got, why = review_parts.disassembly(obj, code_metrics.tool("objdump"), ARCH)
        if got is None:
            return None, why
        sides.append(got)
    return review_parts.code_comparison(*sides), None


def instructions(counter, clocks):
    """[(clock, before, after)]: net instructions executed per call."""
    vs = [variant(BEFORE, counter), variant(AFTER, counter)]
    by = {(r["variant"], r["clock"]): r["net_instructions_per_call"]
          for r in code_metrics.executed_per_call(vs, clocks)}
    return [(c, by[(vs[0], c)], by[(vs[1], c)]) for c in clocks]


def page():
    """The data page before against after: every field of the struct from the
    trees' DWARF (pahole), else layout's field table; arm64's build has no
    traced read sets (valgrind runs x86-64 code only)."""
    from vdsobench_cli.measure import pahole
    structs = []
    for name in (BEFORE, AFTER):
        v = {"layout": names_mod.layout_of(name), "counter": "fake", "inline": "always"}
        obj = names_mod.object_of(v, build.bin_dir())
        if not tools.have("pahole") or not obj.is_file():
            break
        structs.append({st["struct"]: st for st in
                        pahole.parse_pahole(pahole.pahole(["-I", str(obj)]))})
    if len(structs) == 2:
        root = next((n for n in review_parts.DATA_STRUCTS
                     if n in structs[0] or n in structs[1]), None)
        if root:
            return struct_diff.diff(structs[0], structs[1], root, limit=3)
    d = review_parts.layout_json(names_mod.layout_of(BEFORE), names_mod.layout_of(AFTER))
    return [x.strip() for x in review_parts.layout_summary(d["diff"])]


def review(source, patches, quick=False):
    """The arm64 side of patch-review on (source, patches): see the module's
    docstring for the dict. source and patches as patch_review takes them."""
    why = missing()
    if why:
        return result(missing=why)
    with arch.using(ARCH):
        rv = result(emulator=arch.emulator_label())
        try:
            return checked(rv, source, patches, quick)
        except (Failure, UsageError) as e:
            rv["missing"] = f"on arm64, {one_line(e)}"
            return rv


def checked(rv, source, patches, quick):
    wanted = {BEFORE: (source, []), AFTER: (source, list(patches))}
    with txn.temporary(wanted):
        names = [variant(n, c) for n in (AFTER, BEFORE)
                 for c in ("fake", PLAIN_COUNTER, ECV_COUNTER)]
        recs = verify(names, quick)
        counter, rv["counter_why"] = the_counter(recs)
        rv["counter"] = counter
        emulated = arch.current().emulated
        sides = {label: side(recs, name, counter, emulated)
                 for label, name in (("after", AFTER), ("before", BEFORE))}
        rv["verify"] = {label: got[:2] for label, got in sides.items()}
        rv["not_counted"] = {label: got[3] for label, got in sides.items() if got[3]}
        bad = sides["after"][2]
        if bad is not None and review_parts.tore(bad):
            rv["torn"] = bad.get("first_failure") or review_parts.verdict(bad)
            return rv
        unrun = next((f"verify gave no verdict on the {label} tree: {got[1]}"
                      for label, got in sides.items()
                      if got[2] is not None and not review_parts.judged(got[2])), None)
        if unrun:  # no tear: it was not checked
            rv["missing"] = f"on arm64, {unrun}"
            return rv
        rv["code"], rv["code_why"] = code(counter)
        # a step that fails says so and the others still run
        try:
            rv["instructions"] = instructions(counter, QUICK_CLOCKS if quick else CLOCKS)
        except Failure as e:
            rv["notes"].append(f"instructions per call not counted: {one_line(e)}")
        try:
            rv["page"] = page()
        except (Failure, UsageError) as e:
            rv["notes"].append(f"data page not compared: {one_line(e)}")
    return rv
