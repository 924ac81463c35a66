"""The compile line of an imported tree's own code (kernel_import/glue/
reader.c, writer.c, probe.c), in one place: imports.bzl builds with it and
`vdsobench import` probes the tree with it (scripts/vdsobench_cli/
kimport/compile.py reads this list), each after replacing {root} with the
tree's folder and {arch} with its arch/ directory.

Force-included first, as the kernel force-includes kconfig.h and
compiler_types.h: the variant's symbol prefix (kimport/prefix.h). Then the
include order of the kernel's own build, the shim standing where the rest
of include/ and arch/<arch>/include would be: before the uapi folder, as
include/linux/time.h comes before include/uapi/linux/time.h there. The
kernel's warnings are -Wall's without those of -Wextra (W=1) and without
the few its Makefile turns off (-Wno-pointer-sign, the unused-but-set
ones, and -Wno-array-bounds for GCC 11 on: the v6.15 vDSO reaches its
time namespace page at vd + PAGE_SIZE, past the object GCC sees), so a patch that would warn in a kernel build warns (and fails,
-Werror) here too. Code generation is the project's, as for every
layout (-O2, and so on), so that an import and a transcription compare.
Every program of the compile runs through asm_guard.py (gcc -wrapper), which
lets the assembler read no file the tree's inline assembly names.
"""

TREE_COPTS = [
    "-wrapper",
    "kernel_import/asm_guard.py",
    "-D__KERNEL__",
    "-include",
    "kernel_import/shim/kimport/prefix.h",
    "-include",
    "kernel_import/shim/linux/kconfig.h",
    "-include",
    "kernel_import/shim/linux/compiler_types.h",
    "-iquote",
    "{root}",
    "-I{root}/arch/{arch}/include",
    "-I{root}/include",
    "-Ikernel_import/shim",
    "-I{root}/include/uapi",
    "-Wno-unused-parameter",
    "-Wno-sign-compare",
    "-Wno-missing-field-initializers",
    "-Wno-type-limits",
    "-Wno-pointer-sign",
    "-Wno-unused-but-set-variable",
    "-Wno-unused-const-variable",
    "-Wno-array-bounds",
]

# arm64's compat vDSO (an arm64 tree's armv7 variants): what
# arch/arm64/kernel/vdso32/Makefile adds for the 32-bit compiler
# (-march=armv8-a and -marm are --config=arm's toolchain's): ENABLE_COMPAT_VDSO,
# which makes include/vdso/datapage.h take asm/vdso/compat_gettimeofday.h
# instead of gettimeofday.h, and kbuild's arch/arm64/include/generated, where
# `vdsobench import` writes asm/unistd_compat_32.h from the tree's syscall table.
COMPAT_COPTS = [
    "-DENABLE_COMPAT_VDSO=1",
    "-I{root}/arch/{arch}/include/generated",
]
