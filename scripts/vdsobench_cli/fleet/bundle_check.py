"""The bundle a fleet job stages: --bundle as given, read once and checked
as hostile (a tarball's members, sizes and BUNDLE.json fields, within
limits: a gzip bomb is refused, not inflated), or one built now."""

import io
import json
import sys
import tarfile
import zlib
from pathlib import Path

from vdsobench_cli.cli import safe_read
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.fleet import bundle, fleet_slurm

BUNDLE_MAX = 1 << 30  # a bundle is tens of MB
MANIFEST_MAX = 1 << 20  # its BUNDLE.json, a few KB
MEMBERS_MAX = 100_000  # members looked at for it (a bundle has a few thousand)
UNPACKED_MAX = 2 << 30  # bytes unpacked to reach it (BUNDLE.json is last; a bundle
#                         unpacks to about 100 MB): a gzip bomb is refused, not inflated


def bundle_facts(name, data):
    """BUNDLE.json of a bundle's bytes, its fields as fleet uses them checked:
    UsageError (one line) for anything else."""
    def bad(why):
        return UsageError(f"--bundle {name}: not a vdsobench bundle ({why}; make one with "
                          "`scripts/vdsobench bundle --out FILE.tar.gz`)")
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for n, m in enumerate(tar):
                if n >= MEMBERS_MAX:
                    raise bad(f"no BUNDLE.json in its first {MEMBERS_MAX} members")
                if m.offset_data + max(m.size, 0) > UNPACKED_MAX:
                    raise bad(f"it unpacks to over {UNPACKED_MAX >> 30} GiB")
                if m.name.count("/") == 1 and m.name.endswith("/BUNDLE.json"):
                    break
            else:
                raise bad("no BUNDLE.json")
            if not m.isfile():
                raise bad(f"{fleet_slurm.printable(m.name)} is not a regular file")
            if m.size > MANIFEST_MAX:
                raise bad(f"its BUNDLE.json is over {MANIFEST_MAX // 1024} KB")
            raw = tar.extractfile(m).read(MANIFEST_MAX + 1)
    except (OSError, EOFError, tarfile.TarError, zlib.error) as e:
        raise bad(fleet_slurm.printable(str(e))) from None
    try:
        facts = json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise bad(f"its BUNDLE.json is not JSON: {fleet_slurm.printable(str(e))}") from None
    if not isinstance(facts, dict) or not facts:
        raise bad("its BUNDLE.json is not a JSON object")
    problem = bundle.manifest_problem(facts)
    if problem:
        raise bad(f"its BUNDLE.json's {problem}")
    return facts


def bundle_for(request, tmp):
    """A bundle to stage: --bundle as given (read once by the safe reader, a regular
    file within BUNDLE_MAX, checked and copied into tmp: what is staged is what
    was checked), else one built now into tmp."""
    if request.bundle:
        data = safe_read.read_regular(request.bundle, "bundle", BUNDLE_MAX, prefix="--bundle ")
        facts = bundle_facts(request.bundle, data)
        path = Path(tmp) / "given.tar.gz"
        path.write_bytes(data)
        return path, facts
    return built_bundle(tmp)


def built_bundle(tmp, say=None):
    """A bundle of this build, made now in tmp: (path, its BUNDLE.json). Its
    line (bundle.make's) goes to say (default: standard output)."""
    path = Path(tmp) / "vdsobench.tar.gz"
    print(bundle.make(str(path)), file=say or sys.stdout)
    with tarfile.open(path) as tar:
        manifest = next(m for m in tar.getmembers() if m.name.endswith("/BUNDLE.json"))
        return path, json.load(tar.extractfile(manifest))
