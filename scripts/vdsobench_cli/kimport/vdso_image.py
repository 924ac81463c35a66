"""The tree's own vDSO image (issue 20 item 3): a kernel's vdso64.so taken in
beside an import, checked, and written as the C header the image variants
kernel:NAME+{rdtsc,lfence_rdtsc,rdtscp,fake}+image embed
(kernel_import/glue/variant.c with KIMPORT_IMAGE, impls/image/loader.c).

Follows the x86-64 vDSO of v6.1..v6.12 (arch/x86/entry/vdso/vdso-layout.lds.S,
vdso2c.h, arch/x86/include/asm/alternative.h): one PT_LOAD at address 0, the
vvar area 4 pages before it (its symbol table's vvar_start where the file
has one: a vdso64.so.dbg), the data at vvar + 128, .altinstructions of
14-byte struct alt_instr, the __vdso_* entry points in .dynsym. An image is
other people's input: every offset is checked before anything is written.
"""
import hashlib
import struct

from vdsobench_cli.cli.errors import UsageError

LIMIT = 1 << 20  # a vdso64.so is 7 KiB, its .dbg 50 KiB
PAGE = 4096
DEFAULT_VVAR_START = -4 * PAGE  # v6.1..v6.12: vvar, pvclock, hvclock, timens
DATA_OFFSET = 128  # asm/vvar.h DECLARE_VVAR(128, struct vdso_data, _vdso_data)
SYMS = ("__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time", "__vdso_clock_getres")
RDTSC = b"\x0f\x31"
LFENCE_RDTSC = b"\x0f\xae\xe8\x0f\x31"
RDTSCP = b"\x0f\x01\xf9"
# struct alt_instr, packed: 14 bytes from v6.3 (u32 ft_flags), 12 before (u16 cpuid)
ALTS = (struct.Struct("<iiIBB"), struct.Struct("<iiHBB"))
HEADER = "include/generated/kimport_image.h"
STORED = "vdso/vdso64.so"
COUNTERS = ("rdtsc", "lfence_rdtsc", "rdtscp", "fake")


class ImageError(ValueError):
    """What is wrong with an image, in one phrase."""


def _inside(off, n, length):
    return 0 <= off <= length and 0 <= n <= length - off


