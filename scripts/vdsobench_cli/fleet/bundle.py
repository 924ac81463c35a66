"""vdsobench as one relocatable tarball, for machines without Bazel (the
`bundle` command is commands/bundle.py).

A lab box, a customer's server, a second CPU model over ssh: often no Bazel,
no Google Benchmark, no libpfm4, no hwloc, no numpy and no network. The
bundle carries what `run`, `verify`, `counters`, `compare`, `selftest-stats`
and `list` need there:

    bin/       the harness, verify, the counters lister and the sim driver,
               built with --config=bundle: libpfm.a and libhwloc.a linked in
               (Debian ships those static), every other shared library but
               the C library's found in lib/ through the run path $ORIGIN/../lib
    lib/       those libraries (libbenchmark, libstdc++, libgcc_s, libudev)
    scripts/, reports/, results/schema/
               the command itself; its statistics need only the standard library
    pylib/     jsonschema and its pure-Python dependencies, so results files
               are checked against the same schema as at home
    BUNDLE.json
               the commit and flags it was built from, the oldest C library
               and Python it needs, and a SHA-256 per file
    vdsobench  the entry point

It refuses a machine whose C library is older than the newest symbol version
its binaries use (one line, exit 2), and writes results files that `merge`,
`report` and `plot` at home read like any other.
"""

import hashlib
import io
import json
import os
import platform
import re
import subprocess
import tarfile
import time
from pathlib import Path

from vdsobench_cli.cli import arch, atomic, build, confine, inputs, labels, packages, targets, tools
from vdsobench_cli.measure import fingerprint
from vdsobench_cli.kimport import bazel_sync
from vdsobench_cli.cli.errors import Failure, UsageError

FORMAT = "vdsobench-bundle/1"
# what BUNDLE.json holds, checked where it is read back
SCHEMA = build.ROOT / "results" / "schema" / "bundle-v1.schema.json"
MANIFEST = build.BUNDLE_MANIFEST
# The C library's own objects: every Linux machine has them, so they stay out.
LIBC = re.compile(r"^(libc|libm|libpthread|libdl|librt|libresolv|libutil|ld-linux[-\w]*)"
                  r"\.so(\.\d+)*$|^linux-vdso\.so\.\d+$")
# Pure-Python modules (with their dependencies) to carry for results validation.
PYTHON_MODULES = ("jsonschema", "attr", "attrs", "pyrsistent", "_pyrsistent_version")
SOURCES = (("scripts/vdsobench_cli", "**/*.py"), ("reports", "*.py"),
           ("results/schema", "*.json"), ("common", "clocks.h"))
PYTHON_MIN = (3, 9)
GLIBC_VERSION = re.compile(r"\bGLIBC_(\d+)\.(\d+)(?:\.(\d+))?\b")

LAUNCHER = '''#!/usr/bin/env python3
"""vdsobench, relocatable bundle: see README in this directory."""
import os
import sys

if sys.version_info < {python_min!r}:
    sys.stderr.write("vdsobench: error: this bundle needs Python {python_text} or later; "
                     "this is %d.%d\\n" % sys.version_info[:2])
    sys.exit(2)
HERE = os.path.dirname(os.path.realpath(__file__))
# the bundle's own modules first, so that what runs is what was bundled
sys.path[:0] = [os.path.join(HERE, "scripts"), HERE, os.path.join(HERE, "pylib")]
from vdsobench_cli import main  # noqa: E402

sys.exit(main.main())
'''

README = """vdsobench {short}: a relocatable bundle ({arch}, built {created})

Needs: Linux on {arch}, the GNU C library {glibc} or later, Python {python} or
later (standard library only). Nothing else: no Bazel, Google Benchmark,
libpfm4, hwloc, numpy or scipy. Unpack anywhere and run:

    ./vdsobench run                 # results go to results/runs/ in this directory
    ./vdsobench run --out r.json    # or where you say
    ./vdsobench verify
    ./vdsobench compare A B --clocks monotonic
    ./vdsobench selftest-stats
    ./vdsobench counters
    ./vdsobench list

Bring the results file home and read it there with `scripts/vdsobench merge`,
`report` or `plot`, next to the runs of other machines.
"""


def glibc_version_text(version):
    return ".".join(map(str, version))


def parse_version(text):
    try:
        return tuple(int(x) for x in text.split("."))
    except (AttributeError, ValueError):
        return None


def host_glibc():
    """This machine's C library version, e.g. (2, 36); None if it is not glibc."""
    try:
        name, _, version = (os.confstr("CS_GNU_LIBC_VERSION") or "").partition(" ")
    except (ValueError, OSError):
        return None
    return parse_version(version) if name == "glibc" else None


