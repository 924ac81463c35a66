"""The machine fingerprint a results file carries in context.vdsobench.fingerprint.

Everything is read from files under `root` ("/" on a real run; a fixture tree in
tests). A file that cannot be read never raises: its value is None and, where it
helps, fp["unknown"][field] says why ("/sys/...: No such file or directory").
Per-cpu maps are keyed by the cpu number as a string, as they read back from JSON.
"""

import os
import re
import shlex
import socket
import subprocess
from pathlib import Path

from vdsobench_cli.cli import arch, build, tools
from vdsobench_cli.cli.errors import one_line

from vdsobench_cli.core import text, uarch, vocab

CPU_SYS = "sys/devices/system/cpu"
CLOCKSOURCE = "sys/devices/system/clocksource/clocksource0"
FLAGS_OF_INTEREST = ("constant_tsc", "nonstop_tsc", "rdtscp", "tsc_known_freq", "hypervisor")
# arm64's hwcaps ("Features"): ecv is FEAT_ECV, the ARM64_HAS_ECV the kernel's
# counter read keys on (cntvctss with it, else isb; mrs cntvct_el0:
# core/vocab.py TIMED_COUNTER); None on x86, which has no such line
FEATURES_OF_INTEREST = ("ecv",)
# Paravirtual clocksources name their hypervisor when nothing else does.
PARAVIRT_CLOCKSOURCES = {"kvm-clock": "KVM", "hyperv_clocksource_tsc_page": "Hyper-V",
                         "hyperv_clocksource_msr": "Hyper-V", "xen": "Xen"}
# /proc/cpuinfo keys on x86, and their arm64 counterparts.
CPUINFO_KEYS = {"vendor": ("vendor_id", "CPU implementer"),
                "family": ("cpu family", "CPU architecture"),
                "model": ("model", "CPU part"),
                "stepping": ("stepping", "CPU revision"),
                "microcode": ("microcode",),
                "model_name": ("model name",),
                # x86 only: arm64's "Features" has none of FLAGS_OF_INTEREST.
                "flags": ("flags",),
                "features": ("Features",)}


def read(root, rel):
    """(stripped text, None), or (None, the reason) when the file cannot be read."""
    try:
        return Path(root, rel).read_text(errors="replace").strip(), None
    except OSError as e:
        return None, f"/{rel}: {e.strerror or e}"


def as_int(text):
    """'25' -> 25, '0xd0c' -> 3340; None for anything else ('unknown', None)."""
    try:
        return int(text, 16) if text.lower().startswith("0x") else int(text)
    except (AttributeError, ValueError):
        return None


def parse_cpulist(text):
    """'0-2,8' -> [0, 1, 2, 8]; None when it is not a cpu list."""
    cpus = []
    try:
        for part in filter(None, text.split(",")):
            first, _, last = part.partition("-")
            cpus += range(int(first), int(last or first) + 1)
    except (AttributeError, ValueError):
        return None
    return cpus


def parse_cpuinfo(text):
    """{processor number: {key: value}}, one entry per block of /proc/cpuinfo."""
    blocks = {}
    for chunk in re.split(r"\n\s*\n", text):
        fields = {}
        for line in chunk.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        if fields.get("processor", "").isdigit():
            blocks[int(fields["processor"])] = fields
    return blocks


def describe_cpu(fields):
    def get(name):
        return next((fields[k] for k in CPUINFO_KEYS[name] if k in fields), None)
    flags, features = get("flags"), get("features")
    flags = None if flags is None else set(flags.split())
    features = None if features is None else set(features.split())
    cpu = {"vendor": get("vendor"), "family": as_int(get("family")),
           "model": as_int(get("model")), "stepping": as_int(get("stepping")),
           "microcode": get("microcode"), "model_name": get("model_name")}
    # the microarchitecture ("Zen 3"), None where core/uarch.py's table has no entry
    return dict(cpu, uarch=uarch.name(cpu),
                flags={**{f: None if flags is None else f in flags for f in FLAGS_OF_INTEREST},
                       **{f: None if features is None else f in features
                          for f in FEATURES_OF_INTEREST}})


def emulated_cpu():
    """None natively; under qemu-user (--arch arm64 on x86-64) the CPU the
    guest's code sees, which the host's cpu fields do not describe: qemu-user
    offers no FEAT_ECV (no HWCAP2_ECV in AT_HWCAP2; verify SKIPs cntvctss
    there), so the kernel's vDSO would read the counter without it."""
    t = arch.current()
    if t.native:
        return None
    flags = {f: False for f in FEATURES_OF_INTEREST} if t.name == "arm64" else {}
    return {"machine": t.machine, "emulator": "qemu-user", "flags": flags,
            "counter": vocab.own_counter(t.machine, flags)}


