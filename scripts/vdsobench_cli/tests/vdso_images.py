"""Synthetic x86-64 vDSO images, good and hostile, built here (no kernel tree
needed): the Python tests import them, and the C side's crafted corpus
(impls/image/testdata: the loader's tests and the fuzzer's seeds) is their
bytes, written by

    PYTHONPATH=scripts:. /usr/bin/python3 -m vdsobench_cli.tests.vdso_images impls/image/testdata

vdso_image_test checks that the committed files are what this writes.

The layout of synth(): one PT_LOAD over the whole file, a counter slot at
0x100, its two replacements at 0x110 (.altinstr_replacement),
.altinstructions at 0x120, .dynstr at 0x180, .dynsym at 0x200, a .symtab
with vvar_start at 0x2a0 (when asked), .shstrtab at 0x300, .dynamic at
0x360, a RELA table at 0x3a0, the section headers at 0x400.
"""
import struct
import sys
from pathlib import Path

SYMS = ("__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time", "__vdso_clock_getres")
SLOT = b"\x0f\x31\x90\x90\x90"  # rdtsc, nop-padded: rdtsc_ordered()'s original
LFENCE_RDTSC, RDTSCP = b"\x0f\xae\xe8\x0f\x31", b"\x0f\x01\xf9"
SHSTR = (b"\0.altinstructions\0.altinstr_replacement\0.dynsym\0.dynstr\0.shstrtab\0"
         b".symtab\0.strtab\0.dynamic\0")
DT_NULL, DT_NEEDED, DT_STRTAB, DT_SYMTAB, DT_RELA, DT_RELASZ, DT_RELAENT = 0, 1, 5, 6, 7, 8, 9
R_X86_64_64, R_X86_64_RELATIVE = 1, 8
SHDR, PHDR, SYM = "<IIQQQQIIQQ", "<IIQQQQQQ", "<IBBHQQ"
# ELFCLASS32 (a vdso32.so, i386): the headers' sizes and where they are
SHDR32, PHDR32, SYM32 = "<IIIIIIIIII", "<IIIIIIII", "<IIIBBH"
EM_X86_64, EM_386 = 62, 3


def pack_sym(elf32, st_name, info, shndx, value, size):
    if elf32:
        return struct.pack(SYM32, st_name, value & 0xFFFFFFFF, size, info, 0, shndx)
    return struct.pack(SYM, st_name, info, 0, shndx, value & (2**64 - 1), size)


def pack_shdr(elf32, sh):
    """sh in ELF64's order: name, type, flags, addr, offset, size, link, info,
    addralign, entsize (the same order in both classes)."""
    return struct.pack(SHDR32 if elf32 else SHDR, *sh)


def pack_phdr(elf32, ph):
    """ph in ELF64's order: type, flags, offset, vaddr, paddr, filesz, memsz, align."""
    if elf32:
        typ, flags, off, vaddr, paddr, filesz, memsz, align = ph
        return struct.pack(PHDR32, typ, off, vaddr, paddr, filesz, memsz, flags, align)
    return struct.pack(PHDR, *ph)


def name(n):
    return SHSTR.index(n.encode() + b"\0")


def alt_table(alts, alt_size):
    fmt, out = ("<iiIBB" if alt_size == 14 else "<iiHBB"), bytearray()
    for instr, repl, feat, ilen, rlen in alts:
        at = 0x120 + len(out)
        out += struct.pack(fmt, instr - at, repl - (at + 4), feat, ilen, rlen)
    return bytes(out)


def dynsym(names, values=None, info=0x12, elf32=False):
    """(.dynstr, .dynsym) defining names at 0x100 + 8 * i (or values), global
    functions (or of st_info info)."""
    strs = b"\0" + b"\0".join(n.encode() for n in names) + b"\0"
    table, off = bytearray(16 if elf32 else 24), 1
    for i, n in enumerate(names):
        value = values[i] if values else 0x100 + 8 * i
        table += pack_sym(elf32, off, info, 13, value, 8)
        off += len(n) + 1
    return strs, bytes(table)


