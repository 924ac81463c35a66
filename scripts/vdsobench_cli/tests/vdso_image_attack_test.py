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


if __name__ == "__main__":
    unittest.main()
