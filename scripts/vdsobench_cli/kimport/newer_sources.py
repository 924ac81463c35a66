"""Debian's kernel source and configuration packages that the machine's own
suites lack (linux-source-7.3 on Debian 12), fetched from Debian's newer
suites of the machine's own archive (SUITES, in that order) with a private
apt (cli/private_apt.py): nothing of /etc/apt or /var/lib/apt read or
written, nothing installed into the system, as root or not.

    tree_tarball(package, what)  linux-source-X.Y's tarball: the one fetched
                                 before; else /usr/src's, installed as ever when
                                 the machine's suites have the package; else
                                 fetched now, with linux-config-X.Y
    tarball(series)              a fetched tree's tarball, or None
    config(series)               a fetched config.amd64_none_amd64.xz, or None
    is_fetched(path)             whether path is a fetched tree's tarball
    fetch(package, what)         one package fetched into the cache, whole

The cache: $VDSOBENCH_DEBIAN_CACHE, else ~/.cache/vdsobench/debian
(caches.folder: trusted as kbuild's is), holding apt/<suite>/ (each suite's
private apt: its configuration, lists and caches) and pkgs/<package>/ (the
package's files as dpkg-deb -x lays them out, usr/src/..., and fetched.json:
version, suite, archive, the .deb's SHA-256). A package appears there whole
(unpacked into pkgs/.staging-*, then renamed) or not at all: a failure or a
signal leaves nothing behind, and a staging folder that a SIGKILL left is
removed by a later fetch once it is STALE_S old. The tarball is then taken as
/usr/src/linux-source-6.12.tar.xz is, the configuration as
/usr/src/linux-config-X.Y's (kbuild.config_for)."""

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

from vdsobench_cli.cli import caches, lifecycle, packages, private_apt
from vdsobench_cli.cli.errors import UsageError

SUITES = ("trixie-backports", "sid")
ENV = "VDSOBENCH_DEBIAN_CACHE"
CONFIG = "config.amd64_none_amd64.xz"  # kbuild.DEBIAN_CONFIG's file
RECORD = "fetched.json"
STALE_S = 3600


def cache_dir():
    return caches.folder(ENV, "debian", "debian packages")


def cache_path():
    """Where the cache is, without making or checking it."""
    return Path(os.environ.get(ENV) or Path.home() / ".cache" / "vdsobench" / "debian")


def series_of(package):
    return package.rsplit("-", 1)[1]


def member(package):
    """The file a package is fetched for, relative to its folder."""
    series = series_of(package)
    if package.startswith("linux-source-"):
        return f"usr/src/linux-source-{series}.tar.xz"
    return f"usr/src/linux-config-{series}/{CONFIG}"


def whole(folder, package):
    """The package's file in a fetched folder, or None (not there, not whole)."""
    path = folder / member(package)
    if (folder / RECORD).is_file() and path.is_file() and not path.is_symlink():
        return path
    return None


def fetched(package):
    top = cache_path()
    return whole(top / "pkgs" / package, package) if top.is_dir() else None


def tarball(series):
    return fetched(f"linux-source-{series}")


def config(series):
    return fetched(f"linux-config-{series}")


def is_fetched(path):
    """Whether path is the tarball of a tree fetched into the cache."""
    name = Path(path).name
    if not (name.startswith("linux-source-") and name.endswith(".tar.xz")):
        return False
    package = name[:-len(".tar.xz")]
    if not private_apt.PACKAGE.fullmatch(package):
        return False
    found = fetched(package)
    return found is not None and found.resolve() == Path(path).resolve()


def tree_tarball(package, what, say=print):
    """linux-source-X.Y's tarball (see the module's docstring)."""
    private_apt.check_package(package, what)
    series = series_of(package)
    found = tarball(series)
    if found is not None:
        return found.resolve()
    if packages.known(package):
        packages.ensure_group((package,), what)
        return Path(f"/usr/src/{package}.tar.xz")
    folder = fetch(package, what, say, own=packages.same_kind(package))
    try:
        fetch(f"linux-config-{series}", what, say)
    except UsageError as e:
        say(f"{e}; kbuild has no Debian configuration for it (it takes the running "
            "kernel's, else x86_64_defconfig)")
    return whole(folder, package).resolve()


def fetch(package, what, say=print, own=None):
    """The package's folder in the cache, fetched now if it is not there
    whole; UsageError naming every suite tried when none has it (own: the
    packages of its kind the machine's own suites have, when they were asked),
    and for a folder or file of the cache that cannot be written (a full disk)."""
    private_apt.check_package(package, what)
    try:
        return fetch_into(cache_dir(), package, what, say, own)
    except OSError as e:
        raise UsageError(f"{what}: fetching {package} into {cache_path()}: "
                         f"{e.strerror or e}") from None


def fetch_into(top, package, what, say, own):
    """fetch() in the cache folder top: each suite in turn, asked with its own
    private apt, until one has the package."""
    pkgs = top / "pkgs"
    pkgs.mkdir(exist_ok=True)
    final = pkgs / package
    if whole(final, package):
        return final
    sweep(pkgs)
    uri = private_apt.archive_uri()
    prefix = package.rsplit("-", 1)[0] + "-"
    tried = []
    for suite in SUITES:
        apt = private_apt.Apt(top / "apt" / suite, suite, uri)
        apt.prepare()
        why = apt.update()
        if why:
            tried.append(f"{suite} (its lists not fetched: {why})")
            continue
        version = apt.show(package)
        if version is None:
            tried.append(f"{suite} (valid: {', '.join(apt.names(prefix)) or 'none'})")
            continue
        say(f"{what}: fetching {package} {version} from {uri} {suite} (private apt state "
            f"in {top}; nothing installed)")
        place(apt, package, version, final)
        return final
    mine = "" if own is None else (f" in the machine's own suites (valid: "
                                   f"{', '.join(own) or 'none'}) nor")
    raise UsageError(f"{what}: Debian has no package {package}{mine} in {uri}'s "
                     f"{', '.join(tried)}")


def place(apt, package, version, final):
    """Download, unpack, check and rename into final: whole or not at all."""
    stage = Path(lifecycle.new_temp_dir(final.parent, ".staging-"))
    try:
        debs = stage / ".deb"
        debs.mkdir()
        deb = apt.download(package, debs)
        with open(deb, "rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
        record = {"package": package, "version": version, "suite": apt.suite,
                  "archive": apt.uri, "deb": deb.name, "sha256": digest,
                  "size": deb.stat().st_size,
                  "fetched": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        private_apt.unpack(deb, stage)
        shutil.rmtree(debs)
        got = stage / member(package)
        if got.is_symlink() or not got.is_file():
            raise UsageError(f"{package} {version}: the package has no {member(package)}")
        (stage / RECORD).write_text(json.dumps(record, indent=1) + "\n")
        with lifecycle.critical():
            if whole(final, package):  # another fetch of it finished first
                lifecycle.discard(str(stage), "dir")
                return
            if os.path.lexists(final):
                shutil.rmtree(final)  # not whole: made again
            os.rename(stage, final)
            lifecycle.forget(str(stage))
    except BaseException:
        lifecycle.discard(str(stage), "dir")
        raise


def sweep(pkgs):
    """Staging folders a killed fetch left, once STALE_S old."""
    now = time.time()
    with os.scandir(pkgs) as entries:
        for e in entries:
            if (e.name.startswith(".staging-") and e.is_dir(follow_symlinks=False)
                    and now - e.stat(follow_symlinks=False).st_mtime > STALE_S):
                shutil.rmtree(e.path, ignore_errors=True)
