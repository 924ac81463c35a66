"""apt-get with a private sources list and state folder: Debian packages
downloaded (apt-get download) and unpacked (dpkg-deb -x) without reading or
writing the machine's apt configuration or state, and without installing
anything; as root or not alike.

    check_package(name, what)  linux-source-X.Y or linux-config-X.Y, else one
                               line (exit 2): checked before any command, so
                               a name is never an option or a pattern
    archive_uri()              the machine's own Debian archive: the first
                               suite not -security of
                               /etc/apt/sources.list.d/debian.sources (deb822),
                               else of /etc/apt/sources.list
    Apt(state, suite, uri)     one suite's private apt under the folder state:
                               prepare() writes its files, argv() and env()
                               are its command lines, update(), show(),
                               names(), download(); unpack() is dpkg-deb -x

Everything the private apt reads or writes is under STATE: its sources list
(one line: the archive, the suite, main, for this machine's architecture,
signed by Debian's archive keyring), its configuration (APT_CONFIG, read
before anything of /etc/apt: Dir::Etc, Dir::State, Dir::Cache and Dir::Log
are STATE's folders, dpkg's status an empty file of its own), its lists and
caches. So /etc/apt/apt.conf.d (whose update hooks would run), the
machine's preferences, /var/lib/apt, /var/cache/apt and /var/log/apt are
neither read nor written. apt honours http_proxy from the environment; a
proxy set in /etc/apt/apt.conf.d is not read. A package is fetched as
Debian's archive signed it: the Release file by the keyring, the .deb by the
hash the signed lists give (apt-get download checks it)."""

import os
import re
import subprocess
from pathlib import Path

from vdsobench_cli.cli import build, lifecycle, safe_read, tools
from vdsobench_cli.cli.errors import UsageError

PACKAGE = re.compile(r"linux-(source|config)-(0|[1-9][0-9]?)\.(0|[1-9][0-9]?)")
SUITE = re.compile(r"[a-z][a-z0-9-]{0,39}")
URI = re.compile(r"(https?|file)://[A-Za-z0-9._~:/@%+-]{1,200}")
# what a path may hold to be written into apt's configuration (a quoted value)
CONF_PATH = re.compile(r"/[A-Za-z0-9._~/@%+,=-]{1,400}")
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
SOURCES = ("/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list")
SOURCES_LIMIT = 1 << 20
UPDATE_TIMEOUT = 600
DOWNLOAD_TIMEOUT = 3600  # 167 MB for linux-source-7.3, on a slow link


def check_package(name, what):
    """name when it is linux-source-X.Y or linux-config-X.Y; else UsageError."""
    if not isinstance(name, str) or not PACKAGE.fullmatch(name):
        shown = ascii(str(name))[1:-1][:80]
        raise UsageError(f"{what}: {shown}: not a package fetched from Debian's newer "
                         "suites (valid: linux-source-X.Y or linux-config-X.Y)")
    return name


def suites_of(text):
    """[(uri, suite)] of the deb entries of a sources file, deb822 or one-line."""
    out = []
    if re.search(r"^\s*(Types|URIs|Suites)\s*:", text, re.M | re.I):
        for stanza in re.split(r"\n\s*\n", text):
            fields = dict((k.lower(), v.split()) for k, v in re.findall(
                r"^([A-Za-z-]+)\s*:\s*(.*)$", stanza, re.M))
            if "deb" in fields.get("types", []) and "no" not in fields.get("enabled", []):
                out += [(u, s) for u in fields.get("uris", [])[:1]
                        for s in fields.get("suites", [])]
        return out
    for line in text.splitlines():
        words = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
        if len(words) >= 3 and words[0] == "deb":
            out.append((words[1], words[2]))
    return out


def archive_uri(paths=SOURCES):
    """The machine's Debian archive: the URI of its first suite that is no
    -security one, of a safe shape; UsageError naming the files when none."""
    for path in paths:
        try:
            text = safe_read.read_regular(path, "apt sources", SOURCES_LIMIT,
                                          missing=False)
        except UsageError:
            continue
        for uri, suite in suites_of((text or b"").decode(errors="replace")):
            if not suite.endswith("-security") and URI.fullmatch(uri):
                return uri.rstrip("/")
    raise UsageError(f"no Debian archive in {' or '.join(paths)} (a deb entry whose URI "
                     "is http://, https:// or file://): the newer suites are fetched from "
                     "the machine's own archive")


def native_arch():
    r = subprocess.run([tools.path("dpkg"), "--print-architecture"], capture_output=True,
                       text=True, stdin=subprocess.DEVNULL)
    arch = r.stdout.strip()
    return arch if re.fullmatch(r"[a-z0-9]{1,20}", arch) else "amd64"


def tail(text, n=1):
    """apt's reason in one line: its last E: line, else its last line."""
    lines = [x.strip() for x in (text or "").splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("E:")]
    return " | ".join((errors or lines)[-n:])[:300] or "?"


