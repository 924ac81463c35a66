"""patch-review's vdso32 section: the tree's and the patched tree's 32-bit
vDSO (kbuild's vdso32.so.dbg, kimport/kbuild_vdso32.py), built or not,
checked (kimport/vdso32_image.py), and their code compared per function.

    section(table, before, after)  {"built": {before, after}, "error",
                                   "check": {side: check()}, "code",
                                   "why_code", "native"}; "broken": the
                                   patched tree's vdso32 does not build
                                   (kbuild's error) or fails its check, where
                                   the tree's builds; patch_review adds
                                   "verify" (review_vdso32_verify.py), and
                                   "broken" where the patched tree fails it
    lines(v32)                     the review's lines for it
    block(v32)                     the cover letter's: one sentence, or the
                                   failure and the line on running it
                                   (the timed rows' compact lines under it:
                                   reports/cover_letter_vdso32.py)

The code: each image's objdump, addresses aside as review_image.py does
for the 64-bit one. i386 code has no %rip: it finds its data through the
GOT's address, which __x86.get_pc_thunk.REG and an `add $imm,REG` compute,
and then `disp(REG)`. Both numbers move with the code's size, so they are
named: the add as $_GLOBAL_OFFSET_TABLE_ where pc + imm is the GOT's
address, and a displacement of 0x100 or more off a register other than
%ebp/%esp as <symbol+offset> where GOT + disp falls on one of the .dbg's
data labels (vvar__vdso_data, pvclock_page). Which register holds the GOT
is not traced: that naming is a reading, a displacement that only looks
like one could be named too; a field that moved still shows.

This module runs neither image: review_vdso32_verify.py verifies the two
trees' i386 variants (natively or under qemu-i386), and
review_vdso32_timed.py times them where the kernel runs 32-bit programs
(cli/abi32.py asks once; its answer is the "native" line) and the 64-bit
rows are timed; under qemu-i386 there is no CPU's time to take.
"""

import re

from vdsobench_cli.cli import abi32
from vdsobench_cli.kimport import elf32, kbuild, kbuild_tree, vdso32_image
from vdsobench_cli.recipes import review_vdso32_timed, review_vdso32_verify
from vdsobench_cli.recipes.review_parts import code_comparison, listing

LIMIT = elf32.LIMIT
THUNK = re.compile(r"^call\s+[0-9a-f]+ <__x86\.get_pc_thunk\.(\w\w)>$")
ADD = re.compile(r"^add\s+\$0x([0-9a-f]+),%e(\w\w)$")
MEM = re.compile(r"(-?)0x([0-9a-f]+)\(%(e(?:ax|bx|cx|dx|si|di))\)")
TARGET = re.compile(r"\b[0-9a-f]+ (<[^>]+>)")
NEAR = 0x100
PAGE = 0x1000
MASK = 0xffffffff


def named(addr, labels):
    """<label+off> of the highest label at or below addr within a page, or None."""
    best = None
    for value, name in labels:
        if value <= addr < value + PAGE:
            best = (value, name)
    return best and f"<{best[1]}+{addr - best[0]:#x}>"


def resolved(code, got, labels):
    """{function: [instruction text]} of an i386 image's listing(), the GOT's
    address and data references named (see above), jump targets as symbols."""
    out = {}
    for name, insns in code.items():
        texts, thunk = [], None
        for addr, text in insns:
            text = " ".join(text.split("#", 1)[0].split())
            m = ADD.match(text)
            if m and thunk == m.group(2) and got is not None \
                    and (addr + int(m.group(1), 16)) & MASK == got:
                text = f"add $_GLOBAL_OFFSET_TABLE_,%e{m.group(2)}"

            def data(mm):
                disp = int(mm.group(2), 16) * (-1 if mm.group(1) else 1)
                where = got is not None and abs(disp) >= NEAR and named(
                    (got + disp) & MASK, labels)
                return f"{where}(%{mm.group(3)})" if where else mm.group(0)
            text = MEM.sub(data, text)
            m = THUNK.match(text)
            thunk = m.group(1) if m else None
            texts.append(TARGET.sub(r"\1", text))
        out[name] = texts
    return out


def image_code(path):
    """(resolved() of an image, None) or (None, why)."""
    try:
        elf = elf32.parse(path.read_bytes()[:LIMIT + 1])
        labels = vdso32_image.data_symbols(elf)
    except (OSError, elf32.ElfError) as e:
        return None, f"{path.name}: {e}"
    got = next((v for v, n in labels if n == "_GLOBAL_OFFSET_TABLE_"), None)
    code, why = listing(path)
    return (None, why) if code is None else (resolved(code, got, labels), None)


def side(entry):
    """(the 32-bit vDSO record of an import entry, its .dbg's path or None)."""
    v32 = ((entry or {}).get("identity") or {}).get("kbuild", {}).get("vdso32")
    if not isinstance(v32, dict):
        return {"built": False, "why": "not recorded (kbuild did not run, or an older "
                "cache)", "error": None}, None
    if not v32.get("built") or not re.fullmatch(r"[0-9a-f]{64}", str(v32.get("key"))):
        return v32, None
    path = kbuild.cache_dir() / v32["key"] / kbuild_tree.DBG32
    return v32, path if path.is_file() else None