def manifest_problem(manifest):
    """What is wrong with a BUNDLE.json's object against its schema
    (results/schema/bundle-v1.schema.json), one phrase naming the field,
    "build.short is [1], not a commit's hex digits"; None when nothing is."""
    validate, best_match = inputs.validator(str(SCHEMA))
    error = best_match(validate.iter_errors(manifest))
    if error is None:
        return None
    where = ".".join(map(str, error.absolute_path)) or "the top level"
    if error.validator == "required" or error.validator == "minProperties":
        return f"{where} is missing fields"
    return (f"{where} is {inputs.brief(error.instance, 30)}, not "
            f"{error.schema.get('description') or error.message}")


def check_host(manifest):
    """In a bundle: refuse, in one line, a manifest its schema refuses or a
    machine it cannot run on."""
    problem = manifest_problem(manifest) if isinstance(manifest, dict) else "not an object"
    if problem:
        raise UsageError(f"{build.BUNDLE_MANIFEST}: damaged bundle manifest: {problem}; "
                         "unpack the bundle again")
    machine = platform.machine()
    if manifest.get("arch") and machine != manifest["arch"]:
        raise UsageError(f"this bundle is for {manifest['arch']}; this machine is {machine}")
    need = parse_version(manifest.get("glibc_min") or "")
    have = host_glibc()
    if need and have is None:
        raise UsageError(f"this bundle needs the GNU C library {manifest['glibc_min']} or "
                         "later; this machine's C library is not glibc")
    if need and have < need:
        raise UsageError(f"this bundle needs the GNU C library {manifest['glibc_min']} or "
                         f"later; this machine has {glibc_version_text(have)}")


# ---- building one -----------------------------------------------------------------------


def bundle_bin_dir():
    return build.bin_dir(arch.current().bazel_flags() + ["--config=bundle"])


def needed(elf):
    """The DT_NEEDED sonames of an ELF file."""
    r = subprocess.run(confine.command([tools.path("readelf", "bundle"), "-d", "-W", str(elf)]),
                       capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise Failure(f"readelf -d {elf} failed: {build.tail(r.stderr, 1)}")
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)


