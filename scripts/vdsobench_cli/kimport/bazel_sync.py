"""What Bazel and every command see of the imports table. The @vdso_imports
repository rule (third_party/vdso_imports/repo.bzl) reads the table through
imports_table.py; sync_env() puts the table's checked digest and the glue's
into the environment every command's bazel inherits, so that the rule is
re-run whenever either changes. The entry (vdsobench_cli/main.py) calls it
before any command runs, and save() after each write of the table.

checker_digest() hashes the modules the repository rule runs
(`python3 -m vdsobench_cli.kimport.imports_table`): imports_table and what
it imports (safe_read, trust). A module imports_table comes to import joins
that list."""

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path

from vdsobench_cli.cli import build, safe_read, trust
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.core import text as text_mod
from vdsobench_cli.kimport import compile, imports_table, names as names_mod, store


DIGEST_ENV = "VDSOBENCH_IMPORTS_DIGEST"
GLUE_ENV = "VDSOBENCH_GLUE_DIGEST"
# the imports being built for the first time, comma-separated: the checker
# keeps their entries (state "building") in the build only for that build
BUILDING_ENV = "VDSOBENCH_IMPORTS_BUILDING"
_left_out = []  # the problems sync_env found last, for warn()


def state(glue=None):
    """imports_table.check() of the imports directory as this process sees it."""
    return imports_table.check(str(store.imports_dir()), glue or compile.glue_digest(),
                               os.environ.get(BUILDING_ENV, ""))


def checker_digest():
    return hashlib.sha256(b"".join(Path(m.__file__).read_bytes() for m in
                                   (imports_table, safe_read, trust))).hexdigest()


def sync_env():
    """Tell Bazel (through the environment every command's bazel inherits) which
    table it must see, as checked, and which glue: @vdso_imports is re-run
    whenever either value changes. A tree edited since makes another digest."""
    if build.bundled():  # prebuilt: no Bazel, no imports
        return
    if os.environ.get(store.DIR_ENV):
        os.environ[store.DIR_ENV] = str(store.imports_dir())
    glue = compile.glue_digest()
    checked = state(glue)
    _left_out[:] = checked["problems"]
    blob = json.dumps([imports_table.rule_view(checked), checker_digest()], sort_keys=True)
    os.environ[DIGEST_ENV] = hashlib.sha256(blob.encode()).hexdigest()
    os.environ[GLUE_ENV] = glue


def digest():
    """The value of VDSOBENCH_IMPORTS_DIGEST for the table as it is now."""
    sync_env()
    return os.environ.get(DIGEST_ENV, "none")


def warn(command):
    """One line per import left out of the build, before any other command runs
    (`import` says it itself: --list lists them, the others fail on them); a
    UsageError when the imports folder is another user's to write: what the
    build compiles from it is never taken then (cli/trust.py)."""
    problem = trust.folder_problem(store.imports_dir())
    if problem and command != "setup":
        raise UsageError(f"the imports folder ({store.where()}): {problem}")
    if command != "import":
        for line in _left_out:
            print(f"vdsobench: warning: {text_mod.printable(line, None)}", file=sys.stderr)


def save(imports):
    """The table written (store.write_table) and what Bazel sees of it synced."""
    store.write_table(imports)
    sync_env()


def identities(layouts):
    """{layout: what names the import} for the imported ones among layouts: its
    tree's key, kernel version, source and its hash, and each patch's hash and
    subject, from the table (in a bundle, from BUNDLE.json, which has the
    table's as it was built). What results files and bundles record."""
    wanted = sorted({str(x) for x in layouts if names_mod.is_import(x)})
    if not wanted:
        return {}
    if build.bundled():
        known = build.bundle_manifest().get("imports") or {}
    else:
        known = {names_mod.layout_of(n): e["identity"] for n, (e, _) in state()["good"].items()}
    return {x: known.get(x, {"name": x[len(names_mod.PREFIX):], "key": None}) for x in wanted}


def all_identities():
    """identities() of every import Bazel builds now ({} in a bundle)."""
    if build.bundled():
        return {}
    return identities(names_mod.layout_of(n) for n in state()["good"])


@contextlib.contextmanager
def building(names):
    """BUILDING_ENV names these imports for the builds in the block."""
    os.environ[BUILDING_ENV] = ",".join(sorted(names))
    sync_env()
    try:
        yield
    finally:
        os.environ.pop(BUILDING_ENV, None)
        sync_env()


def imported_names():
    return sorted(state()["good"])