def linux_note(major, minor, patch):
    """vdso-note.S's note: owner "Linux", type 0, LINUX_VERSION_CODE."""
    return struct.pack("<III", 6, 4, 0) + b"Linux\0\0\0" + struct.pack(
        "<I", (major << 16) + (minor << 8) + patch)


def synth(alt_size=14, vvar_start=None, names=SYMS, alts=None, loads=1, dynamic=(),
          relocs=(), extra_shdrs=(), values=None, info=0x12, symbol="vvar_start", note=None,
          elf32=False, repl_size=8):
    """A minimal vDSO image the loader maps with every counter (unless the
    arguments make it hostile); symbol names the .symtab's one symbol (at
    vvar_start), note is a .note section's bytes after the section headers;
    elf32: an i386 one (a vdso32.so: ELFCLASS32, EM_386), relocs unused."""
    wide = 4 if elf32 else 8
    syment, shent = 16 if elf32 else 24, 40 if elf32 else 64
    img = bytearray(0x400)
    img[0x100:0x105] = SLOT
    img[0x110:0x118] = LFENCE_RDTSC + RDTSCP
    entries = alts if alts is not None else [(0x100, 0x110, 642, 5, 5), (0x100, 0x115, 59, 5, 3)]
    table = alt_table(entries, alt_size)
    img[0x120:0x120 + len(table)] = table
    strs, syms = dynsym(names, values, info, elf32)
    img[0x180:0x180 + len(strs)] = strs
    img[0x200:0x200 + len(syms)] = syms
    symtab = bytes(syment) + pack_sym(elf32, 1, 0, 1, vvar_start or 0, 0)
    img[0x2a0:0x2a0 + len(symtab)] = symtab
    strtab = b"\0" + symbol.encode() + b"\0"
    img[0x2e0:0x2e0 + len(strtab)] = strtab
    img[0x300:0x300 + len(SHSTR)] = SHSTR
    dyn = b"".join(struct.pack("<iI" if elf32 else "<qQ", t, v)
                   for t, v in [*dynamic, (DT_STRTAB, 0x180), (DT_SYMTAB, 0x200), (DT_NULL, 0)])
    img[0x360:0x360 + len(dyn)] = dyn
    rela = b"".join(struct.pack("<QQq", off, typ, add) for off, typ, add in relocs)
    img[0x3a0:0x3a0 + len(rela)] = rela
    shdrs = [(0,) * 10,
             (name(".altinstructions"), 1, 2, 0x120, 0x120, len(table), 0, 0, 1, 0),
             (name(".altinstr_replacement"), 1, 6, 0x110, 0x110, repl_size, 0, 0, 1, 0),
             (name(".dynsym"), 11, 2, 0x200, 0x200, len(syms), 4, 1, wide, syment),
             (name(".dynstr"), 3, 2, 0x180, 0x180, len(strs), 0, 0, 1, 0),
             (name(".shstrtab"), 3, 0, 0, 0x300, len(SHSTR), 0, 0, 1, 0),
             (name(".dynamic"), 6, 3, 0x360, 0x360, len(dyn), 4, 0, wide, 2 * wide)]
    if vvar_start is not None:
        shdrs += [(name(".symtab"), 2, 0, 0, 0x2a0, len(symtab), 8, 1, wide, syment),
                  (name(".strtab"), 3, 0, 0, 0x2e0, len(strtab), 0, 0, 1, 0)]
    shdrs += list(extra_shdrs)
    if note is not None:
        at = 0x400 + shent * (len(shdrs) + 1)
        shdrs.append((0, 7, 2, at, at, len(note), 0, 0, 4, 0))  # found by type, unnamed
    for sh in shdrs:
        img += pack_shdr(elf32, sh)
    img += note or b""
    phdrs = [(1, 5, 0, 0, 0, len(img), len(img), 0x1000)] * loads
    phdrs.append((2, 6, 0x360, 0x360, 0x360, len(dyn), len(dyn), wide))
    phoff = 0x34 if elf32 else 0x40  # right after the ELF header, as ld puts them
    phent = 32 if elf32 else 56
    for i, ph in enumerate(phdrs):
        img[phoff + phent * i:phoff + phent * (i + 1)] = pack_phdr(elf32, ph)
    if elf32:
        struct.pack_into("<16sHHIIIIIHHHHHH", img, 0, b"\x7fELF\x01\x01\x01" + bytes(9), 3,
                         EM_386, 1, 0, phoff, 0x400, 0, 52, 32, len(phdrs), 40, len(shdrs), 5)
    else:
        struct.pack_into("<16sHHIQQQIHHHHHH", img, 0, b"\x7fELF\x02\x01\x01" + bytes(9), 3,
                         EM_X86_64, 1, 0, 0x40, 0x400, 0, 64, 56, len(phdrs), 64, len(shdrs), 5)
    return bytes(img)


