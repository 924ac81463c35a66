"""`recipe NAME`: one experiment from the seeds, end to end.

Each recipe (recipes.py) prints the seed's own table, today's measurement in
the same shape, the verdicts with their intervals, and where this machine's
result differs from the seed's and why that may be; it writes the comparison
and its plots into a fresh directory (never over an earlier run's).
"""

import argparse
import contextlib
import datetime
import os

from vdsobench_cli.cli import arch, build, targets
from vdsobench_cli.fleet import options as fleet_options
from vdsobench_cli.measure import fingerprint
from vdsobench_cli.recipes import patch_review_rounds, recipes, review_range
from vdsobench_cli.cli.errors import CliError, Failure, UsageError
from vdsobench_cli.recipes.recipe_session import OUT_DIR_BYTES, Session


def default_out(name):
    now = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return os.path.join(build.ROOT, "results", "recipes", name,
                        f"{fingerprint.short_host()}-{now}")


def run_recipe(args):
    if args.list or not args.name:
        if not args.list:
            raise UsageError(f"recipe: a name is required (valid: {', '.join(recipes.NAMES)}; "
                             "--list describes them)")
        for r in recipes.RECIPES:
            print(f"{r.name:18} {r.title}")
        return 0
    recipe = recipes.by_name(args.name)
    if (args.source or args.patch or args.range is not None or args.base is not None
            or args.config is not None or args.kbuild is not None) \
            and recipe.name != recipes.patch_review.NAME:
        raise UsageError(f"recipe {recipe.name}: --source, --patch, --range, --base, --config "
                         f"and --kbuild are for {recipes.patch_review.NAME} (it reviews a "
                         "patch on a kernel tree)")
    asked = [o for o, given in CLUSTER_OPTIONS.items() if given(args)]
    if asked and not args.fleet:
        raise UsageError(f"recipe: {asked[0]} is for --fleet (patch-review on a Slurm cluster)")
    if args.budget is not None and recipe.name != recipes.patch_review.NAME:
        raise UsageError(f"recipe {recipe.name}: --budget is for {recipes.patch_review.NAME}")
    if not args.arm64 and recipe.name != recipes.patch_review.NAME:
        raise UsageError(f"recipe {recipe.name}: --no-arm64 is for {recipes.patch_review.NAME}")
    if not args.i386 and recipe.name != recipes.patch_review.NAME:
        raise UsageError(f"recipe {recipe.name}: --no-i386 is for {recipes.patch_review.NAME}")
    if args.fleet and recipe.name != recipes.patch_review.NAME:
        raise UsageError(f"recipe {recipe.name}: --fleet is for {recipes.patch_review.NAME}")
    # a range's commits and BASE's files, in a folder of the run's own
    with contextlib.ExitStack() as held:
        rng = review_range.taken(args, held) if recipe.name == recipes.patch_review.NAME \
            else None
        return checked_run(args, recipe, rng)


def checked_run(args, recipe, rng):
    """The recipe run, its inputs checked first (one line, before anything is
    printed); rng: patch-review's --range (git_range.Range) or None."""
    if recipe.name == recipes.patch_review.NAME:
        recipes.patch_review.check_inputs(args.source, args.patch, args.kbuild, args.config)
    if args.fleet:
        # the cluster and the nodes asked for, before anything is imported or built
        from vdsobench_cli.recipes import patch_review_fleet
        patch_review_fleet.check(args)
    for patch in args.patch or []:
        recipes.patch_review.subject(patch)  # each readable, or one line now
    target = arch.current()
    if target.emulated and recipe.name not in recipes.EMULATED:
        raise UsageError(f"recipe {recipe.name} --arch {target.name}: this machine runs "
                         f"{target.name} under qemu-user, where every time is the "
                         "emulator's; the recipes that compare code there: "
                         f"{', '.join(recipes.EMULATED)}")
    # checked now, filled as the recipe goes in a hidden directory beside it, moved
    # into place at the end: an interrupted recipe leaves nothing there
    stage = targets.StagedDir(args.out or default_out(recipe.name), args.force,
                              need=OUT_DIR_BYTES)
    from vdsobench_cli.cli import packages
    packages.ensure_setup()
    session = Session(recipe.name, args.quick, str(stage.path), budget_s=args.budget)
    session.source, session.patches, session.range = args.source, args.patch, rng
    session.fleet = args if args.fleet else None
    session.arm64 = args.arm64
    session.i386 = args.i386
    session.kbuild, session.config = args.kbuild, args.config
    session.say(f"== recipe {recipe.name}: {recipe.title}")
    session.say(f"Seed: {recipe.seed}")
    if target.emulated:
        session.say(f"This machine: {session.machine_line()}; {target.machine} cross-built "
                    f"here and run under qemu-user ({arch.LABEL}): code is compared, "
                    "never time.")
    else:
        session.say(f"This machine: {session.machine_line()}; {session.rounds} interleaved "
                    "rounds" + (" (--quick: a smoke run, too few rounds for small effects)"
                                if args.quick else "") + ".")
    try:
        ok = recipe.run(session)
    except CliError as e:
        if not session.files:
            raise
        raise Failure(f"{e}; {stage.keep()}") from None
    stage.publish()
    session.heading("files")
    for path in session.files:
        session.say(os.path.relpath(stage.final(path)))
    # False: something it must show did not come out; an int: its own status
    # (patch-review's 2 for a patch of a series that does not apply or build)
    return 1 if ok is False else ok if type(ok) is int else 0