class Apt:
    """One suite's private apt under the folder state (state/SUITE's files)."""

    def __init__(self, state, suite, uri, arch=None):
        self.state, self.suite, self.uri = Path(state), suite, uri
        self.arch = arch or native_arch()
        for value, shape, what in ((str(self.state), CONF_PATH, "its folder"),
                                   (suite, SUITE, "the suite"), (uri, URI, "the archive"),
                                   (self.arch, re.compile(r"[a-z0-9]{1,20}"), "arch")):
            if not shape.fullmatch(value):
                raise UsageError(f"private apt: {what} {ascii(value)[1:-1][:80]} has a "
                                 "character apt's configuration would misread")

    def files(self):
        """{path under state: text} of its configuration; folders end in /."""
        s = self.state
        conf = "".join(f'{k} "{v}";\n' for k, v in (
            ("Dir::Etc", f"{s}/etc"), ("Dir::Etc::sourcelist", "sources.list"),
            ("Dir::Etc::sourceparts", "sources.list.d"), ("Dir::Etc::main", "apt.conf"),
            ("Dir::Etc::parts", "apt.conf.d"), ("Dir::Etc::preferences", "preferences"),
            ("Dir::Etc::preferencesparts", "preferences.d"),
            ("Dir::Etc::trusted", "trusted.gpg"), ("Dir::Etc::trustedparts", "trusted.gpg.d"),
            ("Dir::Etc::netrc", "auth.conf"), ("Dir::Etc::netrcparts", "auth.conf.d"),
            ("Dir::State", f"{s}/state"), ("Dir::State::lists", "lists/"),
            ("Dir::State::status", f"{s}/state/status"), ("Dir::Cache", f"{s}/cache"),
            ("Dir::Log", f"{s}/log"), ("Acquire::Languages", "none"),
            ("APT::Architecture", self.arch), ("APT::Architectures", self.arch)))
        line = (f"deb [arch={self.arch} signed-by={KEYRING}] {self.uri} {self.suite} main\n")
        return {"apt.conf": conf, "etc/sources.list": line, "etc/sources.list.d/": None,
                "etc/apt.conf.d/": None, "etc/preferences.d/": None,
                "etc/trusted.gpg.d/": None, "etc/auth.conf.d/": None,
                "state/lists/partial/": None, "state/status": "",
                "cache/archives/partial/": None, "log/": None}

    def prepare(self):
        """Its files written (they are ours alone: the state folder is the cache's)."""
        for rel, text in self.files().items():
            path = self.state / rel
            if text is None:
                path.mkdir(parents=True, exist_ok=True)
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + ".new")
            tmp.write_text(text)
            os.replace(tmp, path)

    def env(self):
        return dict(os.environ, APT_CONFIG=str(self.state / "apt.conf"),
                    DEBIAN_FRONTEND="noninteractive", LC_ALL="C")

    def argv(self, *args, tool="apt-get"):
        return [tools.path(tool, "private apt"), "-q", *args]

    def run(self, args, tool="apt-get", cwd=None, timeout=UPDATE_TIMEOUT):
        """(exit status, output) of the private apt; 124 when it timed out."""
        proc = lifecycle.popen(self.argv(*args, tool=tool), env=self.env(), cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace")
        with lifecycle.owned(proc):
            try:
                out, _ = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                lifecycle.stop(proc)
                return 124, f"E: timed out after {timeout} s"
        return proc.returncode, out

    def update(self):
        """None, or why the suite's lists could not be fetched."""
        rc, out = self.run(["update"])
        return None if rc == 0 else f"apt-get update exit {rc}: {tail(out)}"

    def show(self, package):
        """The version of package the suite has, or None."""
        rc, out = self.run(["show", "--no-all-versions", check_package(package, "private apt")],
                           tool="apt-cache")
        m = re.search(r"^Version: (\S+)$", out, re.M) if rc == 0 else None
        return m.group(1) if m else None

    def names(self, prefix):
        """The suite's packages named prefix + a version (linux-source-7.2, ...)."""
        rc, out = self.run(["pkgnames", prefix], tool="apt-cache")
        return sorted(n for n in out.split() if PACKAGE.fullmatch(n) and n.startswith(prefix))

    def download(self, package, into):
        """The .deb of package downloaded into the folder into; its path, or
        UsageError with apt's reason."""
        rc, out = self.run(["download", check_package(package, "private apt")], cwd=into,
                           timeout=DOWNLOAD_TIMEOUT)
        debs = sorted(Path(into).glob(f"{package}_*.deb"))
        if rc != 0 or len(debs) != 1:
            raise UsageError(f"{package}: apt-get download from {self.suite} failed "
                             f"(exit {rc}): {tail(out)}")
        return debs[0]


def unpack(deb, into):
    """dpkg-deb -x: the package's files under the folder into, nothing installed."""
    r = lifecycle.run([tools.path("dpkg-deb", "private apt"), "-x", str(deb), str(into)],
                      capture_output=True, text=True, errors="replace",
                      env=dict(os.environ, LC_ALL="C"))
    if r.returncode != 0:
        raise UsageError(f"{Path(deb).name}: dpkg-deb -x failed (exit {r.returncode}): "
                         f"{build.tail(r.stderr, 1)[:300]}")
