"""`vdsobench import --arch arm64`: Debian's 6.12 tree's lib/vdso with its
arch/arm64 vDSO headers, through the arm64 shim (kernel_import/shim/asm/
alternative.h, sysreg.h), cross-built and verified under qemu-user.

The tree passes verify and agrees with generic_6_10 reading by reading; the
torn read (written without max_cycles, which arm64 lacks: TORN_612 itself does
not build there, one line) is caught; a generic patch that drops
vdso_calc_ns()'s delta mask, as x86's own vdso_calc_ns() does, is caught on
arm64 (the 56-bit arch timer wrap) while x86, which never compiles that
function, passes. Hostile input: a patch whose include leaves the tree through
the cross compiler's sysroot, --kbuild and --vdso-image with arm64. Nothing
here measures time. Skips, saying why, without the tarball, the cross compiler
or qemu-user (scripts/vdsobench setup --arch arm64 --kernel-sources).

The same imports' compat vDSO (arch/arm64/kernel/vdso32, 32-bit arm: the
armv7 variants, --arch arm) passes under qemu-arm, its mrrc answered by
verify's trap, and the torn read and the dropped mask are caught there too
(about 50 s more: the 32-bit checks of three imports, the --config=arm build,
four variants under qemu-arm; skipped without gcc-arm-linux-gnueabihf or
qemu-arm-static).
"""

import json
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli import arch
from vdsobench_cli.kimport import compile, probe, store, tree_config
from vdsobench_cli.tests.cross_support import cross_run_missing
from vdsobench_cli.tests.support import (KERNEL_TESTDATA as TESTDATA, TORN_612, ImportsDir,
                                         arm64_tarball_or_skip, cli, cross_missing, ok,
                                         one_line)

TORN_MASKED = str(TESTDATA / "6.12-torn-mult-shift-masked.patch")
NOMASK = str(TESTDATA / "6.12-arm64-delta-nomask.patch")
ARM64_KCONFIG = """\
config ARM64
	def_bool y
	select ARCH_SUPPORTS_INT128 if CC_HAS_INT128
	select GENERIC_GETTIMEOFDAY
	select GENERIC_VDSO_TIME_NS
	select HAVE_GENERIC_VDSO
	select GENERIC_VDSO_OVERFLOW_PROTECT if ARM64_SOMETHING

config 64BIT
	def_bool y

config X86
	select GENERIC_TIME_VSYSCALL
"""
# an include that leaves the tree through the cross compiler's own folder
ESCAPE = """\
--- a/arch/arm64/include/asm/vdso/gettimeofday.h
+++ b/arch/arm64/include/asm/vdso/gettimeofday.h
@@ -11,6 +11,7 @@
 #include <asm/barrier.h>
 #include <asm/unistd.h>
 #include <asm/sysreg.h>
+#include "/usr/aarch64-linux-gnu/include/../../../etc/hostname"
 
 #define VDSO_HAS_CLOCK_GETRES		1
 
"""


