"""kernel_import/check_objects.py, run as the build runs it, on real objects
and archives compiled here: a tree's code that would run uncalled (however the
section is spelled), an indirect function, an IRELATIVE relocation, or a
definition that would replace one of the program's own is refused in one
line, and nothing is written; a tree's own prefixed definitions pass."""

import platform
import shutil
import struct
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli import build

CHECK = build.ROOT / "kernel_import" / "check_objects.py"
PREFIX = "kernel_t__fake__always__"
REFUSED = build.REFUSED

GOOD = f"int {PREFIX}clock_gettime(void) {{ return 1; }}\nstatic int local(void) {{ return 2; }}\n" \
       f"int {PREFIX}time(void) {{ return local(); }}\n"
BAD = {
    "constructor": ("static void __attribute__((constructor, used)) f(void) { x = 1; }",
                    "code run before main or at exit"),
    "destructor": ("static void __attribute__((destructor, used)) f(void) { x = 1; }",
                   "code run before main or at exit"),
    "init_array by asm": ('asm(".section .init_array,\\"aw\\"\\n.quad 0\\n.previous");',
                          "code run before main or at exit"),
    "prioritised": ("static void __attribute__((constructor(200), used)) f(void) { x = 1; }",
                    "code run before main or at exit"),
    "ctors by asm": ('asm(".pushsection .ctors,\\"aw\\"\\n.quad 0\\n.popsection");',
                     "code run before main or at exit"),
    "type, other name": ('asm(".section .evil,\\"aw\\",@init_array\\n.quad 0\\n.previous");',
                         "code run before main or at exit"),
    "name built by a macro": ('asm(".macro m a,b\\n.section \\\\a\\\\b,\\"aw\\"\\n.quad 0\\n'
                              '.previous\\n.endm\\nm .preinit,_array");',
                              "code run before main or at exit"),
    "a local ifunc": ("static void *r(void) { x = 1; return 0; }\n"
                      "static int h(void) __attribute__((ifunc(\"r\"), used));\n"
                      f"int {PREFIX}use(void) {{ return h(); }}",
                      "GNU indirect function"),
    "a prefixed ifunc": ("static void *r(void) { x = 1; return 0; }\n"
                         f"int {PREFIX}h(void) __attribute__((ifunc(\"r\")));",
                         "GNU indirect function"),
    "an IRELATIVE relocation": ('asm(".data\\n.quad 0\\n.reloc .-8, R_X86_64_IRELATIVE, '
                                f'{PREFIX}time\\n.text");', "IRELATIVE"),
    "malloc defined": ("void *malloc(unsigned long n) { x = (int)n; return 0; }",
                       "defines malloc, which would replace the program's own"),
    "a weak write": ("__attribute__((weak)) long write(int f, const void *b, unsigned long n) "
                     "{ x = f; (void)b; return (long)n; }",
                     "defines write"),
    "an unprefixed global": ("int kimport_hook(void) { return x; }", "defines kimport_hook"),
    "an executable stack": ('asm(".section .note.GNU-stack,\\"x\\",@progbits\\n.previous");',
                            "executable stack"),
    # kept before the harness's own copy of an inline C++ function, it drops that
    # one and leaves the harness's calls to nothing (linked, it crashed)
    "a group named as the harness's": (
        'asm(".section .text._Z6helperv,\\"axG\\",@progbits,_Z6helperv,comdat\\n'
        'ret\\n.previous");', "the section group _Z6helperv"),
    # the linker keeps the first group of a name whatever it holds: a debug
    # section alone named so drops the harness's code all the same
    "a debug group named as the harness's": (
        'asm(".section .debug_kimport,\\"G\\",@progbits,_Z6helperv,comdat\\n'
        '.byte 1\\n.previous");', "the section group _Z6helperv"),
}


def lto_sections_as_data(obj):
    """C arrays placed in obj's .gnu.lto_* sections, byte for byte."""
    data = obj.read_bytes()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, shstrndx = struct.unpack_from("<HH", data, 0x3c)
    heads = [struct.unpack_from("<IIQQQQ", data, shoff + i * 64) for i in range(shnum)]
    names = data[heads[shstrndx][4]:heads[shstrndx][4] + heads[shstrndx][5]]
    out = []
    for i, (name, _, _, _, off, size) in enumerate(heads):
        name = names[name:names.index(b"\0", name)].decode()
        if name.startswith(".gnu.lto_"):
            body = ",".join(str(b) for b in data[off:off + size])
            out.append(f'__attribute__((section("{name}"), used)) '
                       f'static const unsigned char lto{i}[] = {{{body}}};')
    return "\n".join(out)


class CheckObjectsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-objcheck-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def compile(self, name, code):
        src = self.tmp / f"{name}.c"
        src.write_text("extern volatile int x;\n" + code + "\n")
        obj = self.tmp / f"{name}.o"
        subprocess.run(["gcc", "-O2", "-c", "-o", str(obj), str(src)], check=True)
        return obj

    def check(self, *files):
        out = self.tmp / "checked.c"
        r = subprocess.run(["/usr/bin/python3", str(CHECK), PREFIX, "kernel:t+fake+always",
                            str(out), *map(str, files)], capture_output=True, text=True)
        return r, out

    def test_a_trees_own_definitions_pass(self):
        r, out = self.check(self.compile("good", GOOD))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertIn("typedef int kimport_tree_checked;", out.read_text())

    def test_each_way_to_run_uncalled_is_refused(self):
        for i, (what, (code, why)) in enumerate(BAD.items()):
            if "R_X86_64" in code and platform.machine() != "x86_64":
                continue  # x86-64's relocation, written as x86-64's assembler takes it
            with self.subTest(what):
                r, out = self.check(self.compile(f"bad{i}", GOOD + code))
                self.assertEqual(r.returncode, 1, r.stderr)
                lines = r.stderr.splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertTrue(lines[0].startswith(REFUSED + "kernel:t+fake+always: "),
                                lines[0])
                self.assertIn(why, lines[0])
                self.assertFalse(out.exists())

    def test_32_bit_arm_objects_are_checked_the_same(self):
        """ELF32: an arm64 tree's compat vDSO, built by the 32-bit arm compiler."""
        cc = "/usr/bin/arm-linux-gnueabihf-gcc"
        if not Path(cc).exists():
            self.skipTest(f"no {cc} (scripts/vdsobench setup --arch arm)")

        def arm(name, code):
            src = self.tmp / f"{name}.c"
            src.write_text("extern volatile int x;\n" + code + "\n")
            subprocess.run([cc, "-O2", "-c", "-o", str(self.tmp / f"{name}.o"), str(src)],
                           check=True)
            return self.tmp / f"{name}.o"
        r, out = self.check(arm("good32", GOOD))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        out.unlink()
        bad = {k: BAD[k] for k in ("constructor", "prioritised", "a local ifunc",
                                   "malloc defined", "a weak write", "an unprefixed global")}
        bad["an IRELATIVE relocation"] = ('asm(".data\\n.word 0\\n.reloc .-4, R_ARM_IRELATIVE, '
                                          f'{PREFIX}time\\n.text");', "IRELATIVE")
        for i, (what, (code, why)) in enumerate(bad.items()):
            with self.subTest(what):
                obj = arm(f"bad32_{i}", GOOD + code)
                self.assertEqual(obj.read_bytes()[4], 1)  # ELFCLASS32
                r, out = self.check(obj)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn(why, r.stderr)
                self.assertFalse(out.exists())

    def test_i386_objects_and_their_pic_thunks(self):
        """ELF32 EM_386: an x86-64 tree's vdso32, built position-independent by
        i686-linux-gnu-gcc, whose PIC register thunks (__x86.get_pc_thunk.*, a
        group each) pass as GCC's code, and as nothing else."""
        cc = "/usr/bin/i686-linux-gnu-gcc"
        if not Path(cc).exists():
            self.skipTest(f"no {cc} (scripts/vdsobench setup --arch i386)")

        def i386(name, code, ext="c"):
            src = self.tmp / f"{name}.{ext}"
            src.write_text(code + "\n")
            subprocess.run([cc, "-O2", "-fPIE", "-c", "-o", str(self.tmp / f"{name}.o"),
                            str(src)], check=True)
            return self.tmp / f"{name}.o"
        good = i386("good386", f"extern int x;\nint {PREFIX}read(void) {{ return x; }}\n" + GOOD)
        self.assertIn(b"__x86.get_pc_thunk.", good.read_bytes())
        r, out = self.check(good)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        out.unlink()
        # the same group name and symbol, other code: the program's calls would run it
        forged = i386("forged386", ".section .text.__x86.get_pc_thunk.bx,\"axG\",@progbits,"
                      "__x86.get_pc_thunk.bx,comdat\n.globl __x86.get_pc_thunk.bx\n"
                      ".hidden __x86.get_pc_thunk.bx\n__x86.get_pc_thunk.bx:\n"
                      "movl $0, %ebx\nret\n", "s")
        r, out = self.check(forged)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("the section group __x86.get_pc_thunk.bx", r.stderr)
        self.assertFalse(out.exists())
        obj = i386("ifunc386", "extern volatile int x;\n" + GOOD + BAD["a local ifunc"][0])
        r, out = self.check(obj)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(BAD["a local ifunc"][1], r.stderr)

    def test_debug_information_groups_pass(self):
        """-g3 puts each header's macros in a group of debug sections: nothing
        of them is loaded, so nothing of the program's is replaced."""
        src = self.tmp / "g3.c"
        src.write_text(GOOD)
        obj = self.tmp / "g3.o"
        subprocess.run(["gcc", "-O2", "-g3", "-c", "-o", str(obj), str(src)], check=True)
        self.assertIn(b".group", obj.read_bytes())
        self.assertEqual(self.check(obj)[0].returncode, 0)

    def test_a_debug_group_named_as_the_programs_drops_its_code(self):
        """The control for BAD's debug group: linked first, it takes the place of
        the C++ program's inline function, whose calls are left to nothing."""
        tree = self.compile("debuggroup", GOOD + BAD["a debug group named as the harness's"][0])
        main = self.tmp / "main.cc"
        main.write_text("#include <cstdio>\ninline __attribute__((noinline)) int helper() "
                        "{ return 42; }\nint main() { std::printf(\"%d\\n\", helper()); }\n")
        prog = self.tmp / "prog"
        subprocess.run(["g++", "-O2", "-o", str(prog), str(tree), str(main)], check=True)
        r = subprocess.run([str(prog)], capture_output=True, text=True)
        self.assertNotEqual((r.returncode, r.stdout), (0, "42\n"))

    def test_compiler_ir_the_linker_would_compile_is_refused(self):
        """An object carrying GCC's LTO sections (written as plain data, no -flto
        on the line) is compiled by the linker's plugin from that IR, not linked
        from the object's code: a constructor and malloc in the IR reach the
        program, none of it seen in the object's own sections."""
        owned = self.tmp / "owned"
        hidden = self.tmp / "hidden.c"
        hidden.write_text(f"int creat(const char *, unsigned int);\n"
                          f"static void __attribute__((constructor, used)) f(void) "
                          f"{{ creat(\"{owned}\", 0644); }}\n"
                          f"int {PREFIX}time(void) {{ return 7; }}\n")
        ir = self.tmp / "hidden.o"
        subprocess.run(["gcc", "-O2", "-flto", "-c", "-o", str(ir), str(hidden)], check=True)
        tree = self.compile("lto_sections", GOOD + lto_sections_as_data(ir))
        self.assertNotIn(b".init_array", tree.read_bytes())
        main = self.tmp / "main.c"
        main.write_text(f"int {PREFIX}time(void);\nint main(void) {{ return {PREFIX}time(); }}\n")
        prog = self.tmp / "prog"
        subprocess.run(["gcc", "-O2", "-o", str(prog), str(main), str(tree)], check=True,
                       capture_output=True)
        # the control: the linker built the program from the IR
        self.assertEqual(subprocess.run([str(prog)]).returncode, 7)
        self.assertTrue(owned.exists(), "the IR's constructor did not run")
        r, out = self.check(tree)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("compiler IR", r.stderr)
        self.assertFalse(out.exists())

    def test_archives_are_read_member_by_member(self):
        good = self.compile("good", GOOD)
        bad = self.compile("evil_member_with_a_long_name", BAD["malloc defined"][0])
        lib = self.tmp / "libtree.a"
        subprocess.run(["ar", "rcs", str(lib), str(good), str(bad)], check=True)
        r, out = self.check(lib)
        self.assertEqual(r.returncode, 1)
        self.assertIn("evil_member_with_a_long_name.o: the tree's code defines malloc",
                      r.stderr)
        lib2 = self.tmp / "libgood.a"
        subprocess.run(["ar", "rcs", str(lib2), str(good)], check=True)
        self.assertEqual(self.check(lib2)[0].returncode, 0)

    def test_damaged_files_are_refused_not_crashed_on(self):
        good = self.compile("good", GOOD).read_bytes()
        cases = {"junk": b"\x7fELF" + b"\xff" * 100, "empty": b"",
                 "cut short": good[:200], "32-bit": good[:4] + b"\x01" + good[5:],
                 "section table past the end": good[:0x28] + (1 << 40).to_bytes(8, "little")
                 + good[0x30:],
                 "archive cut": b"!<arch>\n" + b"x.o/            0           0     0     "
                                             b"644     999999    `\n" + good[:100]}
        for what, data in cases.items():
            with self.subTest(what):
                f = self.tmp / "damaged.o"
                f.write_bytes(data)
                r, out = self.check(f)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertTrue(r.stderr.startswith(REFUSED), r.stderr)
                self.assertFalse(out.exists())

    def test_the_build_shows_the_refusal_as_one_line(self):
        out = f"INFO: ...\nERROR: x failed\n{REFUSED}kernel:t+fake+always: x.o: bad\nmore\n"
        from unittest import mock
        from vdsobench_cli.cli.errors import UsageError
        with mock.patch.object(build, "bazel", return_value=(1, out)), \
                mock.patch.object(build, "check_toolchain"), \
                self.assertRaises(UsageError) as e:
            build.build(["//verify:vdsobench_verify"])
        self.assertEqual(str(e.exception), "kernel:t+fake+always: x.o: bad")


if __name__ == "__main__":
    unittest.main()