def glibc_needed(elf):
    """The newest GLIBC_x.y symbol version an ELF file asks for, or None."""
    r = subprocess.run(confine.command([tools.path("readelf", "bundle"), "-V", "-W", str(elf)]),
                       capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise Failure(f"readelf -V {elf} failed: {build.tail(r.stderr, 1)}")
    versions = [tuple(int(x) for x in m if x) for m in GLIBC_VERSION.findall(r.stdout)]
    return max(versions, default=None)


# where the loader of another architecture's Debian finds its libraries (multiarch,
# then the cross C library's)
CROSS_LIB_DIRS = {"aarch64": ("/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                              "/usr/aarch64-linux-gnu/lib")}


def resolve_cross(elf, machine):
    """{soname: path}, C library's left out, for a cross-built elf: each DT_NEEDED
    looked up in that architecture's library folders, then its own (ldd can only
    ask this machine's loader)."""
    found, todo = {}, list(needed(elf))
    while todo:
        soname = todo.pop()
        if soname in found or LIBC.match(soname):
            continue
        path = next((Path(d, soname) for d in CROSS_LIB_DIRS[machine]
                     if Path(d, soname).is_file()), None)
        if path is None:
            raise Failure(f"{elf.name} needs {soname}, which is not installed here for "
                          f"{machine} (scripts/vdsobench setup --arch {arch.name_of(machine)})")
        found[soname] = path
        todo += needed(path)
    return found


def resolve(elf):
    """{soname: path} of the libraries ldd finds for elf, C library's left out."""
    target = arch.current()
    if target.emulated:
        return resolve_cross(elf, target.machine)
    # ldd runs the program's loader on it, which may run the program's code
    # (man ldd): confined, as every program of the build
    r = subprocess.run(confine.command(["ldd", str(elf)]), capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        raise Failure(f"ldd {elf} failed: {build.tail(r.stderr or r.stdout, 1)}")
    found = {}
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if m and not LIBC.match(m.group(1)):
            if m.group(2) == "not":
                raise Failure(f"{elf.name} needs {m.group(1)}, which is not installed here")
            found[m.group(1)] = Path(m.group(2))
    return found


def python_module_files(name):
    """(relative path, source path) of a pure-Python module or package."""
    import importlib.util
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise Failure(f"bundle: the Python module {name} is not installed "
                      f"(it comes with python3-jsonschema: scripts/vdsobench setup)")
    origin = Path(spec.origin)
    if spec.submodule_search_locations:
        top = origin.parent
        return [(Path(name) / p.relative_to(top), p) for p in sorted(top.rglob("*"))
                if p.is_file() and "__pycache__" not in p.parts
                and p.suffix in (".py", ".pyi", ".typed", ".json")]
    return [(Path(origin.name), origin)]


def source_files():
    for directory, pattern in SOURCES:
        for p in sorted((build.ROOT / directory).glob(pattern)):
            # reports/testsupport.py is the reports' tests' helpers: a test file too
            if (not p.stem.endswith("_test") and p.name != "testsupport.py"
                    and "tests" not in p.relative_to(build.ROOT).parts):
                yield p.relative_to(build.ROOT), p


def contents(bin_dir):
    """{path in the bundle: source path} and the manifest's facts."""
    files = {}
    libs = {}
    for label in labels.BUNDLE_BINARIES:
        package, _, name = label.lstrip("/").partition(":")
        elf = bin_dir / package / name
        if not elf.is_file():
            raise Failure(f"bundle: {elf} was not built")
        files[Path("bin", name)] = elf
        libs.update(resolve(elf))
    for soname, path in libs.items():
        files[Path("lib", soname)] = path
    for rel, path in source_files():
        files[rel] = path
    for name in PYTHON_MODULES:
        for rel, path in python_module_files(name):
            files[Path("pylib") / rel] = path
    elves = [p for rel, p in files.items() if rel.parts[0] in ("bin", "lib")]
    bundled = {rel.name for rel in files if rel.parts[0] == "lib"}
    outside = sorted({n for e in elves for n in needed(e)} - bundled)
    strays = [n for n in outside if not LIBC.match(n)]
    if strays:
        raise Failure(f"bundle: the binaries need {', '.join(strays)}, which is neither in "
                      "the bundle nor part of the C library")
    glibc = max(filter(None, (glibc_needed(e) for e in elves)), default=None)
    return files, {"system_libraries": outside,
                   "glibc_min": glibc_version_text(glibc) if glibc else None}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def add_bytes(tar, name, data, mode=0o644):
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, int(time.time())
    tar.addfile(info, io.BytesIO(data))


def write_tarball(f, top, files, manifest):
    with tarfile.open(fileobj=f, mode="w:gz") as tar:
        for rel, path in sorted(files.items()):
            # the file itself under its soname, never a link to a file left behind
            path = Path(path).resolve()
            info = tar.gettarinfo(str(path), arcname=f"{top}/{rel}")
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            with open(path, "rb") as src:
                tar.addfile(info, src)
        add_bytes(tar, f"{top}/vdsobench",
                  LAUNCHER.format(python_min=PYTHON_MIN,
                                  python_text=glibc_version_text(PYTHON_MIN)).encode(), 0o755)
        add_bytes(tar, f"{top}/README",
                  README.format(short=manifest["build"].get("short") or "unknown commit",
                                arch=manifest["arch"], created=manifest["created"],
                                glibc=manifest["glibc_min"],
                                python=glibc_version_text(PYTHON_MIN)).encode())
        add_bytes(tar, f"{top}/{MANIFEST.name}",
                  (json.dumps(manifest, indent=1) + "\n").encode())


def make(out, force=False):
    """The bundle of this build written to out (a .tar.gz): the line that says
    what it holds and needs."""
    out = Path(out)
    if not out.name.endswith((".tar.gz", ".tgz")):
        raise UsageError(f"bundle: --out {out}: the name must end in .tar.gz or .tgz")
    targets.check_writable(out, force, what="bundle")
    packages.ensure_setup()
    started = time.monotonic()
    build.build(["--config=bundle", *labels.BUNDLE_BINARIES])
    files, facts = contents(bundle_bin_dir())
    info = fingerprint.build_info(build.ROOT)
    info["bundle_flags"] = arch.current().bazel_flags() + ["--config=bundle"]
    short = info.get("short") or "unknown"
    machine = arch.current().machine  # the machine it is for: aarch64 when cross-built
    top = f"vdsobench-{short}{'-dirty' if info.get('dirty') else ''}-{machine}"
    manifest = {"format": FORMAT, "arch": machine,
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "glibc_min": facts["glibc_min"], "python_min": glibc_version_text(PYTHON_MIN),
                "system_libraries": facts["system_libraries"],
                "commands": list(labels.BUNDLE_COMMANDS),
                "build": info,
                "files": {str(rel): sha256(p) for rel, p in sorted(files.items())}}
    imports = bazel_sync.all_identities()  # built in: what each kernel:NAME is
    if imports:
        manifest["imports"] = imports
    atomic.write_stream_atomic(out, lambda f: write_tarball(f, top, files, manifest), force,
                                what="bundle")
    size = out.stat().st_size
    return (f"bundle: {out} ({size / 1e6:.1f} MB, {len(files) + 3} files, top directory "
            f"{top}/) in {time.monotonic() - started:.0f} s; needs glibc "
            f"{facts['glibc_min']}+ and Python {glibc_version_text(PYTHON_MIN)}+; "
            f"from the C library it uses {', '.join(facts['system_libraries'])}")
