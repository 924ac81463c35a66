"""The check of a 32-bit vDSO image (vdso32.so or its .dbg, kbuild's:
kbuild_vdso32.py), read as hostile input (elf32.py): an i386 shared
object that exports what a 32-bit program's libc looks up in it, each
entry point a function inside the section it names, and that needs
nothing from elsewhere (a vDSO links nothing).

    check(data)       {"ok", "exports": [name], "missing": [name],
                      "problems": [why]}
    data_symbols(elf) [(address, name)] of the .dbg's data pages and
                      sections' labels, for naming what the code loads

    python3 -m vdsobench_cli.kimport.vdso32_image FILE [--json]
        the check of FILE: exit 0 ok, 1 a failed check, 2 bad usage (no
        such file, not a regular file, over LIMIT)

This reads its symbols and no more; impls/image's C (check.c, the one
parser of both classes) checks it as the i386 loader maps it, and take()
stores it for the i386 +image variants where that check passes
(docs/image.md): v7.x's system call alternative (X86_FEATURE_SYSFAST32)
applied by the loader, as the kernel applies it at boot.

    take(tree_dir, data, options)   vdso/vdso32.so and its header into a
                                    staged tree, {"file", ...}; {"none": why}
                                    where check.c refuses it
"""

import argparse
import json
import re
import sys
from pathlib import Path

from vdsobench_cli.cli import safe_read
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import elf32

# what glibc and musl look up in the i386 vDSO (LINUX_2.6: the time calls;
# LINUX_2.5: the system call entry and signal returns)
REQUIRED = ("__vdso_clock_gettime", "__vdso_clock_gettime64", "__vdso_gettimeofday",
            "__vdso_time", "__vdso_clock_getres", "__kernel_vsyscall", "__kernel_sigreturn",
            "__kernel_rt_sigreturn")
STT_SECTION, STT_FILE = 3, 4
STORED32 = "vdso/vdso32.so"
HEADER32 = "include/generated/kimport_image32.h"


def check(data):
    """The image's exports and what is wrong with it; ok where nothing is."""
    try:
        elf = elf32.parse(data)
        dyn = elf.symbols(elf32.SHT_DYNSYM)
    except elf32.ElfError as e:
        return {"ok": False, "exports": [], "missing": list(REQUIRED), "problems": [str(e)]}
    problems = []
    if elf.type != elf32.ET_DYN:
        problems.append(f"e_type {elf.type}, not ET_DYN (3): not a shared object")
    # the version names (LINUX_2.6) are absolute symbols, no entry points
    exported = {s.name: s for s in dyn if s.name and s.bind in (elf32.STB_GLOBAL, elf32.STB_WEAK)
                and s.shndx not in (elf32.SHN_UNDEF, elf32.SHN_ABS)}
    needs = sorted({s.name for s in dyn if s.name and s.shndx == elf32.SHN_UNDEF})
    if needs:
        problems.append(f"needs {', '.join(needs[:4])} from elsewhere (a vDSO links nothing)")
    missing = [n for n in REQUIRED if n not in exported]
    for name in REQUIRED:
        sym = exported.get(name)
        if sym is None:
            continue
        if sym.type != elf32.STT_FUNC:
            problems.append(f"{name}: type {sym.type}, not a function")
        why = elf.out_of_range(sym)
        if why:
            problems.append(why)
    if missing:
        problems.append(f"missing {', '.join(missing)}")
    return {"ok": not problems, "exports": sorted(exported), "missing": missing,
            "problems": problems}


def data_symbols(elf):
    """[(address, name)] of the .symtab's labels that are no function, file or
    section (vvar__vdso_data, pvclock_page, _GLOBAL_OFFSET_TABLE_), sorted;
    [] where the image has no .symtab (a stripped vdso32.so)."""
    return sorted((s.value, s.name) for s in elf.symbols()
                  if s.name and s.type not in (elf32.STT_FUNC, STT_SECTION, STT_FILE)
                  and s.shndx != elf32.SHN_UNDEF and not s.name.startswith("LINUX_"))


