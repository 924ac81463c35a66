"""A git work tree a test makes (committed as the test, never running the
hooks it holds), and makes hostile: every hook and every config key that runs
a command, each leaving a marker when it runs."""

import subprocess
from pathlib import Path

GIT_AS_TEST = ("-c", "user.name=vdsobench tests", "-c", "user.email=vdsobench@localhost",
               "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null")
HOOKS = ("applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit",
         "pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase",
         "post-checkout", "post-merge", "pre-push", "pre-receive", "update", "proc-receive",
         "post-receive", "post-update", "reference-transaction", "push-to-checkout",
         "pre-auto-gc", "post-rewrite", "sendemail-validate", "fsmonitor-watchman",
         "post-index-change")


def git(repo, *args, input=None):
    """git's stdout as text, run as the test in its own repository (never the
    hooks hostile_git() puts there)."""
    r = subprocess.run(["git", "-C", str(repo), *GIT_AS_TEST, *args], input=input,
                       capture_output=True, check=True)
    return r.stdout.decode()


def git_tree(repo, files, message="base"):
    """A new git work tree at repo holding files {rel: bytes}, committed."""
    for rel, data in files.items():
        Path(repo, rel).parent.mkdir(parents=True, exist_ok=True)
        Path(repo, rel).write_bytes(data)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def git_commit_patch(repo, patch):
    """The patch file applied and committed with its Subject: ([PATCH] dropped);
    the commit's id."""
    from vdsobench_cli.kimport import patches as patches_mod
    text = Path(patch).read_text()
    subject = patches_mod.patch_subject(text, patch)  # as import reads it: unfolded
    git(repo, "apply", "--whitespace=nowarn", "-", input=text.encode())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", subject)
    return git(repo, "rev-parse", "HEAD").strip()


def hostile_git(repo, markers):
    """Every hook, and config that runs a command (core.fsmonitor, a diff
    driver's command and textconv, a filter's smudge and clean, the pager,
    gpg for a signature shown), each touching a file in the folder markers
    when it runs; the attributes that point every file at them. Returns the
    commands' marker names."""
    git_dir = Path(repo, ".git")
    for hook in HOOKS:
        path = git_dir / "hooks" / hook
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"#!/bin/sh\ntouch {markers}/hook-{hook}\n")
        path.chmod(0o755)
    commands = {"core.fsmonitor": "fsmonitor", "diff.evil.command": "diff-command",
                "diff.evil.textconv": "textconv", "filter.evil.smudge": "smudge",
                "filter.evil.clean": "clean", "core.pager": "pager",
                "gpg.program": "gpg", "diff.external": "external-diff"}
    for key, name in commands.items():
        git(repo, "config", key, f"sh -c 'touch {markers}/{name}; cat' --")
    git(repo, "config", "log.showSignature", "true")
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "attributes").write_text("* diff=evil filter=evil\n")
    return sorted(commands.values())
