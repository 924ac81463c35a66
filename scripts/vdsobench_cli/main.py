"""Argument parsing and dispatch for `scripts/vdsobench`."""

import argparse
import sys

from . import (compare, counters, errors, gate, layout, listing, merge, packages, plot, recipe,
               run, selftest_stats, sim, testrun, verify)

COMMANDS = (packages, listing, verify, run, compare, gate, sim, layout, plot, merge, recipe,
            selftest_stats, counters, testrun)


class Parser(argparse.ArgumentParser):
    # argparse prints usage plus a message; the contract is one line and exit 2.
    def error(self, message):
        raise errors.UsageError(message)


def parser():
    p = Parser(prog="vdsobench",
               description="Benchmarks and correctness checks for vDSO clock_gettime() variants.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for module in COMMANDS:
        module.add_parser(sub)
    p.commands = list(sub.choices)
    return p


def dispatch(argv):
    p = parser()
    args = p.parse_args(argv)
    if args.command is None:
        raise errors.UsageError(f"a command is required: {', '.join(p.commands)} "
                                "(see --help)")
    args.argv = list(argv)  # recorded in results files
    return args.func(args)


def main(argv=None):
    return errors.guard(dispatch, sys.argv[1:] if argv is None else argv)
