"""One import asked for, every input checked before anything is written: its
name, the architecture and its toolchain, the patches, --config, the vDSO
image and SOURCE (a tarball that is none is one line now)."""

from pathlib import Path
from typing import NamedTuple

from vdsobench_cli.cli import arch, safe_read
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import (kbuild, kbuild_tree, names, patches as patches_mod,
                                   source as source_mod, tarball, vdso_image)


def check_arch():
    arch_name = arch.current().name
    if arch_name not in source_mod.ARCH_DIRS:
        compat = {"arm": "; arm64's compat vDSO, 32-bit arm, comes with --arch arm64",
                  "i386": "; x86's 32-bit vDSO (vdso32), i386, comes with --arch x86_64"
                  }.get(arch_name, "")
        raise UsageError(f"import: --arch {arch_name}: imported trees build for "
                         f"{', '.join(source_mod.ARCH_DIRS)} only (valid: "
                         f"{', '.join(source_mod.ARCH_DIRS)}){compat}")
    return arch_name


class Request(NamedTuple):
    """One import asked for, checked: name, SOURCE as given and resolved, patches."""
    name: str
    given: str
    source: Path
    patches: list
    arch: str
    kbuild: bool = False  # run the tree's kbuild for its vDSO line (kbuild.py)
    config: str = None  # --config FILE, else Debian's for the tree's version
    image: tuple = None  # (bytes of --vdso-image, FILE as given), checked
    # the patched tree's own image, kbuild's (kbuild_patched.py), for +image
    patched_image: bool = False
    # why kbuild does not run, where it does not: what results say of the line
    kbuild_why: str = None
    # who writes the data page: "tree" (its update path under the shim),
    # "dwarf" (glue/dwarf_writer.c from the image's DWARF, +image variants
    # only), None: the tree's, the DWARF writer where the shim cannot build it
    writer: str = None


WRITERS = ("tree", "dwarf")


def request(given, patch_paths, name, use_kbuild=None, config=None, image_path=None,
            patched_image=False, writer=None):
    """Every input of an import checked, before anything is written. kbuild
    (it runs the tree's Makefiles, confined) by default for Debian's own
    packages and for a folder that is a whole tree (default_kbuild)."""
    names.check_name(name)
    arch_name = check_arch()
    patches = patches_mod.check_patches(patch_paths)
    if config is not None:
        safe_read.read_regular(config, "--config", kbuild.CONFIG_LIMIT, prefix="--config ")
    if arch_name != "x86_64" and (use_kbuild or config is not None or image_path):
        what = "--vdso-image" if image_path else "--config" if config else "--kbuild"
        raise UsageError(f"import: {what} with --arch {arch_name}: kbuild's line and the "
                         "vDSO image are x86_64's only (valid there: --arch x86_64; "
                         "for arm64 leave them out)")
    missing = arch.current().missing_toolchain()
    if missing:
        raise UsageError(f"import: --arch {arch_name}: no {', '.join(missing)} in "
                         f"{arch.CROSS_BIN} to compile the tree with (scripts/vdsobench "
                         f"setup --arch {arch_name} installs it)")
    if writer not in (None, *WRITERS):
        raise UsageError(f"import: --writer {writer}: no such writer (valid: "
                         f"{', '.join(WRITERS)})")
    image = vdso_image.given(image_path)
    source = source_mod.resolve_source(given)
    if not source.is_dir():
        tarball.tar_top(source)  # a tarball that is none: one line now, before any output
    if use_kbuild is None:
        use_kbuild, kbuild_why = default_kbuild(arch_name, source, config)
    else:
        kbuild_why = None if use_kbuild else "--no-kbuild"
    if patched_image is None:  # where it can be had: patch-review's
        patched_image = bool(patches and use_kbuild and not image_path)
    if patched_image and (image_path or not patches or not use_kbuild):
        why = ("--vdso-image gives the image" if image_path else "no --patch to apply"
               if not patches else "it needs kbuild (--kbuild or --config)")
        raise UsageError(f"import: --patched-image: {why} (valid: --patched-image with "
                         "--patch and kbuild, without --vdso-image)")
    if writer == "dwarf" and not (image_path or use_kbuild):
        raise UsageError("import: --writer dwarf: it reads the image's DWARF (valid: with "
                         "kbuild, or --vdso-image FILE's .dbg)")
    return Request(name, given, source, patches, arch_name, use_kbuild, config, image,
                   patched_image, kbuild_why, writer)


def default_kbuild(arch_name, source, config):
    """(whether import runs the tree's kbuild, why not): x86-64's trees only
    (kbuild.py runs arch/x86/entry/vdso/); with --config, Debian's own
    tarballs, and a folder that is a whole tree (a git work tree, a
    worktree: kbuild_tree.not_whole); another tarball only when asked."""
    if arch_name != "x86_64":
        return False, f"--arch {arch_name}: kbuild's line and image are x86-64's"
    if config is not None or kbuild.is_debian(source):
        return True, None
    if source.is_dir():
        missing = kbuild_tree.not_whole(source)
        if missing is None:
            return True, None
        return False, f"the tree has no {missing}: kbuild needs a whole tree"
    return False, "a tarball not Debian's: its kbuild runs when asked (--kbuild)"
