"""The microarchitecture of a CPU, from the ids /proc/cpuinfo gives.

A results file's fingerprint (scripts/vdsobench_cli/measure/fingerprint.py) keeps the
CPU as cpuinfo has it: vendor, family, model, stepping, microcode and model
name on x86; on arm64 the implementer, architecture, part and revision in
the same fields (vendor "0x41", family 8, model 0xd0c, stepping 1). The model
name alone does not tell CPUs apart ("AMD EPYC" is a Zen 3 and a Zen 5 under
KVM), so every machine is named by its microarchitecture:

    label(cpu)  "Zen 3 (AMD EPYC, 25/1/1)": the name, then the model name (or
                the vendor) and family/model/stepping as cpuinfo prints them
    name(cpu)   "Zen 3", or None for a CPU the table does not know
    slug(cpu)   "zen3": the name as a Slurm node feature (lowercase letters
                and digits), or None for a CPU the table does not know

An unknown CPU is labelled by its ids ("AuthenticAMD family 25 model 200
stepping 0", the model in hex for arm64 parts as the kernel prints them),
never by its model name alone. A fingerprint that already carries "uarch"
(written at run time) keeps that name.

Sources, so that the table can be checked and extended:
- AMD: the Zen generations in Linux's arch/x86/kernel/cpu/amd.c
  (bsp_init_amd(), X86_FEATURE_ZEN1..ZEN6 by family and model range); the
  kernel counts Zen+ as Zen 1, which is split here by its two models (0x08
  Pinnacle Ridge/Colfax, 0x18 Picasso).
- Intel: arch/x86/include/asm/intel-family.h; the Skylake server model 0x55
  is Cascade Lake from stepping 5 and Cooper Lake from stepping 10 (the
  header's comments give 7 and 11, the steppings of the shipping parts),
  model 0x9E is Coffee Lake from stepping 10, as that header lists.
- arm64: the MIDR implementer and part numbers of arch/arm64/include/asm/
  cputype.h.
"""

import re
from collections import namedtuple

from vdsobench_cli.core.text import printable

AMD, INTEL = "AuthenticAMD", "GenuineIntel"

# vendor: cpuinfo's vendor_id on x86, the MIDR implementer (an int) on arm64;
# family None matches any (arm64's "CPU architecture" says nothing);
# models and steppings: tuples of (first, last) inclusive ranges, None = any.
Entry = namedtuple("Entry", "vendor family models steppings name")


def one(*values):
    return tuple((v, v) for v in values)


def _amd(family, ranges, name):
    return Entry(AMD, family, tuple(ranges), None, name)


def _intel(models, name, steppings=None, family=6):
    return Entry(INTEL, family, one(*models), steppings, name)


def _arm(implementer, part, name):
    return Entry(implementer, None, one(part), None, name)


