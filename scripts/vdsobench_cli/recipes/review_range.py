"""`recipe patch-review --source TREE --range BASE..HEAD` (or --base REV,
meaning REV..HEAD): the review of the author's tree as it is, its commits
the series. Checked before the recipe prints anything (a bad value is one
line, exit 2), then taken into a folder of the run's own
(kimport/git_range.py: git confined, BASE's files from its objects) and
reviewed as --patch with those files would be: the tree before is BASE's,
each commit a patch.

    taken(args, held) -> git_range.Range or None
        None without --range and --base; else the range, with args.source
        and args.patch replaced by BASE's files and the commits' patches, in
        a temporary folder that `held` (an ExitStack) removes at its end
"""

import os

from vdsobench_cli.cli import lifecycle
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.core import text as text_mod
from vdsobench_cli.kimport import git_range


def asked(args):
    """(the option as given, BASE, HEAD), or None; UsageError for a range
    asked for with what it cannot go with."""
    given = [(f"--range {args.range}", args.range) if args.range is not None else None,
             (f"--base {args.base}", args.base) if args.base is not None else None]
    given = [g for g in given if g]
    if not given:
        return None
    if len(given) > 1:
        raise UsageError("recipe patch-review: --range and --base: give one (--base REV "
                         "is --range REV..HEAD)")
    option, value = given[0]
    shown = text_mod.printable(option, 240)
    if args.patch:
        raise UsageError(f"recipe patch-review: {shown} takes the patches from the tree's "
                         "history: leave out --patch")
    if not args.source:
        raise UsageError(f"recipe patch-review: {shown} needs --source TREE, a git work "
                         "tree")
    if not os.path.isdir(args.source):
        raise UsageError(f"recipe patch-review: {shown}: --source "
                         f"{text_mod.printable(args.source)} is not a folder (valid: a git "
                         "work tree)")
    if args.range is not None:
        base, head = git_range.parse(value, option)
    else:
        base, head = git_range.revision(value, option), "HEAD"
    return option, base, head


def taken(args, held):
    """The range (see the top), its files taken; None when none is asked."""
    found = asked(args)
    if found is None:
        return None
    option, base, head = found
    rng = git_range.resolve(args.source, base, head, option)
    into = held.enter_context(lifecycle.temp_dir(prefix="vdsobench-range-"))
    args.source, args.patch = git_range.taken(rng, into, option)
    return rng
