"""How the imported kernel trees join the variant table (impls/variants.bzl).

An import (`vdsobench import SOURCE --name NAME`) is a layout named
kernel:NAME, built on its architecture only, for every counter and inline
choice of the table like any layout. Its C identifier (IMPORTS[layout]
["ident"], kernel_<NAME with other characters than letters and digits
escaped>) names its libraries and symbols. Each variant is two libraries:

  <lib>_tree  the tree's own code, kernel_import/glue/reader.c (the tree's
              lib/vdso/gettimeofday.c) and writer.c (its
              kernel/time/vsyscall.c), compiled against kernel_import/shim
              with the tree's headers, as the kernel's build orders them,
              and with the code generation of the tree's own kbuild line
              for vclock_gettime.o when the import ran kbuild (kline:
              scripts/vdsobench_cli/kimport/kbuild.py; last on the line, so it
              wins over Bazel's defaults and the project's);
  <lib>       kernel_import/glue/variant.c, the variant contract, compiled
              as a layout source with the tree's configuration and
              kimport_desc.h.
"""

load("@vdso_imports//:imports.bzl", "IMPORTS")
load(":copts.bzl", "COMPAT_COPTS", "TREE_COPTS")

# An import whose 32-bit vDSO builds (IMPORTS[layout]["compat"]) builds on
# that architecture too, with the same variant names as on its own:
#   an arm64 tree's compat vDSO on armv7: arch/arm64/kernel/vdso32's read
#     path, the tree's asm/vdso/compat_gettimeofday.h, with COMPAT_COPTS and
#     the 32-bit compiler (--config=arm);
#   an x86-64 tree's vdso32 on x86_32: arch/x86/entry/vdso/vdso32's, the
#     same arch header with BUILD_VDSO32 and the tree's fake_32bit_build.h,
#     which reader.c takes for i386 as vdso32/vclock_gettime.c does
#     (--config=i386's compiler, nothing more on the line). Its +image
#     variants on x86_32 (IMPORTS[layout]["image32"]) map kbuild's
#     vdso32.so instead of its vdso64.so (include/generated/kimport_image32.h).
COMPAT_ARCHES = {"aarch64": "armv7", "x86_64": "x86_32"}
COMPAT_ARCH = COMPAT_ARCHES["aarch64"]  # the one with COMPAT_COPTS

def _arches(layout):
    imp = IMPORTS[layout]
    compat = COMPAT_ARCHES.get(imp["arch"])
    return [imp["arch"]] + ([compat] if compat and imp.get("compat") else [])

def imported_layouts(arch):
    """The imports that build on arch (x86_64, aarch64, x86_32, armv7), in name order."""
    return [layout for layout in sorted(IMPORTS) if arch in _arches(layout)]

def is_imported(layout):
    return layout in IMPORTS

def import_ident(layout):
    """The C identifier of a layout's symbols and targets."""
    return IMPORTS[layout]["ident"] if layout in IMPORTS else layout

def _image_arches(layout):
    """Where an import's +image variants build: its own architecture, and
    x86_32 for an x86-64 tree whose kbuild vdso32 image was stored."""
    imp = IMPORTS[layout]
    return [imp["arch"]] + (["x86_32"] if imp.get("image32") and imp["arch"] == "x86_64" else [])

def import_arches(layout, counter_arches, inline = None):
    """The architectures an import's variant builds on: its own (and its 32-bit
    vDSO's, COMPAT_ARCHES), where the counter's instructions run; an +image
    variant where its image is (_image_arches)."""
    arches = _image_arches(layout) if inline == "image" else _arches(layout)
    return [a for a in arches if a in counter_arches]

def import_compat(layout):
    """An import's own architecture (what only it builds: the DWARF writer's test)."""
    return ["@platforms//cpu:" + IMPORTS[layout]["arch"]]

def _compat_copts(layout, root):
    """COMPAT_COPTS on armv7 for an arm64 import with a compat vDSO, else nothing."""
    if not IMPORTS[layout].get("compat") or COMPAT_ARCH not in _arches(layout):
        return []
    return select({
        "@platforms//cpu:" + COMPAT_ARCH: tree_copts(root, IMPORTS[layout]["arch_dir"], COMPAT_COPTS),
        "//conditions:default": [],
    })

def tree_copts(root, arch, copts = TREE_COPTS):
    """copts.bzl's compile line for the tree at root (execroot-relative)."""
    return [c.replace("{root}", root).replace("{arch}", arch) for c in copts]

# the +image variants of an import with --vdso-image: counter -> the
# loader's counter (impls/image/loader.h)
IMAGE_COUNTERS = {
    "rdtsc": "VDSO_IMAGE_RDTSC",
    "lfence_rdtsc": "VDSO_IMAGE_LFENCE_RDTSC",
    "rdtscp": "VDSO_IMAGE_RDTSCP",
    "fake": "VDSO_IMAGE_FAKE",
}

def image_inlines(layout, counter):
    """["image"] for the counters an import's own vDSO image is patched with
    (`import --vdso-image`), else []: the inline axis's third value, whose
    reader is the tree's vdso64.so rather than its gettimeofday.c."""
    if layout in IMPORTS and IMPORTS[layout].get("image") and counter in IMAGE_COUNTERS:
        return ["image"]
    return []

def import_inlines(layout, counter, inlines, arch = None):
    """The inline choices of an imported layout's variants for a counter (on
    arch, when given): inlines (the table's) and image_inlines(), the latter
    on the import's own architecture only; only the latter where the tree's
    own update path could not be built (its writer is the DWARF writer, and
    reader.c's variants would need writer.c)."""
    image = image_inlines(layout, counter)
    if arch and layout in IMPORTS and arch not in _image_arches(layout):
        image = []
    if layout in IMPORTS and IMPORTS[layout].get("writer") == "dwarf":
        return image
    return list(inlines) + image

