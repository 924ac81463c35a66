#!/usr/bin/python3
"""What a tree's code may not carry into the programs that link it: code that
runs without being called (before main, at exit, or when the loader binds a
symbol), or a definition that replaces one of the program's own.

    check_objects.py PREFIX VARIANT OUTPUT FILE...

Each FILE (an object, or an archive of them: what Bazel built of an imported
tree, kernel_import/imports.bzl's <variant>_tree) must hold ELF64
little-endian objects (ELF32 for 32-bit arm, arm64's compat vDSO, and
i386, x86's 32-bit vDSO) with:

  - no section that runs code uncalled: .init_array, .fini_array,
    .preinit_array, .ctors, .dtors, .init, .fini (by name, or a name beneath
    one, or by section type);
  - no GNU indirect function (an STT_GNU_IFUNC symbol: the loader runs its
    resolver when it binds it) and no IRELATIVE relocation;
  - no global, weak or unique definition but of names beginning PREFIX (the
    variant's own: a tree defining malloc or write would replace the C
    library's in every program that links it, and run where the program
    calls them);
  - no section group (COMDAT) but one named PREFIX..., or one of debug
    sections alone named as GCC's -g3 names those (wm4.*, never a C or
    C++ symbol's name): the linker keeps the first group of a name and
    drops the others, whatever they hold, so a tree's group named as a
    C++ inline function of the harness's would take its place (the
    program's calls left to nothing). On i386, GCC's PIC register thunks
    (__x86.get_pc_thunk.REG, a hidden definition in a group of that name
    in every position-independent object) are allowed where the group's
    one section holds exactly GCC's four bytes, mov (%esp), %REG; ret: the
    copy the linker keeps is then the same code, whichever it is.
  - no compiler IR (.gnu.lto_*, .gnu.offload_lto_*): GCC's linker plugin
    claims an object holding it and compiles the program from the IR, not
    from the object's code (whatever it holds, checked nowhere), running
    lto1 as root on the tree's bytes;
  - no request for an executable stack (.note.GNU-stack marked executable):
    every program that links the object would get one.

All good: OUTPUT is written (a C file the variant's library compiles, so that
nothing links a tree that was not checked) and the exit status is 0. Else one
line "vdsobench-refused: ..." on stderr (the CLI shows it as its own) and
exit 1. Standard library only: Bazel runs it as a build action. Linear in
the files' size; every offset is checked against the data it points into.
"""

import struct
import sys

RUN_SECTIONS = (".init_array", ".fini_array", ".preinit_array", ".ctors", ".dtors", ".init",
                ".fini")
RUN_TYPES = {14: ".init_array", 15: ".fini_array", 16: ".preinit_array"}  # SHT_*
SHF_EXECINSTR = 4
SHT_SYMTAB, SHT_RELA, SHT_REL, SHT_GROUP = 2, 4, 9, 17
SHF_ALLOC = 2
STT_GNU_IFUNC = 10
STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE = 1, 2, 10
IR_SECTIONS = (".gnu.lto_", ".gnu.offload_lto_")
DEBUG_GROUP = "wm4."  # GCC's name for a group of -g3's macros
# EM_X86_64: R_X86_64_IRELATIVE, EM_AARCH64, EM_ARM, EM_386
IRELATIVE = {62: 37, 183: 1032, 40: 160, 3: 42}
# ELF64 and ELF32: a section header's, a symbol's (name, info, shndx) and a
# relocation's (its r_info) layouts
ELF = {
    2: {"class": "ELF64", "shoff": ("<Q", 0x28), "shent": 0x3a, "shsize": 64, "sh": "<IIQQQQII",
        "sym": ("<IBBH", 24), "rel": ("<Q", 8, 16, 24), "rtype": 0xffffffff},
    1: {"class": "ELF32", "shoff": ("<I", 0x20), "shent": 0x2e, "shsize": 40, "sh": "<IIIIIIII",
        "sym": ("<I8xBBH", 16), "rel": ("<I", 4, 8, 12), "rtype": 0xff},
}
REFUSED = "vdsobench-refused: "
EM_386 = 3
# GCC's i386 PIC thunks: name -> their code (mov (%esp), %REG; ret)
PC_THUNKS = {f"__x86.get_pc_thunk.{reg}": bytes([0x8b, modrm, 0x24, 0xc3])
             for reg, modrm in (("ax", 0x04), ("cx", 0x0c), ("dx", 0x14), ("bx", 0x1c),
                                ("bp", 0x2c), ("si", 0x34), ("di", 0x3c))}


