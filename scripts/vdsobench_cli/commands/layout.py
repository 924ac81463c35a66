"""`layout`: each variant's vDSO data as 64-byte cache lines, and the lines each
clock's read path touches, both from the compiled code.

The command: it checks its options and its --out target first, calls
measure/layouts.py (maps() or diff(): how the fields and read sets are found
is said there; the pahole cross-check is measure/pahole.py) and prints or
writes the result as text, JSON or PNG. --live reads the running kernel's
own page (measure/live.py).
"""

import json
import sys

from vdsobench_cli.cli import arch, atomic, packages, ranged, targets, variants as variant_list
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.measure import layouts, live

from reports import layout_map
from vdsobench_cli.core import vocab

FORMATS = ("text", "json", "png")


# ---- output -----------------------------------------------------------------------------

WHAT = "the layout"


def check_out(path):
    """Fail now, before the traces, if --out cannot be written: its folder must exist
    and take a new file, with room for it. --out is the user's own file, named on
    purpose, so a regular file there is replaced (targets.Target: never anything
    else, nor a file another command wrote meanwhile). The Target."""
    return targets.check_writable(path, force=True, what=WHAT, parents=False)


def write_atomic(path, write):
    """write(file) into a temp file beside path, then rename it to path: the file
    is whole or absent, and no temp file is left behind."""
    return atomic.write_stream_atomic(path, write, force=True, what=WHAT)


def emit(args, target, obj):
    """Print, or write to the --out target (a failed write keeps the map in a
    recovery file and says where)."""
    if args.format == "png":
        target.write_stream(lambda f: layout_map.draw_png(obj["variants"], f))
        return
    if args.format == "json":
        if target:
            target.write_json(obj)
        else:
            print(json.dumps(obj, indent=1))
        return
    text = layouts.text(obj)
    if target:
        target.write_stream(lambda f: f.write(text.encode()))
    else:
        sys.stdout.write(text)


def check_args(args):
    """The --out Target (None without --out), once the arguments are checked."""
    if args.diff and args.variants:
        raise UsageError("layout: give VARIANTs or --diff A B, not both")
    if getattr(args, "live", False) and (args.diff or args.variants or args.out
                                         or args.format != "text"):
        raise UsageError("layout: --live reads the running kernel's data: it takes no "
                         "VARIANT, --diff, --out or --format")
    t = arch.current()
    if getattr(args, "live", False) and t.emulated:
        # the running kernel's page is the host's: another architecture's
        # build, run under an emulator, would not read it
        raise UsageError(f"layout --live --arch {t.name}: --live reads the running kernel's "
                         f"own data page, so it runs this machine's build only (valid: "
                         f"--arch {t.host})")
    if args.format == "png" and not args.out:
        raise UsageError("layout: --format png needs --out FILE")
    if args.format == "png":
        packages.require("matplotlib", what="layout --format png")
    return check_out(args.out) if args.out else None


def run_live():
    """layout --live: exit 0 when the model matches the running kernel, 1 when a
    check fails or no layout models it (the reason said)."""
    result, dumped, why = live.live_check(variant_list.load())
    if result is None:
        print(f"live: kernel {dumped.get('kernel')}: not checked: {why}")
        return 1
    print("\n".join(live.render(result, dumped)))
    return 0 if result["matches"] else 1


def run(args):
    """The map of the chosen variants (measure/layouts.py), or of --diff's two."""
    target = check_args(args)
    if getattr(args, "live", False):
        return run_live()
    if args.diff:
        obj = layouts.diff(*args.diff, jobs=args.jobs)
    else:
        obj = layouts.maps(variant_list.split_patterns(args.variants), args.jobs)
    emit(args, target, obj)
    return 0


def add_parser(sub):
    p = sub.add_parser(
        "layout", help="cache-line map of each variant's data and of its read paths",
        description="Each variant's vDSO data as 64-byte cache lines with every field's "
                    "offset and size (the registry's offsetof table, cross-checked with "
                    "pahole where dwarves is installed), straddling entries flagged, and "
                    "for each clock the lines its read path loads, traced from the "
                    "compiled code under valgrind lackey (hres, coarse, raw, a task in a "
                    "time namespace, getres; a clock the layout does not serve goes to "
                    "the syscall).",
        epilog=f"A layout name (x86_gtod) means "
               f"{vocab.variant('<layout>', arch.default_counter())}; the field table "
               "does not depend on the counter or the inlining. "
               "`layout --diff x86_gtod x86_gtod_ts_multshift` is tglx's comparison in "
               "seed 000. Needs valgrind (scripts/vdsobench setup).")
    p.add_argument("variants", nargs="*", metavar="VARIANT",
                   help="layouts or variant names, globs allowed (default: every layout in the table)")
    p.add_argument("--live", action="store_true",
                   help="read the running kernel's own data page ([vvar]), decode it with the "
                        "layout that models this kernel, and check the decode against the "
                        "kernel's clocks: 'the model matches the running kernel' or which "
                        "field does not")
    p.add_argument("--diff", nargs=2, metavar=("A", "B"),
                   help="two variants side by side: each field's bytes and lines, and "
                        "each path's lines")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (default), json, or png (needs --out)")
    p.add_argument("--out", metavar="FILE",
                   help="write there, atomically, replacing a regular file (default: "
                        "standard output; '-' is refused: leave --out out)")
    p.add_argument("--jobs", type=ranged.JOBS, metavar="N",
                   help=f"valgrind runs in parallel (default: the number of CPUs; "
                        f"{ranged.JOBS.valid})")
    arch.add_argument(p, "map the data of this architecture's build (arm64: the fields only; the "
                      "read paths are traced under valgrind, which runs the host's code only)")
    p.set_defaults(func=run)