def cpu_info(root, cpus, unknown):
    text, why = read(root, "proc/cpuinfo")
    blocks = parse_cpuinfo(text or "")
    if not blocks:
        unknown["cpu"] = why or "/proc/cpuinfo: no processor blocks"
        return dict(describe_cpu({}), per_cpu={}, core_type={})
    first = describe_cpu(blocks[min(blocks)])
    # Only where a benchmark cpu differs from the first (big.LITTLE, mixed steppings).
    per_cpu = {str(c): describe_cpu(blocks[c]) for c in cpus
               if c in blocks and describe_cpu(blocks[c]) != first}
    # Intel hybrid parts show one model for P- and E-cores; the PMU devices tell them apart.
    core_type = {}
    for kind in ("core", "atom"):
        members = parse_cpulist(read(root, f"sys/devices/cpu_{kind}/cpus")[0]) or []
        core_type.update({str(c): kind for c in cpus if c in members})
    return dict(first, per_cpu=per_cpu, core_type=core_type)


def kernel_info(root):
    u = os.uname()
    release, version, machine = (read(root, f"proc/sys/kernel/{name}")[0]
                                 for name in ("osrelease", "version", "arch"))
    # vdso: the harness fills it (it knows which vDSO image it resolved).
    return {"release": release or u.release, "version": version or u.version,
            "machine": machine or u.machine, "vdso": None}


def clocksource_info(root, unknown):
    current, why = read(root, f"{CLOCKSOURCE}/current_clocksource")
    available, _ = read(root, f"{CLOCKSOURCE}/available_clocksource")
    if current is None:
        unknown["clocksource"] = why
    return {"current": current or None,
            "available": None if available is None else available.split()}


def hypervisor_info(root, flag, available, unknown):
    htype, _ = read(root, "sys/hypervisor/type")
    if htype:
        return {"present": True, "vendor": htype, "vendor_source": "/sys/hypervisor/type"}
    if not flag:
        return {"present": flag, "vendor": None, "vendor_source": None}
    dmi = " ".join(filter(None, (read(root, f"sys/class/dmi/id/{name}")[0]
                                 for name in ("sys_vendor", "product_name"))))
    if dmi:
        return {"present": True, "vendor": dmi, "vendor_source": "/sys/class/dmi/id"}
    for name in available or ():
        if name in PARAVIRT_CLOCKSOURCES:
            return {"present": True, "vendor": PARAVIRT_CLOCKSOURCES[name],
                    "vendor_source": f"clocksource {name}"}
    unknown["hypervisor.vendor"] = ("no /sys/hypervisor/type, no DMI ids, "
                                    "no paravirtual clocksource")
    return {"present": True, "vendor": None, "vendor_source": None}


def smt_info(root, cpus, unknown):
    active, why = read(root, f"{CPU_SYS}/smt/active")
    if active not in ("0", "1"):
        unknown["smt.active"] = why or f"/{CPU_SYS}/smt/active: {active!r}"
    siblings = {str(c): parse_cpulist(read(root, f"{CPU_SYS}/cpu{c}/topology/"
                                                 "thread_siblings_list")[0])
                for c in cpus}
    return {"active": {"0": False, "1": True}.get(active), "siblings": siblings}


def cpufreq_info(root, cpus, unknown):
    """(governor per cpu, cpufreq driver)."""
    governor, reasons = {}, []
    for c in cpus:
        governor[str(c)], why = read(root, f"{CPU_SYS}/cpu{c}/cpufreq/scaling_governor")
        reasons.append(why)
    driver = next(filter(None, (read(root, f"{CPU_SYS}/cpu{c}/cpufreq/scaling_driver")[0]
                                for c in cpus)), None)
    if cpus and not any(governor.values()):
        why = next(filter(None, reasons), "empty governor files")
        unknown["governor"] = f"{why} (no cpufreq driver: usual in a VM)"
    return governor, driver


def boost_info(root, cpus, unknown):
    """(True if frequency boost/turbo is on, False if off, None if unknown; where from)."""
    text, _ = read(root, f"{CPU_SYS}/cpufreq/boost")        # acpi-cpufreq
    if text in ("0", "1"):
        return text == "1", f"/{CPU_SYS}/cpufreq/boost"
    no_turbo, _ = read(root, f"{CPU_SYS}/intel_pstate/no_turbo")
    if no_turbo in ("0", "1"):
        if read(root, f"{CPU_SYS}/intel_pstate/turbo_pct")[0] == "0":
            return False, f"/{CPU_SYS}/intel_pstate/turbo_pct (no turbo range)"
        return no_turbo == "0", f"/{CPU_SYS}/intel_pstate/no_turbo"
    # amd-pstate (Linux 6.11+) and others: per policy.
    per_cpu = [read(root, f"{CPU_SYS}/cpu{c}/cpufreq/boost")[0] for c in cpus]
    known = [v for v in per_cpu if v in ("0", "1")]
    if known:
        return "1" in known, f"/{CPU_SYS}/cpuN/cpufreq/boost"
    unknown["boost"] = "no cpufreq/boost, intel_pstate/no_turbo or per-policy boost file"
    return None, None


def load_info(root, unknown):
    text, why = read(root, "proc/loadavg")
    try:
        load = [float(v) for v in text.split()[:3]]
    except (AttributeError, ValueError):
        load = []
    if len(load) != 3:
        unknown["load_average"] = why or f"/proc/loadavg: {text!r}"
        load = None
    online = parse_cpulist(read(root, f"{CPU_SYS}/online")[0])
    return load, len(online) if online else None


