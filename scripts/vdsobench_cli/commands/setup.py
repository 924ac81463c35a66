"""`setup`: install the Debian packages vdsobench needs, only those missing.

The command: the package groups and their installation are cli/packages.py's
(setup, setup_kernel_sources, setup_fuzz, setup_trap_vm); --arch adds the target
architecture's (cli/arch.py). Exit 0 when all is there, 1 when --check finds
something missing.
"""

from vdsobench_cli.cli import arch, packages


def run(args):
    return packages.setup(check=args.check) or (
        packages.setup_kernel_sources(args.check) if args.kernel_sources else 0) or (
        packages.setup_fuzz(args.check) if args.fuzz else 0) or (
        packages.setup_trap_vm(args.check) if args.trap_vm else 0)


def add_parser(sub):
    p = sub.add_parser("setup", help="install missing Debian packages (idempotent)",
                       description="Install the Debian packages vdsobench needs; "
                                   "only those missing. Needs root to install.")
    p.add_argument("--check", action="store_true",
                   help="only report; exit 1 if something is missing")
    arch.add_argument(p, "also install what building and running this architecture "
                         "needs (arm64 on x86-64: the cross compiler, qemu-user and the "
                         ":arm64 libraries)")
    p.add_argument("--kernel-sources", action="store_true",
                   help=f"also Debian's kernel sources for `import` and the import tests "
                        f"({', '.join(packages.KERNEL_SOURCES)}, about 140 MB each)")
    p.add_argument("--fuzz", action="store_true",
                   help=f"also what fuzzing the vDSO image parser needs "
                        f"({', '.join(packages.FUZZ_PACKAGES)}; impls/image/fuzz.sh)")
    p.add_argument("--trap-vm", action="store_true",
                   help=f"also what checking verify's counter trap under qemu's TCG needs "
                        f"({', '.join(packages.TRAP_VM_PACKAGES)}; verify/trap_vm.sh)")
    p.set_defaults(func=run)
