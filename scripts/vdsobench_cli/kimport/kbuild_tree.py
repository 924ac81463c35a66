"""Where a tree's kbuild builds the 64-bit vDSO, found by looking at what the
tree has, never by its version: arch/x86/entry/vdso/ itself (Linux v6.1 and
v6.12: vclock_gettime.o and vdso64.so{,.dbg} there) or one of its folders
(v7.3: vdso64/, beside common/ and vdso32/).

    vdso64_dir(build_fd)  the folder, relative to the build folder: of
                          VDSO_DIR and its direct folders, the one holding
                          kbuild's saved command for vclock_gettime.o
                          (CMD); of several (vdso32/ compiles its own with
                          -m32, in v6.12 and v7.3), the one beside DBG
    paths(folder)         {cmd, obj, image, dbg} in that folder
    vdso32_dir(build_fd)  the folder holding the 32-bit image kbuild linked,
                          vdso32.so.dbg (VDSO_DIR in v6.1 and v6.12, its
                          vdso32/ in v7.3), or None where there is none
    obj32(build_fd)       the 32-bit vclock_gettime.o (the folder whose one
                          is an ELFCLASS32 file: vdso32/), or None
    line_files(tree)      what shapes the line beyond the configuration: the
                          top and x86 Makefiles, kbuild's own, and each
                          Makefile* and *.include of VDSO_DIR and its folders
    regular_file(root, rel)  whether rel is a regular file below no link
    not_whole(tree)       the first of WHOLE a folder lacks, or None: a whole
                          tree, which import builds with kbuild by default

kbuild ran the tree's Makefiles and programs: its folders are read through
folder fds that follow no link (safe_read), and what is not a regular file
or folder is not there.
"""

import os
import stat

from vdsobench_cli.cli import safe_read
from vdsobench_cli.cli.errors import UsageError

VDSO_DIR = "arch/x86/entry/vdso"
CMD = ".vclock_gettime.o.cmd"
OBJ = "vclock_gettime.o"
IMAGE = "vdso64.so"
DBG = "vdso64.so.dbg"
IMAGE32, DBG32 = "vdso32.so", "vdso32.so.dbg"
FIXED_LINE_FILES = ("Makefile", "arch/x86/Makefile", "scripts/Makefile.lib",
                    "scripts/Makefile.build", "scripts/Kbuild.include",
                    "scripts/Makefile.compiler")
# what kbuild needs of a tree to build its vDSO: a folder without one is a
# part of a tree (the files import takes, a test's), which kbuild cannot build
WHOLE = ("Makefile", "Kconfig", "scripts/Makefile.build", "scripts/Kbuild.include",
         "arch/x86/Makefile", "arch/x86/Kconfig", f"{VDSO_DIR}/Makefile")


def entries(root, rel):
    """{name: st_mode} of the folder rel below the folder fd root, links not
    followed; {} when it is missing or no folder."""
    try:
        fd = safe_read.open_dir(root, rel)
    except (FileNotFoundError, UsageError):
        return {}
    try:
        with os.scandir(fd) as it:
            return {e.name: e.stat(follow_symlinks=False).st_mode for e in it}
    finally:
        os.close(fd)


def folders(root):
    """[(VDSO_DIR or one of its direct folders, its entries)], VDSO_DIR first."""
    top = entries(root, VDSO_DIR)
    found = [(VDSO_DIR, top)] if top else []
    for name in sorted(n for n, mode in top.items() if stat.S_ISDIR(mode)):
        found.append((f"{VDSO_DIR}/{name}", entries(root, f"{VDSO_DIR}/{name}")))
    return found


def regular(ents, name):
    return name in ents and stat.S_ISREG(ents[name])


def vdso64_dir(build_fd):
    """The 64-bit vDSO's folder in a built tree; UsageError when there is none
    or no one of several is beside vdso64.so.dbg."""
    with_cmd = [(d, ents) for d, ents in folders(build_fd) if regular(ents, CMD)]
    if len(with_cmd) == 1:
        return with_cmd[0][0]
    beside = [d for d, ents in with_cmd if regular(ents, DBG)]
    if len(beside) == 1:
        return beside[0]
    if not with_cmd:
        raise UsageError(f"kbuild: no {CMD} in {VDSO_DIR}/ or its folders: kbuild compiled "
                         "no vclock_gettime.o; nothing imported")
    raise UsageError(f"kbuild: {CMD} in {', '.join(d for d, _ in with_cmd)}, and "
                     f"{'none' if not beside else 'more than one'} beside {DBG}: which is "
                     "the 64-bit vDSO's is not known; nothing imported")


def vdso32_dir(build_fd):
    """The one folder of VDSO_DIR and its folders with a regular DBG32, or None
    (none, or several: which is kbuild's image is not known)."""
    found = [d for d, ents in folders(build_fd) if regular(ents, DBG32)]
    return found[0] if len(found) == 1 else None


def obj32(build_fd):
    """The path of the one 32-bit (ELFCLASS32) vclock_gettime.o kbuild
    compiled, or None."""
    found = []
    for d, ents in folders(build_fd):
        if regular(ents, OBJ):
            try:
                head = safe_read.read_regular(f"{d}/{OBJ}", "kbuild's object", 1 << 22,
                                              root=build_fd)[:5]
            except UsageError:
                continue
            if head == b"\x7fELF\x01":
                found.append(f"{d}/{OBJ}")
    return found[0] if len(found) == 1 else None


def paths(folder):
    return {"cmd": f"{folder}/{CMD}", "obj": f"{folder}/{OBJ}", "image": f"{folder}/{IMAGE}",
            "dbg": f"{folder}/{DBG}"}


def line_files(tree):
    """The files of a directory tree that shape the vDSO line (see above)."""
    root = os.open(tree, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        found = [(d, ents) for d, ents in folders(root)]
    finally:
        os.close(root)
    made = [f"{d}/{name}" for d, ents in found for name in sorted(ents)
            if stat.S_ISREG(ents[name]) and
            (name.startswith("Makefile") or name.endswith(".include"))]
    return list(FIXED_LINE_FILES) + made


def regular_file(root, rel):
    """Whether rel is a regular file below the folder fd root, below folders
    that are no links (safe_read.open_dir walks them so)."""
    folder, name = os.path.split(rel)
    try:
        fd = safe_read.open_dir(root, folder or ".")
    except (OSError, UsageError):  # missing, a link, no folder, or out
        return False
    try:
        return stat.S_ISREG(os.lstat(name, dir_fd=fd).st_mode)
    except OSError:
        return False
    finally:
        os.close(fd)


def not_whole(tree):
    """The first of WHOLE the folder tree lacks as a regular file (below
    folders that are no links), or None."""
    root = os.open(tree, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return next((rel for rel in WHOLE if not regular_file(root, rel)), None)
    finally:
        os.close(root)