class Elf:
    """The parts of an x86-64 ELF shared object a vDSO loader reads."""

    def __init__(self, data):
        self.data = data
        if len(data) < 64 or data[:4] != b"\x7fELF":
            raise ImageError("not an ELF file")
        if data[4] != 2 or data[5] != 1:
            raise ImageError("not a 64-bit little-endian ELF file")
        (e_type, e_machine, _, _, e_phoff, e_shoff, _, _, e_phentsize, e_phnum,
         e_shentsize, e_shnum, e_shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", data, 16)
        if e_machine != 62 or e_type != 3:
            raise ImageError("not an x86-64 shared object (a vdso64.so is one)")
        if e_phentsize != 56 or not _inside(e_phoff, e_phnum * 56, len(data)):
            raise ImageError("its program headers are outside the file")
        self.phdrs = [struct.unpack_from("<IIQQQQQQ", data, e_phoff + i * 56)
                      for i in range(e_phnum)]
        self.sections = {}
        self.shdrs = []
        if e_shnum and e_shentsize == 64 and _inside(e_shoff, e_shnum * 64, len(data)) \
                and e_shstrndx < e_shnum:
            self.shdrs = [struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * 64)
                          for i in range(e_shnum)]
            names = self.shdrs[e_shstrndx]
            if _inside(names[4], names[5], len(data)):
                table = data[names[4]:names[4] + names[5]]
                for sh in self.shdrs:
                    if sh[0] < len(table):
                        self.sections[table[sh[0]:].split(b"\0", 1)[0].decode(
                            "ascii", "replace")] = sh

    def load(self):
        """(span) of the one PT_LOAD, which must sit at address 0 of the file."""
        loads = [p for p in self.phdrs if p[0] == 1]
        if len(loads) != 1:
            raise ImageError(f"it has {len(loads)} PT_LOAD segments (a vDSO has one)")
        _, _, off, vaddr, _, filesz, memsz, _ = loads[0]
        if off != 0 or vaddr != 0 or filesz > memsz or filesz > len(self.data) \
                or memsz > 64 << 20:
            raise ImageError("its PT_LOAD is not one segment at address 0 of the file")
        return memsz

    def symbols(self, sh_type):
        """{name: value} of the defined symbols of every table of that type
        (11 .dynsym, 2 .symtab)."""
        out = {}
        for sh in self.shdrs:
            if sh[1] != sh_type or sh[9] != 24 or sh[6] >= len(self.shdrs):
                continue
            strs = self.shdrs[sh[6]]
            if not _inside(sh[4], sh[5], len(self.data)) or \
                    not _inside(strs[4], strs[5], len(self.data)):
                continue
            table = self.data[strs[4]:strs[4] + strs[5]]
            for k in range(sh[5] // 24):
                st_name, _, _, shndx, value, _ = struct.unpack_from(
                    "<IBBHQQ", self.data, sh[4] + k * 24)
                if shndx and st_name < len(table):
                    out.setdefault(table[st_name:].split(b"\0", 1)[0].decode(
                        "ascii", "replace"), value)
        return out


def alt_entries(data, addr, size, length, rs):
    """(instr, repl, feature, instrlen, replacementlen) of each alternative,
    read with the entry size (14, else 12) for which every one points inside
    the image and its replacement inside .altinstr_replacement (both sizes
    divide some sections: 84 bytes in Debian's 6.1)."""
    for alt in ALTS:
        if size % alt.size:
            continue
        out = []
        for k in range(0, size, alt.size):
            instr_off, repl_off, ft_flags, instrlen, repllen = alt.unpack_from(data, addr + k)
            instr, repl = addr + k + instr_off, addr + k + 4 + repl_off
            if not (_inside(instr, instrlen, length) and _inside(repl, repllen, length)) \
                    or repllen > instrlen or (rs is not None and not (
                        rs[3] <= repl and _inside(repl - rs[3], repllen, rs[5]))):
                break
            out.append((instr, repl, ft_flags & 0xffff, instrlen, repllen))
        else:
            return out
    raise ImageError("its .altinstructions is neither of 14- nor of 12-byte entries "
                     "pointing inside the image")


def parse(data):
    """What the loader will find in an image: {span, vvar_start, syms, alts,
    slots}; ImageError when it would refuse it."""
    elf = Elf(data)
    span = elf.load()
    dyn = elf.symbols(11)
    syms = {}
    for name in SYMS:
        if name in dyn:
            if dyn[name] >= span:
                raise ImageError(f"{name} is outside the image")
            syms[name] = dyn[name]
    if SYMS[0] not in syms:
        raise ImageError("it exports no __vdso_clock_gettime")
    local = elf.symbols(2)
    vvar_start = DEFAULT_VVAR_START
    if "vvar_start" in local:
        vvar_start = struct.unpack("<q", struct.pack("<Q", local["vvar_start"]))[0]
    if vvar_start >= 0 or vvar_start % PAGE or vvar_start < -16 * PAGE:
        raise ImageError(f"vvar_start {vvar_start}: not whole pages before the image")
    alts, slots = 0, []
    sh = elf.sections.get(".altinstructions")
    if sh is None:
        raise ImageError("it has no .altinstructions (no counter slot to patch)")
    addr, size = sh[3], sh[5]
    if not _inside(addr, size, min(span, len(data))):
        raise ImageError("its .altinstructions is outside the image")
    entries = alt_entries(data, addr, size, min(span, len(data)),
                          elf.sections.get(".altinstr_replacement"))
    for instr, repl, ft_flags, instrlen, repllen in entries:
        alts += 1
        orig, rep = data[instr:instr + instrlen], data[repl:repl + repllen]
        if orig.startswith(RDTSC) and (rep.startswith(LFENCE_RDTSC) or rep.startswith(RDTSCP)):
            kind = "lfence_rdtsc" if rep.startswith(LFENCE_RDTSC) else "rdtscp"
            slots.append({"at": instr, "len": instrlen, "replacement": kind,
                          "feature": ft_flags})
    if not slots:
        raise ImageError(f"it has no rdtsc_ordered() slot among its {alts} alternatives")
    if any(s["len"] < 5 for s in slots):
        raise ImageError("a counter slot is shorter than the 5 bytes the fake counter's "
                         "call needs")
    return {"span": span, "vvar_start": vvar_start, "syms": syms, "alts": alts,
            "sites": sorted({s["at"] for s in slots}), "slots": slots,
            "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def c_header(data, info, given):
    """include/generated/kimport_image.h: the bytes and what parse() found."""
    span_pages = (info["span"] + PAGE - 1) // PAGE
    lines = ["/* generated by vdsobench import --vdso-image: do not edit */",
             "#ifndef KIMPORT_IMAGE_H", "#define KIMPORT_IMAGE_H",
             f"/* {len(data)} bytes, SHA-256 {info['sha256']} */",
             f"#define KIMPORT_IMAGE_LEN {len(data)}",
             f"#define KIMPORT_IMAGE_SPAN_PAGES {span_pages}",
             f"#define KIMPORT_IMAGE_VVAR_START ({info['vvar_start']}L)",
             f"#define KIMPORT_IMAGE_VVAR_PAGES {-info['vvar_start'] // PAGE}",
             f"#define KIMPORT_IMAGE_DATA_OFFSET {DATA_OFFSET}"]
    for name in SYMS:
        macro = "KIMPORT_IMAGE_" + name[len("__vdso_"):].upper()
        lines.append(f"#define {macro} {info['syms'].get(name, -1)}")
    lines.append("static const unsigned char kimport_image_bytes[KIMPORT_IMAGE_LEN] "
                 "__attribute__((aligned(16))) = {")
    for i in range(0, len(data), 16):
        lines.append("\t" + ", ".join(f"0x{b:02x}" for b in data[i:i + 16]) + ",")
    lines += ["};", "#endif", ""]
    return "\n".join(lines)


def read_image(path):
    """The bytes of --vdso-image FILE, a regular file under LIMIT; one line if not."""
    from vdsobench_cli.cli import safe_read
    return safe_read.read_regular(str(path), "--vdso-image", LIMIT)


def checked(data, given):
    try:
        return parse(data)
    except ImageError as e:
        raise UsageError(f"import: --vdso-image {given}: {e}") from None
    except struct.error:
        raise UsageError(f"import: --vdso-image {given}: truncated ELF structures") from None


def take(imports_dir, tree_dir, arch, image_path, given, write_inside):
    """Store an image beside an import's staged tree (tree_dir, under
    imports_dir): vdso/vdso64.so and include/generated/kimport_image.h,
    which the tree's hashes then cover, written by the import's own
    write_inside(tree, rel, data) (no symlink followed out of the tree).
    Returns the description for its kimport.json."""
    del imports_dir  # the tree is already inside it; kept for kbuild's call
    if arch != "x86_64":
        raise UsageError(f"import: --vdso-image {given}: an image is x86_64 only "
                         f"(not {arch}; valid: x86_64)")
    data = read_image(image_path) if not isinstance(image_path, bytes) else image_path
    info = checked(data, given)
    write_inside(tree_dir, STORED, data)
    write_inside(tree_dir, HEADER, c_header(data, info, given).encode())
    return {"file": STORED, "given": str(given), "sha256": info["sha256"],
            "size": info["size"], "vvar_start": info["vvar_start"],
            "alternatives": info["alts"], "counter_sites": len(info["sites"]),
            "counters": list(COUNTERS)}


def given(image_path):
    """--vdso-image FILE read and checked before anything is written:
    (bytes, FILE as given), or None without one."""
    if image_path is None:
        return None
    data = read_image(image_path)
    checked(data, image_path)
    return data, image_path


def keyed(key, image):
    """A tree's cache key with its image in it (the same key without one)."""
    if image is None:
        return key
    return hashlib.sha256(f"{key}+image:{hashlib.sha256(image[0]).hexdigest()}".encode()
                          ).hexdigest()