def patched(data, at, fmt, *values):
    out = bytearray(data)
    struct.pack_into(fmt, out, at, *values)
    return bytes(out)


def shdr(i):
    """Where synth()'s section header i is."""
    return 0x400 + 64 * i


def moved_headers(field, pad):
    """synth() with its program (field 32) or section (40) headers 4 bytes on."""
    data = bytearray(synth())
    off = struct.unpack_from("<Q", data, field)[0]
    size = 56 * 2 if field == 32 else len(data) - off
    if field == 32:
        data[off + pad:off + pad + size] = bytes(data[off:off + size])
    else:
        data[off:] = bytes(pad) + bytes(data[off:])
        struct.pack_into("<QQ", data, 0x40 + 32, len(data), len(data))  # PT_LOAD's sizes
    struct.pack_into("<Q", data, field, off + pad)
    return bytes(data)


def rela(*relocs):
    return synth(dynamic=[(DT_RELA, 0x3a0), (DT_RELASZ, 24 * len(relocs)), (DT_RELAENT, 24)],
                 relocs=relocs)


def unterminated_shstrtab():
    """.shstrtab cut so its last name, .dynamic's, has no NUL inside it."""
    return patched(synth(), shdr(5) + 32, "<Q", len(SHSTR) - 1)


def unterminated_dynstr():
    """.dynstr moved to the end of the file without its last NUL: the last
    name runs to the end (the loader's strcmp() once read past it)."""
    data = bytearray(synth())
    strs = dynsym(SYMS)[0][:-1]
    struct.pack_into("<QQ", data, shdr(4) + 24, len(data), len(strs))
    return bytes(data + strs)


def own_replacement():
    """A 7-byte slot at 0x10e whose last 5 bytes are its own lfence; rdtsc
    replacement (the loader's memcpy() once overlapped there)."""
    data = bytearray(synth(alts=[(0x10e, 0x110, 642, 7, 5)]))
    data[0x10e:0x110] = SLOT[:2]
    return bytes(data)


def dynamic_outside():
    data = synth()
    return patched(data, 0x40 + 56 + 8, "<QQQQQ", 0x360, 0x10000, 0x10000, 48, 48)


def memsz_over_filesz():
    data = synth()
    return patched(data, 0x40 + 40, "<Q", len(data) + 0x1000)


