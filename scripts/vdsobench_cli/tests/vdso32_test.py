"""The 32-bit vDSO's parts on made-up data: the ELF32 reader and image check
(hostile files), kbuild's failure read from a made-up make log and tree,
and the i386 code's naming of GOT-relative addresses. No kbuild, no
compiler (kernel_import_vdso32_test.py reviews a real patch); what import
stores of an image is read by the loader's own check (vdsobench_image_check,
built once)."""

import contextlib
import io
import os
import struct
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.kimport import elf32, kbuild_tree, kbuild_vdso32, vdso32_image
from vdsobench_cli.recipes import review_vdso32, review_vdso32_verify
from vdsobench_cli.tests import vdso_images

from reports import cover_letter

TEXT_ADDR, TEXT_SIZE = 0x100, 0x200


def strtab(names):
    """(bytes, {name: offset}) of a string table holding names."""
    data, at = b"\0", {}
    for n in names:
        at[n] = len(data)
        data += n.encode() + b"\0"
    return data, at


def elf(symbols, etype=elf32.ET_DYN, kind=elf32.SHT_DYNSYM, undefined=()):
    """An i386 ELF file: .text (loaded at TEXT_ADDR), a symbol table of kind
    with symbols [(name, value, size)] (functions in .text) and undefined
    names, its string table, .shstrtab."""
    names = [n for n, _, _ in symbols] + list(undefined)
    strings, at = strtab(names)
    syms = struct.pack("<IIIBBH", 0, 0, 0, 0, 0, 0)
    for n, value, size in symbols:
        syms += struct.pack("<IIIBBH", at[n], value, size, (1 << 4) | 2, 0, 1)
    for n in undefined:
        syms += struct.pack("<IIIBBH", at[n], 0, 0, (1 << 4) | 0, 0, 0)
    shstr, sat = strtab([".text", ".dynsym", ".dynstr", ".shstrtab"])
    body = bytes(TEXT_SIZE)
    off = 52
    parts, headers = [], [struct.pack("<10I", *([0] * 10))]
    for name, stype, flags, addr, data, link, entsize in (
            (".text", 1, 0x6, TEXT_ADDR, body, 0, 0),
            (".dynsym", kind, 0x2, 0, syms, 3, 16),
            (".dynstr", elf32.SHT_STRTAB, 0x2, 0, strings, 0, 0),
            (".shstrtab", elf32.SHT_STRTAB, 0, 0, shstr, 0, 0)):
        headers.append(struct.pack("<10I", sat[name], stype, flags, addr, off, len(data),
                                   link, 0, 1, entsize))
        parts.append(data)
        off += len(data)
    ident = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)
    ehdr = ident + struct.pack("<HHIIIIIHHHHHH", etype, elf32.EM_386, 1, 0, 0, off, 0, 52,
                               0, 0, 40, len(headers), 4)
    return ehdr + b"".join(parts) + b"".join(headers)


def good_image():
    return elf([(n, TEXT_ADDR + 0x10 * i, 0x10)
                for i, n in enumerate(vdso32_image.REQUIRED)])


