"""The project's copy for a suite of its own (cli/project_copy.py), on a
made-up git work tree: what git sees is copied as it is on disk (an edit not
yet committed, a new file), never what it ignores, a link or bazel-*; no git
work tree, no list; remove() takes the copy away."""

import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli import project_copy
from vdsobench_cli.tests.support import write_tree


class ProjectCopyTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.root, self.dest = Path(tmp.name, "p"), Path(tmp.name, "copy")
        write_tree(self.root, {"a.c": "committed", "sub/b.h": "b", ".gitignore": "ignored\n"})
        subprocess.run(["git", "init", "-q", str(self.root)], check=True)
        git = ["git", "-C", str(self.root), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "base"], check=True)
        write_tree(self.root, {"a.c": "edited", "new.py": "n", "ignored": "x",
                               "bazel-out/x": "built"})
        os.symlink("/etc/hostname", self.root / "link")
        subprocess.run([*git, "add", "link"], check=True)

    def test_what_git_sees_as_it_is(self):
        listed = project_copy.files(self.root)
        self.assertEqual(sorted(map(str, listed)),
                         [".gitignore", "a.c", "bazel-out/x", "link", "new.py", "sub/b.h"])
        project_copy.make(self.root, self.dest, listed)
        got = sorted(str(p.relative_to(self.dest)) for p in self.dest.rglob("*") if p.is_file())
        self.assertEqual(got, [".gitignore", "a.c", "new.py", "sub/b.h"])
        self.assertEqual((self.dest / "a.c").read_text(), "edited")
        project_copy.remove(self.dest)  # no WORKSPACE: no Bazel to ask
        self.assertFalse(self.dest.exists())

    def test_no_git_work_tree_no_list(self):
        self.assertIsNone(project_copy.files(self.dest))


if __name__ == "__main__":
    unittest.main()
