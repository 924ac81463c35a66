"""The variant table: every gettime core vdsobench carries.

A variant is layout x counter x inline (see docs/variants.md). The
three tables below are the data; vdso_variants() turns them into one
cc_library per variant and a generated registry listing them, like
tcmalloc's variants.bzl. Add a layout or a counter here and nowhere else.
Imported kernel trees (`vdsobench import`) join as layouts kernel:NAME
from kernel_import/imports.bzl, without an edit here.
"""

load(
    "//kernel_import:imports.bzl",
    "import_arches",
    "import_inlines",
    "import_ident",
    "import_variant",
    "imported_layouts",
    "is_imported",
)
load("//impls/kernel_lines:lines.bzl", "KERNEL_LINES")

# name -> (source, family) or (source, family, arches); a layout builds on
# every architecture unless it names its own. The
# family is the Debian tree whose kernel vDSO line (impls/kernel_lines/
# lines.bzl) builds the layout under --config=kline: the nearest Debian tree
# at or after the layout's version (6.1 for the v4.20-v5.6 ones, 6.12 for
# v6.10 on; the v6.15 and v6.17 ones have no newer Debian tree).
LAYOUTS = {
    "x86_gtod": ("layouts/x86_gtod.c", "6.1"),
    "x86_gtod_raw_branch": ("layouts/x86_gtod_raw_branch.c", "6.1"),
    "x86_gtod_raw_copy": ("layouts/x86_gtod_raw_copy.c", "6.1"),
    "x86_gtod_ts_multshift": ("layouts/x86_gtod_ts_multshift.c", "6.1"),
    # arm64's compat vDSO is transcribed from v6.10 on (arch/arm64_compat.h)
    "generic_5_3": ("layouts/generic_5_3.c", "6.1", ["x86_64", "aarch64", "x86_32"]),
    "generic_6_10": ("layouts/generic_6_10.c", "6.12"),
    "generic_6_15": ("layouts/generic_6_15.c", "6.12"),
    "generic_6_17": ("layouts/generic_6_17.c", "6.12"),
    "generic_timens": ("layouts/generic_timens.c", "6.1"),
    "generic_timens_switch": ("layouts/generic_timens_switch.c", "6.1"),
    # known bad under pvclock and hvclock alone: x86's paravirtual reads without retries
    "generic_vclock_noretry": ("layouts/generic_vclock_noretry.c", "6.12", ["x86_64", "x86_32"]),
}

# name -> the architecture whose instructions it reads ("any": fake; x86_64's
# are x86's, which 32-bit x86 reads too: COUNTER_ARCHES).
COUNTERS = {
    "rdtsc": "x86_64",
    "lfence_rdtsc": "x86_64",
    "mfence_rdtsc": "x86_64",
    "rdtscp": "x86_64",
    "isb_cntvct_isb": "aarch64",
    "isb_cntvct_dep": "aarch64",
    "cntvctss": "aarch64",
    "isb_mrrc_isb": "armv7",
    "fake": "any",
}

# name -> value of VDSO_INLINE_ALWAYS
INLINES = {
    "always": 1,
    "auto": 0,
}

# armv7: 32-bit arm, for arm64's compat vDSO (AArch32 on ARMv8)
ARCHES = ["x86_64", "aarch64", "x86_32", "armv7"]

# a counter's architecture -> every one that runs its instructions: the
# 32-bit vDSO (arch/x86/entry/vdso/vdso32) reads the TSC with the same
# RDTSC and RDTSCP as the 64-bit one
COUNTER_ARCHES = {"x86_64": ["x86_64", "x86_32"], "any": ARCHES}

# VDSO_TABLE_VARIANTS_CAPACITY is a multiple of this (vdso_table_sizes())
VARIANTS_GRAIN = 256

# and VDSO_TABLE_COUNTERS_CAPACITY a multiple of this
COUNTERS_GRAIN = 16

def variant_name(layout, counter, inline):
    return "%s+%s+%s" % (layout, counter, inline)

def variant_prefix(layout, counter, inline):
    return "%s__%s__%s" % (import_ident(layout), counter, inline)

def variants_for_arch(arch):
    """Every (layout, counter, inline) that builds on arch, in table order."""
    out = []
    own = [l for l in LAYOUTS if arch in _layout_arches(l)]
    for layout in own + imported_layouts(arch):
        for counter in COUNTERS:
            if arch not in _counter_arches(counter):
                continue
            for inline in import_inlines(layout, counter, INLINES, arch):
                out.append((layout, counter, inline))
    return out