def _dwarf_copts(root):
    """The DWARF writer's compile line: the tree's configuration, what the
    probe measured and the layout its image's DWARF states, none of its code."""
    return [
        "-include",
        root + "/include/generated/autoconf.h",
        "-include",
        root + "/include/generated/kimport_desc.h",
        "-include",
        root + "/include/generated/kimport_dwarf.h",
    ]

def _dwarf_agree(name, layout, copts, root):
    """name + "_dwarf_agree": the DWARF writer against the tree's own
    (name + "_tree"), byte for byte (kernel_import/dwarf_agree.c)."""
    native.cc_library(
        name = name + "_dwarf_other",
        srcs = ["//kernel_import:glue/dwarf_writer.c"],
        copts = copts + _dwarf_copts(root) + ["-DKIMPORT_SYM(n)=kdw_agree__##n"],
        deps = ["//kernel_import:glue", IMPORTS[layout]["tree"]],
        linkstatic = True,
        target_compatible_with = import_compat(layout),
    )
    native.cc_test(
        name = name + "_dwarf_agree",
        srcs = ["//kernel_import:dwarf_agree.c"],
        copts = copts + _dwarf_copts(root),
        deps = [
            ":" + name + "_dwarf_other",
            ":" + name + "_tree",
            "//kernel_import:glue",
            IMPORTS[layout]["tree"],
        ],
        linkstatic = True,
        target_compatible_with = import_compat(layout),
    )

def _kline(layout):
    """The tree's kbuild line (the 64-bit vDSO's vclock_gettime.o) on the
    import's own architecture; its 32-bit vDSO's variants take the
    project's code generation, as a transcribed layout's."""
    kline = IMPORTS[layout].get("kline", [])
    if not kline or len(_arches(layout)) == 1:
        return kline
    return select({
        "@platforms//cpu:" + IMPORTS[layout]["arch"]: kline,
        "//conditions:default": [],
    })

def _copt(copts, flag):
    """The value of the -DNAME= define in copts."""
    return [c[len(flag):] for c in copts if c.startswith(flag)][0]

def import_variant(name, layout, copts, deps, inline, compat):
    """The two libraries of one variant of an imported layout: `name`
    (what the registry links) and name + "_tree". An +image variant's
    `name` is variant.c with KIMPORT_IMAGE: the image, not reader.c, reads.
    compat: its target_compatible_with (import_arches()' CPUs)."""
    imp = IMPORTS[layout]
    root = imp["root"]
    image = []
    image_deps = []
    counter = _copt(copts, "-DVDSO_COUNTER=")
    if inline == "image":
        header = "/include/generated/kimport_image.h"
        image = [
            "-DKIMPORT_IMAGE=1",
            "-DKIMPORT_IMAGE_COUNTER=" + IMAGE_COUNTERS[counter],
            "-include",
        ] + (select({
            # the i386 variants' image is the vdso32.so
            "@platforms//cpu:x86_32": [root + "/include/generated/kimport_image32.h"],
            "//conditions:default": [root + header],
        }) if imp.get("image32") else [root + header])
        image_deps = ["//impls/image:loader"]
    is_image = inline == "image"
    dwarf = is_image and imp.get("writer") == "dwarf"
    native.cc_library(
        name = name + "_tree",
        # an +image variant's reader is the image: the tree's update path only,
        # or the DWARF writer where the shim could not build it (none of the tree)
        srcs = ([] if is_image else ["//kernel_import:glue/reader.c"]) + [
            "//kernel_import:glue/dwarf_writer.c" if dwarf else "//kernel_import:glue/writer.c",
        ],
        copts = copts + (_dwarf_copts(root) if dwarf else
                         tree_copts(root, imp["arch_dir"]) + _kline(layout) +
                         _compat_copts(layout, root)),
        deps = [
            "//impls:headers",
            "//kernel_import:asm_guard",
            "//kernel_import:glue",
            "//kernel_import:shim",
            imp["tree"],
        ],
        linkstatic = True,
        target_compatible_with = compat,
    )
    if is_image and not dwarf and imp.get("dwarf") and counter == "fake":
        _dwarf_agree(name, layout, copts, root)
    # The archive the programs link (non-PIC objects; PIC ones under
    # --force_pic), not the library's default outputs, which hold a .pic.a
    # too: asking for both compiled the tree twice, and nothing links the other.
    native.filegroup(
        name = name + "_tree_archive",
        srcs = [":" + name + "_tree"],
        output_group = "archive",
    )
    # Nothing links the tree's objects unchecked: the library below compiles
    # this rule's output, made only when check_objects.py finds none of what
    # would run uncalled or replace the program's own definitions.
    native.genrule(
        name = name + "_tree_checked",
        srcs = [":" + name + "_tree_archive"],
        outs = [name + "_tree_checked.c"],
        cmd = "/usr/bin/python3 $(location //kernel_import:check_objects.py) %s %s $@ $(SRCS)" % (
            _copt(copts, "-DVDSO_PREFIX=") + "__",
            "%s+%s+%s" % (layout, counter, _copt(copts, "-DVDSO_INLINE=")),
        ),
        tools = ["//kernel_import:check_objects.py"],
    )
    native.cc_library(
        name = name,
        srcs = ["//kernel_import:glue/variant.c", ":" + name + "_tree_checked.c"],
        copts = copts + [
            "-include",
            root + "/include/generated/autoconf.h",
            "-include",
            root + "/include/generated/kimport_desc.h",
        ] + image,
        deps = deps + image_deps + [
            ":" + name + "_tree",
            "//kernel_import:glue",
            imp["tree"],
        ],
        linkstatic = True,
        target_compatible_with = compat,
    )