# First match wins: narrower entries (a stepping range, Zen+'s two models)
# come before the wider ones they carve out of.
TABLE = (
    # AMD family 0x17
    _amd(0x17, one(0x08, 0x18), "Zen+"),
    _amd(0x17, ((0x00, 0x2f), (0x50, 0x5f)), "Zen"),
    _amd(0x17, ((0x30, 0x4f), (0x60, 0x7f), (0x90, 0x91), (0xa0, 0xaf)), "Zen 2"),
    # AMD family 0x19
    _amd(0x19, ((0x00, 0x0f), (0x20, 0x5f)), "Zen 3"),
    _amd(0x19, ((0x10, 0x1f), (0x60, 0xaf)), "Zen 4"),
    # AMD family 0x1a
    _amd(0x1a, ((0x00, 0x2f), (0x40, 0x4f), (0x60, 0x7f)), "Zen 5"),
    _amd(0x1a, ((0x50, 0x5f), (0x80, 0xaf), (0xc0, 0xcf)), "Zen 6"),
    # Intel family 6, big cores
    _intel((0x3c, 0x45, 0x46), "Haswell"),
    _intel((0x3f,), "Haswell-EP"),
    _intel((0x3d, 0x47), "Broadwell"),
    _intel((0x4f,), "Broadwell-EP"),
    _intel((0x56,), "Broadwell-DE"),
    _intel((0x4e, 0x5e), "Skylake"),
    _intel((0x55,), "Skylake-SP", steppings=((0, 4),)),
    _intel((0x55,), "Cascade Lake", steppings=((5, 9),)),
    _intel((0x55,), "Cooper Lake", steppings=((10, 15),)),
    # 0x8e's steppings are shared by Kaby, Amber, Coffee, Whiskey and Comet
    # Lake mobile parts: one name, the label's ids say the stepping
    _intel((0x9e,), "Coffee Lake", steppings=((10, 13),)),
    _intel((0x8e, 0x9e), "Kaby Lake"),
    _intel((0xa5, 0xa6), "Comet Lake"),
    _intel((0x7d, 0x7e), "Ice Lake"),
    _intel((0x6a,), "Ice Lake-SP"),
    _intel((0x6c,), "Ice Lake-D"),
    _intel((0xa7,), "Rocket Lake"),
    _intel((0x8c, 0x8d), "Tiger Lake"),
    _intel((0x8f,), "Sapphire Rapids"),
    _intel((0xcf,), "Emerald Rapids"),
    _intel((0xad,), "Granite Rapids"),
    _intel((0xae,), "Granite Rapids-D"),
    _intel((0x01,), "Diamond Rapids", family=19),
    # Intel family 6, hybrid
    _intel((0x97, 0x9a), "Alder Lake"),
    _intel((0xb7, 0xba, 0xbf), "Raptor Lake"),
    _intel((0xaa, 0xac), "Meteor Lake"),
    _intel((0xb5, 0xc5, 0xc6), "Arrow Lake"),
    _intel((0xbd,), "Lunar Lake"),
    # Intel family 6, E-cores only
    _intel((0xbe,), "Alder Lake-N"),
    _intel((0xaf,), "Sierra Forest"),
    _intel((0xdd,), "Clearwater Forest"),
    # arm64: Arm Ltd (0x41)
    _arm(0x41, 0xd03, "Cortex-A53"),
    _arm(0x41, 0xd05, "Cortex-A55"),
    _arm(0x41, 0xd07, "Cortex-A57"),
    _arm(0x41, 0xd08, "Cortex-A72"),
    _arm(0x41, 0xd0b, "Cortex-A76"),
    _arm(0x41, 0xd0c, "Neoverse N1"),
    _arm(0x41, 0xd0d, "Cortex-A77"),
    _arm(0x41, 0xd40, "Neoverse V1"),
    _arm(0x41, 0xd41, "Cortex-A78"),
    _arm(0x41, 0xd47, "Cortex-A710"),
    _arm(0x41, 0xd48, "Cortex-X2"),
    _arm(0x41, 0xd49, "Neoverse N2"),
    _arm(0x41, 0xd4e, "Cortex-X3"),
    _arm(0x41, 0xd4f, "Neoverse V2"),
    _arm(0x41, 0xd81, "Cortex-A720"),
    _arm(0x41, 0xd82, "Cortex-X4"),
    _arm(0x41, 0xd84, "Neoverse V3"),
    _arm(0x41, 0xd8e, "Neoverse N3"),
    # arm64: other implementers
    _arm(0x46, 0x001, "A64FX"),
    _arm(0x48, 0xd01, "TaiShan v110"),
    _arm(0x6d, 0xd49, "Azure Cobalt 100 (Neoverse N2)"),
    _arm(0xc0, 0xac3, "AmpereOne"),
    _arm(0xc0, 0xac4, "AmpereOne A"),
)

# What a label says for the vendor where the model name is missing.
VENDOR_NAMES = {AMD: "AMD", INTEL: "Intel", "HygonGenuine": "Hygon",
                0x41: "Arm", 0x46: "Fujitsu", 0x48: "HiSilicon", 0x4e: "NVIDIA",
                0x51: "Qualcomm", 0x61: "Apple", 0x6d: "Microsoft", 0xc0: "Ampere"}


def implementer(vendor):
    """arm64's "CPU implementer" ('0x41') as an int; None for an x86 vendor_id."""
    if isinstance(vendor, str) and vendor.lower().startswith("0x"):
        try:
            return int(vendor, 16)
        except ValueError:
            return None
    return None


def _within(value, ranges):
    return ranges is None or (value is not None and any(lo <= value <= hi for lo, hi in ranges))


def lookup(cpu):
    """The TABLE entry of a cpu dict (vendor, family, model, stepping), or None."""
    cpu = cpu or {}
    vendor = cpu.get("vendor")
    arm = implementer(vendor)
    for e in TABLE:
        if (e.vendor == (arm if arm is not None else vendor)
                and (e.family is None or e.family == cpu.get("family"))
                and _within(cpu.get("model"), e.models)
                and _within(cpu.get("stepping"), e.steppings)):
            return e
    return None


