"""Attacks on `vdsobench import` through a real tree's headers (issue 18): import
executes nothing of the tree, includes nothing from outside it, and a header
that blocks the compiler ends in one line (import_attacks.py has the
workspace and the checks every attack makes)."""

import os
import shutil
import tempfile
import time
import unittest
from unittest import mock

from vdsobench_cli.cli import build
from vdsobench_cli.kimport import compile, names as names_mod, probe
from vdsobench_cli.tests.support import NESTED, one_line, vdsobench
from vdsobench_cli.tests.import_attacks import Workspace, untarred_612


class CompileAttackTest(unittest.TestCase):
    """A real tree whose headers attack the compile: import executes nothing of
    the tree (the probe is read from assembly), includes nothing from outside it,
    and a header that blocks the compiler ends in one line. Each stops before the
    Bazel build (vsyscall.c is made to fail), so each takes a second or two."""

    @classmethod
    def setUpClass(cls):
        if os.environ.get(NESTED):
            raise unittest.SkipTest("inside the new-variant test's copy of the project")
        cls.tmp = tempfile.mkdtemp(prefix="vdsobench-compile-attack-")
        try:
            cls.pristine = untarred_612(cls.tmp)
        except BaseException:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.ws = Workspace(self)
        shutil.rmtree(self.ws.tree)
        shutil.copytree(self.pristine, self.ws.tree)
        self.ws.before = self.ws.outside()

    def hostile_header(self, text, stop=True):
        """text put at the top of the arch's asm/vdso/gettimeofday.h (which the
        probe includes), inside its guard; vsyscall.c made to fail when stop."""
        h = self.ws.tree / "arch/x86/include/asm/vdso/gettimeofday.h"
        body = h.read_text()
        guard = "#define __ASM_VDSO_GETTIMEOFDAY_H\n"
        self.assertIn(guard, body)
        h.write_text(body.replace(guard, guard + text + "\n", 1))
        if stop:
            v = self.ws.tree / "kernel/time/vsyscall.c"
            v.write_text(v.read_text() + "\n#error stop before the build\n")
        self.ws.before = self.ws.outside()

    def test_a_constructor_in_a_header_is_never_run(self):
        owned = self.ws.victim / "owned"
        self.hostile_header("int creat(const char *, unsigned int);\n"
                            "static void __attribute__((constructor, used)) "
                            f"kimport_owned(void) {{ creat(\"{owned}\", 0644); }}")
        rc, _, err = vdsobench("import", str(self.ws.tree), "--name", "ctor")
        self.assertFalse(owned.exists(), "import ran the tree's constructor")
        self.ws.check(self, rc, err, "kernel/time/vsyscall.c", "stop before the build")

    def test_includes_from_outside_the_tree_are_refused(self):
        (self.ws.tmp / "fifo").unlink(missing_ok=True)
        for include in ("/dev/stdin", str(self.ws.victim / "f"), "/etc/passwd",
                        "/proc/self/environ"):
            with self.subTest(include=include):
                self.setUp()
                self.hostile_header(f'#define KIMPORT_EVIL "{include}"\n'
                                    "#include KIMPORT_EVIL", stop=False)
                rc, _, err = vdsobench("import", str(self.ws.tree), "--name", "inc")
                self.ws.check(self, rc, err, f"includes {include}, outside the tree")
                self.assertNotIn("keep", err)  # nothing of the file's text shown

    def test_includes_only_another_build_would_make_are_refused(self):
        """The Bazel build compiles every counter and inline choice: an include
        made only under one of them is checked too, before Bazel sees it."""
        self.hostile_header('#if !VDSO_INLINE_ALWAYS && defined(KIMPORT_X)\n#else\n'
                            '#if !VDSO_INLINE_ALWAYS\n#include "/etc/passwd"\n#endif\n#endif',
                            stop=False)
        rc, _, err = vdsobench("import", str(self.ws.tree), "--name", "inc")
        self.ws.check(self, rc, err, "lib/vdso/gettimeofday.c includes /etc/passwd, outside")

    def test_inline_asm_that_reads_a_file_is_refused(self):
        """.incbin would put the file into every program (and bundle) that links
        the tree; .include would read it as source; a macro could spell either."""
        for directive in ('.incbin \\"/etc/passwd\\"', '.INCBIN \\"/dev/zero\\"',
                          '.include \\"/etc/passwd\\"',
                          ".macro m\\n.endm", ".rept 1\\n.endr",
                          # the assembler strips a C comment before it reads a name
                          '.inc/**/bin \\"/etc/passwd\\"',
                          # .irp's other names spell a directive from its parts
                          '.irep d,incbin\\n.\\\\d \\"/etc/passwd\\"\\n.endr',
                          ".irepc d,ab\\n.endr"):
            with self.subTest(directive):
                self.setUp()
                self.hostile_header(f'asm(".pushsection .rodata\\nnop; {directive}\\n'
                                    '.popsection");', stop=False)
                rc, _, err = vdsobench("import", str(self.ws.tree), "--name", "asm")
                self.ws.check(self, rc, err, "inline assembly has ")

    def test_inline_asm_only_the_build_would_make_is_refused(self):
        """Bazel compiles with flags import's own check never sees (its opt
        -D_FORTIFY_SOURCE=1): assembly chosen by them passes that check, and the
        assembler's gate in the build (kernel_import/asm_guard.py) refuses it, in
        one line, before the assembler reads the file: nothing of it in any object."""
        secret = self.ws.tmp / "secret"
        token = f"vdsobench-secret-{os.getpid()}-{time.monotonic_ns()}"
        secret.write_text(token + "\n")
        os.chmod(secret, 0o600)
        self.hostile_header(f'#ifdef _FORTIFY_SOURCE\nasm(".pushsection .rodata\\n.incbin '
                            f'\\"{secret}\\"\\n.popsection");\n#endif', stop=False)
        rc, _, err = vdsobench("import", str(self.ws.tree), "--name", "buildonly")
        one_line(self, rc, err, "_tree/", "the tree's assembly has .incbin")
        self.assertEqual(self.ws.outside(), self.ws.before, "something outside was written")
        rc, out, err = vdsobench("import", "--list")
        self.assertEqual((rc, err), (0, ""), out)
        self.assertIn("no imported trees", out)
        objs = build.bin_dir() / "impls" / "_objs"
        for obj in objs.glob(f"variant_{names_mod.ident('buildonly')}_*/*.o"):
            self.assertNotIn(token.encode(), obj.read_bytes(), obj)

    def test_an_include_only_the_build_would_make_is_refused(self):
        """The same for the compiler proper: a header included only under a flag
        Bazel passes (-D_FORTIFY_SOURCE=1) is seen by the gate's preprocessing
        of the build's own compile, refused in one line; the file's text never
        reaches the output, nothing is imported."""
        secret = self.ws.tmp / "secret-header"
        token = f"vdsobench-secret-{os.getpid()}-{time.monotonic_ns()}"
        secret.write_text(token + "\n")
        os.chmod(secret, 0o600)
        self.hostile_header(f'#ifdef _FORTIFY_SOURCE\n#include "{secret}"\n#endif', stop=False)
        rc, out, err = vdsobench("import", str(self.ws.tree), "--name", "buildinc")
        one_line(self, rc, err, "glue/", f"includes '{secret}', neither the build's nor "
                                         "the system's")
        self.assertNotIn(token, out + err)
        self.assertEqual(self.ws.outside(), self.ws.before, "something outside was written")
        rc, out, err = vdsobench("import", "--list")
        self.assertEqual((rc, err), (0, ""), out)
        self.assertIn("no imported trees", out)

    def test_an_include_that_blocks_is_one_line(self):
        fifo = self.ws.tmp / "fifo"
        os.mkfifo(fifo)
        self.hostile_header(f'%:include "{fifo}"', stop=False)  # a digraph, as C99 allows
        t0 = time.monotonic()
        with mock.patch.object(compile, "COMPILE_TIMEOUT_S", 2):
            rc, _, err = vdsobench("import", str(self.ws.tree), "--name", "fifo")
        self.assertLess(time.monotonic() - t0, 30)
        self.ws.check(self, rc, err, "took over 2 s")

    def test_kbuild_line_naming_its_own_compiler_is_never_run(self):
        """kbuild (--kbuild) runs the tree's Makefile confined; one that writes a
        program of its own into its output folder and names it as the compiler in
        .vclock_gettime.o.cmd is refused in one line, and the program never runs
        (import records the compiler's version: it asked that program, as root)."""
        from vdsobench_cli.kimport import kbuild
        if kbuild.missing_tools() or kbuild.config_for("6.12")[0] is None:
            self.skipTest("kbuild cannot run here (scripts/vdsobench setup --kernel-sources)")
        owned = self.ws.victim / "owned"
        vdso = "$(CURDIR)/arch/x86/entry/vdso"  # kbuild builds a copy of the tree in place
        makefile = self.ws.tree / "Makefile"
        head = "".join(x for x in makefile.read_text().splitlines(keepends=True)
                       if x.split(" =")[0] in ("VERSION", "PATCHLEVEL", "SUBLEVEL",
                                               "EXTRAVERSION"))
        makefile.write_text(
            # .PHONY: the taken tree has arch/x86/entry/vdso/ already (vdso32's
            # fake_32bit_build.h), which make would call up to date, never
            # writing the line: kbuild's own Makefile makes such targets phony
            head + ".PHONY: olddefconfig prepare arch/x86/entry/vdso/\n"
            "olddefconfig prepare:\n\t@true\narch/x86/entry/vdso/:\n"
            f"\tmkdir -p {vdso}\n"
            f"\tprintf '#!/bin/sh\\ntouch {owned}\\necho gcc 12\\n' > $(CURDIR)/cc\n"
            "\tchmod 755 $(CURDIR) $(CURDIR)/cc\n"
            "\tprintf 'savedcmd_arch/x86/entry/vdso/vclock_gettime.o := $(CURDIR)/cc -O2 -c "
            f"x.c\\n' > {vdso}/.vclock_gettime.o.cmd\n")
        self.ws.before = self.ws.outside()
        cache = self.ws.tmp / "kbuild-cache"
        with mock.patch.dict(os.environ, {"VDSOBENCH_KBUILD_CACHE": str(cache)}):
            rc, _, err = vdsobench("import", str(self.ws.tree), "--kbuild", "--name", "cc")
        self.assertFalse(owned.exists(), "import ran the program the tree's kbuild named")
        self.ws.check(self, rc, err, ".vclock_gettime.o.cmd: the line runs ", "/cc, not ")
        # (the key's lock file may stay: kbuild.key_lock)
        self.assertEqual([p for p in cache.iterdir() if not p.name.endswith(".lock")], [],
                         "the hostile line was cached")

    def test_probe_reads_the_values_from_assembly(self):
        """The markers as probe.c writes them, and what a hostile one gets."""
        asm = "\n".join(['\t.ascii "->%s %d"' % (n, i) for i, n in
                         enumerate(probe.PROBE_VALUES)] +
                        ['\t.ascii "->FIELD 8 4 clock_data[CS_RAW].seq"'])
        got = probe.parse_markers(asm)
        self.assertEqual(got["fields"], [{"name": "clock_data[CS_RAW].seq", "offset": 8,
                                          "size": 4}])
        self.assertEqual(got["raw_clocks"], 3)
        for bad in ('\t.ascii "->FIELD 8 4 x\\033y"', '\t.ascii "->data_size -1"',
                    '\t.ascii "->evil 1"'):
            self.assertIsNone(probe.parse_markers(asm + "\n" + bad), bad)
        self.assertIsNone(probe.parse_markers(asm.split("\n", 1)[1]))