# {case: (image, a phrase of the one line that refuses it)}: every hostile
# image the checker and the loader once disagreed on (issue 28), and more
HOSTILE = {
    "not-elf": (lambda: b"\0" * 100, "not an ELF file"),
    "other-machine": (lambda: patched(synth(), 18, "<H", 183), "not an x86-64 shared object"),
    "two-loads": (lambda: synth(loads=2), "two PT_LOAD segments"),
    "memsz-over-filesz": (memsz_over_filesz, "p_memsz differs from its p_filesz"),
    "phoff-unaligned": (lambda: moved_headers(32, 4), "program headers are not 8-byte aligned"),
    "shoff-unaligned": (lambda: moved_headers(40, 4), "section headers are not 8-byte aligned"),
    "no-section-headers": (lambda: patched(synth(), 60, "<H", 0), "no section headers"),
    "dynamic-outside": (dynamic_outside, "its PT_DYNAMIC is outside its PT_LOAD"),
    "dt-needed": (lambda: synth(dynamic=[(DT_NEEDED, 1)]), "DT_NEEDED"),
    "rela-not-relative": (lambda: rela((0x3f0, R_X86_64_64, 0)), "dynamic relocations"),
    "rela-altinstructions": (lambda: rela((0x120, R_X86_64_RELATIVE, 0x100)),
                             "dynamic relocations"),
    "rela-slot": (lambda: rela((0x100, R_X86_64_RELATIVE, 0x100)), "dynamic relocations"),
    "two-altinstructions": (lambda: synth(extra_shdrs=[(name(".altinstructions"), 1, 2, 0x120,
                                                        0x120, 28, 0, 0, 1, 0)]),
                            "two .altinstructions sections"),
    "two-dynsym": (lambda: synth(extra_shdrs=[(name(".dynsym"), 11, 2, 0x200, 0x200, 5 * 24,
                                               4, 1, 8, 24)]), "two SHT_DYNSYM sections"),
    "unterminated-shstrtab": (unterminated_shstrtab, "its .shstrtab does not end in a NUL"),
    "unterminated-dynstr": (unterminated_dynstr, "does not end in a NUL"),
    "own-replacement": (own_replacement, "inside .altinstructions or .altinstr_replacement"),
    "no-replacement-section": (lambda: patched(synth(), shdr(2), "<I", 0),
                               "no .altinstr_replacement"),
    "alternative-outside": (lambda: synth(alts=[(0x100, 0x10000, 642, 5, 5)]),
                            "neither of 14- nor of 12-byte"),
    "replacement-longer": (lambda: synth(alts=[(0x100, 0x110, 642, 3, 5)]),
                           "neither of 14- nor of 12-byte"),
    "no-slot": (lambda: synth(alts=[(0x180, 0x115, 59, 5, 3)]), "no rdtsc_ordered() slot"),
    "rdtscp-only": (lambda: synth(alts=[(0x100, 0x115, 59, 5, 3)]), "lfence_rdtsc"),
    "no-clock-gettime": (lambda: synth(names=SYMS[1:]), "no __vdso_clock_gettime"),
    "no-gettimeofday": (lambda: synth(names=(SYMS[0], SYMS[2])), "no __vdso_gettimeofday"),
    "no-time": (lambda: synth(names=SYMS[:2]), "no __vdso_time"),
    "duplicate-symbol": (lambda: synth(names=SYMS + SYMS[:1]),
                         "defines __vdso_clock_gettime twice"),
    "symbol-outside": (lambda: synth(values=(0x100000, 0x108, 0x110, 0x118)),
                       "__vdso_clock_gettime is outside the image"),
    "bad-vvar-start": (lambda: synth(vvar_start=-100), "vvar_start -100"),
    # the generic data store's pages (v6.15 on: six before the image, the
    # time data first), placed by the .dbg's vdso_u_data: not without it,
    # not off a page, and not in a stripped image, whose note says it is
    # one (the four-page fallback would map it wrongly)
    "data-store": (lambda: synth(vvar_start=-6 * 4096, symbol="vdso_u_time_data"),
                   "it has vdso_u_time_data and no vdso_u_data"),
    "data-store-off-page": (lambda: synth(vvar_start=-6 * 4096 + 8, symbol="vdso_u_data"),
                            "vdso_u_data is not whole pages before the image"),
    # one page: no room for the time namespace's after the time data
    "data-store-one-page": (lambda: synth(vvar_start=-4096, symbol="vdso_u_data"),
                            "its time data at -4096: not a page of the data store"),
    "data-store-note": (lambda: synth(note=linux_note(7, 3, 4)),
                        "Linux 7.3.4's (its note)"),
    # the second battery's: an entry point the loader would call into as it is
    "ifunc-entry": (lambda: synth(info=0x1a), "__vdso_clock_gettime is not a global function"),
    "local-entry": (lambda: synth(info=0x02), "__vdso_clock_gettime is not a global function"),
    "object-entry": (lambda: synth(info=0x11), "__vdso_clock_gettime is not a global function"),
}


