"""Changes to the imports table, each a transaction on the table as it is then,
under its lock: an import is set in the table and the project built with it;
a failed or interrupted one puts back only its own entry. Also the imports a
run holds for its whole length (patch-review's: temporary(), reserved())."""

import contextlib
import time
from typing import NamedTuple

from vdsobench_cli.cli import arch, build, labels, lifecycle, packages
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.kimport import (bazel_sync, flow, imports_table, names as names_mod, request,
                                   reserved as reserved_mod, store)


def set_entries(changes, building):
    """Put changes ({name: entry, or None to remove}) into the table as it is now;
    {name: its entry before} (None: it had none)."""
    imports = store.read_table()
    before = {n: imports.get(n) for n in changes}
    for n, e in changes.items():
        if e is None:
            imports.pop(n, None)
        else:
            imports[n] = dict(e, state=imports_table.BUILDING) if building else e
    bazel_sync.save(imports)
    return before


def put_back(before):
    """Each of these names back to its entry before (re-reading the table: the
    other entries stay as they are now)."""
    with lifecycle.critical():
        try:
            set_entries(before, building=False)
        except CliErrors:
            pass  # the table cannot be read or written: nothing of ours to put back


def commit(changes, check=None):
    """Set changes in the table (under the lock) and build the project with them;
    check() then, inside the transaction. On any failure or interrupt only these
    names are put back, and (but after a signal) the previous build is rebuilt.
    Returns (the entries before, what check returned)."""
    added = {n: e for n, e in changes.items() if e is not None}
    before = None
    try:
        # a signal between the table's write and `before` would leave the
        # entries building with nothing to put them back: it waits till here
        with lifecycle.critical():
            before = set_entries(changes, building=True)
        with bazel_sync.building(added):
            # kernel_import/check_objects.py, a step of the build, refuses a tree
            # whose objects would run code uncalled: before anything links them
            build.build([labels.VERIFY])
            result = check() if check else None
        set_entries(added, building=False)
    except BaseException as e:
        if before is None:
            raise
        put_back(before)
        if not isinstance(e, lifecycle.Interrupted) and not lifecycle.pending():
            build.bazel("build", arch.current().bazel_flags() + [labels.VERIFY])
        raise
    return before, result


CliErrors = (Failure, UsageError)


def built_variants(name):
    """The import's variant names as the build made them; Failure if it made none
    (Bazel saw another table than this one), inside the transaction: undone."""
    names = names_mod.variant_names(name)
    if not names:
        raise Failure(f"import: {names_mod.layout_of(name)}: the build made no variants of "
                      f"it (Bazel did not see the table in {store.imports_dir()}?); nothing "
                      "imported")
    return names


@contextlib.contextmanager
def temporary(wanted, images=False, kbuild=None, config=None):
    """Import {name: (SOURCE, [patch paths])} for the length of a block (the
    patch-review recipe's before and after), built; those names are put back
    as they were afterwards, whatever happens. Yields {name: meta}. images:
    a patched tree's own image too, where kbuild can make it; kbuild and
    config: import's --kbuild and --config."""
    reqs = [request.request(given, patch_paths, name, kbuild, config,
                            patched_image=None if images else False)
            for name, (given, patch_paths) in wanted.items()]
    d = store.writable_dir()
    packages.ensure_setup()
    metas, entries = {}, {}
    with store.table_lock(d):
        for req in reqs:
            entries[req.name], metas[req.name], _, _ = flow.take_in(req)
        before, _ = commit(entries)
    try:
        yield metas
    finally:
        with store.table_lock(d):
            put_back(before)


@contextlib.contextmanager
def reserved(names, who, say):
    """The names this run's for the block (reserved.py: one such run at a time,
    the next waits and says so through say): what a killed run left under them
    is removed first, and nothing is left under them at the end, however the
    block ends."""
    d = store.writable_dir()
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(reserved_mod.hold(d, names, who, say))
        except OSError as e:
            raise store.refuse_dir(f"cannot open {reserved_mod.LOCK} "
                                   f"({e.strerror or e})") from None
        drop(d, names)
        try:
            yield
        finally:
            drop(d, names)


def drop(d, names):
    """These names out of the table (not rebuilt: the next build leaves them out)."""
    with store.table_lock(d):
        try:
            if any(n in store.read_table() for n in names):
                with lifecycle.critical():
                    set_entries(dict.fromkeys(names), building=False)
        except CliErrors:
            pass  # the table cannot be read or written: nothing of ours to take out


def check_free(d, name, what):
    """UsageError when a run holds name (reserved.py); under the table's lock."""
    who = reserved_mod.holder(d, name)
    if who:
        raise UsageError(f"import: {what} {name}: {who} is using that import and removes "
                         "it when it ends; choose another name, or wait for it")


class Imported(NamedTuple):
    """What import_one() did: the tree's description, the variants built, and
    how (the tree from the cache or made, each step's seconds)."""
    meta: dict
    variants: list
    replaced: bool  # another tree was imported under that name before
    from_cache: bool
    tree_s: float
    build_s: float


def import_one(req):
    """The request (request.request()) taken in and built into the table as one
    transaction: an Imported, or the error with nothing of it left."""
    d = store.writable_dir()
    packages.ensure_setup()
    with store.table_lock(d):
        check_free(d, req.name, "--name")
        entry, meta, from_cache, tree_s = flow.take_in(req)
        old = store.read_table().get(req.name)
        replaced = isinstance(old, dict) and old.get("key") != entry["key"]
        t1 = time.monotonic()
        _, variants = commit({req.name: entry}, lambda: built_variants(req.name))
    return Imported(meta, variants, replaced, from_cache, tree_s, time.monotonic() - t1)


def remove(name):
    """An import out of the table and the build (never undone: a removal cannot
    break a build); its tree stays in the cache."""
    d = store.writable_dir()
    with store.table_lock(d):
        check_free(d, name, "--remove")
        imports = store.read_table()
        if name not in imports:
            raise UsageError(f"import: --remove {name}: no such import (valid: "
                             f"{', '.join(sorted(map(str, imports))) or 'none imported'})")
        set_entries({name: None}, building=False)
        build.build([labels.VERIFY])
