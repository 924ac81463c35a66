"""vdso_image.py on synthetic vDSO images built here (deterministic, no
kernel tree needed): the counter slots found through 14- and 12-byte
struct alt_instr, the vvar area from a symbol table, the entry points;
and hostile images, each refused with one line naming the file."""
import os
import struct
import tempfile
import unittest

from vdsobench_cli.kimport import kernel_import, vdso_image
from vdsobench_cli.cli.errors import UsageError

SLOT = b"\x0f\x31\x90\x90\x90"  # rdtsc, nop-padded: rdtsc_ordered()'s original
REPL = vdso_image.LFENCE_RDTSC + vdso_image.RDTSCP


def synth(alt_size=14, vvar_start=None, names=("__vdso_clock_gettime", "__vdso_time"),
          alts=None, loads=1):
    """A minimal x86-64 vDSO: one PT_LOAD over the whole file, a slot at 0x100,
    its two replacements at 0x110, .altinstructions at 0x120, .dynsym (and a
    .symtab with vvar_start when given)."""
    img = bytearray(0x400)
    img[0x100:0x105] = SLOT
    img[0x110:0x118] = REPL
    fmt = "<iiIBB" if alt_size == 14 else "<iiHBB"
    entries = alts if alts is not None else [(0x100, 0x110, 642, 5, 5), (0x100, 0x115, 59, 5, 3)]
    at = 0x120
    for instr, repl, feat, ilen, rlen in entries:
        struct.pack_into(fmt, img, at, instr - at, repl - (at + 4), feat, ilen, rlen)
        at += alt_size
    alt_len = at - 0x120
    dynstr = b"\0" + b"\0".join(n.encode() for n in names) + b"\0"
    img[0x180:0x180 + len(dynstr)] = dynstr
    sym, off = bytearray(24), 1
    for i, n in enumerate(names):
        sym += struct.pack("<IBBHQQ", off, 0x12, 0, 13, 0x100 + 8 * i, 8)
        off += len(n) + 1
    img[0x200:0x200 + len(sym)] = sym
    symtab = bytearray(24) + struct.pack("<IBBHQQ", 1, 0, 0, 1,
                                         (vvar_start or 0) & (2**64 - 1), 0)
    img[0x2a0:0x2a0 + len(symtab)] = symtab
    img[0x2e0:0x2ec] = b"\0vvar_start\0"
    shstr = b"\0.altinstructions\0.altinstr_replacement\0.dynsym\0.dynstr\0.shstrtab\0" \
            b".symtab\0.strtab\0"
    img[0x300:0x300 + len(shstr)] = shstr

    def name(n):
        return shstr.index(n.encode() + b"\0")
    shdrs = [(0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
             (name(".altinstructions"), 1, 2, 0x120, 0x120, alt_len, 0, 0, 1, 0),
             (name(".altinstr_replacement"), 1, 6, 0x110, 0x110, 8, 0, 0, 1, 0),
             (name(".dynsym"), 11, 2, 0x200, 0x200, len(sym), 4, 1, 8, 24),
             (name(".dynstr"), 3, 2, 0x180, 0x180, len(dynstr), 0, 0, 1, 0),
             (name(".shstrtab"), 3, 0, 0, 0x300, len(shstr), 0, 0, 1, 0)]
    if vvar_start is not None:
        shdrs += [(name(".symtab"), 2, 0, 0, 0x2a0, len(symtab), 7, 1, 8, 24),
                  (name(".strtab"), 3, 0, 0, 0x2e0, 12, 0, 0, 1, 0)]
    shoff = len(img)
    for sh in shdrs:
        img += struct.pack("<IIQQQQIIQQ", *sh)
    phdrs = b"".join(struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, len(img), len(img), 0x1000)
                     for _ in range(loads))
    img[0x40:0x40 + len(phdrs)] = phdrs
    struct.pack_into("<16sHHIQQQIHHHHHH", img, 0, b"\x7fELF\x02\x01\x01" + bytes(9), 3, 62,
                     1, 0, 0x40, shoff, 0, 64, 56, loads, 64, len(shdrs), 5)
    return bytes(img)


