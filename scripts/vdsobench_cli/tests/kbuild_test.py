"""kbuild.py and kbuild_line.py: the tree's vDSO compile line, split into
what the read path is built with and what cannot apply, on recorded .cmd text (Linux v6.12's and
v6.1's shapes) and on hostile lines; the table's check of an entry's line."""

import hashlib
import json
import os
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.kimport import imports_table, kbuild, kbuild_line
from vdsobench_cli.cli.errors import UsageError

# abridged from Debian's linux-source-6.12 with config.amd64_none_amd64 (gcc 12)
CMD_612 = (
    "savedcmd_arch/x86/entry/vdso/vclock_gettime.o := gcc -Wp,-MMD,arch/x86/entry/vdso/"
    ".vclock_gettime.o.d -nostdinc -I./arch/x86/include -I./include -include "
    "./include/linux/kconfig.h -D__KERNEL__ -fmacro-prefix-map=./= -std=gnu11 -fno-PIE "
    "-mno-sse -mcmodel=kernel -mharden-sls=all -O2 -fstack-protector-strong -Wall "
    "-Werror=implicit-int -g -mcmodel=small -fPIC -fno-stack-protector "
    "-DDISABLE_BRANCH_PROFILING -DBUILD_VDSO -mindirect-branch=thunk-inline "
    "-DKBUILD_MODFILE='\"arch/x86/entry/vdso/vclock_gettime\"' "
    "-D__KBUILD_MODNAME=kmod_vclock_gettime -c -o arch/x86/entry/vdso/vclock_gettime.o "
    "arch/x86/entry/vdso/vclock_gettime.c\n\n"
    "source_arch/x86/entry/vdso/vclock_gettime.o := arch/x86/entry/vdso/vclock_gettime.c\n")
# v6.1 writes cmd_, not savedcmd_
CMD_61 = CMD_612.replace("savedcmd_", "cmd_", 1)


class ParseTest(unittest.TestCase):
    def test_both_shapes(self):
        for text in (CMD_612, CMD_61):
            cc, argv = kbuild_line.parse_cmd(text)
            self.assertEqual(cc, "gcc")
            self.assertEqual(argv[-1], "arch/x86/entry/vdso/vclock_gettime.c")

    def test_no_command(self):
        with self.assertRaisesRegex(UsageError, "no saved command"):
            kbuild_line.parse_cmd("source_arch/x86/entry/vdso/vclock_gettime.o := x.c\n")
        with self.assertRaisesRegex(UsageError, "does not parse"):
            kbuild_line.parse_cmd("savedcmd_arch/x86/entry/vdso/vclock_gettime.o := gcc 'open\n")

    def test_kept_in_order_dropped_with_reasons(self):
        kept, dropped = kbuild_line.classify(kbuild_line.parse_cmd(CMD_612)[1])
        self.assertEqual(kept, ["-std=gnu11", "-fno-PIE", "-mno-sse", "-mcmodel=kernel",
                                "-mharden-sls=all", "-O2", "-fstack-protector-strong", "-g",
                                "-mcmodel=small", "-fPIC", "-fno-stack-protector",
                                "-DDISABLE_BRANCH_PROFILING", "-DBUILD_VDSO",
                                "-mindirect-branch=thunk-inline"])
        why = dict(dropped)
        for flag in ("-nostdinc", "-I./include", "-include ./include/linux/kconfig.h",
                     "-D__KERNEL__", "-Wall", "-Werror=implicit-int", "-c",
                     "-o arch/x86/entry/vdso/vclock_gettime.o", "-fmacro-prefix-map=./=",
                     "-D__KBUILD_MODNAME=kmod_vclock_gettime",
                     "-DKBUILD_MODFILE=\"arch/x86/entry/vdso/vclock_gettime\""):
            self.assertIn(flag, why)
            self.assertTrue(why[flag])
        self.assertIn("include", why["-I./include"])
        self.assertIn("warning", why["-Wall"])

    def test_kernel_code_model_last_is_dropped(self):
        kept, dropped = kbuild_line.classify(["-mcmodel=small", "-O2", "-mcmodel=kernel"])
        self.assertEqual(kept, ["-O2"])
        self.assertIn("-mcmodel=kernel", dict(dropped))

    def test_no_pic_last_is_dropped(self):
        # Debian's line says -fno-PIE and then -fPIC, which wins: kept as it is
        kept, dropped = kbuild_line.classify(["-fno-PIE", "-O2", "-fPIC"])
        self.assertEqual((kept, dropped), (["-fno-PIE", "-O2", "-fPIC"], []))
        # a tree whose line ends -fno-PIE: no object of it would link into a program
        kept, dropped = kbuild_line.classify(["-fPIC", "-O2", "-fno-PIE"])
        self.assertEqual(kept, ["-O2"])
        self.assertIn("position-independent", dict(dropped)["-fno-PIE"])

    def test_flags_that_change_the_abi_are_never_kept(self):
        abi = ["-mabi=ms", "-fpack-struct", "-fpack-struct=1", "-freg-struct-return",
               "-fpcc-struct-return", "-mregparm=3", "-mrtd", "-fcall-used-rbx",
               "-fcall-saved-rax", "-ffixed-rbp", "-m32", "-mx32", "-m16"]
        kept, dropped = kbuild_line.classify(abi + ["-O2"])
        self.assertEqual(kept, ["-O2"])
        self.assertTrue(all("calling convention" in why for _, why in dropped), dropped)
        for flag in abi:
            self.assertFalse(imports_table.kline_ok([flag]), flag)
        self.assertTrue(imports_table.kline_ok(["-m64", "-mcmodel=small", "-fshort-wchar"]))

    def test_hostile_flags_never_kept(self):
        hostile = ["-fplugin=/tmp/evil.so", "-fplugin-arg-evil-x=1", "-wrapper", "/bin/sh",
                   "-specs=/tmp/s", "-B/tmp/bin", "@/tmp/rsp", "-fprofile-generate",
                   "-fdump-tree-all", "-x", "c", "-Xlinker", "--wrap", "-fstack-usage",
                   "-finstrument-functions", "-fdebug-prefix-map=/=/x", "-iquote/etc",
                   "-isystem", "/etc", "--sysroot=/tmp", "-DX=$(touch /tmp/x)",
                   "-mfoo=/etc/passwd", "-fsanitize=address", "-save-temps", "-Wa,-o/tmp/x"]
        kept, dropped = kbuild_line.classify(hostile)
        self.assertEqual(kept, [])
        self.assertTrue(all(why for _, why in dropped))
        self.assertFalse(imports_table.kline_ok(hostile))

    def test_record_copts_pass_the_tables_check(self):
        kept, _ = kbuild_line.classify(kbuild_line.parse_cmd(CMD_612)[1])
        copts = kept + [f for f, _ in kbuild_line.NEUTRALISE]
        self.assertTrue(imports_table.kline_ok(copts))
        for bad in (["-fplugin=x"], ["-I/etc"], "-O2", [3], ["-O2"] * 401, ["-fx=a/b"]):
            self.assertFalse(imports_table.kline_ok(bad), bad)