def section(table, before, after):
    runs, why = abi32.probe()
    out = {"native": "runs here" if runs else f"not run here: {why}",
           "native_short": None if runs else why.split(" (")[0]}
    recs = {}
    for label, name in (("before", before), ("after", after)):
        recs[label], path = side(table.get(name))
        out.setdefault("built", {})[label] = bool(recs[label].get("built"))
        if path is not None:
            out.setdefault("check", {})[label] = vdso32_image.check(path.read_bytes()[:LIMIT + 1])
            recs[label]["path"] = path
    out["why"] = {k: r.get("why") for k, r in recs.items() if not r.get("built")}
    out["error"] = recs["after"].get("error")
    bad_check = not (out.get("check") or {}).get("after", {"ok": True})["ok"]
    # a patched tree whose kbuild said it failed, or whose image fails the
    # check; not one never imported (a series stopped before its last patch)
    out["broken"] = bool(out["built"]["before"] and (out["error"] or bad_check))
    if "path" in recs["before"] and "path" in recs["after"]:
        (a, why_a), (b, why_b) = (image_code(recs[k]["path"]) for k in ("before", "after"))
        out["code"] = code_comparison(a, b) if a is not None and b is not None else None
        out["why_code"] = why_a or why_b
    else:
        out["code"], out["why_code"] = None, "no two vdso32 images"
    return out


def lines(v32):
    """The review's lines (printed, and in the block)."""
    out = []
    if v32["broken"] and not v32["built"]["after"]:
        out.append(f"vdso32: the patched tree's does NOT build: {v32['error'] or '?'}")
    elif not v32["built"]["after"]:
        out.append(f"vdso32: not built ({v32['why'].get('after') or '?'})")
    else:
        chk = (v32.get("check") or {}).get("after") or {}
        out.append("vdso32: built; its symbols: " + (
            f"{len(chk['exports'])} exported, all expected" if chk.get("ok")
            else "; ".join(chk.get("problems") or ["not checked"])))
    code = v32.get("code")
    if code == "identical":
        out.append("vdso32 object code: identical")
    elif code:
        out.append("vdso32 object code differs: " + "; ".join(code[:2])
                   + (f"; and {len(code) - 2} more" if len(code) > 2 else ""))
    elif v32["built"]["after"]:
        out.append(f"vdso32 object code not compared: {v32.get('why_code')}")
    ver = v32.get("verify")
    if ver is None:
        out.append(f"vdso32 verify and time: not run: the patched tree's {why_broken(v32)}")
        return out
    out += review_vdso32_verify.lines(ver)
    if ver["failed"]:
        timed = f"no: the patched tree's {why_broken(v32)}"
    elif not ver["ran"]:
        timed = "no: not verified (above)"
    elif v32["native"] != "runs here":
        timed = f"no ({v32['native']}; {review_vdso32_timed.EMULATED})"
    else:
        timed = "natively, after the 64-bit rows, where those are timed"
    out.append(f"vdso32 timed: {timed}")
    return out


def why_broken(v32):
    """What the patched tree's vdso32 does that stops the review: "vdso32 does
    not build", "vdso32 fails its check" or "vdso32 fails verify --arch i386"
    (v32["broken"]); "vdso32 is fine" where it is not broken."""
    if not v32.get("broken"):
        return "vdso32 is fine"
    if not v32["built"]["after"] or v32.get("error"):
        return "vdso32 does not build"
    if (v32.get("verify") or {}).get("failed"):
        return "vdso32 fails verify --arch i386"
    return "vdso32 fails its check"


def block(v32):
    """The cover letter's lines: where the patched tree's vdso32 does not build
    or check, lines() (the block is untimed, it has the room); else one
    sentence."""
    if v32["broken"] or not v32["built"]["after"]:
        return lines(v32)
    chk = (v32.get("check") or {}).get("after") or {}
    code = v32.get("code")
    said = ("code identical" if code == "identical" else
            f"code differs in {len(code)} function{'s' if len(code) != 1 else ''}" if code
            else "code not compared")
    ver = v32.get("verify") or {}
    timed = v32.get("timed") or {}
    native = v32.get("native_short") or v32["native"]
    if ver.get("ran") and ver.get("why"):
        how = f"not verified (verify --arch i386 gave {ver['why']}) or timed"
    elif ver.get("ran") and ver.get("emulator"):
        how = (f"verified under {ver['emulator'].split()[0]}, not timed: {native} "
               f"({review_vdso32_timed.EMULATED})")
    elif ver.get("ran"):
        how = "verified natively" + (
            "" if timed.get("rows") else f"; not timed: {timed['why']}" if timed.get("why")
            else "; not timed (nothing of the review was)")
    else:
        how = f"not verified or timed: {ver.get('why') or native}"
    return [f"vdso32: built, {'symbols as expected' if chk.get('ok') else 'symbols NOT checked'}"
            f"; {said}; {how}"]
