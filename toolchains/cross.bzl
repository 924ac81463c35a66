"""A cross cc toolchain for one Debian GNU triplet (toolchains/BUILD).

Bazel's own unix cc_toolchain_config rule (the one @local_config_cc
instantiates for the host's gcc) with the cross tools and the same flags as
the host's, so that the cross objects are built the way the x86-64 ones are;
it is chosen by toolchain resolution for a platform of the target's cpu.
"""

load("@bazel_tools//tools/cpp:unix_cc_toolchain_config.bzl", "cc_toolchain_config")

def cross_cc_toolchain(name, triplet, cpu, abi_version, extra_link_flags = [],
                       link_libs = ["-lstdc++", "-lm"], extra_compile_flags = []):
    """`name`: the toolchain (for --extra_toolchains) of Debian's
    <triplet>-gcc, for the platforms of @platforms//cpu:<cpu> on Linux,
    executed on x86-64.

    Args:
      name: the toolchain rule's name.
      triplet: the GNU triplet, the cross tools' prefix and folder.
      cpu: its @platforms//cpu constraint value.
      abi_version: the toolchain's ABI label.
      extra_compile_flags: after the host's compile flags.
      extra_link_flags: after the host's link flags.
      link_libs: what every link adds last.
    """
    cc_toolchain_config(
        name = name + "_config",
        abi_libc_version = "glibc",
        abi_version = abi_version,
        compile_flags = [
            "-U_FORTIFY_SOURCE",
            "-fstack-protector",
            "-Wall",
            "-Wunused-but-set-parameter",
            "-Wno-free-nonheap-object",
            "-fno-omit-frame-pointer",
        ] + extra_compile_flags,
        compiler = "gcc",
        coverage_compile_flags = ["--coverage"],
        coverage_link_flags = ["--coverage"],
        cpu = cpu,
        cxx_builtin_include_directories = [
            # the compiler's own headers (any gcc version), the cross C and C++
            # libraries', then the multiarch packages' (libhwloc-dev:arm64 ...)
            "/usr/lib/gcc-cross/" + triplet,
            "/usr/" + triplet + "/include",
            "/usr/include",
        ],
        cxx_flags = ["-std=c++0x"],
        dbg_compile_flags = ["-g"],
        host_system_name = "x86_64-linux-gnu",
        link_flags = [
            "-Wl,-no-as-needed",
            "-Wl,-z,relro,-z,now",
            "-pass-exit-codes",
        ] + extra_link_flags,
        link_libs = link_libs,
        opt_compile_flags = [
            "-g0",
            "-O2",
            "-D_FORTIFY_SOURCE=1",
            "-DNDEBUG",
            "-ffunction-sections",
            "-fdata-sections",
        ],
        opt_link_flags = ["-Wl,--gc-sections"],
        supports_start_end_lib = False,
        target_libc = "glibc",
        target_system_name = triplet,
        tool_paths = {
            "ar": "/usr/bin/%s-ar" % triplet,
            "cpp": "/usr/bin/%s-cpp" % triplet,
            "dwp": "/usr/bin/%s-dwp" % triplet,
            "gcc": "/usr/bin/%s-gcc" % triplet,
            "gcov": "/usr/bin/%s-gcov" % triplet,
            "ld": "/usr/bin/%s-ld" % triplet,
            # the rule wants one; coverage is not used (as for the host's)
            "llvm-cov": "/bin/false",
            "nm": "/usr/bin/%s-nm" % triplet,
            "objcopy": "/usr/bin/%s-objcopy" % triplet,
            "objdump": "/usr/bin/%s-objdump" % triplet,
            "strip": "/usr/bin/%s-strip" % triplet,
        },
        toolchain_identifier = triplet,
        unfiltered_compile_flags = [
            "-fno-canonical-system-headers",
            "-Wno-builtin-macro-redefined",
            "-D__DATE__=\"redacted\"",
            "-D__TIMESTAMP__=\"redacted\"",
            "-D__TIME__=\"redacted\"",
        ],
    )

    native.cc_toolchain(
        name = name + "_cc",
        all_files = ":empty",
        ar_files = ":empty",
        as_files = ":empty",
        compiler_files = ":empty",
        dwp_files = ":empty",
        linker_files = ":empty",
        objcopy_files = ":empty",
        strip_files = ":empty",
        supports_param_files = 1,
        toolchain_config = ":" + name + "_config",
        toolchain_identifier = triplet,
    )

    native.toolchain(
        name = name,
        exec_compatible_with = [
            "@platforms//os:linux",
            "@platforms//cpu:x86_64",
        ],
        target_compatible_with = [
            "@platforms//os:linux",
            "@platforms//cpu:" + cpu,
        ],
        toolchain = ":" + name + "_cc",
        toolchain_type = "@bazel_tools//tools/cpp:toolchain_type",
    )
