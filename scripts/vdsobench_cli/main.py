"""Argument parsing and dispatch for `scripts/vdsobench`: the entry, the top
room, the one module that imports every command."""

import argparse
import sys

from vdsobench_cli.cli import arch, build, errors, labels
from vdsobench_cli.commands import (bundle, compare, counters, fleet, gate, import_tree, layout,
                                     listing, merge, plot, recipe, review_node, run,
                                     selftest_stats, setup, sim, testrun, verify)
from vdsobench_cli.fleet.bundle import check_host
from vdsobench_cli.kimport import bazel_sync

COMMANDS = (setup, listing, verify, run, compare, gate, sim, layout, plot, merge, recipe,
            selftest_stats, counters, review_node, testrun, bundle, fleet, import_tree)


class Parser(argparse.ArgumentParser):
    # argparse prints usage plus a message; the contract is one line and exit 2.
    def error(self, message):
        raise errors.UsageError(message)


def parser():
    # Every command builds through Bazel, which must see the imports table as it
    # is now (bazel_sync.py): synced before any command is set up or runs.
    bazel_sync.sync_env()
    p = Parser(prog="vdsobench",
               description="Benchmarks and correctness checks for vDSO clock_gettime() variants.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for module in COMMANDS:
        module.add_parser(sub)
    if build.bundled():
        # a bundle has no Bazel, valgrind or matplotlib: offer what it can run
        for name in [n for n in sub.choices if n not in labels.BUNDLE_COMMANDS]:
            del sub.choices[name]
        sub._choices_actions[:] = [a for a in sub._choices_actions
                                   if a.dest in labels.BUNDLE_COMMANDS]
    p.commands = list(sub.choices)
    return p


def dispatch(argv):
    if build.bundled():
        check_host(build.bundle_manifest())
    p = parser()
    args = p.parse_args(argv)
    if args.command is None:
        raise errors.UsageError(f"a command is required: {', '.join(p.commands)} "
                                "(see --help)")
    args.argv = list(argv)  # recorded in results files
    args.parser = p  # fleet checks the command its nodes will run with it
    bazel_sync.warn(args.command)  # an import left out of the build: one line each
    # one architecture per process (--arch, where the command has it)
    target = arch.use(getattr(args, "arch", None))
    if build.bundled() and target.emulated:
        raise errors.UsageError(f"--arch {target.name}: this bundle runs on {target.host} "
                                f"only (valid: {target.host})")
    return args.func(args)


def main(argv=None):
    return errors.guard(dispatch, sys.argv[1:] if argv is None else argv)
