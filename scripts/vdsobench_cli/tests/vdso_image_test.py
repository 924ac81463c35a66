"""vdso_image.py on synthetic vDSO images (tests/vdso_images.py: built here,
deterministic, no kernel tree needed), read by the loader's own parser
(//impls/image:vdsobench_image_check): the counter slots found through 14-
and 12-byte struct alt_instr, the vvar area from a symbol table, the entry
points, the data store's pages, a kbuild image's .dbg and its options; and
hostile images, each refused with one line naming the file."""
import os
import struct
import tempfile
import unittest

from vdsobench_cli.cli import build
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import vdso_image
from vdsobench_cli.tests import vdso_images
from vdsobench_cli.tests.vdso_images import synth

TESTDATA = build.ROOT / "impls" / "image" / "testdata"


class Parse(unittest.TestCase):
    def test_v6_12_alternatives(self):
        info = vdso_image.parse(synth(14))
        self.assertEqual(info["alts"], 2)
        self.assertEqual(info["sites"], [0x100])
        self.assertEqual({(s["replacement"], s["feature"]) for s in info["slots"]},
                         {("lfence_rdtsc", 642), ("rdtscp", 59)})
        self.assertEqual(info["syms"], {"__vdso_clock_gettime": 0x100,
                                        "__vdso_gettimeofday": 0x108, "__vdso_time": 0x110,
                                        "__vdso_clock_getres": 0x118})
        self.assertEqual(info["vvar_start"], -4 * 4096)  # no symbol table: v6.1..v6.12's

    def test_v6_1_alternatives(self):
        info = vdso_image.parse(synth(12, alts=[(0x100, 0x110, 114, 5, 5),
                                                (0x100, 0x115, 59, 5, 3)]))
        self.assertEqual(info["sites"], [0x100])
        self.assertEqual({s["feature"] for s in info["slots"]}, {114, 59})

    def test_vvar_start_from_symtab(self):
        self.assertEqual(vdso_image.parse(synth(vvar_start=-6 * 4096))["vvar_start"],
                         -6 * 4096)

    def test_data_pages_of_each_layout(self):
        """v6.1..v6.14: the data at 128 of the first page, the time namespace's
        page last; the data store (v6.15 on, by its vdso_u_data): at 0 of the
        first, the namespace's page next."""
        old = vdso_image.parse(synth(14))
        self.assertEqual((old["data_page"], old["timens_page"], old["data_offset"]),
                         (0, 3, 128))
        new = vdso_image.parse(synth(vvar_start=-6 * 4096, symbol="vdso_u_data"))
        self.assertEqual((new["vvar_start"], new["data_page"], new["timens_page"],
                          new["data_offset"]), (-6 * 4096, 0, 1, 0))
        text = vdso_image.c_header(b"x", new)
        for line in ("VVAR_PAGES 6", "DATA_PAGE 0", "TIMENS_PAGE 1", "DATA_OFFSET 0"):
            self.assertIn(f"#define KIMPORT_IMAGE_{line}\n", text)
        # the paravirtual pages: v6.1..v6.14's second and third, none known in the other
        self.assertEqual((old["pvclock_page"], old["hvclock_page"]), (1, 2))
        self.assertEqual((new["pvclock_page"], new["hvclock_page"]), (-1, -1))
        self.assertIn("#define KIMPORT_IMAGE_PVCLOCK_PAGE 1\n", vdso_image.c_header(b"x", old))

    def test_a_checker_naming_pages_outside_the_area_is_refused(self):
        """Its page numbers go into the header, and the loader maps a page there:
        one outside the vvar area, or not a number, is refused."""
        good = {"class": 64, "span": 8192, "vvar_start": -16384, "data_page": 0,
                "timens_page": 3,
                "data_offset": 128, "pvclock_page": 1, "hvclock_page": 2,
                "syms": {"__kernel_vsyscall": 0x10c}, "slots": [], "alternatives": 0,
                "syscalls": [{"at": 0x105, "target": 0x10c, "feature": 111}], "int80_left": 0,
                "gates": [{"at": 0xc3, "replacement": "sysenter", "feature": 111}]}
        self.assertIsNone(vdso_image.shape_problem(good))
        for key, bad in (("pvclock_page", 4), ("hvclock_page", -2), ("pvclock_page", "1"),
                         ("hvclock_page", None), ("class", 33), ("class", "32"),
                         ("syscalls", [{"at": 0x105, "target": 0x100}]),
                         ("syscalls", [{"at": 9000, "target": 0x10c}]), ("syscalls", None),
                         ("int80_left", -1), ("int80_left", "0"), ("gates", None),
                         ("gates", [{"at": 9000, "replacement": "sysenter"}]),
                         ("gates", [{"at": 0xc3, "replacement": "int $0x80\n"}])):
            self.assertEqual(vdso_image.shape_problem(dict(good, **{key: bad})), key)

    def test_the_system_call_alternative_of_a_vdso32(self):
        """v7.x's `ds;ds;ds;int $0x80` -> `call __kernel_vsyscall`: the site the
        loader applies, and none left in place; without its alternative, one
        left (vdso32_image.take refuses that)."""
        info = vdso_image.parse(vdso_images.sysfast32(), want_class=32)
        self.assertEqual((info["syscalls"], info["int80_left"]), ([0x105], 0))
        self.assertEqual(info["sites"], [0x100], "a system call is no counter slot")
        self.assertEqual(info["syms"]["__kernel_vsyscall"], 0x10c)
        info = vdso_image.parse(vdso_images.sysfast32(alt=None), want_class=32)
        self.assertEqual((info["syscalls"], info["int80_left"]), ([], 1))
        self.assertEqual(vdso_image.parse(synth())["syscalls"], [])

    def test_the_gate_alternatives_of_a_vdso32(self):
        """__kernel_vsyscall's fast entries, v6.x's (two on one slot) and v7.x's
        (int $0x80; ret skipped, the sysenter sequence made syscall's), which
        the loader applies as the running kernel's gate enters: what the
        import records (vdso32_image.take's "gate")."""
        self.assertEqual(vdso_image.parse(vdso_images.gate32(6), want_class=32)["gates"],
                         [(0xc3, "syscall"), (0xc3, "sysenter")])
        self.assertEqual(vdso_image.parse(vdso_images.gate32(7), want_class=32)["gates"],
                         [(0xc0, "skip"), (0xc6, "syscall")])
        self.assertEqual(vdso_image.parse(vdso_images.sysfast32(), want_class=32)["gates"], [])
        from vdsobench_cli.kimport import vdso32_image
        with tempfile.TemporaryDirectory() as d:
            gate = vdso32_image.take(d, vdso_images.gate32(7), None)["gate"]
        self.assertEqual(gate["sites"], [{"at": 0xc0, "replacement": "skip"},
                                         {"at": 0xc6, "replacement": "syscall"}])
        self.assertIn("running kernel's own __kernel_vsyscall", gate["applied"])

    def test_options_are_stated_only_where_known(self):
        info = vdso_image.parse(synth(14))
        self.assertNotIn("KIMPORT_IMAGE_CONFIG", vdso_image.c_header(b"x", info))
        text = vdso_image.c_header(b"x", info, {"POSIX_AUX_CLOCKS": False, "TIME_NS": True,
                                                 "GENERIC_VDSO_OVERFLOW_PROTECT": True})
        self.assertIn("#define KIMPORT_IMAGE_CONFIG_POSIX_AUX_CLOCKS 0\n", text)
        self.assertIn("#define KIMPORT_IMAGE_CONFIG_TIME_NS 1\n", text)
        # a name that is no option never reaches the header
        text = vdso_image.c_header(b"x", info, {"X\n#include </etc/shadow>": True})
        self.assertNotIn("shadow", text)

    def test_an_image_laid_out_otherwise_than_the_writer_is_refused(self):
        on, off = {"GENERIC_VDSO_OVERFLOW_PROTECT": True}, {"GENERIC_VDSO_OVERFLOW_PROTECT": 0}
        self.assertIsNone(vdso_image.layout_differs(None, off))  # no options: the shim's
        self.assertIsNone(vdso_image.layout_differs(on, {"GENERIC_VDSO_OVERFLOW_PROTECT": 1}))
        self.assertIn("built with CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT",
                      vdso_image.layout_differs(on, {}))
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(UsageError) as cm:
                vdso_image.take(d, "x86_64", synth(), "x.so", {}, config=on)
            self.assertIn("without CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT", str(cm.exception))
            self.assertEqual(os.listdir(d), [])

    def test_a_dbg_ships_what_its_stripped_image_does(self):
        """objcopy -S rewrites the ELF and program headers and drops what follows
        the segment's end in the .so (v7.3: __ex_table): the rest is the same."""
        dbg = synth(vvar_start=-6 * 4096, symbol="vdso_u_data")
        end = 0x40 + 56 * 2  # synth's two program headers
        so = bytearray(dbg[:0x3f0])
        so[40:48] = bytes(8)  # e_shoff rewritten
        struct.pack_into("<QQ", so, 0x40 + 32, len(so), len(so))  # p_filesz, p_memsz
        self.assertTrue(vdso_image.shipped_by(dbg, bytes(so)))
        so[end + 1] ^= 1  # one byte of what is mapped
        self.assertFalse(vdso_image.shipped_by(dbg, bytes(so)))
        self.assertFalse(vdso_image.shipped_by(dbg, b"so64"))
        self.assertFalse(vdso_image.shipped_by(b"\x7fELF\x02" + bytes(59), dbg))

    def test_header(self):
        data = synth(names=vdso_images.SYMS[:3])
        text = vdso_image.c_header(data, vdso_image.parse(data))
        self.assertIn("#define KIMPORT_IMAGE_CLOCK_GETTIME 256", text)
        self.assertIn("#define KIMPORT_IMAGE_GETTIMEOFDAY 264", text)
        self.assertIn("#define KIMPORT_IMAGE_CLOCK_GETRES -1", text)  # not exported
        self.assertIn(f"#define KIMPORT_IMAGE_LEN {len(data)}", text)
        self.assertIn("#define KIMPORT_IMAGE_VVAR_PAGES 4", text)

    def test_the_corpus_is_what_the_generator_writes(self):
        """impls/image/testdata (the C tests' and the fuzzer's seeds) is
        vdso_images.corpus(): regenerate it with vdso_images.py's command."""
        files = vdso_images.corpus()
        self.assertEqual(sorted(os.listdir(TESTDATA)), sorted(files))
        for name, data in files.items():
            self.assertEqual((TESTDATA / name).read_bytes(), data, name)