def good():
    """{case: image} the loader maps with every counter."""
    return {"v6.12": synth(14), "v6.1": synth(12, alts=[(0x100, 0x110, 114, 5, 5),
                                                         (0x100, 0x115, 59, 5, 3)]),
            "vvar-symtab": synth(vvar_start=-6 * 4096),
            "data-store": synth(vvar_start=-6 * 4096, symbol="vdso_u_data"),
            "v6.12-note": synth(note=linux_note(6, 12, 57)),
            # hostile notes, read past nothing: a name size that overruns the
            # section, then a 7.3 note cut short: no version, the image loads
            "bad-notes": synth(note=struct.pack("<III", 0xFFFFFFFF, 4, 0) + bytes(12)),
            "cut-note": synth(note=linux_note(7, 3, 4)[:20]),
            "no-getres": synth(names=SYMS[:3])}


def i386(**kw):
    """synth()'s image as a vdso32.so: ELFCLASS32, EM_386."""
    return synth(elf32=True, **kw)


DT_REL, DT_RELSZ, DT_RELENT = 17, 18, 19

# the i386 images (a vdso32.so, ELFCLASS32): the same one parser, its
# widening of each 32-bit record, and the class's own sizes and alignment
HOSTILE32 = {
    "i386-other-machine": (lambda: patched(i386(), 18, "<H", EM_X86_64),
                           "not an x86-64 shared object"),
    "i386-class64-em386": (lambda: patched(synth(), 18, "<H", EM_386),
                           "not an x86-64 shared object"),
    "i386-cut-header": (lambda: i386()[:40], "not an ELF file"),
    "i386-phentsize-64": (lambda: patched(i386(), 42, "<H", 56),
                          "its program headers are outside the file"),
    "i386-phoff-unaligned": (lambda: patched(i386(), 28, "<I", 0x36),
                             "program headers are not 4-byte aligned"),
    "i386-shoff-unaligned": (lambda: patched(i386(), 32, "<I", 0x3fe),
                             "section headers are not 4-byte aligned"),
    "i386-two-loads": (lambda: i386(loads=2), "two PT_LOAD segments"),
    "i386-dt-needed": (lambda: i386(dynamic=[(DT_NEEDED, 1)]), "DT_NEEDED"),
    # i386 relocates with REL, not RELA
    "i386-rel": (lambda: i386(dynamic=[(DT_REL, 0x3a0), (DT_RELSZ, 8), (DT_RELENT, 8)]),
                 "dynamic relocations"),
    "i386-syment-24": (lambda: patched(i386(), 0x400 + 40 * 3 + 36, "<I", 24),
                       "its .dynsym is not a table of 16-byte symbols"),
    # 0x80000000 is -2 GiB once widened: outside, not a huge offset read
    "i386-symbol-high": (lambda: i386(values=(0x80000000, 0x108, 0x110, 0x118)),
                         "__vdso_clock_gettime is outside the image"),
    "i386-bad-vvar-start": (lambda: i386(vvar_start=-100), "vvar_start -100"),
    "i386-data-store-note": (lambda: i386(note=linux_note(7, 3, 4)), "Linux 7.3.4's (its note)"),
    "i386-no-slot": (lambda: i386(alts=[(0x180, 0x115, 59, 5, 3)]), "no rdtsc_ordered() slot"),
    "i386-no-time": (lambda: i386(names=SYMS[:2]), "no __vdso_time"),
    "i386-local-entry": (lambda: i386(info=0x02), "__vdso_clock_gettime is not a global function"),
}


INT80 = b"\x3e\x3e\x3e\xcd\x80"  # ds;ds;ds;int $0x80: v7.x vdso32's system call in place
SYSCALL_AT, GATE, CALL_AT = 0x105, 0x10c, 0x118
SYSFAST32 = 3 * 32 + 15  # X86_FEATURE_SYSFAST32 (v7.3), never read by the check