class Elf32Test(unittest.TestCase):
    def test_a_whole_image_checks(self):
        c = vdso32_image.check(good_image())
        self.assertTrue(c["ok"], c)
        self.assertEqual(sorted(vdso32_image.REQUIRED), c["exports"])

    def test_every_truncation_is_refused_in_words(self):
        data = good_image()
        for n in range(len(data)):
            c = vdso32_image.check(data[:n])
            self.assertFalse(c["ok"], n)
            self.assertTrue(c["problems"], n)

    def test_the_wrong_class_or_machine_is_named(self):
        data = bytearray(good_image())
        data[4] = 2
        self.assertIn("not ELFCLASS32", vdso32_image.check(bytes(data))["problems"][0])
        data = bytearray(good_image())
        data[18] = 62  # EM_X86_64
        self.assertIn("not EM_386", vdso32_image.check(bytes(data))["problems"][0])

    def test_a_symbol_out_of_its_section_is_named(self):
        syms = [(n, TEXT_ADDR, 4) for n in vdso32_image.REQUIRED]
        syms[0] = (syms[0][0], TEXT_ADDR + TEXT_SIZE - 2, 4)
        c = vdso32_image.check(elf(syms))
        self.assertFalse(c["ok"])
        self.assertTrue(any(p.startswith(f"{syms[0][0]}: ") and "outside .text" in p
                            for p in c["problems"]), c)

    def test_a_missing_export_and_a_need_are_named(self):
        syms = [(n, TEXT_ADDR, 4) for n in vdso32_image.REQUIRED if n != "__vdso_time"]
        c = vdso32_image.check(elf(syms, undefined=["__udivdi3"]))
        self.assertEqual(["__vdso_time"], c["missing"])
        self.assertTrue(any("__udivdi3" in p for p in c["problems"]), c)

    def test_not_a_shared_object(self):
        c = vdso32_image.check(elf([(n, TEXT_ADDR, 4) for n in vdso32_image.REQUIRED],
                                   etype=elf32.ET_REL))
        self.assertIn("not a shared object", " ".join(c["problems"]))

    def test_hostile_headers_are_errors_not_crashes(self):
        data = good_image()
        shoff = struct.unpack_from("<I", data, 32)[0]
        for at, value in ((32, len(data)), (48, 0xffff), (50, 7), (46, 64)):
            bad = bytearray(data)
            struct.pack_into("<H" if at >= 44 else "<I", bad, at, value)
            with self.assertRaises(elf32.ElfError):
                elf32.parse(bytes(bad)).symbols(elf32.SHT_DYNSYM)
        # a name's offset past its string table
        bad = bytearray(data)
        dynsym = shoff + 2 * 40
        sym_off = struct.unpack_from("<I", bad, dynsym + 16)[0]
        struct.pack_into("<I", bad, sym_off + 16, 0x7fffffff)
        with self.assertRaisesRegex(elf32.ElfError, "past its string table"):
            elf32.parse(bytes(bad)).symbols(elf32.SHT_DYNSYM)

    def test_the_command_exits_0_1_2(self):
        with tempfile.TemporaryDirectory() as d:
            good, bad = Path(d, "good.so"), Path(d, "bad.so")
            good.write_bytes(good_image())
            bad.write_bytes(good_image()[:300])
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                rcs = [vdso32_image.main([str(p)]) for p in (good, bad, Path(d, "none"), d)]
        self.assertEqual([0, 1, 2, 2], rcs, out.getvalue())
        self.assertIn("ok: 8 exported", out.getvalue())
        self.assertNotIn("Traceback", out.getvalue())

    def test_an_image_whose_system_calls_wait_for_an_alternative(self):
        """v7.x's asm/vdso/sys_call.h (int $0x80 in place, rewritten at boot to
        call the gate): the image is taken where the loader applies that
        alternative, recorded in its kimport.json entry; one whose int $0x80
        would stay in place is not stored, one line why, whatever the tree's
        header; a v7 tree whose image has no such alternative neither. Read
        by the loader's own check (vdsobench_image_check), on the crafted
        images of tests/vdso_images.py."""
        v7 = ('# define __sys_instr\tALTERNATIVE("ds;ds;ds;int $0x80",\t\t\\\n'
              '\t\t\t\t    "call __kernel_vsyscall",\t\t\\\n'
              '\t\t\t\t    X86_FEATURE_SYSFAST32)\n')
        other = 'ALTERNATIVE("lfence; rdtsc", "rdtscp", X86_FEATURE_RDTSCP)\n'
        applied = vdso_images.sysfast32()
        in_place = vdso_images.sysfast32(alt=None)
        v6 = vdso_images.good32()["i386-v6.12"]
        for text, image, taken in ((v7, applied, True), (None, applied, True),
                                   (v7, in_place, False), (None, in_place, False),
                                   (other, in_place, False), (v7, v6, False), (None, v6, True),
                                   (other, v6, True)):
            with self.subTest(header=text, taken=taken), tempfile.TemporaryDirectory() as d:
                if text is not None:
                    h = Path(d, vdso32_image.SYS_CALL_H)
                    h.parent.mkdir(parents=True)
                    h.write_text(text)
                got = vdso32_image.take(d, image)
                if taken:
                    self.assertEqual(got["file"], vdso32_image.STORED32, got)
                    self.assertTrue(Path(d, vdso32_image.STORED32).is_file())
                    self.assertEqual(got.get("sysfast32"), None if image is v6 else {
                        "applied": 1, "sites": [vdso_images.SYSCALL_AT],
                        "call": "__kernel_vsyscall", "target": vdso_images.GATE})
                    continue
                self.assertEqual(list(got), ["none"])
                self.assertIn("int $0x80", got["none"])
                self.assertRegex(got["none"], r": [01] left in place, 0 applied by the loader")
                self.assertNotIn("\n", got["none"])
                self.assertEqual(os.listdir(d), ["arch"] if text else [], "nothing stored")

    def test_an_objects_libgcc_calls(self):
        obj = elf([("do_hres", TEXT_ADDR, 4)], etype=elf32.ET_REL, kind=elf32.SHT_SYMTAB,
                  undefined=["__udivdi3", "vvar__vdso_data", "__udivmoddi4"])
        names = elf32.undefined(obj)
        self.assertEqual(["__udivdi3", "__udivmoddi4", "vvar__vdso_data"], names)
        self.assertEqual(["__udivdi3", "__udivmoddi4"],
                         [n for n in names if elf32.LIBGCC.match(n)])


