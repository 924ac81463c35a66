"""patch-review's vdso32 verify: the two trees' 32-bit read path run.

An x86-64 import builds its tree's vdso32 (BUILD_VDSO32, the shim's 32-bit
types) as i386 variants, kernel:N+COUNTER+{always,auto}, and kbuild's
vdso32.so as kernel:N+COUNTER+image (docs/kernel-import.md). Here the fake
counter's of the patched tree, then of the tree, go through verify --arch
i386: natively where the kernel runs 32-bit programs, else under qemu-i386.
A patch wrong on 32-bit alone (a `long` that holds 64 bits on x86-64 and 32
on i386) fails exact, edges or concurrency there, while the 64-bit verify
passes. Correctness only: nothing here is timed.

    verified(before, after, quick, progress) -> {
      "ran": whether verify ran, "why": None, or why not (one line, with the
          command that mends it where one does), or why it gave no verdict,
      "emulator": "qemu-i386-static 7.2.22", or None (natively),
      "records": {"after"/"before": {variant: verify's record}},
      "left_out": {"after"/"before": why it has no i386 variants},
      "failed": None, or "variant: the first failure" of the patched tree,
      "before_failed": the same of the tree (said; the patch is not blamed),
    }
    lines(v)  the review's lines for it
"""

from vdsobench_cli.cli import arch, variants as variants_mod
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.recipes import patch_review_arm64
from vdsobench_cli.recipes.review_parts import judged, tore, verdict

ARCH = "i386"
INLINES = ("always", "image")


def result(**given):
    out = {"ran": False, "why": None, "emulator": None, "records": {}, "left_out": {},
           "failed": None, "before_failed": None}
    out.update(given)
    return out


def first_failure(recs):
    for v, rec in recs.items():
        if tore(rec):
            return f"{v}: {rec.get('first_failure') or verdict(rec)}"
    return None


def verified(before, after, quick, progress):
    why = arch.cannot_run(ARCH)
    if why:
        return result(why=why)
    out = result()
    with arch.using(ARCH) as target:
        out["emulator"] = arch.emulator_label()
        progress("vdso32: building the i386 verify (every import's i386 variants)")
        try:
            listed = {v["name"] for v in variants_mod.load()}
        except (Failure, UsageError) as e:
            return result(why=f"the i386 build failed: {e}")
        for label, name in (("after", after), ("before", before)):
            chosen = [f"kernel:{name}+fake+{i}" for i in INLINES
                      if f"kernel:{name}+fake+{i}" in listed]
            if not chosen:
                out["left_out"][label] = (f"kernel:{name} has no i386 variants "
                                          "(the import's line says why)")
                continue
            progress(f"vdso32: verify --arch i386 of the {label} tree"
                     + (" under qemu-i386" if target.emulated else ""))
            out["records"][label] = patch_review_arm64.verify(chosen, quick)
    out["ran"] = bool(out["records"])
    out["failed"] = first_failure(out["records"].get("after", {}))
    out["before_failed"] = first_failure(out["records"].get("before", {}))
    out["why"] = unjudged(out["records"])
    return out


def unjudged(records):
    """Why verify gave no verdict on a variant it was asked for (no result, a
    check not run), or None: that is no failure, and no pass either."""
    for recs in records.values():
        for v, rec in recs.items():
            if not judged(rec) and not tore(rec):
                return f"no verdict on {v}: {verdict(rec)}"
    return None


def side_line(label, recs):
    """'the tree PASS (fake+always, fake+image)': the variants grouped by
    verdict (a PASS's checks aside), a failure's own words once."""
    tree = "the patched tree" if label == "after" else "the tree"
    said = {}
    for v, rec in recs.items():
        text = "PASS" if judged(rec) and not tore(rec) else verdict(rec)
        said.setdefault(text, []).append(v.split("+", 1)[1])
    return "; ".join(f"{tree} {text.split(':', 1)[0]} ({', '.join(vs)})"
                     + (f":{text.split(':', 1)[1]}" if ":" in text else "")
                     for text, vs in said.items())


def lines(v):
    if not v["ran"]:
        return ["vdso32 verify --arch i386: not run: "
                + (v["why"] or "; ".join(v["left_out"].values()) or "?")]
    how = f"under {v['emulator']}" if v["emulator"] else "natively"
    out = [f"vdso32 verify --arch i386 ({how}): "
           + ", ".join(side_line(k, v["records"][k]) for k in ("after", "before")
                       if k in v["records"])]
    out += [f"vdso32 verify --arch i386: {why}" for why in v["left_out"].values()]
    if v["why"]:
        out.append(f"vdso32 verify --arch i386: {v['why']}")
    if v["before_failed"]:
        out.append("vdso32: the tree itself fails verify --arch i386, before the patch")
    return out
