"""kimport/git_dir.py: a work tree's HEAD commit read from .git as data. Each
hostile .git is built here and read by the real reader: it gives no commit
and one line why, at once (a SIGALRM ends a read that blocks: the test
fails instead of hanging), and reads nothing out of the tree; the shapes git
writes (a .git folder, loose and packed refs, a detached HEAD, a linked
worktree's .git file, absolute and relative) give the commit git gives."""

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.kimport import git_dir

A, B, C = "a" * 40, "b" * 40, "c" * 40
# the longest a read may take before the test calls it blocked: a hang guard,
# never a timing (the reader makes a few dozen system calls)
BLOCKED_S = 20


class Blocked(Exception):
    pass


@contextlib.contextmanager
def prompt():
    """The block must not block: SIGALRM ends it after BLOCKED_S."""
    def alarm(signum, frame):
        raise Blocked(f"the reader blocked for {BLOCKED_S} s")
    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(BLOCKED_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def head(tree):
    with prompt():
        return git_dir.head(tree)


def git_tree(root, head_text="ref: refs/heads/main\n", refs=None, packed=None):
    """A work tree with a .git folder: HEAD, loose refs {name: text}, packed-refs."""
    git = Path(root) / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text(head_text)
    for name, text in (refs or {}).items():
        (git / name).parent.mkdir(parents=True, exist_ok=True)
        (git / name).write_text(text)
    if packed is not None:
        (git / "packed-refs").write_text(packed)
    return git


class Case(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="vdsobench-git-")
        self.addCleanup(tmp.cleanup)
        self.tmp = Path(tmp.name)
        self.tree = self.tmp / "tree"
        self.tree.mkdir()

    def refused(self, *needles):
        """No commit, one line why, naming each needle."""
        h = head(self.tree)
        self.assertIsNone(h.commit, h)
        self.assertEqual(len(h.why.splitlines()), 1, h)
        for n in needles:
            self.assertIn(n, h.why)
        return h

    def outside(self, commit=C):
        """A folder out of the tree that looks like refs, its main a commit."""
        out = self.tmp / "outside"
        (out / "heads").mkdir(parents=True, exist_ok=True)
        (out / "heads" / "main").write_text(commit + "\n")
        (out / "kmsg").write_text(commit + "\n")
        return out


class AttackTest(Case):
    def test_refs_linked_out_of_the_tree(self):
        git = git_tree(self.tree)
        shutil.rmtree(git / "refs")
        os.symlink(self.outside(), git / "refs")
        self.refused(".git/refs", "symbolic link")

    def test_refs_linked_to_proc_with_head_on_kmsg(self):
        git = git_tree(self.tree, "ref: refs/kmsg\n")
        shutil.rmtree(git / "refs")
        os.symlink("/proc", git / "refs")
        self.refused(".git/refs", "symbolic link")

    def test_a_ref_linked_out_and_a_linked_head(self):
        git = git_tree(self.tree)
        os.symlink(self.outside() / "heads" / "main", git / "refs" / "heads" / "main")
        self.refused("refs/heads/main", "symbolic link")
        os.unlink(git / "HEAD")
        os.symlink(self.outside() / "heads" / "main", git / "HEAD")
        self.refused("HEAD", "symbolic link")

    def test_git_folder_linked_out(self):
        os.symlink(self.outside(), self.tree / ".git")
        self.refused(".git", "a symbolic link")

    def test_fifo_as_head_and_as_a_ref(self):
        git = git_tree(self.tree)
        os.unlink(git / "HEAD")
        os.mkfifo(git / "HEAD")
        self.refused("HEAD", "named pipe")
        os.unlink(git / "HEAD")
        (git / "HEAD").write_text("ref: refs/heads/main\n")
        os.mkfifo(git / "refs" / "heads" / "main")
        self.refused("refs/heads/main", "named pipe")

    def test_fifo_as_packed_refs_and_as_dot_git(self):
        git = git_tree(self.tree)
        os.mkfifo(git / "packed-refs")
        self.refused("packed-refs", "named pipe")
        shutil.rmtree(git)
        os.mkfifo(self.tree / ".git")
        self.refused(".git", "named pipe")

    def test_oversized_ref(self):
        git_tree(self.tree, refs={"refs/heads/main": A + "\n" * 5000})
        self.refused("refs/heads/main", "larger than the 4096 bytes")

    def test_git_file_into_proc_sys_and_dev(self):
        for gitdir in ("/proc", "/proc/self", "/sys", "/dev", "../" * 40 + "proc/self"):
            with self.subTest(gitdir):
                (self.tree / ".git").write_text(f"gitdir: {gitdir}\n")
                self.refused("pseudo filesystem")

    def test_commondir_into_proc(self):
        wt = self.tmp / "wt-gitdir"
        wt.mkdir()
        (wt / "HEAD").write_text("ref: refs/heads/main\n")
        (wt / "commondir").write_text("/proc/self\n")
        (self.tree / ".git").write_text(f"gitdir: {wt}\n")
        self.refused("commondir", "pseudo filesystem")

    def test_a_nul_in_a_gitdir_or_commondir_path(self):
        """A path git would cut at its NUL is refused as a path, not raised on (a
        review read it last, after all its work, and ended in a traceback)."""
        git_tree(self.tree, refs={"refs/heads/main": A + "\n"})
        (self.tree / ".git" / "commondir").write_bytes(b"/\0etc\n")
        self.refused("commondir", "a NUL")
        wt = self.tmp / "wt-gitdir"
        git_tree(wt, refs={"refs/heads/main": A + "\n"})
        shutil.rmtree(self.tree / ".git")
        (self.tree / ".git").write_bytes(b"gitdir: " + str(wt).encode() + b"\0x\n")
        self.refused(".git: gitdir", "a NUL")

    def test_git_file_path_through_a_link(self):
        real = self.tmp / "real"
        git_tree(real, refs={"refs/heads/main": A + "\n"})
        os.symlink(real / ".git", self.tmp / "via-link")
        (self.tree / ".git").write_text(f"gitdir: {self.tmp / 'via-link'}\n")
        self.refused("via-link", "symbolic link")

    def test_ref_names_git_refuses(self):
        for bad in ("refs/../../outside/heads/main", "refs/heads/../../../x", "/etc/passwd",
                    "refs/heads/.hidden", "refs/heads/a.lock", "refs/heads/a@{1}",
                    "refs/heads/a\x1bb", "not-refs/x", "refs"):
            with self.subTest(bad):
                git = self.tree / ".git"
                shutil.rmtree(git, ignore_errors=True)
                git_tree(self.tree, f"ref: {bad}\n")
                self.refused("not a ref name")

    def test_symbolic_refs_loop(self):
        git_tree(self.tree, refs={"refs/heads/main": "ref: refs/heads/other\n",
                                  "refs/heads/other": "ref: refs/heads/main\n"})
        self.refused("nested too deep")

    def test_head_that_is_no_ref(self):
        git_tree(self.tree, "hello\n")
        self.refused("HEAD", "neither a commit id")
        shutil.rmtree(self.tree / ".git")
        git_tree(self.tree, A[:39] + "\n")
        self.refused("HEAD", "neither a commit id")

    def test_nothing_out_of_the_tree_is_recorded(self):
        """The one attack the old reader fell for, end to end: refs linked
        to a folder whose heads/main holds a commit; that commit is never
        the answer, by any route."""
        out = self.outside(C)
        for how in ("refs", "heads"):
            with self.subTest(how):
                shutil.rmtree(self.tree / ".git", ignore_errors=True)
                git = git_tree(self.tree, packed=f"{A} refs/heads/other\n")
                target = git / "refs" if how == "refs" else git / "refs" / "heads"
                shutil.rmtree(target)
                os.symlink(out if how == "refs" else out / "heads", target)
                self.assertNotEqual(head(self.tree).commit, C)


class ShapesTest(Case):
    def test_no_git(self):
        self.assertEqual(head(self.tree), git_dir.Head(why=git_dir.NO_GIT))

    def test_loose_ref(self):
        git_tree(self.tree, refs={"refs/heads/main": A + "\n"})
        self.assertEqual(head(self.tree), git_dir.Head(A, "refs/heads/main"))

    def test_packed_refs(self):
        packed = ("# pack-refs with: peeled fully-peeled sorted \n"
                  f"{B} refs/heads/feature/x\n{A} refs/heads/main\n^{C}\n"
                  f"{C} refs/tags/v1\n")
        git_tree(self.tree, "ref: refs/heads/feature/x\n", packed=packed)
        self.assertEqual(head(self.tree), git_dir.Head(B, "refs/heads/feature/x"))
        (self.tree / ".git" / "refs" / "heads" / "feature").mkdir()
        (self.tree / ".git" / "refs" / "heads" / "feature" / "x").write_text(C + "\n")
        self.assertEqual(head(self.tree).commit, C)  # the loose ref first, as git

    def test_detached_head_sha1_and_sha256(self):
        for commit in (A, "d" * 64):
            with self.subTest(len(commit)):
                shutil.rmtree(self.tree / ".git", ignore_errors=True)
                git_tree(self.tree, commit + "\n")
                self.assertEqual(head(self.tree), git_dir.Head(commit, None))

    def test_unborn_branch_and_reftable(self):
        git_tree(self.tree)
        self.assertIn("refs/heads/main: no commit yet", head(self.tree).why)
        (self.tree / ".git" / "HEAD").write_text("ref: refs/heads/.invalid\n")
        self.assertIn("reftable", head(self.tree).why)

    def test_worktree_by_hand_relative_paths(self):
        """A linked worktree as git writes it with relative paths: .git names
        the gitdir, its commondir the main repository's .git."""
        main = self.tmp / "main"
        git_tree(main, refs={"refs/heads/main": A + "\n", "refs/heads/wt": B + "\n"})
        wt = main / ".git" / "worktrees" / "wt"
        wt.mkdir(parents=True)
        (wt / "HEAD").write_text("ref: refs/heads/wt\n")
        (wt / "commondir").write_text("../..\n")
        (self.tree / ".git").write_text(f"gitdir: {os.path.relpath(wt, self.tree)}\n")
        self.assertEqual(head(self.tree), git_dir.Head(B, "refs/heads/wt"))
        (wt / "refs" / "bisect").mkdir(parents=True)  # a worktree's own refs: its gitdir
        (wt / "HEAD").write_text("ref: refs/bisect/bad\n")
        (wt / "refs" / "bisect" / "bad").write_text(C + "\n")
        self.assertEqual(head(self.tree).commit, C)


@unittest.skipIf(shutil.which("git") is None, "no git to make a real worktree with")
class RealGitTest(Case):
    """Repositories git itself made (git runs here on the test's own
    repository only): the reader gives what `git rev-parse HEAD` gives."""

    def git(self, cwd, *argv):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.tmp),
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
        return subprocess.run(["git", "-C", str(cwd), *argv], env=env, check=True,
                              capture_output=True, text=True).stdout.strip()

    def test_repository_packed_and_a_linked_worktree(self):
        repo = self.tmp / "repo"
        repo.mkdir()
        self.git(repo, "init", "-q", "-b", "main")
        (repo / "f").write_text("1\n")
        self.git(repo, "add", "f")
        self.git(repo, "commit", "-q", "-m", "one")
        self.assertEqual(head(repo), git_dir.Head(self.git(repo, "rev-parse", "HEAD"),
                                                  "refs/heads/main"))
        self.git(repo, "pack-refs", "--all")
        self.assertEqual(head(repo).commit, self.git(repo, "rev-parse", "HEAD"))
        wt = self.tmp / "wt"
        self.git(repo, "worktree", "add", "-q", "-b", "topic", str(wt))
        (wt / "g").write_text("2\n")
        self.git(wt, "add", "g")
        self.git(wt, "commit", "-q", "-m", "two")
        self.assertTrue((wt / ".git").is_file())
        self.assertEqual(head(wt), git_dir.Head(self.git(wt, "rev-parse", "HEAD"),
                                                "refs/heads/topic"))
        self.git(wt, "checkout", "-q", "--detach", "main")
        self.assertEqual(head(wt), git_dir.Head(self.git(repo, "rev-parse", "main"), None))


if __name__ == "__main__":
    unittest.main()
