"""`vdsobench import SRC --vdso-image BAD` with every crafted hostile image
(tests/vdso_images.py: each one the checker once took and the loader then
refused, or overran, issue 28): exit 2 with one line naming the file and
what is wrong, nothing written in the test's own imports folder or beside
the image, and the imports folder still answers `import --list`. The image
is checked before the source is read, so neither a tarball nor a build of a
tree is needed; the checker itself is built (//impls/image)."""
import shutil
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.tests import vdso_images
from vdsobench_cli.tests.support import ImportsDir, cli, one_line, vdsobench

SOURCE = "linux-source-6.12"  # never reached: the image is refused first


def listing(root):
    """{path: bytes} of every file below root, and its folders."""
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None
            for p in sorted(Path(root).rglob("*"))}


class ImportAttackTest(unittest.TestCase):
    def setUp(self):
        imports = ImportsDir()  # the imports folder, empty: the project's stays as it is
        self.addCleanup(imports.close)
        self.dirs = (Path(imports.tmp.name), Path(tempfile.mkdtemp(prefix="vdsobench-image-")))
        self.addCleanup(shutil.rmtree, self.dirs[1], ignore_errors=True)

    def refused(self, run, case):
        make, phrase = vdso_images.HOSTILE[case]
        path = self.dirs[1] / f"{case}.so"
        path.write_bytes(make())
        before = [listing(d) for d in self.dirs]
        rc, out, err = run("import", SOURCE, "--name", "hostile", "--vdso-image", str(path))
        one_line(self, rc, err, f"--vdso-image {path}: ", phrase)
        self.assertEqual(out, "")
        self.assertEqual([listing(d) for d in self.dirs], before, "something was written")
        rc, out, err = vdsobench("import", "--list")
        self.assertEqual((rc, err), (0, ""), out)
        self.assertIn("no imported trees", out)

    def test_every_hostile_image_is_refused_in_one_line(self):
        for case in vdso_images.HOSTILE:
            with self.subTest(case):
                self.refused(vdsobench, case)

    def test_the_command_itself_refuses_one(self):
        """scripts/vdsobench as its own process, on the case that took a build's
        15-line failure to show."""
        self.refused(cli, "no-gettimeofday")

    def test_what_a_subverted_checker_prints_is_checked_too(self):
        """The checker runs confined on a hostile image; were the image to take it
        over, its JSON would be the image's word, and its numbers go into a C
        header the build compiles as root: a string there is a line of C (an
        #include of root's file). One line, nothing written."""
        import json
        from unittest import mock
        from vdsobench_cli.cli import confine
        from vdsobench_cli.kimport import vdso_image
        path = self.dirs[1] / "good.so"
        path.write_bytes(vdso_images.good()["v6.12"])
        info = {"class": 64, "span": 8192, "vvar_start": -16384, "vvar_pages": 4, "data_page": 0,
                "timens_page": 3, "data_offset": 128, "pvclock_page": 1,
                "hvclock_page": 2, "alternatives": 1,
                "entry_size": 14, "slots": [{"at": 16}], "counters": {},
                "syms": {"__vdso_clock_gettime": 16, "__vdso_time": 32,
                         "__vdso_gettimeofday": '0\n#include "/etc/shadow"\n'}}
        hostile = confine.command(["/bin/sh", "-c", 'cat >/dev/null; printf "%s\\n" "$1"',
                                   "sh", json.dumps(info)])
        before = [listing(d) for d in self.dirs]
        with mock.patch.object(vdso_image, "checker", return_value=hostile):
            rc, out, err = vdsobench("import", SOURCE, "--name", "x", "--vdso-image",
                                     str(path))
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("vdsobench_image_check: its output is not what it prints (syms)", err)
        self.assertEqual(rc, 1, err)
        self.assertEqual([listing(d) for d in self.dirs], before, "something was written")


if __name__ == "__main__":
    unittest.main()
