"""The tree's version and configuration, written as its build would: VERSION,
PATCHLEVEL and SUBLEVEL of its Makefile (within VERSION_RANGE), what its
arch Kconfig selects (CONFIG_TIME_NS=y as Debian builds it), the KIMPORT_*
shape of its interfaces, and the generated headers the glue reads
(include/generated/autoconf.h, kimport_includes.h, kimport_desc.h)."""

import re

from vdsobench_cli.kimport import stage


# The Kconfig symbols the vDSO and the update path test, as the architecture
# selects them (config X86 / X86_64 / 64BIT); a select whose condition is one of
# TRUE counts (GCC has __int128, the build is 64-bit).
KCONFIG = ("GENERIC_GETTIMEOFDAY", "GENERIC_TIME_VSYSCALL", "GENERIC_VDSO_TIME_NS",
           "GENERIC_VDSO_OVERFLOW_PROTECT", "HAVE_GENERIC_VDSO", "ARCH_SUPPORTS_INT128",
           "GENERIC_VDSO_DATA_STORE", "ARCH_HAS_VDSO_TIME_DATA", "ARCH_HAS_VDSO_ARCH_DATA",
           "VDSO_GETRANDOM")
KCONFIG_BLOCKS = ("X86", "X86_64", "64BIT")
TRUE = {"X86", "X86_64", "64BIT", "CC_HAS_INT128"}
# Always set: the build is x86-64 with 4 KiB pages and HZ=250 (Debian's), and
# CONFIG_TIME_NS (default y, Debian's) wherever the architecture allows it.
# CONFIG_PARAVIRT_CLOCK too (KVM_GUEST selects it: Debian's, x86_64_defconfig's):
# the vDSO's pvclock read, which verify --clock-mode pvclock runs.
# CONFIG_COMPAT_32BIT_TIME (init/Kconfig: default !64BIT || COMPAT) as Debian's
# x86-64 and arm64 kernels have it (their IA32_EMULATION, COMPAT): the 32-bit
# vDSO's time32 entries exist only with it, and v7.x's gettimeofday.c has a
# BUILD_BUG_ON that says so; no 64-bit read or update path reads it.
BASE_CONFIG = {"X86": 1, "X86_64": 1, "64BIT": 1, "PAGE_SHIFT": 12, "HZ": 250,
               "PARAVIRT_CLOCK": 1, "COMPAT_32BIT_TIME": 1}
# arm64 (arch/arm64/Kconfig: config ARM64 selects, config 64BIT): Debian's
# arm64 kernel has 4 KiB pages (ARM64_4K_PAGES) and HZ=250 too
KCONFIG_ARCH = {
    "x86": (KCONFIG_BLOCKS, TRUE, BASE_CONFIG),
    "arm64": (("ARM64", "64BIT"), {"ARM64", "64BIT", "CC_HAS_INT128"},
              {"ARM64": 1, "64BIT": 1, "PAGE_SHIFT": 12, "HZ": 250,
               "COMPAT_32BIT_TIME": 1}),
}

# What differs between tree shapes, found by looking (name -> file, pattern): each
# becomes a KIMPORT_<name> define the glue reads (kernel_import/glue/writer.c).
FEATURES = {
    "TIME_DATA": ("include/vdso/datapage.h", r"struct\s+vdso_time_data\s*\{"),
    "TZ_STRUCT": ("include/vdso/datapage.h", r"struct\s+timezone\s+tz\s*;"),
    "AUX_CLOCK_DATA": ("include/vdso/datapage.h", r"\baux_clock_data\b"),
    "TK_COARSE_NSEC": ("include/linux/timekeeper_internal.h", r"\bcoarse_nsec\b"),
    "TK_LOCK_FUNCS": ("kernel/time/timekeeping_internal.h", r"\btimekeeper_lock_irqsave\b"),
}
# What a version of a tree may be (VERSION.PATCHLEVEL from 2.6 to 9.99, SUBLEVEL
# under 1000): anything else is refused before it reaches a table or a name.
VERSION_RANGE = ((2, 6), (9, 99))
SUBLEVEL_MAX = 999


