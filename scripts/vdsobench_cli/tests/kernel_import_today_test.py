"""Today's tree, for real: `import linux-source-7.3` fetches Debian's
linux-source-7.3 and linux-config-7.3 from the newer suites of the machine's
archive (once: the cache ~/.cache/vdsobench/debian keeps them), runs the
tree's kbuild with Debian's configuration (once: kbuild's cache keeps its
line and images), and imports it: the shim's rebuilds and kbuild's image
(its .dbg, whose code is the stripped vdso64.so's byte for byte), mapped
with the generic data store's pages, every variant verified; its 32-bit
vDSO built (in vdso32/) and checked, and kbuild's vdso32 image, its system
call alternative applied, verified as the i386 +image variants (natively or
under qemu-i386). The machine's apt configuration is left as it was. The stripped image alone,
given to `import --vdso-image`, is refused in one line: it cannot say
where its data pages are.

Slow (commands/testrun.py's SLOW): 222 s once both caches hold 7.3 (the
variants built and verified, the i386 +image ones under qemu-i386, on 2
busy cores); the first time adds the download (168 MB) and kbuild.
Skipped, saying why, when the tree is not fetched yet and the archive's
trixie-backports cannot be reached, or kbuild's tools are missing."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli import build, private_apt
from vdsobench_cli.kimport import (kbuild, newer_sources, patches as patches_mod,
                                   source as source_mod, store, tarball as tarball_mod,
                                   vdso32_image, vdso_image)
from vdsobench_cli.tests.cross_support import cross_run_missing
from vdsobench_cli.tests.support import NESTED, TEST_BUDGET_S, ImportsDir, cli, snapshot

SERIES = "7.3"
TESTDATA = build.ROOT / "kernel_import" / "testdata"


def unreachable():
    """Why trixie-backports cannot be asked now, or None."""
    state = tempfile.mkdtemp(prefix="vdsobench-apt-probe-")
    try:
        apt = private_apt.Apt(Path(state), newer_sources.SUITES[0], private_apt.archive_uri())
        apt.prepare()
        return apt.update()
    except Exception as e:  # no sources, no apt: the same skip
        return str(e)
    finally:
        shutil.rmtree(state, ignore_errors=True)


class TodayTreeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get(NESTED):
            raise unittest.SkipTest("inside the new-variant test's copy of the project")
        if os.path.exists(f"/usr/src/linux-source-{SERIES}.tar.xz"):
            raise unittest.SkipTest(f"/usr/src has linux-source-{SERIES}: nothing to fetch")
        if kbuild.missing_tools():
            raise unittest.SkipTest(f"no {' '.join(kbuild.missing_tools())} for kbuild "
                                    "(scripts/vdsobench setup --kernel-sources)")
        if newer_sources.tarball(SERIES) is None or newer_sources.config(SERIES) is None:
            why = unreachable()
            if why:
                raise unittest.SkipTest(f"Debian's archive cannot be reached ({why})")
        cls.dir = ImportsDir()

    @classmethod
    def tearDownClass(cls):
        cls.dir.close()

    def test_fetched_kbuilt_imported_and_verified(self):
        etc_apt = snapshot("/etc/apt")
        rc, out, err = cli("import", f"linux-source-{SERIES}", "--name", "today")
        self.assertEqual(rc, 0, err + out)
        self.assertRegex(out, r"imported: Linux 7\.3\.\d+ from linux-source-7\.3\.tar\.xz")
        self.assertIn("kernel:today+{fake,lfence_rdtsc,", out)
        self.assertIn("}+{always,auto,image}", out)
        # its vdso32 as i386 variants (the shim's, CONFIG_COMPAT_32BIT_TIME as
        # Debian's), and kbuild's vdso32 image as the i386 +image ones, with
        # v7.x's boot-time alternative applied to its fallbacks' system calls
        self.assertRegex(out, r"kernel:today: its 32-bit vDSO .* with --arch i386: "
                              r"kernel:today\+\{fake,.*\}\+\{always,auto\}")
        self.assertRegex(out, r"kernel:today: and its kbuild vdso32 image, with --arch i386: "
                              r"kernel:today\+\{fake,lfence_rdtsc,rdtsc,rdtscp\}\+image "
                              r"\(docs/image\.md\); its [1-9]\d* system calls made through "
                              r"__kernel_vsyscall")
        self.assertNotIn("no i386 +image variants", out)
        self.assertEqual(snapshot("/etc/apt"), etc_apt)
        self.assertFalse([n for n in os.listdir("/var/lib/apt/lists") if "backports" in n
                          or "_sid_" in n], "the private lists landed in the system's")

        tarball = newer_sources.tarball(SERIES)
        self.assertIsNotNone(tarball)
        self.assertTrue(kbuild.is_debian(tarball.resolve()))
        record = json.loads((tarball.parents[2] / newer_sources.RECORD).read_text())
        self.assertIn(record["suite"], newer_sources.SUITES)

        # kbuild's line and images, with the options its .config built them with
        # (Debian's 7.3: no aux clocks)
        # (the import's own: a cache may hold older formats' folders of 7.3 too)
        kb = store.read_table()["today"]["identity"]["kbuild"]
        folder = kbuild.cache_dir() / kb["key"]
        line = json.loads((folder / "line.json").read_text())
        self.assertIn("linux-source-7.3", line["source"])
        self.assertEqual(line["vdso_dir"], "arch/x86/entry/vdso/vdso64")
        self.assertEqual(line["config"]["kind"], "debian")
        self.assertEqual(line["config"]["path"], str(newer_sources.config(SERIES)))
        self.assertIn("-o arch/x86/entry/vdso/vdso64/vclock_gettime.o", line["line"])
        self.assertEqual(line["options"], {"POSIX_AUX_CLOCKS": False, "TIME_NS": True,
                                           "GENERIC_VDSO_OVERFLOW_PROTECT": True})
        image = folder / "vdso64.so"
        syms = subprocess.run(["readelf", "--dyn-syms", "-W", str(image)], capture_output=True,
                              text=True).stdout
        for name in ("__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time",
                     "__vdso_clock_getres", "__vdso_getrandom"):
            self.assertIn(name, syms)
        dbg = (folder / "vdso64.so.dbg").read_bytes()
        self.assertTrue(vdso_image.shipped_by(dbg, image.read_bytes()))
        # its 32-bit vDSO, where 7.3 builds it, kept and recorded with the import
        self.assertEqual(dict(line["vdso32"], key=kb["key"]), kb["vdso32"])
        self.assertEqual(kb["vdso32"]["dir"], "arch/x86/entry/vdso/vdso32")
        for name in ("vdso32.so", "vdso32.so.dbg"):
            check = vdso32_image.check((folder / name).read_bytes())
            self.assertTrue(check["ok"], check)
            self.assertIn("__kernel_vsyscall", check["exports"])

        # every variant verified: the shim's rebuilds, and kbuild's image mapped
        # with the data store's pages (its .dbg's vdso_u_data), the tree's own
        # update path writing them
        rc, out, err = cli("verify", "--json", "kernel:today+*")
        found = {x["variant"]: x["status"] for x in map(json.loads, out.splitlines())
                 if "variant" in x}
        self.assertEqual(rc, 0, err + out[-3000:])
        self.assertEqual(found["kernel:today+fake+image"], "PASS", found)
        self.assertEqual(found["kernel:today+fake+always"], "PASS", found)
        self.assertFalse({v: st for v, st in found.items() if st not in ("PASS", "SKIP")})
        # its image, built without aux clocks, answers their getres (v6.17's
        # lib/vdso) where its syscall refuses them: said, not failed
        notes = {x["variant"]: x.get("note") or "" for x in map(json.loads, out.splitlines())
                 if "variant" in x}
        self.assertIn("1 ns from the vDSO, -EINVAL from the syscall",
                      notes["kernel:today+fake+image"])

        # the 7.3 test patches (kernel_import/testdata: issue 30's (a), (b), (c))
        # apply to it, as import applies a series
        with tempfile.TemporaryDirectory() as d:
            series = patches_mod.check_patches(
                [str(p) for p in sorted(TESTDATA.glob("7.3-*.patch"))])
            self.assertEqual(len(series), 3)
            named = sorted({n for p in series for n in p.names})
            base = Path(d, "base")
            base.mkdir()
            tarball_mod.untar(tarball, source_mod.expand(source_mod.TAKE, "x86"), named, base)
            for k, one in enumerate(series):  # each on its own: (a) and (b) are rivals
                shutil.copytree(base, Path(d, str(k)))
                patches_mod.apply_patches(Path(d, str(k)), [one])

        # issue 30's (c) reviewed as a patch author would: the image kbuild
        # makes of the patched tree is what is measured, and the code section
        # names the function the patch took out of line
        letter, record = self.review(TESTDATA / "7.3-do-hres-not-always-inline.patch")
        flat = " ".join(letter.split())  # the block's lines wrap at 72
        self.assertRegex(flat, r"Measured: Linux 7\.3\.\d+, its kbuild's vDSO image")
        self.assertRegex(letter, r"do_hres[\w.]*: added")
        self.assertRegex(letter, r"(?m)^verify, before and after: PASS")
        self.assertEqual(record["build"], "image", record["measured"])
        self.assertRegex(flat, r"Compiler: gcc .*the kernel's vDSO line")

        # the stripped image alone cannot say where the data store's pages are
        rc, out, err = cli("import", f"linux-source-{SERIES}", "--vdso-image", str(image),
                           "--name", "today-image")
        self.assertEqual(rc, 2, err + out)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertRegex(err, r"it is Linux 7\.3\.\d+'s \(its note\).*give its "
                              r"vdso64\.so\.dbg")

    @unittest.skipIf(cross_run_missing("i386"), cross_run_missing("i386"))
    def test_its_vdso32_image_runs_as_i386_image_variants(self):
        """kbuild's vdso32 image, v7.x's system call alternative applied by the
        loader (impls/image/sysfast32.c) as the kernel applies it at boot: its
        fallbacks call __kernel_vsyscall, where the checkers trap them under
        qemu-i386 (natively: seccomp), so its four i386 +image variants pass
        verify, the fake counter's with its exact, edge and concurrency checks.
        (Without the alternative they failed: "made 0 fallback syscalls".)"""
        if "today" not in store.read_table():  # test_fetched_...'s, from the caches
            rc, out, err = cli("import", f"linux-source-{SERIES}", "--name", "today")
            self.assertEqual(rc, 0, err + out)
        entry = store.read_table()["today"]
        meta = json.loads((store.trees_dir() / entry["key"] / "kimport.json").read_text())
        fast = meta["image"]["vdso32"]["sysfast32"]
        self.assertEqual((fast["call"], fast["applied"]), ("__kernel_vsyscall", 5), fast)
        self.assertEqual(len(fast["sites"]), fast["applied"])
        image = [f"kernel:today+{c}+image" for c in ("fake", "lfence_rdtsc", "rdtsc", "rdtscp")]
        rc, out, err = cli("verify", "--arch", "i386", "--json", *image)
        self.assertEqual(rc, 0, err + out[-3000:])
        recs = {r["variant"]: r for r in map(json.loads, (
            x for x in out.splitlines() if x.startswith('{"variant"')))}
        self.assertEqual({v: r["status"] for v, r in recs.items()},
                         dict.fromkeys(image, "PASS"), out[-3000:])
        ran = {c["name"] for c in recs[image[0]]["checks"] if not c["skipped"]}
        self.assertEqual(ran, {"exact", "edges", "concurrency"}, image[0])

    def review(self, patch):
        """(cover letter, patch-review.json) of a --quick review of patch on
        7.3, its shape checked; any timed verdict will do (live rounds), and
        WRONG never: the patches here are correct."""
        with tempfile.TemporaryDirectory() as tmp:
            out_dir = os.path.join(tmp, "out")
            # --no-i386: 7.3's i386 variants are verified above, the review's
            # section on 6.12 (patch_review_isolation_test)
            rc, out, err = cli("recipe", "patch-review", "--quick", "--no-arm64", "--no-i386",
                               "--budget", TEST_BUDGET_S, "--source", f"linux-source-{SERIES}",
                               "--patch", str(patch), "--out", out_dir)
            self.assertIn(rc, (0, 1), err + out[-3000:])
            letter = Path(out_dir, "cover-letter.txt").read_text()
            record = json.loads(Path(out_dir, "patch-review.json").read_text())
        lines = letter.splitlines()
        self.assertFalse(lines[0].startswith("WRONG"), letter)
        self.assertEqual(rc == 1, lines[0].startswith("INCOMPLETE: "), letter)
        self.assertLessEqual(len(lines), 40, letter)
        self.assertLessEqual(max(map(len, lines)), 72, letter)
        return letter, record


if __name__ == "__main__":
    unittest.main()