def sysfast32(alt=(SYSCALL_AT, CALL_AT, SYSFAST32, 5, 5), target=GATE, opcode=0xE8,
              gate=True):
    """i386() with v7.x's system call: `ds;ds;ds;int $0x80` at 0x105, its
    alternative (alt: None for none) a `call rel32` at 0x118 in
    .altinstr_replacement whose target, from its own address, is target,
    and __kernel_vsyscall (`int $0x80; ret`) at 0x10c (gate: exported)."""
    names, values = SYMS, [0x100, 0x108, 0x110, 0x118]
    if gate:
        names, values = SYMS + ("__kernel_vsyscall",), values + [GATE]
    alts = [(0x100, 0x110, 642, 5, 5), (0x100, 0x115, 59, 5, 3)] + ([alt] if alt else [])
    img = bytearray(i386(alts=alts, names=names, values=values, repl_size=13))
    img[SYSCALL_AT:SYSCALL_AT + 5] = INT80
    img[GATE:GATE + 3] = b"\xcd\x80\xc3"
    img[CALL_AT] = opcode
    struct.pack_into("<i", img, CALL_AT + 1, target - (CALL_AT + 5))
    return bytes(img)


# v7.x's system call alternative, applied only as the kernel applies it
HOSTILE32.update({
    "i386-sysfast-target": (lambda: sysfast32(target=0x100),
                            "calls 0x100, not __kernel_vsyscall (0x10c)"),
    "i386-sysfast-outside": (lambda: sysfast32(target=0x7ffffff0), "outside the image"),
    "i386-sysfast-behind": (lambda: sysfast32(target=-0x1000), "calls -0x1000, outside"),
    "i386-sysfast-short": (lambda: sysfast32(alt=(SYSCALL_AT, CALL_AT, SYSFAST32, 5, 4)),
                           "replaces 5 bytes with 4"),
    "i386-sysfast-long": (lambda: sysfast32(alt=(SYSCALL_AT, CALL_AT, SYSFAST32, 7, 5)),
                          "replaces 7 bytes with 5"),
    "i386-sysfast-jmp": (lambda: sysfast32(opcode=0xE9), "the replacement is not a call"),
    "i386-sysfast-not": (lambda: sysfast32(alt=(SYSCALL_AT, CALL_AT, SYSFAST32 | 1 << 16, 5,
                                                5)), "has patching flags 0x1"),
    "i386-sysfast-no-gate": (lambda: sysfast32(gate=False), "exports no __kernel_vsyscall"),
    "i386-sysfast-repl-outside": (lambda: sysfast32(alt=(SYSCALL_AT, 0x10000, SYSFAST32, 5,
                                                         5)), "neither of 14- nor of 12-byte"),
})


# vdso32's gate, __kernel_vsyscall at 0xc0, as system_call.S builds it: pushes,
# the fast-entry slot, int $0x80, pops (impls/image/gate32.c)
GATE32, PUSHES, POPS = 0xC0, b"\x51\x52\x55", b"\x5d\x5a\x59\xc3"
SYSENTER_SEQ, SYSCALL_SEQ = b"\x89\xe5\x0f\x34", b"\x89\xcd\x0f\x05"
SYSENTER32, SYSCALL32 = 3 * 32 + 15, 3 * 32 + 14  # v6.x's, never read by the check


def gate32(version=6, pushes=PUSHES, slot_len=4, flags=0):
    """i386() with __kernel_vsyscall at 0xc0: v6.x's ALTERNATIVE_2 (4 nops at
    0xc3, replaced by movl %esp,%ebp; sysenter or movl %ecx,%ebp; syscall,
    at 0x118 and 0x11c), or v7.x's: `int $0x80; ret` at 0xc0 replaced by
    nothing, and the sysenter sequence at 0xc6 replaced by the syscall one."""
    names = SYMS + ("__kernel_vsyscall",)
    values = [0x100, 0x108, 0x110, 0x118, GATE32]
    counter = [(0x100, 0x110, 642, 5, 5), (0x100, 0x115, 59, 5, 3)]
    if version == 6:
        slot, code = GATE32 + 3, pushes + b"\x90" * slot_len
        gate = [(slot, 0x118, SYSENTER32 | flags << 16, slot_len, 4),
                (slot, 0x11C, SYSCALL32, slot_len, 4)]
    else:
        slot, code = GATE32 + 6, b"\xcd\x80\xc3" + pushes + SYSENTER_SEQ
        gate = [(GATE32, 0x11C, SYSFAST32 | flags << 16, 3, 0),
                (slot, 0x118, SYSCALL32, slot_len, 4)]
    img = bytearray(i386(alts=counter + gate, names=names, values=values, repl_size=16))
    code += b"\xcd\x80" + POPS
    img[GATE32:GATE32 + len(code)] = code
    img[0x118:0x120] = (SYSENTER_SEQ if version == 6 else SYSCALL_SEQ) + SYSCALL_SEQ
    return bytes(img)


