"""`bundle`: vdsobench as one relocatable tarball, for machines without Bazel
(fleet/bundle.py makes it; this prints the line that says what it holds)."""

from vdsobench_cli.cli import arch, labels
from vdsobench_cli.fleet import bundle


def add_parser(sub):
    p = sub.add_parser(
        "bundle", help="a relocatable tarball for machines without Bazel or the libraries",
        description="Build a self-contained tarball: the harness, verify, the counters "
                    "lister and the sim driver, linked to need nothing beyond the C library "
                    "(libpfm and hwloc static, the other shared libraries inside, found "
                    "through $ORIGIN), and a `vdsobench` entry point that needs only "
                    "Python's standard library for " + ", ".join(labels.BUNDLE_COMMANDS)
                    + ". Unpack it "
                    "anywhere on another machine and run ./vdsobench run; bring the results "
                    "file back for merge, report and plot.")
    p.add_argument("--out", required=True, metavar="FILE.tar.gz",
                   help="where to write the tarball (never over an existing file unless "
                        "--force)")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    arch.add_argument(p, 'build the bundle for this architecture (arm64: cross-built, for an '
                      'arm64 machine)')
    p.set_defaults(func=run)


def run(args):
    print(bundle.make(args.out, args.force))
    return 0