def name(cpu):
    """'Zen 3': the "uarch" the fingerprint recorded, else the table's; None if unknown."""
    cpu = cpu or {}
    if cpu.get("uarch"):
        return printable(cpu["uarch"])
    entry = lookup(cpu)
    return entry.name if entry else None


def slug(cpu):
    """'zen3', 'sapphirerapids', 'neoversen1': name() for a Slurm node feature;
    None for a CPU the table does not know (no feature rather than a made-up one)."""
    text = name(cpu)
    if text is None:
        return None
    return re.sub(r"[^a-z0-9]", "", text.lower().replace("+", "plus")) or None


def short_model(model_name):
    """'Intel(R) Xeon(R) Platinum 8480+' -> 'Intel Xeon Platinum 8480+';
    '11th Gen Intel(R) Core(TM) i7-1165G7 @ 2.80GHz' -> '11th Gen Intel Core i7-1165G7'."""
    text = re.sub(r"\((R|TM|tm|r)\)|\bCPU\b|\bProcessor\b|@.*$|\s\d+-Core\b", " ",
                  model_name or "")
    return printable(" ".join(text.split())) or "unknown CPU"


def _model_text(cpu):
    """The model as cpuinfo prints it: decimal on x86, hex for an arm64 part."""
    model = cpu.get("model")
    if model is None:
        return "?"
    return f"0x{model:x}" if implementer(cpu.get("vendor")) is not None else str(model)


def ids(cpu):
    """'25/1/1': family/model/stepping ('?' for what cpuinfo did not give)."""
    cpu = cpu or {}
    return "/".join("?" if v is None else v for v in (
        None if cpu.get("family") is None else str(cpu["family"]),
        None if cpu.get("model") is None else _model_text(cpu),
        None if cpu.get("stepping") is None else str(cpu["stepping"])))


def unknown_text(cpu):
    """'AuthenticAMD family 25 model 200 stepping 0' (the fields known), or
    'unknown CPU' when cpuinfo gave none of them."""
    cpu = cpu or {}
    parts = [str(cpu["vendor"])] if cpu.get("vendor") else []
    for key, value in (("family", cpu.get("family")), ("model", cpu.get("model")),
                       ("stepping", cpu.get("stepping"))):
        if value is not None:
            parts.append(f"{key} {_model_text(cpu) if key == 'model' else value}")
    return " ".join(parts) or "unknown CPU"


def _maker(cpu):
    """The short model name, else the vendor's name, else None."""
    if cpu.get("model_name"):
        return short_model(cpu["model_name"])
    vendor = cpu.get("vendor")
    arm = implementer(vendor)
    return VENDOR_NAMES.get(arm if arm is not None else vendor, vendor)


def label(cpu):
    """'Zen 3 (AMD EPYC, 25/1/1)'; 'Neoverse N1 (Arm, 8/0xd0c/1)'; an unknown CPU
    'AuthenticAMD family 25 model 200 stepping 0 (AMD EPYC)' or '0x41 family 8
    model 0xd99 stepping 1 (Arm)'."""
    cpu = cpu or {}
    known, maker = name(cpu), _maker(cpu)
    if known:
        return printable(f"{known} ({maker + ', ' if maker else ''}{ids(cpu)})")
    return printable(unknown_text(cpu) + (f" ({maker})" if maker else ""))


def machine(fp):
    """A fingerprint (scripts/vdsobench_cli/measure/fingerprint.py) -> the machine every
    table, baseline and fleet report names: the CPU's ids, its name and label()
    ("Zen 3 (AMD EPYC, 25/1/1)"), microcode, kernel release, and the
    hypervisor's vendor only where one is present (a bare-metal host may still
    report a vendor string in its DMI tables)."""
    fp = fp or {}
    cpu, kernel, hyp = fp.get("cpu") or {}, fp.get("kernel") or {}, fp.get("hypervisor") or {}
    return {"vendor": cpu.get("vendor"), "family": cpu.get("family"), "model": cpu.get("model"),
            "stepping": cpu.get("stepping"), "model_name": cpu.get("model_name"),
            "microcode": cpu.get("microcode"), "uarch": name(cpu), "label": label(cpu),
            "kernel": kernel.get("release"),
            "hypervisor": hyp.get("vendor") if hyp.get("present") else None}