# the gate's alternatives, applied only where the landing pad returns from them
HOSTILE32.update({
    "i386-gate-no-pushes": (lambda: gate32(pushes=b"\x90\x90\x90"),
                            "does not follow push %ecx; push %edx; push %ebp"),
    "i386-gate-v7-no-pushes": (lambda: gate32(7, pushes=b"\x51\x90\x55"),
                               "does not follow push %ecx; push %edx; push %ebp"),
    "i386-gate-long": (lambda: gate32(slot_len=5), "replaces 5 bytes with a 4-byte fast"),
    "i386-gate-not": (lambda: gate32(flags=1), "gate alternative at 0xc3 has patching flags"),
    "i386-gate-v7-not": (lambda: gate32(7, flags=1),
                         "gate alternative at 0xc0 has patching flags"),
})


def good32():
    """{case: image}: i386 images the check takes with every counter (the i386
    loader maps them; the x86-64 one refuses them)."""
    return {"i386-v6.12": i386(vvar_start=-4 * 4096), "i386-stripped": i386(),
            "i386-data-store": i386(vvar_start=-6 * 4096, symbol="vdso_u_data"),
            "i386-v6.12-note": i386(note=linux_note(6, 12, 57)),
            "i386-sysfast32": sysfast32(), "i386-gate-v6": gate32(6),
            "i386-gate-v7": gate32(7)}


def many_dynsyms(size=(1 << 20) - 4096, sections=40):
    """The slow case of issue 28: a 1 MB image with `sections` .dynsym headers
    over one table of 20000 symbols whose names share a 500 KB string."""
    img = bytearray(synth())
    strs = b"\0" + b"A" * (size // 2) + b"\0"
    strs_at = len(img)
    img += strs
    syms_at = (len(img) + 7) & ~7
    img += bytes(syms_at - len(img))
    count = (size - syms_at) // 24 - sections - 4
    img += b"".join(struct.pack(SYM, 1, 0x12, 0, 13, 0x100, 8) for _ in range(count))
    shoff = (len(img) + 7) & ~7
    img += bytes(shoff - len(img))
    old = [struct.unpack_from(SHDR, img, 0x400 + 64 * i) for i in range(7)]
    extra = [(name(".dynstr"), 3, 2, 0, strs_at, len(strs), 0, 0, 1, 0)]
    extra += [(name(".dynsym"), 11, 2, 0, syms_at, 24 * count, 7, 1, 8, 24)] * sections
    for sh in old + extra:
        img += struct.pack(SHDR, *sh)
    struct.pack_into("<QQ", img, 0x40 + 32, len(img), len(img))
    struct.pack_into("<Q", img, 40, shoff)
    struct.pack_into("<H", img, 60, len(old) + len(extra))
    return bytes(img)


def corpus():
    """{file name: bytes}: the crafted corpus (impls/image/testdata) and its
    index, cases.txt: `name<TAB>ok` or `name<TAB>the phrase that refuses it`."""
    files, index = {}, []
    for case, data in good().items():
        files[f"good-{case}.so"] = data
        index.append(f"good-{case}.so\tok")
    for case, data in good32().items():
        files[f"good-{case}.so"] = data
        index.append(f"good-{case}.so\tok")
    for case, (make, phrase) in [*HOSTILE.items(), *HOSTILE32.items()]:
        files[f"bad-{case}.so"] = make()
        index.append(f"bad-{case}.so\t{phrase}")
    files["cases.txt"] = ("\n".join(index) + "\n").encode()
    return files


def main(argv):
    if len(argv) != 1:
        print("usage: python3 -m vdsobench_cli.tests.vdso_images DIR (writes the corpus)",
              file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name_, data in corpus().items():
        (out / name_).write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