def _all_variants():
    seen = {}
    out = []
    for arch in ARCHES:
        for v in variants_for_arch(arch):
            if v not in seen:
                seen[v] = True
                out.append(v)
    return out

def _variant_copts(layout, counter, inline):
    return [
        "-DVDSO_PREFIX=" + variant_prefix(layout, counter, inline),
        "-DVDSO_LAYOUT=" + layout,
        "-DVDSO_COUNTER=" + counter,
        "-DVDSO_INLINE=" + inline,
        "-DVDSO_COUNTER_HEADER=impls/counters/%s.h" % counter,
        "-DVDSO_INLINE_ALWAYS=%d" % INLINES.get(inline, 0),  # image: its own
    ]

def _kline(layout, counter):
    """The kernel line of the layout's family under --config=kline (x86 code
    generation: only where the counter is x86's, or the fake one on x86)."""
    line = []
    if layout in LAYOUTS:
        family = LAYOUTS[layout][1]
        if family not in KERNEL_LINES:
            fail("layout %s: family %r has no kernel line in impls/kernel_lines/lines.bzl " %
                 (layout, family) + "(valid: %s)" % ", ".join(sorted(KERNEL_LINES)))
        line = KERNEL_LINES[family]
    if not line or COUNTERS[counter] not in ("x86_64", "any"):
        return []
    return select({
        "//impls/kernel_lines:kline_x86_64": line,
        "//conditions:default": [],
    })

def _layout_arches(layout):
    return (LAYOUTS[layout][2:] or [ARCHES])[0]

def _counter_arches(counter):
    arch = COUNTERS[counter]
    return COUNTER_ARCHES.get(arch, [arch])

def _cpus(arches):
    """target_compatible_with for the architectures given: nothing for all of
    them, one constraint for one, and a select() for some."""
    if len(arches) == len(ARCHES):
        return []
    if len(arches) == 1:
        return ["@platforms//cpu:" + arches[0]]
    cases = {"@platforms//cpu:" + a: [] for a in arches}
    cases["//conditions:default"] = ["@platforms//:incompatible"]
    return select(cases)

def _layout_compat(layout, counter):
    """Where a variant builds: its counter's architectures and its layout's."""
    for arch in _layout_arches(layout):
        if arch not in ARCHES:
            fail("layout %s: %r is not an architecture (valid: %s)" %
                 (layout, arch, ", ".join(ARCHES)))
    return _cpus([a for a in _counter_arches(counter) if a in _layout_arches(layout)])

def _link_only_impl(ctx):
    return [CcInfo(linking_context = ctx.attr.dep[CcInfo].linking_context)]

# A variant's library as its table links it: its objects and what they link,
# without its headers. An imported tree's headers would otherwise reach every
# compile below the table (the harness, each variant's loops) and, being part
# of those actions' keys, recompile them all at each import.
_link_only = rule(
    implementation = _link_only_impl,
    attrs = {"dep": attr.label(providers = [CcInfo])},
)

def _per_variant(name, srcs, with_layout, symbol, ctype, header, table, deps,
                 hdrs = []):
    """One cc_library per variant compiled from srcs (and its layout source
    when with_layout) with its defines, and
    `name`: those of the host architecture plus a generated table of each
    one's `<prefix>__<symbol>` (a `ctype`), in registry order."""
    libs = {}
    for layout, counter, inline in _all_variants():
        prefix = variant_prefix(layout, counter, inline)
        lib = "%s_%s" % (name, prefix)
        libs[(layout, counter, inline)] = lib + "_link"
        compat = (_cpus(import_arches(layout, _counter_arches(counter), inline))
                  if is_imported(layout) else _layout_compat(layout, counter))
        _link_only(name = lib + "_link", dep = ":" + lib, target_compatible_with = compat)
        if with_layout and is_imported(layout):
            import_variant(lib, layout, _variant_copts(layout, counter, inline), deps, inline,
                           compat)
            continue
        native.cc_library(
            name = lib,
            srcs = srcs + ([LAYOUTS[layout][0]] if with_layout else []),
            copts = _variant_copts(layout, counter, inline) + _kline(layout, counter),
            deps = deps,
            linkstatic = True,
            target_compatible_with = compat,
        )

    for arch in ARCHES:
        prefixes = [variant_prefix(*v) for v in variants_for_arch(arch)]
        native.genrule(
            name = "%s_%s_c" % (name, arch),
            outs = ["%s_%s.c" % (name, arch)],
            tools = ["//impls:gen_registry.py"],
            cmd = ("/usr/bin/python3 $(location //impls:gen_registry.py) " +
                   "$@ '%s' '%s' %s %s " % (header, ctype, symbol, table) +
                   " ".join(prefixes)),
        )

    native.cc_library(
        name = name,
        srcs = select({
            "@platforms//cpu:" + arch: [":%s_%s.c" % (name, arch)]
            for arch in ARCHES
        }),
        hdrs = hdrs,
        deps = deps + select({
            "@platforms//cpu:" + arch: [
                ":" + libs[v]
                for v in variants_for_arch(arch)
            ]
            for arch in ARCHES
        }),
        linkstatic = True,
        visibility = ["//visibility:public"],
    )