VDSO = kbuild_tree.VDSO_DIR
LOG_32 = f"""  gcc -m32 -c -o {VDSO}/vdso32/vclock_gettime.o x.c
# VDSO    {VDSO}/vdso32.so.dbg
  ld -o {VDSO}/vdso32.so.dbg -m elf_i386 && sh checkundef.sh
{VDSO}/vdso32.so.dbg: undefined symbols found
make[5]: *** [{VDSO}/Makefile:147: {VDSO}/vdso32.so.dbg] Error 1
make[5]: *** Deleting file '{VDSO}/vdso32.so.dbg'
make[4]: *** [scripts/Makefile.build:471: {VDSO}] Error 2
make[1]: *** [/w/src/Makefile:2008: .] Error 2
make: *** [Makefile:236: __sub-make] Error 2
"""
LOG_64 = LOG_32 + f"""{VDSO}/vclock_gettime.c:9:1: error: expected ';'
make[5]: *** [scripts/Makefile.build:229: {VDSO}/vclock_gettime.o] Error 1
"""


class Kbuild32Test(unittest.TestCase):
    def tree(self, files):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        for rel, data in files.items():
            p = Path(d.name) / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        fd = os.open(d.name, os.O_RDONLY | os.O_DIRECTORY)
        self.addCleanup(os.close, fd)
        return fd

    def built64(self, **more):
        obj32 = elf([("do_hres", TEXT_ADDR, 4)], etype=elf32.ET_REL, kind=elf32.SHT_SYMTAB,
                    undefined=["__udivdi3", "vvar__vdso_data"])
        files = {f"{VDSO}/{kbuild_tree.CMD}": b"savedcmd_x := gcc", f"{VDSO}/vclock_gettime.o":
                 b"\x7fELF\x02", f"{VDSO}/vdso64.so": b"so", f"{VDSO}/vdso64.so.dbg": b"dbg",
                 f"{VDSO}/vdso32/vclock_gettime.o": obj32}
        files.update(more)
        return self.tree({k: v for k, v in files.items() if v is not None})

    def test_the_failed_targets_are_the_leaves(self):
        self.assertEqual([f"{VDSO}/vdso32.so.dbg"], kbuild_vdso32.failed_targets(LOG_32))
        self.assertEqual([f"{VDSO}/vclock_gettime.o", f"{VDSO}/vdso32.so.dbg"],
                         kbuild_vdso32.failed_targets(LOG_64))

    def test_only_vdso32_failed_names_kbuilds_line_and_the_call(self):
        why = kbuild_vdso32.only_vdso32(LOG_32, self.built64())
        self.assertTrue(why.startswith(f"{VDSO}/vdso32.so.dbg: undefined symbols found"), why)
        self.assertIn("libgcc's __udivdi3", why)
        self.assertNotIn("vvar__vdso_data", why)

    def test_a_64_bit_failure_or_a_missing_image_fails_the_import(self):
        self.assertIsNone(kbuild_vdso32.only_vdso32(LOG_64, self.built64()))
        no_image = self.built64(**{f"{VDSO}/vdso64.so": None})
        self.assertIsNone(kbuild_vdso32.only_vdso32(LOG_32, no_image))
        self.assertIsNone(kbuild_vdso32.only_vdso32("make: *** [x:1: y] Error 2\n",
                                                    self.built64()))

    def test_the_record(self):
        fd = self.built64(**{f"{VDSO}/vdso32.so.dbg": b"x"})
        self.assertEqual(kbuild_vdso32.NO_IA32,
                         kbuild_vdso32.record(fd, b"# CONFIG_IA32_EMULATION is not set\n",
                                              None)["why"])
        on = b"CONFIG_IA32_EMULATION=y\n"
        self.assertEqual({"built": True, "dir": VDSO, "why": None, "error": None},
                         kbuild_vdso32.record(fd, on, None))
        failed = kbuild_vdso32.record(fd, on, "undefined symbols found")
        self.assertEqual((False, "undefined symbols found"), (failed["built"], failed["error"]))