class Bad(Exception):
    pass


def printable(text, limit=60):
    out = "".join(c if c.isprintable() and c.isascii() else "?" for c in text)
    return out if len(out) <= limit else out[:limit - 3] + "..."


def members(data, name):
    """[(member name, bytes)] of an ar archive, or [(name, data)] of an object."""
    if not data.startswith(b"!<arch>\n"):
        return [(name, data)]
    out, at, names = [], 8, b""
    while at + 60 <= len(data):
        head = data[at:at + 60]
        try:
            size = int(head[48:58].decode("ascii").strip())
        except ValueError:
            raise Bad(f"{name}: a damaged archive member header") from None
        body = data[at + 60:at + 60 + size]
        if len(body) != size:
            raise Bad(f"{name}: an archive member runs past its end")
        label = head[:16].decode("latin-1").rstrip()
        if label == "//":
            names = body
        elif label not in ("/", "/SYM64/"):
            if label.startswith("/") and label[1:].isdigit():
                off = int(label[1:])
                end = names.find(b"/\n", off)
                label = names[off:end if end >= 0 else len(names)].decode("latin-1")
            out.append((label.rstrip("/"), body))
        at += 60 + size + (size & 1)
    return out


def unpack(fmt, data, off, what):
    if off < 0 or off + struct.calcsize(fmt) > len(data):
        raise Bad(f"{what} lies outside the object")
    return struct.unpack_from(fmt, data, off)


def c_string(table, off):
    if off >= len(table):
        return "?"
    end = table.find(b"\0", off)
    return table[off:end if end >= 0 else len(table)].decode("latin-1")


def elf(data):
    """ELF's layouts of a little-endian object (ELF64, or ELF32)."""
    if data[:4] != b"\x7fELF" or data[4:5] not in (b"\x01", b"\x02") or data[5:6] != b"\x01":
        raise Bad("not an ELF64 (or ELF32) little-endian object")
    return ELF[data[4]]


def sections(data):
    """(machine, [(name, type, offset, size, link, info, flags)]) of an ELF64 LE
    object (or ELF32)."""
    e = elf(data)
    machine, = unpack("<H", data, 18, "the header")
    shoff, = unpack(e["shoff"][0], data, e["shoff"][1], "the header")
    shentsize, shnum, shstrndx = unpack("<HHH", data, e["shent"], "the header")
    if (shentsize < e["shsize"] or shnum * shentsize > len(data)
            or shstrndx >= max(shnum, 1)):
        raise Bad("a damaged section table")
    heads = [unpack(e["sh"], data, shoff + i * shentsize, "the section table")
             for i in range(shnum)]
    names = blob(data, heads[shstrndx][4], heads[shstrndx][5])
    return machine, [(c_string(names, h[0]), h[1], h[4], h[5], h[6], h[7], h[2])
                     for h in heads]


def blob(data, off, size):
    if off + size > len(data):
        raise Bad("a section lies outside the object")
    return data[off:off + size]