def add_parser(sub):
    p = sub.add_parser("recipe", help="replay one experiment from the seeds end to end",
                       description="Replay one experiment from the mailing-list seeds: the "
                                   "seed's table next to this machine's, verdicts with "
                                   "intervals, plots. `recipe --list` names them.")
    p.add_argument("name", nargs="?", metavar="NAME", help="the recipe (see --list)")
    p.add_argument("--list", action="store_true", help="list the recipes")
    p.add_argument("--quick", action="store_true",
                   help="a short smoke run (12 rounds of 1 ms): for CI, not for conclusions")
    p.add_argument("--out", metavar="DIR",
                   help="where the comparisons and plots go (default "
                        "results/recipes/NAME/<host>-<date>): a new or empty directory; "
                        "written when the recipe ends (an interrupted one leaves nothing, "
                        "a failed one keeps what it wrote in DIR.recovered-<date>)")
    p.add_argument("--force", action="store_true",
                   help="write into a non-empty --out (files of the same names replaced)")
    p.add_argument("--source", metavar="SOURCE",
                   help="patch-review: the kernel tree or tarball (as `vdsobench import` "
                        "takes it; default linux-source-6.12)")
    p.add_argument("--patch", action="append", metavar="FILE",
                   help="patch-review: a patch on --source, in order; repeat for a series "
                        "(each patch applied, built and verified in turn)")
    p.add_argument("--range", metavar="BASE..HEAD",
                   help="patch-review: the commits of BASE..HEAD of --source (a git work "
                        "tree) as the series, on BASE's tree; read with git confined, no "
                        "hook or config command of the tree's run")
    p.add_argument("--base", metavar="REV",
                   help="patch-review: --range REV..HEAD")
    p.add_argument("--kbuild", action=argparse.BooleanOptionalAction, default=None,
                   help="patch-review: build the trees with their own kbuild, confined "
                        "(the default for Debian's linux-source-X.Y): its compile line, "
                        "and its vDSO images, which are then what is measured")
    p.add_argument("--config", metavar="FILE",
                   help="patch-review: the configuration kbuild uses (implies --kbuild); "
                        "else the tree's own .config, Debian's for its version, the "
                        "running kernel's /proc/config.gz, x86_64_defconfig")
    patch_review_rounds.add_budget_argument(p)
    arch.add_argument(p, "run the recipe on this architecture's build (arm64: inline only)")
    p.add_argument("--no-arm64", dest="arm64", action="store_false",
                   help="patch-review: leave out arm64's emulated section (the tree and "
                        "patches imported for arm64 and verified under qemu-user)")
    p.add_argument("--no-i386", dest="i386", action="store_false",
                   help="patch-review: leave out the verify of the two trees' vdso32 (their "
                        "i386 variants, verify --arch i386: natively where the kernel runs "
                        "32-bit programs, else under qemu-i386), and so their time")
    g = p.add_argument_group(
        "patch-review on a Slurm cluster",
        "--fleet times the review on every chosen node (exclusive and pinned, as `fleet "
        "run`), one column or group of rows per CPU model in the block")
    g.add_argument("--fleet", action="store_true",
                   help="patch-review: time it on the cluster's nodes, not here")
    fleet_options.add_job_options(g)
    p.set_defaults(func=run_recipe)


# the cluster options, each with how to tell it was given (they need --fleet)
CLUSTER_OPTIONS = {
    "--nodes": lambda a: a.nodes is not None, "--one-per-feature": lambda a: a.one_per_feature,
    "--constraint": lambda a: a.constraint, "--partition": lambda a: a.partition,
    "--slurm-conf": lambda a: a.slurm_conf, "--jobs-dir": lambda a: a.jobs_dir,
    "--time": lambda a: a.time, "--no-exclusive": lambda a: not a.exclusive,
    "--timeout": lambda a: a.timeout != fleet_options.DEFAULT_TIMEOUT_S,
    "--node-tmp": lambda a: a.node_tmp != "/tmp"}