class PureArm64Test(unittest.TestCase):
    """No Bazel, no tarball."""

    def test_kconfig_selects_of_arm64(self):
        chosen, skipped = tree_config.kconfig_selects(ARM64_KCONFIG, "arm64")
        self.assertEqual(chosen, {"ARCH_SUPPORTS_INT128", "GENERIC_GETTIMEOFDAY",
                                  "GENERIC_VDSO_TIME_NS", "HAVE_GENERIC_VDSO"})
        self.assertEqual(skipped, ["GENERIC_VDSO_OVERFLOW_PROTECT if ARM64_SOMETHING"])
        # x86's blocks are not arm64's, and the other way round
        self.assertEqual(tree_config.kconfig_selects(ARM64_KCONFIG)[0],
                         {"GENERIC_TIME_VSYSCALL"})

    @unittest.skipUnless(arch.host() == "x86_64", "arm64 is cross-built from x86-64")
    def test_the_cross_compiler_and_its_headers(self):
        cc = compile.tree_cc("arm64")
        self.assertEqual(cc, f"{arch.CROSS_BIN}/aarch64-linux-gnu-gcc")
        self.assertEqual(compile.tree_cc("x86"), "/usr/bin/gcc")
        if cross_missing():
            self.skipTest(cross_missing())
        with tempfile.TemporaryDirectory() as tree:
            allowed = compile.allowed_includes(tree, cc)
            self.assertIn("/usr/aarch64-linux-gnu/include", allowed)
            self.assertNotIn("/usr/aarch64-linux-gnu/include",
                             compile.allowed_includes(tree, compile.tree_cc("x86")))
            # a name through that folder that resolves outside it is outside
            stderr = ". /usr/aarch64-linux-gnu/include/../../../etc/hostname\n"
            self.assertEqual(compile.outside_include(stderr, tree, cc),
                             "/usr/aarch64-linux-gnu/include/../../../etc/hostname")

    def test_kbuild_config_and_image_are_x86s(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = Path(d) / "config"
            cfg.write_text("CONFIG_ARM64=y\n")
            for extra, what in ((["--kbuild"], "--kbuild"), (["--config", str(cfg)], "--config"),
                                (["--vdso-image", str(cfg)], "--vdso-image")):
                rc, _, err = cli("import", "/usr/src", "--name", "x", "--arch", "arm64", *extra)
                one_line(self, rc, err, f"{what} with --arch arm64", "x86_64's only")


# arch/arm64/tools/syscall_32.tbl's shape, another ABI's line, and a name that is
# no C identifier (left out: it would be C of the tree's own in the header)
SYSCALL_TABLE = """\
# comment
78\tcommon\tgettimeofday\t\tsys_gettimeofday\tcompat_sys_gettimeofday
403\tcommon\tclock_gettime64\t\t\tsys_clock_gettime
404\t64\tnot_compat\t\tsys_x
405 32 only_32 sys_y
406\tcommon\tbad name\tsys_z
407\tcommon\tx);int evil(
"""


class CompatPureTest(unittest.TestCase):
    """The compat vDSO's syscall numbers and what a tree needs for it."""

    def test_compat_unistd_from_the_tree_table(self):
        with tempfile.TemporaryDirectory() as d:
            tree = Path(d)
            self.assertFalse(tree_config.write_compat_unistd(tree))  # no table: none
            (tree / "arch/arm64/tools").mkdir(parents=True)
            (tree / tree_config.COMPAT_TABLE).write_text(SYSCALL_TABLE)
            self.assertTrue(tree_config.write_compat_unistd(tree))
            text = (tree / tree_config.COMPAT_UNISTD).read_text()
        defines = [x for x in text.splitlines() if x.startswith("#define __NR")]
        self.assertEqual(defines, ["#define __NR_compat32_gettimeofday 78",
                                   "#define __NR_compat32_clock_gettime64 403",
                                   "#define __NR_compat32_only_32 405",
                                   "#define __NR_compat32_bad 406"])  # as syscallhdr.sh reads it

    def test_import_for_arm_points_to_arm64(self):
        rc, _, err = cli("import", "/usr/src", "--name", "x", "--arch", "arm")
        one_line(self, rc, err, "--arch arm: imported trees build for x86_64, arm64 only",
                 "arm64's compat vDSO, 32-bit arm, comes with --arch arm64")

    def test_no_compat_header_no_compat_variants(self):
        with tempfile.TemporaryDirectory() as d:
            why = probe.compat_problem(Path(d), "t", {})
        self.assertEqual(why, f"the tree has no {probe.COMPAT_HEADER}")


class Arm64Import612Test(unittest.TestCase):
    """Debian's linux-source-6.12 imported for arm64 as kernel:a (and patched)."""

    @classmethod
    def setUpClass(cls):
        cls.src = arm64_tarball_or_skip("6.12")
        cls.dir = ImportsDir()
        src = str(cls.src)
        cls.base = cli("import", src, "--name", "a", "--arch", "arm64", "--agree",
                       "generic_6_10")
        cls.torn = cli("import", src, "--patch", TORN_MASKED, "--name", "a-torn",
                       "--arch", "arm64")
        cls.nomask = cli("import", src, "--patch", NOMASK, "--name", "a-nomask",
                         "--arch", "arm64")

    @classmethod
    def tearDownClass(cls):
        cls.dir.close()

    def imported(self, result):
        rc, out, err = result
        self.assertEqual(rc, 0, err + out[-3000:])
        return out

    def test_arm64_counters_and_agreement(self):
        out = self.imported(self.base)
        self.assertIn("8 variants: kernel:a+{cntvctss,fake,isb_cntvct_dep,isb_cntvct_isb}"
                      "+{always,auto}", out)
        if not cross_run_missing("arm"):
            self.assertIn("import: kernel:a: its compat vDSO (arch/arm64/kernel/vdso32, "
                          "32-bit arm) too, with --arch arm: "
                          "kernel:a+{fake,isb_mrrc_isb}+{always,auto}", out)
        self.assertEqual(store.read_table()["a"]["arch"], "arm64")
        self.assertRegex(out, r"agree: kernel:a\+fake\+always and generic_6_10\+fake\+always: "
                              r"0 of \d+ readings differ")
        self.assertRegex(out, r"kernel:a\+fake\+auto and generic_6_10\+fake\+auto: 0 of")

    def test_verify_passes_under_qemu(self):
        self.imported(self.base)
        out = ok(self, ["verify", "--arch", "arm64", "--json", "kernel:a+fake+always",
                        "kernel:a+isb_cntvct_dep+always", "kernel:a+isb_cntvct_isb+auto"])
        recs = [json.loads(x) for x in out.splitlines() if x.startswith('{"variant"')]
        self.assertEqual([r["status"] for r in recs], ["PASS"] * 3, out)
        fake = next(r for r in recs if r["variant"] == "kernel:a+fake+always")
        ran = {c["name"]: c["detail"] for c in fake["checks"] if not c["skipped"]}
        self.assertEqual(set(ran), {"exact", "edges", "concurrency"})
        self.assertIn("56-bit arch timer wrap", ran["edges"])
        self.assertIn("time namespace", ran["edges"])

    def test_torn_read_is_caught(self):
        self.imported(self.torn)
        rc, out, err = cli("verify", "--arch", "arm64", "kernel:a-torn+fake+always")
        self.assertEqual(rc, 1, err + out)
        self.assertRegex(out, r"FAIL +kernel:a-torn\+fake\+always +concurrency: torn read")

    @unittest.skipIf(cross_run_missing("arm"), cross_run_missing("arm"))
    def test_compat_vdso_passes_under_qemu_arm(self):
        self.imported(self.base)
        out = ok(self, ["verify", "--arch", "arm", "--json", "kernel:a+fake+always",
                        "kernel:a+isb_mrrc_isb+auto"])
        recs = [json.loads(x) for x in out.splitlines() if x.startswith('{"variant"')]
        self.assertEqual([r["status"] for r in recs], ["PASS"] * 2, out)
        # the tree's own mrrc, which no counter choice reaches, runs in the fake one too
        self.assertEqual({r["variant"]: r["reads_counter_itself"] for r in recs},
                         {"kernel:a+fake+always": True, "kernel:a+isb_mrrc_isb+auto": False})
        for r in recs:
            ran = {c["name"]: c["detail"] for c in r["checks"] if not c["skipped"]}
            self.assertEqual(set(ran), {"exact", "edges", "concurrency"}, r)
            self.assertIn("56-bit arch timer wrap", ran["edges"])
            self.assertIn("time namespace", ran["edges"])

    @unittest.skipIf(cross_run_missing("arm"), cross_run_missing("arm"))
    def test_compat_vdso_catches_the_torn_read_and_the_dropped_mask(self):
        self.imported(self.torn)
        self.imported(self.nomask)
        rc, out, err = cli("verify", "--arch", "arm", "kernel:a-torn+fake+always",
                           "kernel:a-nomask+isb_mrrc_isb+always")
        self.assertEqual(rc, 1, err + out)
        self.assertRegex(out, r"FAIL +kernel:a-torn\+fake\+always +concurrency: torn read")
        self.assertRegex(out, r"FAIL +kernel:a-nomask\+isb_mrrc_isb\+always +edges: 56-bit "
                              r"arch timer wrapped past cycle_last")
        self.assertIn("0 PASS, 2 FAIL", out)

    def test_torn_612_needs_max_cycles_which_arm64_lacks(self):
        rc, _, err = cli("import", str(self.src), "--patch", TORN_612, "--name", "a-t612",
                         "--arch", "arm64")
        one_line(self, rc, err, "the shim cannot build this tree's lib/vdso/gettimeofday.c",
                 "no member named", "max_cycles")
        self.assertNotIn("a-t612", store.read_table())

    def test_dropped_mask_is_caught_on_arm64_only(self):
        self.imported(self.nomask)
        rc, out, err = cli("verify", "--arch", "arm64", "kernel:a-nomask+fake+always")
        self.assertEqual(rc, 1, err + out)
        self.assertRegex(out, r"FAIL +kernel:a-nomask\+fake\+always +edges: 56-bit arch timer "
                              r"wrapped past cycle_last: realtime at counter 500 is -?\d+ ns off")
        # x86 builds its own vdso_calc_ns() and never the generic one: it passes
        ok(self, ["import", str(self.src), "--patch", NOMASK, "--name", "x-nomask",
                  "--no-kbuild"])
        # with this CPU's own counter read (RDTSCP is not on every CPU)
        out = ok(self, ["verify", "kernel:x-nomask+fake+always",
                        f"kernel:x-nomask+{arch.timed_counter()}+auto"])
        self.assertRegex(out, r"PASS +kernel:x-nomask\+fake\+always")
        self.assertIn("2 PASS, 0 FAIL", out)

    def test_an_include_out_through_the_cross_sysroot_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            patch = Path(d) / "escape.patch"
            patch.write_text(ESCAPE)
            rc, _, err = cli("import", str(self.src), "--patch", str(patch), "--name", "a-esc",
                             "--arch", "arm64")
        one_line(self, rc, err, "includes /usr/aarch64-linux-gnu/include/../../../etc/hostname",
                 "outside the tree and the shim")
        try:
            secret = Path("/etc/hostname").read_text().strip()
        except OSError:
            secret = ""
        if len(secret) >= 6:  # a longer name than any word of the message
            self.assertNotIn(secret, err)
        self.assertNotIn("a-esc", store.read_table())


if __name__ == "__main__":
    unittest.main()
