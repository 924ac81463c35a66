"""`import`: a kernel tree's own vDSO read path and update path, with patches on
top, as a variant, measured and checked without booting it.

    vdsobench import SOURCE [--patch FILE]... --name NAME [--arch x86_64|arm64]

SOURCE is a kernel tree (a directory) or a kernel source tarball (Debian's
/usr/src/linux-source-6.12.tar.xz; the package name linux-source-6.12 names
that file; a linux-source-X.Y the machine's suites lack, 7.3 on Debian 12, is
fetched with its linux-config-X.Y from Debian's newer suites into
~/.cache/vdsobench/debian, kimport/newer_sources.py). Only what the read and update paths need is taken (source.TAKE),
the patches are applied in order with `git apply` (-p1, as `git format-patch`
writes them; one that does not apply is one line naming it and its first
failing hunk, exit 2, nothing imported), and the tree's configuration is
written as its build would (include/generated/autoconf.h: what its
arch/x86/Kconfig selects, CONFIG_TIME_NS=y as Debian builds it). The tree's
own lib/vdso/gettimeofday.c and kernel/time/vsyscall.c are then compiled,
unmodified, against kernel_import/shim (a few kernel headers, each saying
which it stands for) into the variants kernel:NAME+COUNTER+INLINE: every
counter and inline choice of impls/variants.bzl, like any layout, so list,
verify, run, compare, sim, layout, gate and the recipes take them.

Where it lives: the imports directory, $VDSOBENCH_IMPORTS (made absolute) or
.vdsobench-imports/ in the repository (it ignores itself in git), holds
imports.json (the table: name -> tree) and trees/<key>/, one per source and
patch series, keyed by their SHA-256 (a tarball's is remembered by path, size,
mtime, ctime and inode) and the names that describe it (the source's and the
patches' file names), so a second import of the same thing is a table entry.
Bazel reads the table through the @vdso_imports repository rule
(third_party/vdso_imports/repo.bzl), which every command of this CLI re-runs
when the table or its trees change (VDSOBENCH_IMPORTS_DIGEST); a clean clone
has no table and builds as it always did.

What it takes in is hostile until checked (other people's trees and patches,
run as root):
- every file it reads is a regular file within a size cap, opened without
  blocking (safe_read); inside a source tree no symbolic link is followed;
- every path a patch names (---/+++, diff --git, rename and copy headers,
  git's quoted names too) is a normalised relative path of safe characters,
  checked before anything is copied, and no patch may create or change a
  symbolic link (kernel trees have none where import looks; a link that
  stays inside the tree could still be made to point out by the next patch
  or a later file, so none at all is the rule that needs no resolving);
- the staged tree is checked after it is taken and after the patches (no
  link, no device, only safe names), and import writes into it only through
  no-follow opens and renames, never through what is there;
- names handed to tar are literal (only TAKE's own /* patterns are globs).
The table is changed under a lock (imports/.lock), each change a transaction
on the table as it is then: a failed or interrupted import puts back only
its own entry; the names a run keeps for its whole length (patch-review's)
are held (reserved.py), and `import` refuses them meanwhile. imports_table.py
checks the table and the trees (each file's hash) whenever they are read,
here and in the repository rule: a bad entry is left out, with one line
naming it and the command that mends it.

The work is kimport's, one job a module: names, store (the folder, table,
lock), bazel_sync (what Bazel sees), source and tarball (SOURCE read),
stage (the staged tree), patch_parse and patches, tree_config, compile and
probe (tree code compiled here), request (the inputs checked), flow (a tree
made or found), txn (the table's transactions) and agree. This module parses
the command line into Options, calls them and prints.
"""

import argparse
import dataclasses

from vdsobench_cli.cli import arch
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.core import text as text_mod
from vdsobench_cli.kimport import agree as agree_mod, bazel_sync, names, request, store, txn


@dataclasses.dataclass(frozen=True)
class Options:
    """What `import` was asked, as parsed."""
    source: str = None
    patches: tuple = ()
    name: str = None
    agree: str = None
    kbuild: bool = None  # None: Debian's own packages and whole folder trees
    config: str = None
    vdso_image: str = None
    patched_image: bool = False
    writer: str = None
    list: bool = False
    remove: str = None


def options(args):
    return Options(args.source, tuple(args.patch or ()), args.name, args.agree, args.kbuild,
                   args.config, args.vdso_image, args.patched_image, args.writer, args.list,
                   args.remove)