class EntryTest(unittest.TestCase):
    def entry(self, **kw):
        key = "a" * 64
        e = {"key": key, "ident": imports_table.ident("t"), "arch": "x86_64",
             "arch_dir": "x86", "source": "/x", "patches": [], "summary": "s",
             "meta_sha256": key, "identity": {}}
        e.update(kw)
        return e

    def test_table_entry_with_a_hostile_line_is_left_out(self):
        self.assertIsNone(imports_table.entry_problem("t", self.entry()))
        self.assertIsNone(imports_table.entry_problem(
            "t", self.entry(kbuild={"copts": ["-O2", "-mno-sse"], "key": "k"})))
        for bad in ({"copts": ["-fplugin=/tmp/evil.so"]}, {"copts": "-O2"}, [],
                    {"copts": ["-O2", "-B/tmp"]}):
            why = imports_table.entry_problem("t", self.entry(kbuild=bad))
            self.assertIn("kbuild", why or "", bad)


class ConfigTest(unittest.TestCase):
    def test_given_config_and_its_hash(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "config"
            p.write_bytes(b"CONFIG_X86_64=y\n")
            (conf, data), why = kbuild.config_for("6.12", str(p))
            self.assertIsNone(why)
            self.assertEqual(conf["kind"], "given")
            self.assertEqual(conf["sha256"], hashlib.sha256(data).hexdigest())
            with self.assertRaises(UsageError):
                kbuild.config_for("6.12", d)  # a folder, not a file


    def test_key_follows_tree_config_and_compiler(self):
        cc = {"path": "/usr/bin/gcc", "version": "gcc 12"}
        k = kbuild.cache_key({"t": 1}, "c", cc)
        self.assertNotEqual(k, kbuild.cache_key({"t": 2}, "c", cc))
        self.assertNotEqual(k, kbuild.cache_key({"t": 1}, "d", cc))
        self.assertNotEqual(k, kbuild.cache_key({"t": 1}, "c", dict(cc, version="gcc 13")))
        self.assertEqual(k, kbuild.cache_key({"t": 1}, "c", dict(cc)))

    def test_debian_sources_only_run_by_default(self):
        self.assertTrue(kbuild.is_debian("/usr/src/linux-source-6.12.tar.xz"))
        for other in ("/home/me/linux", "/usr/src/linux-source-6.12.tar.xz/../../tmp/x.tar.xz",
                      "/tmp/linux-source-6.12.tar.xz"):
            self.assertFalse(kbuild.is_debian(other), other)


class CacheTest(unittest.TestCase):
    def test_damaged_or_other_format_record_is_not_used(self):
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            self.assertIsNone(kbuild.cached(d))
            (d / "line.json").write_text("{not json")
            self.assertIsNone(kbuild.cached(d))
            (d / "line.json").write_text(json.dumps({"format": kbuild.FORMAT - 1}))
            self.assertIsNone(kbuild.cached(d))
            (d / "line.json").write_text(json.dumps({"format": kbuild.FORMAT, "key": "k"}))
            self.assertEqual(kbuild.cached(d)["key"], "k")
            os.chmod(d / "line.json", 0o644)

    def test_two_builds_of_one_key_wait_for_each_other(self):
        # a child holds the key's lock (another import's kbuild); this one
        # says it waits, and goes on only once the child lets go
        with tempfile.TemporaryDirectory() as d:
            r, w = os.pipe()
            child = os.fork()
            if child == 0:
                os.close(r)
                with kbuild.key_lock(Path(d), "k", lambda line: None):
                    os.write(w, b"held")
                    time.sleep(0.5)
                os._exit(0)
            os.close(w)
            self.assertEqual(os.read(r, 4), b"held")
            said = []
            t0 = time.monotonic()
            with kbuild.key_lock(Path(d), "k", said.append):
                waited = time.monotonic() - t0
            os.waitpid(child, 0)
            os.close(r)
            self.assertEqual(said, ["import: kbuild: waiting for another import's kbuild "
                                    "of this tree"])
            self.assertGreater(waited, 0.2)
            with kbuild.key_lock(Path(d), "other", said.append):
                pass  # another key: no wait
            self.assertEqual(len(said), 1)



# make -k V=1 arch/x86/entry/vdso/ of a tree whose patch breaks vgetcpu.c (the
# 64-bit vDSO, not the shim's read path): make's last lines say only that a
# sub-make failed
VGETCPU_LOG = """\
  gcc -Wp,-MMD,arch/x86/entry/vdso/.vgetcpu.o.d -nostdinc -c -o arch/x86/entry/vdso/vgetcpu.o \
arch/x86/entry/vdso/vgetcpu.c
arch/x86/entry/vdso/vgetcpu.c: In function '__vdso_getcpu':
arch/x86/entry/vdso/vgetcpu.c:15:1: error: expected '=', ',', ';', 'asm' or \
'__attribute__' before 'oops'
make[4]: *** [scripts/Makefile.build:229: arch/x86/entry/vdso/vgetcpu.o] Error 1
make[3]: *** [scripts/Makefile.build:478: arch/x86/entry/vdso] Error 2
make[1]: *** [/w/src/Makefile:1936: .] Error 2
make: *** [Makefile:236: __sub-make] Error 2
make: Target 'arch/x86/entry/vdso/' not remade because of errors.
make: Leaving directory '/w/src'
"""


class MakeFailureTest(unittest.TestCase):
    """A failed make is named by the compiler's first error, as a patch that
    does not build must be (docs/patch-review.md), not by make's last lines."""

    def failed(self, text, rc=2):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        fd = os.open(d.name, os.O_RDONLY | os.O_DIRECTORY)
        self.addCleanup(os.close, fd)

        def make(tree, targets, log, work, read=()):
            log.write(text.encode())
            return rc

        with tempfile.TemporaryFile() as log, \
                mock.patch.object(kbuild, "make", make), \
                self.assertRaises(UsageError) as cm:
            kbuild.make_vdso(d.name, fd, log, d.name, "kbuild: the patched tree: make")
        return str(cm.exception)

    def test_the_compilers_first_error_is_named(self):
        why = self.failed(VGETCPU_LOG)
        self.assertEqual(len(why.splitlines()), 1, why)
        self.assertTrue(why.startswith("kbuild: the patched tree: make arch/x86/entry/vdso/ "
                                       "failed (exit 2): arch/x86/entry/vdso/vgetcpu.c:15:1: "
                                       "error: expected"), why)
        self.assertNotIn("__sub-make", why)

    def test_without_a_tools_line_the_first_failed_target(self):
        text = "\n".join(line for line in VGETCPU_LOG.splitlines()
                         if not line.startswith("arch/"))
        why = self.failed(text)
        self.assertIn("failed (exit 2): make[4]: *** [scripts/Makefile.build:229: "
                      "arch/x86/entry/vdso/vgetcpu.o] Error 1", why)

    def test_a_timeout_says_so_with_the_last_lines(self):
        why = self.failed("cc1: still going\n", rc="timed out after 900 s")
        self.assertIn("failed (timed out after 900 s): cc1: still going", why)


if __name__ == "__main__":
    unittest.main()
