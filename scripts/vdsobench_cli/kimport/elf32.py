"""An i386 ELF file's header, sections and symbols, read as hostile input:
the 32-bit vDSO (vdso32.so{,.dbg}) kbuild made, and its 32-bit objects.
kbuild ran the tree's code, so every offset, size, count and name is
checked against the file before it is used; anything out of it is an
ElfError naming what, never an IndexError or a struct.error.

    parse(data)          Elf32: type, sections [Section], symbols(kind)
    undefined(data)      the names a relocatable object needs from elsewhere
                         (its .symtab's SHN_UNDEF symbols)
    LIBGCC               what gcc calls in libgcc for what i386 cannot do
                         inline (a u64 division: __udivdi3): the vDSO links
                         no libgcc, so such a call cannot link

ELFCLASS32, little-endian, EM_386 only: an ELF64 file (the 64-bit vDSO) or
another machine's is refused by name.
"""

import re
import struct
from typing import NamedTuple

LIMIT = 4 << 20  # a vdso32.so.dbg is ~40 KiB, its objects less
EHDR = struct.Struct("<16sHHIIIIIHHHHHH")
SHDR = struct.Struct("<IIIIIIIIII")
SYM = struct.Struct("<IIIBBH")
ET_REL, ET_DYN, EM_386 = 1, 3, 3
SHT_SYMTAB, SHT_STRTAB, SHT_DYNSYM, SHT_NOBITS = 2, 3, 11, 8
SHF_ALLOC = 0x2
SHN_UNDEF, SHN_LORESERVE, SHN_ABS = 0, 0xff00, 0xfff1
STT_FUNC, STB_GLOBAL, STB_WEAK = 2, 1, 2
MAX_SECTIONS, MAX_SYMBOLS, MAX_NAME = 1024, 1 << 16, 4096
LIBGCC = re.compile(r"^__(u?(div|mod|divmod)|ashl|ashr|lshr|mul|neg|cmp|ucmp|ffs|clz|"
                    r"ctz|popcount|parity|bswap)[a-z]*[dts]i[234]$")


class ElfError(ValueError):
    pass


class Section(NamedTuple):
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    entsize: int


class Symbol(NamedTuple):
    name: str
    value: int
    size: int
    type: int
    bind: int
    shndx: int


def cstring(data, table, at, what):
    """The NUL-terminated name at `at` of the string table section `table`."""
    if at >= table.size:
        raise ElfError(f"{what}: its name's offset {at} is past its string table")
    start = table.offset + at
    end = data.find(b"\0", start, min(table.offset + table.size, start + MAX_NAME))
    if end < 0:
        raise ElfError(f"{what}: its name is not terminated within its string table")
    return data[start:end].decode("ascii", "replace")


class Elf32:
    def __init__(self, data):
        if not isinstance(data, (bytes, bytearray)) or len(data) > LIMIT:
            raise ElfError(f"not an ELF file of at most {LIMIT} bytes")
        if len(data) < EHDR.size or data[:4] != b"\x7fELF":
            raise ElfError("not an ELF file (no ELF header)")
        if data[4] != 1:
            raise ElfError(f"ELF class {data[4]}, not ELFCLASS32 (1): not a 32-bit file")
        if data[5] != 1 or data[6] != 1:
            raise ElfError("not a little-endian ELF version 1 file")
        (_, self.type, machine, _, _, _, shoff, _, _, _, _, shentsize, shnum,
         shstrndx) = EHDR.unpack_from(data)
        if machine != EM_386:
            raise ElfError(f"machine {machine}, not EM_386 (3): not an i386 file")
        if shnum == 0 or shnum > MAX_SECTIONS or shentsize != SHDR.size:
            raise ElfError(f"{shnum} section headers of {shentsize} bytes: not a file "
                           "with sections")
        if shoff + shnum * SHDR.size > len(data):
            raise ElfError(f"its section headers (at {shoff}) run past its "
                           f"{len(data)} bytes")
        raw = [SHDR.unpack_from(data, shoff + i * SHDR.size) for i in range(shnum)]
        for i, h in enumerate(raw):
            if h[1] != SHT_NOBITS and h[4] + h[5] > len(data):
                raise ElfError(f"section {i} runs past the file's end")
        if shstrndx >= shnum or raw[shstrndx][1] != SHT_STRTAB:
            raise ElfError(f"e_shstrndx {shstrndx} names no string table")
        names = Section("", *raw[shstrndx][1:7], raw[shstrndx][9])
        self.data = bytes(data)
        self.sections = [Section(cstring(self.data, names, h[0], f"section {i}"),
                                 *h[1:7], h[9]) for i, h in enumerate(raw)]

    def symbols(self, kind=SHT_SYMTAB):
        """[Symbol] of the .symtab (or SHT_DYNSYM's), [] where there is none."""
        table = next((s for s in self.sections if s.type == kind), None)
        if table is None:
            return []
        if table.entsize != SYM.size or table.size % SYM.size:
            raise ElfError(f"{table.name}: entries of {table.entsize} bytes, not "
                           f"{SYM.size}")
        if table.size // SYM.size > MAX_SYMBOLS:
            raise ElfError(f"{table.name}: more than {MAX_SYMBOLS} symbols")
        if table.link >= len(self.sections) or \
                self.sections[table.link].type != SHT_STRTAB:
            raise ElfError(f"{table.name}: sh_link {table.link} names no string table")
        strings = self.sections[table.link]
        out = []
        for i in range(table.size // SYM.size):
            name, value, size, info, _, shndx = SYM.unpack_from(
                self.data, table.offset + i * SYM.size)
            what = f"{table.name} symbol {i}"
            out.append(Symbol(cstring(self.data, strings, name, what), value, size,
                              info & 0xf, info >> 4, shndx))
        return out

    def out_of_range(self, sym):
        """Why a defined symbol is not within the allocated section it names, or
        None."""
        if sym.shndx == SHN_ABS:
            return None
        if sym.shndx >= min(len(self.sections), SHN_LORESERVE):
            return f"{sym.name}: section index {sym.shndx} names no section"
        sec = self.sections[sym.shndx]
        if not sec.flags & SHF_ALLOC:
            return f"{sym.name}: in {sec.name or '?'}, which is not loaded"
        if not sec.addr <= sym.value <= sym.value + sym.size <= sec.addr + sec.size:
            return (f"{sym.name}: {sym.value:#x}+{sym.size} is outside {sec.name} "
                    f"[{sec.addr:#x}, {sec.addr + sec.size:#x})")
        return None


def parse(data):
    return Elf32(data)


def undefined(data):
    """The sorted names of a 32-bit object's undefined symbols."""
    return sorted({s.name for s in parse(data).symbols() if s.shndx == SHN_UNDEF and s.name})