class ResolvedTest(unittest.TestCase):
    LABELS = [(0xffffc000, "vvar_page"), (0xffffc080, "vvar__vdso_data"),
              (0x3d4, "_GLOBAL_OFFSET_TABLE_")]

    def listing(self, shift):
        """A function placed `shift` bytes later, the GOT too: the same code."""
        got = 0x3d4 + shift
        at = 0x100 + shift
        return {"f": [(at, f"call   {at + 0x100:x} <__x86.get_pc_thunk.bx>"),
                      (at + 5, f"add    $0x{(got - at - 5) & 0xffffffff:x},%ebx"),
                      (at + 11, f"mov    -0x{(got - 0xffffc0c8) & 0xffffffff:x}(%ebx),%eax"),
                      (at + 17, "mov    0x30(%eax),%esi"),
                      (at + 20, f"jne    {at + 40:x} <f+0x28>")]}, got

    def test_the_same_code_placed_elsewhere_reads_the_same(self):
        a = review_vdso32.resolved(*self.listing(0), self.LABELS)
        code, got = self.listing(0x40)
        labels = [(v if v > 0x80000000 else v + 0x40, n) for v, n in self.LABELS]
        b = review_vdso32.resolved(code, got, labels)
        self.assertEqual(a, b)
        self.assertEqual("add $_GLOBAL_OFFSET_TABLE_,%ebx", a["f"][1])
        self.assertEqual("mov <vvar__vdso_data+0x48>(%ebx),%eax", a["f"][2])
        self.assertEqual("mov 0x30(%eax),%esi", a["f"][3])  # a field: a field

    def test_an_add_that_is_not_the_got_stays(self):
        code, got = self.listing(0)
        out = review_vdso32.resolved(code, got + 4, self.LABELS)
        self.assertTrue(out["f"][1].startswith("add $0x"), out)