def check_object(data, prefix):
    """None, or why the object may not be linked."""
    machine, secs = sections(data)
    for name, sh_type, *_, flags in secs:
        if sh_type in RUN_TYPES or any(name == s or name.startswith(s + ".")
                                       for s in RUN_SECTIONS):
            return (f"has {printable(name)}: code run before main or at exit, uncalled")
        if name.startswith(IR_SECTIONS):
            return (f"has {printable(name)}: compiler IR the linker would compile into the "
                    "program, unchecked")
        if name == ".note.GNU-stack" and flags & SHF_EXECINSTR:
            return ("asks for an executable stack, which every program that links it "
                    "would get")
    for name, sh_type, off, size, link, info, _ in secs:
        if sh_type == SHT_SYMTAB:
            why = check_symbols(data, secs, off, size, link, prefix)
            if why:
                return why
        elif sh_type == SHT_GROUP:
            why = check_group(data, secs, off, size, link, info, prefix)
            if why:
                return why
        elif sh_type in (SHT_RELA, SHT_REL) and machine in IRELATIVE:
            fmt, info_at, rel, rela = elf(data)["rel"]
            step = rela if sh_type == SHT_RELA else rel
            body = blob(data, off, size)
            for at in range(0, len(body) - step + 1, step):
                r_info, = struct.unpack_from(fmt, body, at + info_at)
                if r_info & elf(data)["rtype"] == IRELATIVE[machine]:
                    return "has an IRELATIVE relocation: code the loader runs before main"
    return None


def check_group(data, secs, off, size, link, info, prefix):
    """A section group must be named as the variant's own, or be -g3's macros."""
    body = blob(data, off, size)
    members = [struct.unpack_from("<I", body, at)[0] for at in range(4, len(body) - 3, 4)]
    debug_only = not any(m < len(secs) and secs[m][6] & SHF_ALLOC for m in members)
    if link >= len(secs) or secs[link][4] >= len(secs):
        raise Bad("a section group without its symbol table")
    symtab, strings = secs[link], secs[secs[link][4]]
    name_off, = unpack("<I", blob(data, symtab[2], symtab[3]), info * elf(data)["sym"][1],
                       "a group's name")
    name = c_string(blob(data, strings[2], strings[3]), name_off)
    if name.startswith(prefix) or (debug_only and name.startswith(DEBUG_GROUP)):
        return None
    if len(members) == 1 and pc_thunk(data, secs, members[0], name):
        return None
    return (f"has the section group {printable(name)}, which would take the place of the "
            "program's own of that name")


def pc_thunk(data, secs, index, name):
    """Whether section index is i386's PIC thunk `name`, GCC's code exactly."""
    if unpack("<H", data, 18, "the header")[0] != EM_386 or name not in PC_THUNKS:
        return False
    if index >= len(secs) or secs[index][0] != ".text." + name:
        return False
    return blob(data, secs[index][2], secs[index][3]) == PC_THUNKS[name]


def check_symbols(data, secs, off, size, link, prefix):
    if link >= len(secs):
        raise Bad("a symbol table without its string table")
    strings = blob(data, secs[link][2], secs[link][3])
    body = blob(data, off, size)
    fmt, step = elf(data)["sym"]
    for at in range(0, len(body) - step + 1, step):
        name_off, info, _, shndx = struct.unpack_from(fmt, body, at)
        name = c_string(strings, name_off)
        if info & 0xf == STT_GNU_IFUNC:
            return (f"has the GNU indirect function {printable(name)}: the loader runs its "
                    "resolver before main")
        if shndx and info >> 4 in (STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE) and \
                not name.startswith(prefix) and not pc_thunk(data, secs, shndx, name):
            return (f"defines {printable(name)}, which would replace the program's own "
                    f"(a tree's definitions all begin {prefix})")
    return None


def main(argv):
    if len(argv) < 4:
        print("usage: check_objects.py PREFIX VARIANT OUTPUT FILE...", file=sys.stderr)
        return 2
    prefix, variant, output, files = argv[0], argv[1], argv[2], argv[3:]
    for path in files:
        try:
            with open(path, "rb") as f:
                data = f.read()
            for member, obj in members(data, path.rsplit("/", 1)[-1]):
                why = check_object(obj, prefix)
                if why:
                    raise Bad(f"{member}: the tree's code {why}")
        except (Bad, OSError) as e:
            print(f"{REFUSED}{printable(variant, 200)}: {e}; nothing that links it is built",
                  file=sys.stderr)
            return 1
    with open(output, "w") as f:
        f.write("/* kernel_import/check_objects.py found this tree's objects fit to link */\n"
                "typedef int kimport_tree_checked;\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