def kernel_version(makefile):
    """(VERSION, PATCHLEVEL, SUBLEVEL, 'X.Y.Z<EXTRAVERSION>') of the top Makefile;
    None when one is missing or not plain decimal digits (int() would take
    '1_000' and other scripts' digits), or out of VERSION_RANGE and SUBLEVEL_MAX."""
    values = dict(re.findall(r"^(VERSION|PATCHLEVEL|SUBLEVEL|EXTRAVERSION)[ \t]*=[ \t]*"
                             r"([^\n]*?)[ \t]*$", makefile, re.M))
    texts = [values.get(k, "") for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL")]
    if not all(re.fullmatch(r"[0-9]{1,4}", t) for t in texts):
        return None
    v, p, s = map(int, texts)
    if (not VERSION_RANGE[0] <= (v, p) <= VERSION_RANGE[1] or p > VERSION_RANGE[1][1]
            or s > SUBLEVEL_MAX):
        return None
    # what a release names itself with (-rc1); nothing that would reach a terminal
    extra = re.match(r"[-A-Za-z0-9._+~]{0,40}", values.get("EXTRAVERSION", "")).group(0)
    return v, p, s, f"{v}.{p}.{s}{extra}"


def kconfig_selects(text, arch_dir="x86"):
    """The KCONFIG symbols the architecture's main config blocks select, and the
    selects left out because their condition is not known here."""
    blocks, true, _ = KCONFIG_ARCH[arch_dir]
    chosen, skipped, block = set(), [], None
    for line in text.splitlines():
        if m := re.match(r"^(?:menu)?config\s+(\w+)", line):
            block = m.group(1)
            continue
        if block not in blocks:
            continue
        m = re.match(r"^\s+select\s+(\w+)(?:\s+if\s+(.+?))?\s*(?:#.*)?$", line)
        if not m or m.group(1) not in KCONFIG:
            continue
        cond = m.group(2)
        if cond is None or cond.strip() in true:
            chosen.add(m.group(1))
        else:
            skipped.append(f"{m.group(1)} if {cond}")
    return chosen, skipped


def configuration(tree, arch_dir):
    """{CONFIG name: value} as the tree's build would set them for the vDSO."""
    chosen, skipped = kconfig_selects((tree / f"arch/{arch_dir}/Kconfig").read_text(
        errors="replace"), arch_dir)
    config = dict(KCONFIG_ARCH[arch_dir][2])
    config.update({name: 1 for name in sorted(chosen)})
    if "GENERIC_VDSO_TIME_NS" in chosen:
        config["TIME_NS"] = 1
    # v6.17's auxiliary clocks, where the tree's vDSO has them, as generic_6_17 is built
    datapage = tree / "include" / "vdso" / "datapage.h"
    if re.search(FEATURES["AUX_CLOCK_DATA"][1], datapage.read_text(errors="replace")):
        config["POSIX_AUX_CLOCKS"] = 1
    return config, skipped


def features(tree):
    found = []
    for name, (rel, pattern) in FEATURES.items():
        path = tree / rel
        if path.is_file() and re.search(pattern, path.read_text(errors="replace")):
            found.append(name)
    return found


def write_autoconf(tree, config, found):
    lines = ["/* include/generated/autoconf.h, written by `vdsobench import`: the",
             " * configuration the tree's vDSO and update path are built with (what",
             " * its arch Kconfig selects, TIME_NS as Debian sets it), and the",
             " * KIMPORT_* shape of its interfaces, which kernel_import/glue reads. */"]
    lines += [f"#define CONFIG_{k} {v}" for k, v in config.items()]
    lines += [f"#define KIMPORT_{name} 1" for name in found]
    stage.write_inside(tree, "include/generated/autoconf.h", "\n".join(lines) + "\n")


def write_includes(tree):
    """include/generated/kimport_includes.h: the #include lines of the tree's
    lib/vdso/gettimeofday.c, in its order, which reader.c and probe.c include
    before the read path itself (kernel_import/glue/reader.c says why)."""
    text = (tree / "lib" / "vdso" / "gettimeofday.c").read_text(errors="replace")
    lines = ["/* include/generated/kimport_includes.h, written by `vdsobench import`:",
             " * lib/vdso/gettimeofday.c's own #include lines, in its order */"]
    lines += re.findall(r"^#\s*include\s*<[^>]+>", text, re.M)
    stage.write_inside(tree, "include/generated/kimport_includes.h", "\n".join(lines) + "\n")


# arm64's compat vDSO: asm/unistd_compat_32.h as kbuild generates it
# (scripts/Makefile.asm-headers: scripts/syscallhdr.sh --prefix compat32_
# --abis common,32 over arch/arm64/tools/syscall_32.tbl: 6.12 has it, 6.1 not)
COMPAT_TABLE = "arch/arm64/tools/syscall_32.tbl"
COMPAT_UNISTD = "arch/arm64/include/generated/asm/unistd_compat_32.h"
SYSCALL_LINE = re.compile(r"^([0-9]{1,5})[ \t]+(?:common|32)[ \t]+([A-Za-z_][A-Za-z0-9_]{0,63})(?:[ \t]|$)",
                          re.M)


def write_compat_unistd(tree):
    """The compat vDSO's syscall numbers from the tree's own table, where it has
    one (earlier trees keep them in asm/unistd32.h, which import does not
    take: no compat variants there); True when written."""
    table = tree / COMPAT_TABLE
    if not table.is_file():
        return False
    lines = ["/* arch/arm64/include/generated/asm/unistd_compat_32.h, written by",
             " * `vdsobench import` from arch/arm64/tools/syscall_32.tbl as kbuild's",
             " * scripts/syscallhdr.sh --prefix compat32_ --abis common,32 writes it */",
             "#ifndef _ASM_UNISTD_COMPAT_32_H", "#define _ASM_UNISTD_COMPAT_32_H", ""]
    lines += [f"#define __NR_compat32_{name} {nr}"
              for nr, name in SYSCALL_LINE.findall(table.read_text(errors="replace"))]
    lines += ["", "#endif /* _ASM_UNISTD_COMPAT_32_H */"]
    stage.write_inside(tree, COMPAT_UNISTD, "\n".join(lines) + "\n")
    return True


def c_string(text):
    """A C string literal of any text, on one line: every byte but printable ASCII
    (a newline would end the #define and start a directive of the text's own),
    and the quote, backslash and '?' (trigraphs), as an octal escape."""
    return '"' + "".join(chr(b) if 0x20 <= b < 0x7f and chr(b) not in '"\\?' else f"\\{b:03o}"
                         for b in str(text).encode("utf-8", "replace")) + '"'


def write_desc(tree, version, probe, source_text, summary):
    lines = ["/* include/generated/kimport_desc.h, written by `vdsobench import` from",
             " * kernel_import/glue/probe.c's reading of the tree (writer.c checks the",
             " * sizes again when it is built) */"]
    values = {"VERSION": version[0], "PATCHLEVEL": version[1],
              "SUBLEVEL": min(version[2], 255),
              "SOURCE": c_string(source_text), "SUMMARY": c_string(summary),
              "DATA_SIZE": probe["data_size"], "NR_FIELDS": len(probe["fields"]),
              "HRES_CLOCKS": probe["hres_clocks"], "COARSE_CLOCKS": probe["coarse_clocks"],
              "RAW_CLOCKS": probe["raw_clocks"], "AUX_CLOCKS": probe["aux_clocks"],
              "HAS_GETRES": probe["has_getres"]}
    lines += [f"#define KIMPORT_{k} {v}" for k, v in values.items()]
    stage.write_inside(tree, "include/generated/kimport_desc.h", "\n".join(lines) + "\n")
