"""Today's tree, for real: `import linux-source-7.3` fetches Debian's
linux-source-7.3 and linux-config-7.3 from the newer suites of the machine's
archive (once: the cache ~/.cache/vdsobench/debian keeps them), runs the
tree's kbuild with Debian's configuration (once: kbuild's cache keeps its
line and images) and ends in one line, exit 2: the image kbuild built in
arch/x86/entry/vdso/vdso64/ and the shim's first error (the shim does not
build 7.3's vDSO yet). The machine's apt configuration is left as it was.
That image, given to `import --vdso-image`, is refused in one line: the
loader does not map the generic data store's pages yet.

Slow (commands/testrun.py's SLOW): 22 s once both caches hold 7.3; 185 s
the first time (a download of 168 MB, kbuild on 2 busy cores).
Skipped, saying why, when the tree is not fetched yet and the archive's
trixie-backports cannot be reached, or kbuild's tools are missing."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli import private_apt
from vdsobench_cli.kimport import kbuild, newer_sources
from vdsobench_cli.tests.support import NESTED, ImportsDir, cli, snapshot

SERIES = "7.3"


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

    def test_fetched_kbuilt_and_said_in_one_line(self):
        etc_apt = snapshot("/etc/apt")
        rc, out, err = cli("import", f"linux-source-{SERIES}", "--name", "today")
        self.assertEqual(rc, 2, err + out)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        m = re.search(r"kbuild built (\S+/vdso64\.so) and its \.dbg \(Linux 7\.3\.\d+, "
                      r"arch/x86/entry/vdso/vdso64/\), but the shim cannot build this "
                      r"tree's \S", err)
        self.assertIsNotNone(m, err)
        self.assertIn("nothing imported", err)
        self.assertEqual(snapshot("/etc/apt"), etc_apt)
        self.assertFalse([n for n in os.listdir("/var/lib/apt/lists") if "backports" in n
                          or "_sid_" in n], "the private lists landed in the system's")

        tarball = newer_sources.tarball(SERIES)
        self.assertIsNotNone(tarball)
        self.assertTrue(kbuild.is_debian(tarball.resolve()))
        record = json.loads((tarball.parents[2] / newer_sources.RECORD).read_text())
        self.assertIn(record["suite"], newer_sources.SUITES)

        image = Path(m.group(1))
        line = json.loads((image.parent / "line.json").read_text())
        self.assertEqual(line["vdso_dir"], "arch/x86/entry/vdso/vdso64")
        self.assertEqual(line["config"]["kind"], "debian")
        self.assertEqual(line["config"]["path"], str(newer_sources.config(SERIES)))
        self.assertIn("-o arch/x86/entry/vdso/vdso64/vclock_gettime.o", line["line"])
        syms = subprocess.run(["readelf", "--dyn-syms", "-W", str(image)], capture_output=True,
                              text=True).stdout
        for name in ("__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time",
                     "__vdso_clock_getres", "__vdso_getrandom"):
            self.assertIn(name, syms)
        self.assertTrue((image.parent / "vdso64.so.dbg").is_file())

        # kbuild's own image, given as --vdso-image: its data pages are not
        # v6.1..v6.14's four, and the loader says so rather than map them
        # wrongly (by the note of the stripped image, by the .dbg's symbols)
        for given, phrase in ((image, r"it is Linux 7\.3\.\d+'s \(its note\)"),
                              (image.parent / "vdso64.so.dbg",
                               r"the generic data store's \(vdso_u_time_data at -24576")):
            rc, out, err = cli("import", f"linux-source-{SERIES}", "--vdso-image", str(given),
                               "--name", "today-image")
            self.assertEqual(rc, 2, err + out)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
            self.assertRegex(err, phrase)


if __name__ == "__main__":
    unittest.main()
