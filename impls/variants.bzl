"""The variant table: every gettime core vdsobench carries.

A variant is layout x counter x inline (see ../shared/VARIANTS.md). The
three tables below are the data; vdso_variants() turns them into one
cc_library per variant and a generated registry listing them, like
tcmalloc's variants.bzl. Add a layout or a counter here and nowhere else.
"""

# name -> source; every layout builds on every architecture.
LAYOUTS = {
    "x86_gtod": "layouts/x86_gtod.c",
    "x86_gtod_raw_branch": "layouts/x86_gtod_raw_branch.c",
    "x86_gtod_raw_copy": "layouts/x86_gtod_raw_copy.c",
    "x86_gtod_ts_multshift": "layouts/x86_gtod_ts_multshift.c",
    "generic_5_3": "layouts/generic_5_3.c",
    "generic_6_10": "layouts/generic_6_10.c",
    "generic_timens": "layouts/generic_timens.c",
    "generic_timens_switch": "layouts/generic_timens_switch.c",
}

# name -> the architecture whose instructions it reads ("any": fake).
COUNTERS = {
    "rdtsc": "x86_64",
    "lfence_rdtsc": "x86_64",
    "mfence_rdtsc": "x86_64",
    "rdtscp": "x86_64",
    "isb_cntvct_isb": "aarch64",
    "isb_cntvct_dep": "aarch64",
    "cntvctss": "aarch64",
    "fake": "any",
}

# name -> value of VDSO_INLINE_ALWAYS
INLINES = {
    "always": 1,
    "auto": 0,
}

ARCHES = ["x86_64", "aarch64"]

def variant_name(layout, counter, inline):
    return "%s+%s+%s" % (layout, counter, inline)

def variant_prefix(layout, counter, inline):
    return "%s__%s__%s" % (layout, counter, inline)

def variants_for_arch(arch):
    """Every (layout, counter, inline) that builds on arch, in table order."""
    out = []
    for layout in LAYOUTS:
        for counter, counter_arch in COUNTERS.items():
            if counter_arch not in (arch, "any"):
                continue
            for inline in INLINES:
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

def vdso_variants(name, deps):
    """One cc_library per variant, plus `name`: the registry of the host's.

    Args:
      name: the registry cc_library; it links every variant of the target
        architecture and exports vdso_variants[] (impls/registry.h).
      deps: what every variant links (the simulated kernel, headers).
    """
    for layout, counter, inline in _all_variants():
        prefix = variant_prefix(layout, counter, inline)
        counter_arch = COUNTERS[counter]
        compat = []
        if counter_arch != "any":
            compat = ["@platforms//cpu:" + counter_arch]
        native.cc_library(
            name = "variant_" + prefix,
            srcs = [LAYOUTS[layout]],
            copts = [
                "-DVDSO_PREFIX=" + prefix,
                "-DVDSO_LAYOUT=" + layout,
                "-DVDSO_COUNTER=" + counter,
                "-DVDSO_INLINE=" + inline,
                "-DVDSO_COUNTER_HEADER=impls/counters/%s.h" % counter,
                "-DVDSO_INLINE_ALWAYS=%d" % INLINES[inline],
            ],
            deps = deps,
            linkstatic = True,
            target_compatible_with = compat,
        )

    for arch in ARCHES:
        prefixes = [variant_prefix(*v) for v in variants_for_arch(arch)]
        native.genrule(
            name = "%s_%s_c" % (name, arch),
            outs = ["%s_%s.c" % (name, arch)],
            tools = ["gen_registry.py"],
            cmd = "/usr/bin/python3 $(location gen_registry.py) $@ " +
                  " ".join(prefixes),
        )

    native.cc_library(
        name = name,
        srcs = select({
            "@platforms//cpu:" + arch: [":%s_%s.c" % (name, arch)]
            for arch in ARCHES
        }) + ["registry.c"],
        hdrs = ["registry.h"],
        deps = deps + select({
            "@platforms//cpu:" + arch: [
                ":variant_" + variant_prefix(*v)
                for v in variants_for_arch(arch)
            ]
            for arch in ARCHES
        }),
        linkstatic = True,
        visibility = ["//visibility:public"],
    )