class Parse(unittest.TestCase):
    def test_v6_12_alternatives(self):
        info = vdso_image.parse(synth(14))
        self.assertEqual(info["alts"], 2)
        self.assertEqual(info["sites"], [0x100])
        self.assertEqual({(s["replacement"], s["feature"]) for s in info["slots"]},
                         {("lfence_rdtsc", 642), ("rdtscp", 59)})
        self.assertEqual(info["syms"], {"__vdso_clock_gettime": 0x100, "__vdso_time": 0x108})
        self.assertEqual(info["vvar_start"], -4 * 4096)  # no symbol table: v6.1..v6.12's

    def test_v6_1_alternatives(self):
        info = vdso_image.parse(synth(12, alts=[(0x100, 0x110, 114, 5, 5),
                                                (0x100, 0x115, 59, 5, 3)]))
        self.assertEqual(info["sites"], [0x100])
        self.assertEqual({s["feature"] for s in info["slots"]}, {114, 59})

    def test_vvar_start_from_symtab(self):
        self.assertEqual(vdso_image.parse(synth(vvar_start=-6 * 4096))["vvar_start"],
                         -6 * 4096)

    def test_header(self):
        data = synth()
        text = vdso_image.c_header(data, vdso_image.parse(data), "x")
        self.assertIn("#define KIMPORT_IMAGE_CLOCK_GETTIME 256", text)
        self.assertIn("#define KIMPORT_IMAGE_CLOCK_GETRES -1", text)  # not exported
        self.assertIn(f"#define KIMPORT_IMAGE_LEN {len(data)}", text)
        self.assertIn("#define KIMPORT_IMAGE_VVAR_PAGES 4", text)


class Hostile(unittest.TestCase):
    def refused(self, data, phrase):
        with self.assertRaises(vdso_image.ImageError) as cm:
            vdso_image.parse(data)
        self.assertIn(phrase, str(cm.exception))

    def test_not_elf(self):
        self.refused(b"\0" * 100, "not an ELF file")

    def test_other_machine(self):
        data = bytearray(synth())
        struct.pack_into("<H", data, 18, 183)  # aarch64
        self.refused(bytes(data), "not an x86-64 shared object")

    def test_two_loads(self):
        self.refused(synth(loads=2), "2 PT_LOAD segments")

    def test_alternative_outside(self):
        self.refused(synth(alts=[(0x100, 0x10000, 642, 5, 5)]), "neither of 14- nor of 12")

    def test_replacement_longer_than_slot(self):
        self.refused(synth(alts=[(0x100, 0x110, 642, 3, 5)]), "neither of 14- nor of 12")

    def test_no_slot(self):
        self.refused(synth(alts=[(0x180, 0x115, 59, 5, 3)]), "no rdtsc_ordered() slot")

    def test_no_clock_gettime(self):
        self.refused(synth(names=("__vdso_time",)), "no __vdso_clock_gettime")

    def test_bad_vvar_start(self):
        self.refused(synth(vvar_start=-100), "vvar_start -100")

    def test_truncated_every_length(self):
        data = synth()
        for n in range(0, len(data), 7):
            with self.assertRaises(UsageError):
                vdso_image.checked(data[:n], "cut.so")

    def test_given_names_the_file(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "bad.so")
            with open(p, "wb") as f:
                f.write(b"\x7fELF" + bytes(60))
            with self.assertRaises(UsageError) as cm:
                vdso_image.given(p)
            self.assertIn("--vdso-image " + p, str(cm.exception))
            with self.assertRaises(UsageError):
                vdso_image.given(os.path.join(d, "missing.so"))
        with self.assertRaises(UsageError):  # a device: never read
            vdso_image.given("/dev/zero")

    def test_take_refuses_another_arch(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(UsageError) as cm:
                vdso_image.take(d, d, "aarch64", synth(), "x.so", kernel_import.write_inside)
            self.assertIn("valid: x86_64", str(cm.exception))
            self.assertEqual(os.listdir(d), [])

    def test_take_writes_the_image_and_its_header(self):
        with tempfile.TemporaryDirectory() as d:
            meta = vdso_image.take(d, d, "x86_64", synth(), "x.so", kernel_import.write_inside)
            with open(os.path.join(d, vdso_image.STORED), "rb") as f:
                self.assertEqual(f.read(), synth())
            with open(os.path.join(d, vdso_image.HEADER)) as f:
                self.assertIn("kimport_image_bytes", f.read())
            self.assertEqual((meta["counter_sites"], meta["alternatives"]), (1, 2))

    def test_key_changes_with_the_image(self):
        a, b = (synth(), "a"), (synth(12, alts=[(0x100, 0x110, 114, 5, 5)]), "b")
        self.assertEqual(vdso_image.keyed("k", None), "k")
        self.assertNotEqual(vdso_image.keyed("k", a), vdso_image.keyed("k", b))


if __name__ == "__main__":
    unittest.main()