def do_import(opts):
    req = request.request(opts.source, list(opts.patches), opts.name, opts.kbuild, opts.config,
                          opts.vdso_image, opts.patched_image, opts.writer)
    done = txn.import_one(req)
    layout = names.layout_of(req.name)
    how = (f"the tree from the cache in {done.tree_s:.1f} s" if done.from_cache else
           f"the tree taken, patched and probed in {done.tree_s:.1f} s")
    print(f"import: {layout}: {text_mod.printable(done.meta['summary'], None)}"
          f"{' (replaces the previous import of that name)' if done.replaced else ''}")
    counters, inlines = ({n.split("+")[i] for n in done.variants} for i in (1, 2))
    print(f"import: {how}, built in {done.build_s:.1f} s; {len(done.variants)} variants: "
          f"{layout}+{{{','.join(sorted(counters))}}}+{{{','.join(sorted(inlines))}}}")
    x86 = done.meta.get("arch") == "x86_64"
    v32 = (done.meta.get("image") or {}).get("vdso32") if x86 else None
    if done.meta.get("compat") is True and x86:
        print(f"import: {layout}: its 32-bit vDSO (arch/x86/entry/vdso/vdso32) too, with "
              f"--arch i386: {layout}+{{{','.join(sorted(counters))}}}+{{always,auto}} "
              "(docs/kernel-import.md)")
        if isinstance(v32, dict) and v32.get("file"):
            fast = v32.get("sysfast32")
            fast = fast.get("applied") if isinstance(fast, dict) else None
            print(f"import: {layout}: and its kbuild vdso32 image, with --arch i386: "
                  f"{layout}+{{fake,lfence_rdtsc,rdtsc,rdtscp}}+image (docs/image.md)"
                  + (f"; its {fast} system calls made through __kernel_vsyscall, as the "
                     "kernel's boot-time alternative (X86_FEATURE_SYSFAST32) makes them"
                     if type(fast) is int else ""))
        elif isinstance(v32, dict) and v32.get("none"):
            print(f"import: {layout}: no i386 +image variants: its vdso32 image: "
                  f"{text_mod.printable(str(v32['none']), None)}")
    elif done.meta.get("compat") is True:
        print(f"import: {layout}: its compat vDSO (arch/arm64/kernel/vdso32, 32-bit arm) "
              f"too, with --arch arm: {layout}+{{fake,isb_mrrc_isb}}+{{always,auto}} "
              "(docs/arm64.md)")
    elif done.meta.get("compat") is False:
        why = text_mod.printable(done.meta.get("compat_why", "?"), None)
        print(f"import: {layout}: no {'i386' if x86 else 'compat'} variants "
              f"(--arch {'i386' if x86 else 'arm'}): {why}")
    if done.meta.get("writer") == "dwarf":
        print(f"import: {layout}: the data page is written by the DWARF writer "
              "(kernel_import/glue/dwarf_writer.c, from its image's DWARF), not by the "
              "tree's update path: its +image variants only (docs/image.md)")
    elif (done.meta.get("image") or {}).get("dwarf", {}).get("header"):
        print(f"import: {layout}: the data page is written by the tree's own update path "
              "(its image's DWARF read too: the DWARF writer's agree test)")
    return check_agreement(opts)


def check_agreement(opts):
    """--agree LAYOUT: 0 when the import reads as the layout does, else 1."""
    if not opts.agree:
        return 0
    status, lines = agree_mod.agree(opts.name, opts.agree)
    print("\n".join(lines))
    return status


def do_list():
    store.readable_dir()
    checked = bazel_sync.state()
    if not checked["good"] and not checked["problems"]:
        table = text_mod.printable(store.table_path(), None)
        print(f"import: no imported trees ({table} has none)")
        return 0
    # every field came from the table, a tree or a patch: printable() before print
    for name, (e, _) in sorted(checked["good"].items()):
        print(text_mod.printable(f"{names.layout_of(name)}  Linux {e['kernel']}  "
                                 f"{e['summary']}  [{e['key'][:12]}]", None))
        for p in e["patches"]:
            print(f"    patch {text_mod.printable(p, None)}")
    for line in checked["problems"]:
        print(text_mod.printable(line, None))
    return 0


def do_remove(name):
    txn.remove(name)
    print(f"import: removed {names.layout_of(name)} (its tree stays in the cache, "
          f"{store.imports_dir() / 'trees'})")
    return 0


def run(args):
    opts = options(args)
    if opts.list:
        return do_list()
    if opts.remove:
        return do_remove(opts.remove)
    if opts.agree and opts.name and not opts.source:
        store.readable_dir()
        known = bazel_sync.imported_names()
        if opts.name not in known:
            raise UsageError(f"import: --name {opts.name}: no such import (valid: "
                             f"{', '.join(known) or 'none imported'})")
        return check_agreement(opts)
    if not opts.source or not opts.name:
        raise UsageError("import: SOURCE and --name are required (or --list, --remove NAME, "
                         "or --name NAME --agree LAYOUT for an import made before)")
    return do_import(opts)