class Hostile(unittest.TestCase):
    def test_every_crafted_case_is_refused(self):
        for case, (make, phrase) in vdso_images.HOSTILE.items():
            with self.subTest(case):
                with self.assertRaises(vdso_image.ImageError) as cm:
                    vdso_image.parse(make())
                self.assertIn(phrase, str(cm.exception))
                self.assertEqual(len(str(cm.exception).splitlines()), 1)

    def test_every_crafted_i386_case_is_refused(self):
        """The same checker on ELFCLASS32 images (a vdso32.so's class)."""
        for case, (make, phrase) in vdso_images.HOSTILE32.items():
            with self.subTest(case):
                with self.assertRaises(vdso_image.ImageError) as cm:
                    vdso_image.parse(make(), want_class=32)
                self.assertIn(phrase, str(cm.exception))
                self.assertEqual(len(str(cm.exception).splitlines()), 1)

    def test_an_i386_image_is_no_vdso64(self):
        """--vdso-image takes the 64-bit image: a vdso32.so the check reads is
        refused for it, in one line, and taken where an i386 one is asked for."""
        data = vdso_images.good32()["i386-v6.12"]
        with self.assertRaises(UsageError) as cm:
            vdso_image.checked(data, "vdso32.so")
        self.assertIn("--vdso-image vdso32.so: it is an i386 vdso32.so (ELFCLASS32), not an "
                      "x86-64 vdso64.so", str(cm.exception))
        info = vdso_image.parse(data, want_class=32)
        self.assertEqual((info["class"], info["vvar_start"], info["data_offset"]),
                         (32, -16384, 128))
        with self.assertRaises(vdso_image.ImageError):
            vdso_image.parse(synth(), want_class=32)

    def test_an_i386_image_is_stored_where_the_check_takes_it(self):
        """import keeps kbuild's vdso32 image for the i386 +image variants
        (vdso32_image.take): stored with its header where check.c takes it, else
        one line why and nothing written; rule_view() offers the variants only
        where the files are the tree's and its 32-bit vDSO builds."""
        from vdsobench_cli.kimport import imports_table, vdso32_image
        with tempfile.TemporaryDirectory() as d:
            v32 = vdso32_image.take(d, vdso_images.good32()["i386-v6.12"], None)
            self.assertEqual((v32["file"], v32["vvar_start"]), ("vdso/vdso32.so", -16384))
            header = open(os.path.join(d, v32["header"])).read()
            self.assertIn("#define KIMPORT_IMAGE_VVAR_PAGES 4\n", header)
            self.assertIn("#define KIMPORT_IMAGE_KERNEL_VSYSCALL -1\n", header)  # synth's has none
            meta = {"compat": True, "image": {"vdso32": v32},
                    "files": [v32["file"], v32["header"]]}
            self.assertTrue(imports_table.image32(meta))
            self.assertFalse(imports_table.image32(dict(meta, compat=False)))
            self.assertFalse(imports_table.image32(dict(meta, files=[v32["file"]])))
            self.assertFalse(imports_table.image32(dict(meta, writer="dwarf")))
        with tempfile.TemporaryDirectory() as d:
            make, phrase = vdso_images.HOSTILE32["i386-no-time"]
            v32 = vdso32_image.take(d, make(), None)
            self.assertEqual(list(v32), ["none"])
            self.assertIn(phrase, v32["none"])
            self.assertEqual(os.listdir(d), [])
            # a vdso64.so where the vdso32 image should be
            self.assertIn("not an i386 vdso32.so", vdso32_image.take(d, synth(), None)["none"])
            self.assertFalse(imports_table.image32({"compat": True, "image": {"vdso32": v32}}))

    def test_a_dbg_ships_what_its_stripped_i386_image_does(self):
        """shipped_by() reads both classes' program headers."""
        data = vdso_images.good32()["i386-v6.12"]
        self.assertTrue(vdso_image.shipped_by(data, data))
        changed = bytearray(data)
        changed[0x100] ^= 1  # the slot's first byte
        self.assertFalse(vdso_image.shipped_by(data, bytes(changed)))
        self.assertFalse(vdso_image.shipped_by(data, synth()))

    def test_truncated_at_many_lengths(self):
        # every cut, in C: //impls/image:fuzz_corpus_test; here one line each
        # through the checker's process (0.3 s a run)
        data = synth()
        for n in range(0, len(data), 29):
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
                vdso_image.take(d, "aarch64", synth(), "x.so")
            self.assertIn("valid: x86_64", str(cm.exception))
            self.assertEqual(os.listdir(d), [])

    def test_take_writes_the_image_and_its_header(self):
        with tempfile.TemporaryDirectory() as d:
            meta = vdso_image.take(d, "x86_64", synth(), "x.so")
            with open(os.path.join(d, vdso_image.STORED), "rb") as f:
                self.assertEqual(f.read(), synth())
            with open(os.path.join(d, vdso_image.HEADER)) as f:
                self.assertIn("kimport_image_bytes", f.read())
            self.assertEqual((meta["counter_sites"], meta["alternatives"]), (1, 2))

    def test_key_changes_with_the_image(self):
        a, b = (synth(), "a", None), (synth(12, alts=[(0x100, 0x110, 114, 5, 5)]), "b", None)
        self.assertEqual(vdso_image.keyed("k", None), "k")
        self.assertNotEqual(vdso_image.keyed("k", a), vdso_image.keyed("k", b))
        # and with the options it was built with
        self.assertNotEqual(vdso_image.keyed("k", a),
                            vdso_image.keyed("k", a[:2] + ({"TIME_NS": True},)))


if __name__ == "__main__":
    unittest.main()