# v7.x's vdso32 makes its fallbacks' system calls in place, an alternative
# the kernel rewrites at boot (asm/vdso/sys_call.h), where v6.x's call the gate
SYS_CALL_H = "arch/x86/include/asm/vdso/sys_call.h"
INLINE_SYSCALL = re.compile(r'ALTERNATIVE\([\s\\]*"[^"]*int \$0x80"[\s\\]*,[\s\\]*'
                            r'"call __kernel_vsyscall"')


def inline_syscalls(tree_dir, info):
    """Why the image is not run, or None. Where the tree's vdso32 makes its
    system calls with an `int $0x80` in place that the kernel's boot-time
    alternative (X86_FEATURE_SYSFAST32) turns into a call to __kernel_vsyscall,
    the loader applies that alternative (impls/image/sysfast32.c): info (the
    checker's, vdso_image.parse()) must show it applied. A `ds;ds;ds;int
    $0x80` left in place by the loader, whatever the tree's header says, is
    refused too: not the code the kernel runs, and its system call bypasses
    the gate the checkers trap under qemu-user."""
    path = Path(tree_dir) / SYS_CALL_H
    inline = path.is_file() and INLINE_SYSCALL.search(path.read_text(errors="replace"))
    left, applied = info["int80_left"], len(info["syscalls"])
    if left or (inline and not applied):
        return (f"its fallbacks make their system calls in place ({SYS_CALL_H}: \"int "
                "$0x80\" until the kernel's boot-time alternative makes it \"call "
                f"__kernel_vsyscall\"): {left} left in place, {applied} applied by the "
                "loader: not the code the kernel runs")
    return None


def take(tree_dir, data, options=None):
    """kbuild's vdso32 image (its .dbg where it ships the .so's code) into an
    import's staged tree beside its vdso64.so, for the i386 +image variants:
    {"file", "header", "sha256", ...} for kimport.json ("sysfast32": the
    system call alternatives the loader applies, v7.x's), or {"none": why}
    (one line) where the checker refuses it, and nothing written."""
    from vdsobench_cli.kimport import stage, vdso_image
    try:
        info = vdso_image.parse(data, want_class=32)
    except vdso_image.ImageError as e:
        return {"none": str(e)}
    why = inline_syscalls(tree_dir, info)
    if why:
        return {"none": why}
    stage.write_inside(tree_dir, STORED32, data)
    stage.write_inside(tree_dir, HEADER32, vdso_image.c_header(data, info, options).encode())
    meta = {"file": STORED32, "header": HEADER32, "sha256": info["sha256"],
            "size": info["size"], "vvar_start": info["vvar_start"],
            "alternatives": info["alts"], "counter_sites": len(info["sites"])}
    if info["syscalls"]:
        meta["sysfast32"] = {"applied": len(info["syscalls"]), "sites": info["syscalls"],
                             "call": "__kernel_vsyscall",
                             "target": info["syms"]["__kernel_vsyscall"]}
    if info["gates"]:
        meta["gate"] = {"sites": [{"at": at, "replacement": r} for at, r in info["gates"]],
                        "applied": "as the running kernel's own __kernel_vsyscall enters "
                                   "(int $0x80 where it has no fast entry, and in verify)"}
    return meta


def main(argv=None):
    ap = argparse.ArgumentParser(prog="vdso32_image", description="Check a 32-bit vDSO "
                                 "image (vdso32.so or its .dbg): an i386 shared object "
                                 "exporting what libc looks up in it.")
    ap.add_argument("file")
    ap.add_argument("--json", action="store_true", help="the check as a JSON object")
    args = ap.parse_args(argv)
    try:
        data = safe_read.read_regular(args.file, "vdso32 image", elf32.LIMIT)
    except UsageError as e:
        print(f"vdso32_image: {e}", file=sys.stderr)
        return 2
    c = check(data)
    if args.json:
        print(json.dumps(c, indent=1))
    else:
        print(f"{'ok' if c['ok'] else 'FAILED'}: {len(c['exports'])} exported"
              + "".join(f"; {p}" for p in c["problems"]))
    return 0 if c["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