def add_parser(sub):
    p = sub.add_parser(
        "import", help="a kernel tree (or Debian's source tarball) and patches as a variant",
        description="Take a kernel tree's own lib/vdso/gettimeofday.c and\n"
                    "kernel/time/vsyscall.c (with what they include), apply the patches\n"
                    "in order, and build them, unmodified, against a small shim of kernel\n"
                    "headers into the variants kernel:NAME+COUNTER+INLINE, which every\n"
                    "command takes. A second import of the same tree and patches comes\n"
                    "from the cache.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  vdsobench import /usr/src/linux-source-6.12.tar.xz --name 6.12\n"
               "  vdsobench import ~/linux --patch 0001-vdso-mine.patch --name mine\n"
               "  vdsobench verify 'kernel:mine+*'\n"
               "  vdsobench import --list\n\n"
               f"The cache: ${store.DIR_ENV}, else .vdsobench-imports/ in the repository;\n"
               "trees fetched from Debian's newer suites: $VDSOBENCH_DEBIAN_CACHE, else\n"
               "~/.cache/vdsobench/debian.")
    p.add_argument("source", nargs="?", metavar="SOURCE",
                   help="a kernel tree, a source tarball, or linux-source-X.Y (Debian's "
                        "/usr/src/linux-source-X.Y.tar.xz, installed when missing, as root; "
                        "one Debian 12 lacks is fetched from trixie-backports or sid into "
                        "~/.cache/vdsobench/debian, nothing installed)")
    p.add_argument("--patch", action="append", metavar="FILE",
                   help="a patch (git format-patch or diff -u, -p1) applied on top, in the "
                        "order given; repeat for a series")
    p.add_argument("--name", metavar="NAME",
                   help="the variants' name: kernel:NAME+COUNTER+INLINE")
    p.add_argument("--agree", metavar="LAYOUT",
                   help="then compare the import with a transcribed layout (e.g. "
                        "generic_6_10 for a 6.12 tree) reading by reading on the fake "
                        "counter: every clock, getres, gettimeofday and time in a series "
                        "of kernel states; exit 1 on any difference")
    p.add_argument("--kbuild", action=argparse.BooleanOptionalAction, default=None,
                   help="run the tree's own kbuild (make olddefconfig prepare "
                        "arch/x86/entry/vdso/, about a minute once, then cached) and build "
                        "the read path with its vclock_gettime.o line; the default for "
                        "Debian's linux-source-X.Y and for a folder that is a whole tree "
                        "(a git work tree), asked for any other tarball (it runs the "
                        "tree's Makefiles, confined)")
    p.add_argument("--config", metavar="FILE",
                   help="the kernel configuration kbuild uses (implies --kbuild); else "
                        "the tree's own .config, Debian's for the tree's version "
                        "(/usr/src/linux-config-X.Y/config.amd64_none_amd64.xz), the "
                        "running kernel's /proc/config.gz, x86_64_defconfig: the first "
                        "there is")
    p.add_argument("--vdso-image", metavar="FILE",
                   help="the tree's own vdso64.so (kbuild's, or its .dbg): stored beside "
                        "the import and mapped as the variants "
                        "kernel:NAME+{rdtsc,lfence_rdtsc,rdtscp,fake}+image (x86_64)")
    p.add_argument("--patched-image", action="store_true",
                   help="with --patch and kbuild: the +image variants are the patched "
                        "tree's own vdso64.so, kbuild's, made again from the tree's kept "
                        "build in seconds (docs/image.md); without it a patched import "
                        "has no +image variants")
    p.add_argument("--writer", choices=("tree", "dwarf"), default=None,
                   help="who writes the data page: the tree's own kernel/time/vsyscall.c "
                        "(tree), or the DWARF writer from its image's DWARF (dwarf: the "
                        "+image variants only); by default the tree's, and the DWARF "
                        "writer's where the shim cannot build the tree's and kbuild made "
                        "an image")
    p.add_argument("--list", action="store_true", help="the imported trees, and exit")
    p.add_argument("--remove", metavar="NAME", help="forget an import (its variants go)")
    arch.add_argument(p, "the architecture whose vDSO to take: x86_64, or arm64 (its "
                         "arch/arm64 vDSO headers through the arm64 shim, cross-built, "
                         "verified under qemu-user; without kbuild's line or an image)")
    p.set_defaults(func=run)