def vdso_table_sizes(name):
    """`name`: a header-only cc_library with impls/<name>.h, the table's
    sizes as constants, so that C code sizes its arrays from the table
    (the simulated kernel's attach slots) instead of a number someone must
    remember to raise; and `name`_capacity, impls/<name>_capacity.h, the
    same rounded up for the harness's subjects."""
    most = 0
    for arch in ARCHES:
        most = max(most, len(variants_for_arch(arch)))
    _header(name, [
        "#define VDSO_TABLE_LAYOUTS %d" % len(LAYOUTS),
        "#define VDSO_TABLE_COUNTERS %d" % len(COUNTERS),
        "#define VDSO_TABLE_INLINES %d" % len(INLINES),
        "/* the most variants any one architecture builds */",
        "#define VDSO_TABLE_VARIANTS_MAX %d" % most,
    ])

    # Rounded up: an import's dozen variants (or a new counter) then leave
    # this header as it was, where the exact count recompiled every file
    # including it (each variant's loops, the harness) for every import.
    _header(name + "_capacity", [
        "/* at least VDSO_TABLE_COUNTERS, a multiple of %d */" % COUNTERS_GRAIN,
        "#define VDSO_TABLE_COUNTERS_CAPACITY %d" % (
            (len(COUNTERS) + COUNTERS_GRAIN - 1) // COUNTERS_GRAIN * COUNTERS_GRAIN),
        "/* at least VDSO_TABLE_VARIANTS_MAX, a multiple of %d */" % VARIANTS_GRAIN,
        "#define VDSO_TABLE_VARIANTS_CAPACITY %d" % (
            (most + VARIANTS_GRAIN - 1) // VARIANTS_GRAIN * VARIANTS_GRAIN),
    ])

def _header(name, lines):
    native.genrule(
        name = name + "_h",
        outs = [name + ".h"],
        cmd = "printf '%s\\n' > $@" % "\\n".join(
            ["/* generated from impls/variants.bzl: do not edit */"] + lines),
    )
    native.cc_library(
        name = name,
        hdrs = [":" + name + ".h"],
        visibility = ["//visibility:public"],
    )

def vdso_variants(name, deps):
    """One cc_library per variant (variant_<prefix>), plus `name`: the
    registry of the host's, exporting vdso_variants[] (impls/registry.h).

    Args:
      name: the registry cc_library.
      deps: what every variant links (the simulated kernel, headers).
    """
    _per_variant(
        name = "variant",
        srcs = [],
        with_layout = True,
        symbol = "variant",
        ctype = "const struct vdso_variant",
        header = "impls/common/variant.h",
        table = "vdso_variants",
        deps = deps,
    )
    native.cc_library(
        name = name,
        srcs = ["registry.c"],
        hdrs = ["registry.h"],
        deps = deps + [":variant"],
        linkstatic = True,
        visibility = ["//visibility:public"],
    )

def vdso_per_variant(name, srcs, symbol, ctype, header, table, deps, hdrs = []):
    """Compile srcs once per variant, with that variant's defines (so
    VDSO_SYM() names its symbols and VDSO_COUNTER_HEADER its counter),
    and list each one's `<prefix>__<symbol>` in `table[]`, in the
    registry's order (see gen_registry.py): code that must call a
    variant's entry points directly, as the vDSO's own callers do.
    """
    _per_variant(name, srcs, False, symbol, ctype, header, table, deps, hdrs)
