"""Only what root or this user owns is built or run.

The imports folder and its trees, the kbuild cache and Bazel's disk cache
hold what the tool compiles and runs: a folder another user may write is one
where they could swap a tree, a table or an object between its check and its
use. So each must be owned by root or by this user, with write permission for
no one else, and so must every folder above it (one that others may write is
taken only when it is sticky, as /tmp is: there nobody else can rename or
remove what is ours); each file read from them likewise. A link on the way
must be root's or this user's too, in such a folder: another user's could
be pointed elsewhere between the check and the use.

    folder_problem(path)  why the folder may not be trusted and how to mend
                          it, naming the folder at fault, or None (also for a
                          folder not made yet: the chain above it is checked;
                          and for a path that is no folder, which the caller
                          refuses as such)
    temp_problem()        the same of $TMPDIR's folder (tempfile's), as the
                          folder above what is made there (sticky is fine)
    stat_problem(st)      why a file or folder with this stat may not be

Standard library only: the @vdso_imports repository rule reads the imports
table through imports_table.py, which calls this.
"""

import os
import stat
import tempfile


def stat_problem(st):
    """None, or why: owned by another user, or writable by the group or others."""
    if st.st_uid not in (0, os.geteuid()):
        return f"is owned by uid {st.st_uid}, not by root or this user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"may be written by {'others' if st.st_mode & stat.S_IWOTH else 'its group'}"
                f" (mode {stat.S_IMODE(st.st_mode):04o})")
    return None


def folder_problem(path):
    """Why the folder path (absolute or not) may not be trusted, naming the
    folder or link at fault; or None. Each step of the path as given is
    judged where it leads, every folder on the way to it included (a link is
    followed, as the tool will, and must be root's or this user's: another
    user could point it elsewhere after this check), the path itself last."""
    parts = [p for p in os.path.abspath(path).split("/") if p]
    if not parts:
        return resolved_problem("/", last_strict=True)
    for i in range(1, len(parts) + 1):
        step = "/" + "/".join(parts[:i])
        st, why = stat_of(step, follow=False)
        if st is None:
            return why
        if stat.S_ISLNK(st.st_mode) and st.st_uid not in (0, os.geteuid()):
            return (f"{step} is a link owned by uid {st.st_uid}, who could point it "
                    "elsewhere: make the path root's or this user's alone, or use another "
                    "folder")
        why = resolved_problem(os.path.realpath(step), last_strict=i == len(parts))
        if why:
            return why
    return None


def temp_problem():
    """folder_problem() of $TMPDIR's folder, as the folder above what a command
    makes there (sticky, as /tmp, is fine): it writes there as root, has gcc
    write there, hands folders there to the sandbox user. In a folder another
    user may write, they could swap in one of theirs (a link where gcc writes
    its output, where root chowns)."""
    return folder_problem(os.path.join(tempfile.gettempdir(), "vdsobench-"))


def stat_of(path, follow):
    """(stat, None); (None, None) for a path not made yet (made later, by us,
    under a chain already checked); (None, why) when it cannot be seen."""
    try:
        return (os.stat(path) if follow else os.lstat(path)), None
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, f"{path}: {e.strerror}"


def resolved_problem(real, last_strict):
    """folder_problem() of a path without links: each folder on the way (a
    sticky one of ours excepted, but for the last when last_strict)."""
    parts = [p for p in real.split("/") if p]
    at = "/"
    for i, part in enumerate([""] + parts):
        at = os.path.join(at, part) if part else "/"
        st, why = stat_of(at, follow=True)
        if st is None:
            return why
        last = i == len(parts)
        if last and not stat.S_ISDIR(st.st_mode):
            return None  # no folder at all: the caller's own check says so
        why = stat_problem(st)
        if why and not (last and last_strict) and st.st_uid in (0, os.geteuid()) \
                and st.st_mode & stat.S_ISVTX:
            why = None  # sticky, like /tmp: others cannot replace what is ours in it
        if why:
            return (f"{at} {why}: make it yours alone (chown {os.geteuid()} {at} && "
                    f"chmod go-w {at}) or use another folder")
    return None