class LinesTest(unittest.TestCase):
    NATIVE = {"native": "not run here: the kernel does not run 32-bit programs (execve: "
              "Exec format error): no IA32 emulation here",
              "native_short": "the kernel does not run 32-bit programs"}

    def test_a_build_failure_is_said_first_with_kbuilds_line(self):
        v32 = dict(self.NATIVE, broken=True, built={"before": True, "after": False},
                   error="vdso32.so.dbg: undefined symbols found", code=None,
                   why={"after": "kbuild failed to build it"})
        out = review_vdso32.block(v32)
        self.assertEqual("vdso32: the patched tree's does NOT build: vdso32.so.dbg: "
                         "undefined symbols found", out[0])
        # nothing verified or timed, and the line says why, not where it would run
        self.assertEqual("vdso32 verify and time: not run: the patched tree's vdso32 does "
                         "not build", out[-1])

    def test_a_built_one_is_one_sentence(self):
        v32 = dict(self.NATIVE, broken=False, built={"before": True, "after": True},
                   check={"after": {"ok": True, "exports": ["a"], "problems": []}},
                   code=["vdso_time: 2 of 24 instructions differ"])
        self.assertEqual(["vdso32: built, symbols as expected; code differs in 1 function; "
                          "not verified or timed: the kernel does not run 32-bit programs"],
                         review_vdso32.block(v32))
        self.assertIn("vdso32 object code differs: vdso_time: 2 of 24 instructions differ",
                      review_vdso32.lines(v32))

    def test_no_ia32_in_the_configuration_is_said_not_failed(self):
        v32 = dict(self.NATIVE, broken=False, built={"before": False, "after": False},
                   code=None, why={"before": kbuild_vdso32.NO_IA32,
                                   "after": kbuild_vdso32.NO_IA32})
        self.assertEqual(f"vdso32: not built ({kbuild_vdso32.NO_IA32})",
                         review_vdso32.block(v32)[0])

    PASS = {"status": "PASS", "checks": [{"name": n, "skipped": False, "ok": True}
                                         for n in ("exact", "edges", "concurrency")]}
    FAIL = {"status": "FAIL", "first_failure": "exact: realtime at counter 999995: got ret "
            "0 1700000000.123457042, want 1700000000.123456789",
            "checks": [{"name": "exact", "skipped": False, "ok": False, "detail": "..."}]}

    def verified(self, after, before=None):
        recs = {"after": {f"kernel:A+fake+{i}": after for i in ("always", "image")},
                "before": {f"kernel:B+fake+{i}": before or self.PASS
                           for i in ("always", "image")}}
        return review_vdso32_verify.result(
            ran=True, emulator="qemu-i386-static 7.2.22", records=recs,
            failed=review_vdso32_verify.first_failure(recs["after"]),
            before_failed=review_vdso32_verify.first_failure(recs["before"]))

    def built(self, verify):
        return dict(self.NATIVE, broken=bool(verify["failed"]),
                    built={"before": True, "after": True}, verify=verify,
                    check={"after": {"ok": True, "exports": ["a"], "problems": []}},
                    code=["vdso_clock_gettime: 482 -> 410 instructions (-72)"])

    def test_a_32_bit_verify_failure_is_named_once_for_both_builds(self):
        v32 = self.built(self.verified(self.FAIL))
        self.assertEqual("kernel:A+fake+always: " + self.FAIL["first_failure"],
                         v32["verify"]["failed"])
        self.assertIsNone(v32["verify"]["before_failed"])
        line = next(x for x in review_vdso32.block(v32) if "verify --arch i386" in x)
        self.assertEqual("vdso32 verify --arch i386 (under qemu-i386-static 7.2.22): the "
                         "patched tree FAIL (fake+always, fake+image): "
                         + self.FAIL["first_failure"] + ", the tree PASS (fake+always, "
                         "fake+image)", line)
        first = cover_letter.first_line({"vdso32": v32}, [], None)
        self.assertEqual("WRONG: the patched tree's vdso32 (the 32-bit vDSO) fails verify "
                         "--arch i386; do not post", first)
        # nothing of it was timed, and the lines do not promise it
        self.assertEqual("vdso32 timed: no: the patched tree's vdso32 fails verify --arch "
                         "i386", review_vdso32.block(v32)[-1])
        self.assertEqual("vdso32 fails verify --arch i386", review_vdso32.why_broken(v32))

    def test_a_patch_tearing_both_is_called_a_64_bit_tear_first(self):
        v32 = self.built(self.verified(self.FAIL))
        first = cover_letter.first_line({"vdso32": v32, "torn": "concurrency: torn read"},
                                        [], None)
        self.assertEqual("WRONG: the patched tree fails verify; do not post", first)

    def test_a_32_bit_verify_that_passes_is_said_in_the_sentence(self):
        v32 = self.built(self.verified(self.PASS))
        self.assertFalse(v32["broken"])
        self.assertEqual(["vdso32: built, symbols as expected; code differs in 1 function; "
                          "verified under qemu-i386-static, not timed: the kernel does not "
                          "run 32-bit programs (under qemu-i386 there is no CPU's time)"],
                         review_vdso32.block(v32))

    def test_a_variant_without_a_verdict_is_not_called_verified(self):
        recs = {"after": {"kernel:A+fake+always": {"status": "no result (verify exited 139)"}},
                "before": {"kernel:B+fake+always": self.PASS}}
        v = review_vdso32_verify.result(ran=True, records=recs,
                                        why=review_vdso32_verify.unjudged(recs))
        self.assertEqual("no verdict on kernel:A+fake+always: no result (verify exited 139)",
                         v["why"])
        self.assertIn("not verified (verify --arch i386 gave no verdict on kernel:A+fake+always: "
                      "no result (verify exited 139)) or timed",
                      review_vdso32.block(self.built(v))[0])
        self.assertIsNone(review_vdso32_verify.unjudged({"after": {"v": self.PASS}}))
        self.assertIsNone(review_vdso32_verify.unjudged({"after": {"v": self.FAIL}}))

    def test_the_tree_failing_too_is_said_not_blamed_on_the_patch(self):
        v = self.verified(self.PASS, before=self.FAIL)
        self.assertIsNone(v["failed"])
        self.assertIn("vdso32: the tree itself fails verify --arch i386, before the patch",
                      review_vdso32_verify.lines(v))

    def test_a_32_bit_verify_that_cannot_run_says_why(self):
        v = review_vdso32_verify.result(why="no i686-linux-gnu-gcc in /usr/bin (as root: "
                                            "scripts/vdsobench setup --arch i386)")
        self.assertEqual(["vdso32: built, symbols as expected; code differs in 1 function; "
                          "not verified or timed: no i686-linux-gnu-gcc in /usr/bin (as root: "
                          "scripts/vdsobench setup --arch i386)"],
                         review_vdso32.block(self.built(v)))

    def test_a_hostile_or_missing_record_reads_no_file(self):
        for v32 in ({"built": True, "key": "../../../etc"}, {"built": True, "key": None},
                    {"built": True}, "built"):
            rec, path = review_vdso32.side({"identity": {"kbuild": {"vdso32": v32}}})
            self.assertIsNone(path, v32)
        rec, path = review_vdso32.side({})
        self.assertEqual((False, None), (rec["built"], path))