def hostname(root="/"):
    return read(root, "proc/sys/kernel/hostname")[0] or socket.gethostname()


def short_host(name=None):
    """The host name up to its first dot, reduced to [A-Za-z0-9_-], for file names."""
    short = re.sub(r"[^A-Za-z0-9_-]", "", (name or hostname()).split(".")[0])
    return short or "host"


def collect(cpus, root="/", repo_root=None):
    """The fingerprint of the machine for the benchmark cpus `cpus` (ints).

    "build" is build_info(repo_root) when repo_root is given, else None for the
    caller to fill; kernel.vdso and build.compiler are always the caller's.
    """
    # every string the machine gave (cpuinfo, uname, DMI, the host name)
    # escaped (core/text.py) before anything prints, draws or records it
    return text.cleaned(machine_facts(list(cpus), root, repo_root))


def machine_facts(cpus, root, repo_root):
    unknown = {}
    cpu = cpu_info(root, cpus, unknown)
    clocksource = clocksource_info(root, unknown)
    governor, driver = cpufreq_info(root, cpus, unknown)
    boost, boost_source = boost_info(root, cpus, unknown)
    load, online = load_info(root, unknown)
    return {
        "cpu": cpu,
        "kernel": kernel_info(root),
        "clocksource": clocksource,
        "hypervisor": hypervisor_info(root, cpu["flags"]["hypervisor"],
                                      clocksource["available"], unknown),
        "smt": smt_info(root, cpus, unknown),
        "governor": governor,
        "cpufreq_driver": driver,
        "boost": boost,
        "boost_source": boost_source,
        "load_average": load,
        "nr_cpus_online": online,
        "hostname": hostname(root),
        "build": None if repo_root is None else build_info(repo_root),
        "emulated_cpu": emulated_cpu(),
        "abi32": abi32_info(root),
        "unknown": unknown,
    }


def abi32_info(root):
    """{"runs": whether this kernel runs 32-bit x86 programs (the 32-bit
    vDSO's), "why" not}; None for another root than this machine's."""
    if root != "/":
        return None
    from vdsobench_cli.cli import abi32
    runs, why = abi32.probe()
    return {"runs": runs, "why": why}


# ---- the build: commit and compiler flags ---------------------------------------------

BAZELRC_OPTS = {"--copt": "copts", "--conlyopt": "conlyopts", "--cxxopt": "cxxopts",
                "-c": "compilation_mode", "--compilation_mode": "compilation_mode"}
BAZELRC_FIELDS = ("compilation_mode", "copts", "conlyopts", "cxxopts")


def git(repo_root, *args):
    """(stdout, None) or (None, why)."""
    # No optional index refresh: other commands may be committing meanwhile.
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")
    program = tools.find("git")
    if program is None:
        return None, tools.missing("git")
    try:
        r = subprocess.run([program, "-C", str(repo_root), *args], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, env=env, errors="replace")
    except OSError as e:
        return None, f"git: {e.strerror}"
    if r.returncode != 0:
        return None, one_line(r.stderr) or f"git {args[0]} exited {r.returncode}"
    return r.stdout, None


def bazelrc_flags(text):
    """Compiler flags of the plain build from .bazelrc text.

    Only `build` lines count: `build:asan` and other configs apply only when asked for.
    Bazel's default compilation mode is fastbuild.
    """
    found = {key: [] for key in BAZELRC_FIELDS}
    found["compilation_mode"] = "fastbuild"
    for line in text.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        if words[:1] != ["build"]:
            continue
        rest = iter(words[1:])
        for word in rest:
            name, eq, value = word.partition("=")
            key = BAZELRC_OPTS.get(name)
            if key is None:
                continue
            value = value if eq else next(rest, "")
            if key == "compilation_mode":
                found[key] = value
            else:
                found[key].append(value)
    return found


def build_info(repo_root):
    """The project commit and the compiler flags of the plain build.

    dirty: uncommitted changes outside results/ (results files written there do not
    change what is measured). compiler: None here; the caller fills it with the
    compiler version the benchmark binary reports. In a bundle, what the bundle
    recorded when it was built (there is no git tree to ask).
    """
    if build.bundled() and Path(repo_root) == build.ROOT:
        return text.cleaned(dict(build.bundle_manifest()["build"]))
    unknown = {}
    head, why = git(repo_root, "rev-parse", "HEAD")
    if head is None:
        unknown["commit"] = why
    status, why = git(repo_root, "status", "--porcelain", "--", ".", ":(exclude)results")
    if status is None:
        unknown["dirty"] = why
    rc, why = read(repo_root, ".bazelrc")
    if rc is None:
        unknown["flags"] = why
    head = head and head.strip()
    return text.cleaned({"commit": head or None, "short": head[:12] if head else None,
            "dirty": None if status is None else bool(status.strip()),
            "bazelrc": None if rc is None else ".bazelrc",
            **(bazelrc_flags(rc) if rc is not None else dict.fromkeys(BAZELRC_FIELDS)),
            "compiler": None, "unknown": unknown})
