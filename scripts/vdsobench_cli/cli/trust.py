"""Only what root or this user owns is built or run.

The imports folder and its trees, the kbuild cache and Bazel's disk cache
hold what the tool compiles and runs: a folder another user may write is one
where they could swap a tree, a table or an object between its check and its
use. So each must be owned by root or by this user, with write permission for
no one else, and so must every folder above it (one that others may write is
taken only when it is sticky, as /tmp is: there nobody else can rename or
remove what is ours); each file read from them likewise.

    folder_problem(path)  why the folder may not be trusted and how to mend
                          it, naming the folder at fault, or None (also for a
                          folder not made yet: the chain above it is checked;
                          and for a path that is no folder, which the caller
                          refuses as such)
    stat_problem(st)      why a file or folder with this stat may not be

Standard library only: the @vdso_imports repository rule reads the imports
table through imports_table.py, which calls this.
"""

import os
import stat


def stat_problem(st):
    """None, or why: owned by another user, or writable by the group or others."""
    if st.st_uid not in (0, os.geteuid()):
        return f"is owned by uid {st.st_uid}, not by root or this user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"may be written by {'others' if st.st_mode & stat.S_IWOTH else 'its group'}"
                f" (mode {stat.S_IMODE(st.st_mode):04o})")
    return None


def folder_problem(path):
    """Why the folder path (absolute or not; a link is followed, as the tool
    will) may not be trusted, naming the folder at fault; or None."""
    real = os.path.realpath(path)
    parts = [p for p in real.split("/") if p]
    at = "/"
    for i, part in enumerate([""] + parts):
        at = os.path.join(at, part) if part else "/"
        try:
            st = os.stat(at)
        except FileNotFoundError:
            return None  # made later, by us, under a chain already checked
        except OSError as e:
            return f"{at}: {e.strerror}"
        last = i == len(parts)
        if last and not stat.S_ISDIR(st.st_mode):
            return None  # no folder at all: the caller's own check says so
        why = stat_problem(st)
        if why and not last and st.st_uid in (0, os.geteuid()) and st.st_mode & stat.S_ISVTX:
            why = None  # sticky, like /tmp: others cannot replace what is ours in it
        if why:
            return (f"{at} {why}: make it yours alone (chown {os.geteuid()} {at} && "
                    f"chmod go-w {at}) or use another folder")
    return None