class SectionTest(unittest.TestCase):
    """section() on a made-up table and kbuild cache: what makes the review
    WRONG, and what does not."""
    KEY_B, KEY_A = "b" * 64, "a" * 64

    def section(self, after, after_image=None):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        for key, data in ((self.KEY_B, good_image()), (self.KEY_A, after_image)):
            if data is not None:
                Path(d.name, key).mkdir()
                Path(d.name, key, kbuild_tree.DBG32).write_bytes(data)
        entry = {"identity": {"kbuild": {"vdso32": {"built": True, "key": self.KEY_B}}}}
        table = {"B": entry}
        if after is not None:
            table["A"] = {"identity": {"kbuild": {"vdso32": after}}}
        with mock.patch.object(review_vdso32.kbuild, "cache_dir", return_value=Path(d.name)), \
                mock.patch.object(review_vdso32, "image_code", return_value=({}, None)):
            return review_vdso32.section(table, "B", "A")

    def test_kbuilds_failure_is_broken(self):
        v32 = self.section({"built": False, "why": "kbuild failed to build it",
                            "error": "vdso32.so.dbg: undefined symbols found"})
        self.assertTrue(v32["broken"])
        self.assertEqual("vdso32.so.dbg: undefined symbols found", v32["error"])

    def test_an_image_that_fails_its_check_is_broken(self):
        v32 = self.section({"built": True, "key": self.KEY_A}, good_image()[:200])
        self.assertTrue(v32["broken"])
        self.assertIn("symbols:", review_vdso32.block(v32)[0])
        self.assertEqual("vdso32 verify and time: not run: the patched tree's vdso32 fails "
                         "its check", review_vdso32.block(v32)[-1])

    def test_a_tree_never_imported_is_not_called_broken(self):
        v32 = self.section(None)
        self.assertFalse(v32["broken"])
        self.assertTrue(review_vdso32.block(v32)[0].startswith("vdso32: not built (not "
                                                               "recorded"))

    def test_two_good_images_are_compared(self):
        v32 = self.section({"built": True, "key": self.KEY_A}, good_image())
        self.assertFalse(v32["broken"])
        self.assertEqual("identical", v32["code"])
        self.assertTrue(v32["check"]["after"]["ok"])


if __name__ == "__main__":
    unittest.main()
