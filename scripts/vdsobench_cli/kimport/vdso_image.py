"""The tree's own vDSO image (issue 20 item 3): a kernel's vdso64.so taken in
beside an import, checked, and written as the C header the image variants
kernel:NAME+{rdtsc,lfence_rdtsc,rdtscp,fake}+image embed
(kernel_import/glue/variant.c with KIMPORT_IMAGE, impls/image/loader.c).

The image is not parsed here: //impls/image:vdsobench_image_check runs the
loader's own reading of it (impls/image/check.c) for each counter the
variants use, and prints what it found as JSON, so that an image that
imports is an image that loads (issue 28). Its refusal is one line.
"""
import hashlib
import json
import struct
from pathlib import Path

from vdsobench_cli.cli import build, labels, lifecycle
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.kimport import stage

LIMIT = 1 << 20  # a vdso64.so is 7 KiB, its .dbg 50 KiB
PAGE = 4096
SYMS = ("__vdso_clock_gettime", "__vdso_gettimeofday", "__vdso_time", "__vdso_clock_getres")
HEADER = "include/generated/kimport_image.h"
DWARF_HEADER = "include/generated/kimport_dwarf.h"
STORED = "vdso/vdso64.so"
COUNTERS = ("rdtsc", "lfence_rdtsc", "rdtscp", "fake")
# the options an image's reading depends on that the variant contract states
# (kernel_import/glue/variant.c with KIMPORT_IMAGE): its aux clocks (off in
# Debian's 7.3), its time namespace page, its max_cycles check. kbuild reads
# them from the .config it built with; the shim's configuration of the tree
# (tree_config.py) may differ.
OPTIONS = ("POSIX_AUX_CLOCKS", "TIME_NS", "GENERIC_VDSO_OVERFLOW_PROTECT")


class ImageError(ValueError):
    """What is wrong with an image, in one phrase."""


_built = []


def checker():
    """The checker's command line, built once per process."""
    if not _built:
        build.build([labels.IMAGE_CHECK])
        _built.append(True)
    return build.program(labels.IMAGE_CHECK)


CLASS_NAMES = {64: "an x86-64 vdso64.so", 32: "an i386 vdso32.so"}


def parse(data, want_class=64):
    """What the loader will find in an image: {class, span, vvar_start, syms,
    alts, sites, slots, sha256, size}; ImageError when it would refuse it (for
    any of COUNTERS), or when it is not of want_class (64: a vdso64.so, what
    --vdso-image takes; 32: a vdso32.so, which only the i386 loader maps)."""
    cmd = checker()
    for name in COUNTERS:
        cmd += ["--counter", name]
    r = lifecycle.run(cmd + ["-"], input=data, capture_output=True)
    if r.returncode == 1 and r.stderr.strip() and not r.stdout:
        raise ImageError(r.stderr.decode("utf-8", "replace").strip().splitlines()[-1])
    try:
        info = json.loads(r.stdout) if r.returncode == 0 else None
    except ValueError:
        info = None
    if info is None:
        why = r.stderr.decode("utf-8", "replace").strip().splitlines() or ["no output"]
        raise Failure(f"vdsobench_image_check failed (exit {r.returncode}): {why[-1]}")
    why = shape_problem(info)
    if why:
        raise Failure(f"vdsobench_image_check: its output is not what it prints ({why}): "
                      "nothing imported")
    if info["class"] != want_class:
        raise ImageError(f"it is {CLASS_NAMES[info['class']]} (ELFCLASS{info['class']}), "
                         f"not {CLASS_NAMES[want_class]}")
    return {"class": info["class"], "span": info["span"], "vvar_start": info["vvar_start"],
            "data_page": info["data_page"], "timens_page": info["timens_page"],
            "data_offset": info["data_offset"], "pvclock_page": info["pvclock_page"],
            "hvclock_page": info["hvclock_page"],
            "syms": info["syms"],
            "alts": info["alternatives"], "slots": info["slots"],
            "sites": sorted({s["at"] for s in info["slots"]}),
            # v7.x vdso32's system call alternatives, applied by the loader
            # (impls/image/sysfast32.c), and the int $0x80 left in place after
            "syscalls": sorted({s["at"] for s in info["syscalls"]}),
            "int80_left": info["int80_left"],
            # vdso32's __kernel_vsyscall alternatives, applied by the loader as
            # the running kernel's own gate enters (impls/image/gate32.c)
            "gates": sorted({(g["at"], g["replacement"]) for g in info["gates"]}),
            "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def number(value, low, high):
    return type(value) is int and low <= value <= high


def shape_problem(info):
    """None, or what in the checker's JSON is not what check_main.c prints: it
    ran confined on a hostile image, its output is input too, and its numbers
    go into a C header the build compiles as root (a string there could be
    a line of C)."""
    if not isinstance(info, dict):
        return "not an object"
    if info.get("class") not in (32, 64):
        return "class"
    span = info.get("span")
    if not number(span, 1, 64 << 20):
        return "span"
    if not number(info.get("vvar_start"), -16 * PAGE, -PAGE) or info["vvar_start"] % PAGE:
        return "vvar_start"
    pages = -info["vvar_start"] // PAGE
    if not (number(info.get("data_page"), 0, pages - 1)
            and number(info.get("timens_page"), 0, pages - 1)
            and info["data_page"] != info["timens_page"]):
        return "data_page or timens_page"
    if info.get("data_offset") not in (0, 128):
        return "data_offset"
    for key in ("pvclock_page", "hvclock_page"):
        if not number(info.get(key), -1, pages - 1):
            return key
    syms = info.get("syms")
    if not isinstance(syms, dict) or not all(number(v, -1, span) for v in syms.values()):
        return "syms"
    slots = info.get("slots")
    if not isinstance(slots, list) or not all(
            isinstance(x, dict) and number(x.get("at"), 0, span) for x in slots):
        return "slots"
    calls = info.get("syscalls")
    gate = syms.get("__kernel_vsyscall")
    if not isinstance(calls, list) or not all(
            isinstance(x, dict) and number(x.get("at"), 0, span) and x.get("target") == gate
            for x in calls):
        return "syscalls"
    if not number(info.get("int80_left"), 0, span):
        return "int80_left"
    gates = info.get("gates")
    if not isinstance(gates, list) or not all(
            isinstance(x, dict) and number(x.get("at"), 0, span)
            and x.get("replacement") in ("skip", "sysenter", "syscall") for x in gates):
        return "gates"
    return None if number(info.get("alternatives"), 0, span) else "alternatives"


def c_header(data, info, options=None):
    """include/generated/kimport_image.h: the bytes, what parse() found and the
    options it was built with (KIMPORT_IMAGE_CONFIG_*, where known)."""
    span_pages = (info["span"] + PAGE - 1) // PAGE
    lines = ["/* generated by vdsobench import --vdso-image: do not edit */",
             "#ifndef KIMPORT_IMAGE_H", "#define KIMPORT_IMAGE_H",
             f"/* {len(data)} bytes, SHA-256 {info['sha256']} */",
             f"#define KIMPORT_IMAGE_LEN {len(data)}",
             f"#define KIMPORT_IMAGE_SPAN_PAGES {span_pages}",
             f"#define KIMPORT_IMAGE_VVAR_START ({info['vvar_start']}L)",
             f"#define KIMPORT_IMAGE_VVAR_PAGES {-info['vvar_start'] // PAGE}",
             f"#define KIMPORT_IMAGE_DATA_PAGE {info['data_page']}",
             f"#define KIMPORT_IMAGE_TIMENS_PAGE {info['timens_page']}",
             f"#define KIMPORT_IMAGE_DATA_OFFSET {info['data_offset']}",
             # vread_pvclock()'s and vread_hvclock()'s pages of the area, -1
             # where not known (images stored before they were read)
             f"#define KIMPORT_IMAGE_PVCLOCK_PAGE {int(info.get('pvclock_page', -1))}",
             f"#define KIMPORT_IMAGE_HVCLOCK_PAGE {int(info.get('hvclock_page', -1))}"]
    # vdso32's system call gate, which its fallbacks call: -1 in a vdso64.so
    lines.append("#define KIMPORT_IMAGE_KERNEL_VSYSCALL "
                 f"{int(info['syms'].get('__kernel_vsyscall', -1))}")
    for name in OPTIONS if options else ():
        lines.append(f"#define KIMPORT_IMAGE_CONFIG_{name} {int(bool(options.get(name)))}")
    for name in SYMS:
        macro = "KIMPORT_IMAGE_" + name[len("__vdso_"):].upper()
        lines.append(f"#define {macro} {info['syms'].get(name, -1)}")
    lines.append("static const unsigned char kimport_image_bytes[KIMPORT_IMAGE_LEN] "
                 "__attribute__((aligned(16))) = {")
    for i in range(0, len(data), 16):
        lines.append("\t" + ", ".join(f"0x{b:02x}" for b in data[i:i + 16]) + ",")
    lines += ["};", "#endif", ""]
    return "\n".join(lines)


def read_image(path):
    """The bytes of --vdso-image FILE, a regular file under LIMIT; one line if not."""
    from vdsobench_cli.cli import safe_read
    return safe_read.read_regular(str(path), "--vdso-image", LIMIT)


def checked(data, given):
    try:
        return parse(data)
    except ImageError as e:
        raise UsageError(f"import: --vdso-image {given}: {e}") from None


def layout_differs(options, config):
    """Why an image built with options cannot be read beside the shim's writer
    built with config ({CONFIG name: value}, tree_config.py), or None: each
    lays out struct vdso_clock by CONFIG_GENERIC_VDSO_OVERFLOW_PROTECT."""
    name = "GENERIC_VDSO_OVERFLOW_PROTECT"
    if options is None or bool(options.get(name)) == bool(config.get(name)):
        return None
    return (f"it was built {'with' if options.get(name) else 'without'} CONFIG_{name}, which "
            "places max_cycles in the data, and the tree's update path here "
            f"{'with' if config.get(name) else 'without'}")


def dwarf(tree_dir, info, given, writer):
    """include/generated/kimport_dwarf.h from the stored image's DWARF (the
    DWARF writer's layout, dwarf_layout.py) and what it found, or {"none":
    why} where it has none usable (a stripped vdso64.so); a UsageError then
    when the DWARF writer is to write the data page (writer "dwarf")."""
    from vdsobench_cli.kimport import dwarf_layout
    try:
        lay, _ = dwarf_layout.read(Path(tree_dir) / STORED, info["data_offset"])
    except dwarf_layout.LayoutError as e:
        if writer == "dwarf":
            raise UsageError(f"import: --vdso-image {given}: the DWARF writer cannot use its "
                             f"DWARF: {e}; nothing imported") from None
        return {"none": str(e)}
    source = f"{len(dwarf_layout.fields(lay))} fields of struct {lay.family}, by pahole"
    stage.write_inside(tree_dir, DWARF_HEADER, dwarf_layout.c_header(lay, source).encode())
    return {"header": DWARF_HEADER, "family": lay.family, "data_size": lay.data_size,
            "clocks": lay.clocks, "aux_clocks": lay.aux_clocks,
            "max_cycles": lay.members["max_cycles"] >= 0}


def take(tree_dir, arch, image_path, given, options=None, config=None, writer="tree"):
    """Store an image beside an import's staged tree: vdso/vdso64.so and
    include/generated/kimport_image.h, which the tree's hashes then cover,
    written as import writes into a staged tree (stage.write_inside: no
    symlink followed out of the tree). Returns the description for its
    kimport.json (kbuild's vdso32 image: vdso32_image.take, which flow.py
    calls beside this)."""
    if arch != "x86_64":
        raise UsageError(f"import: --vdso-image {given}: an image is x86_64 only "
                         f"(not {arch}; valid: x86_64)")
    data = read_image(image_path) if not isinstance(image_path, bytes) else image_path
    info = checked(data, given)
    why = layout_differs(options, config or {})
    if why:
        raise UsageError(f"import: --vdso-image {given}: {why}; nothing imported")
    stage.write_inside(tree_dir, STORED, data)
    stage.write_inside(tree_dir, HEADER, c_header(data, info, options).encode())
    meta = {"file": STORED, "given": str(given), "sha256": info["sha256"],
            "options": options, "dwarf": dwarf(tree_dir, info, given, writer),
            "size": info["size"], "vvar_start": info["vvar_start"],
            "alternatives": info["alts"], "counter_sites": len(info["sites"]),
            "counters": list(COUNTERS)}
    return meta


def _segment(data):
    """(end of the program headers, the PT_LOAD segment's bytes) of an ELF64
    or ELF32 image with one PT_LOAD at offset 0, or None (check.c says what
    is wrong)."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] not in (1, 2):
        return None
    wide = data[4] == 2
    phoff, = struct.unpack_from("<Q" if wide else "<I", data, 32 if wide else 28)
    phnum, = struct.unpack_from("<H", data, 56 if wide else 44)
    phent, fmt = (56, "<IIQQQQ") if wide else (32, "<IIIIII")
    end = phoff + phent * phnum
    if end > len(data):
        return None
    heads = [struct.unpack_from(fmt, data, phoff + phent * i) for i in range(phnum)]
    # (p_offset, p_filesz): the fields' order differs between the classes
    loads = [(h[2], h[5]) if wide else (h[1], h[4]) for h in heads if h[0] == 1]
    if len(loads) != 1 or loads[0][0] != 0 or not end <= loads[0][1] <= len(data):
        return None
    return end, data[:loads[0][1]]


def shipped_by(dbg, so):
    """Whether the .dbg's segment holds the vdso64.so's (or vdso32.so's: the
    bytes the kernel maps) byte for byte past the ELF and program headers, which `objcopy -S`
    rewrote: the code, the data and the alternatives. What the .dbg has past
    them (v7.3: __ex_table, which the Makefile removes) is never run."""
    a, b = _segment(dbg), _segment(so)
    return bool(a and b and a[0] == b[0] and a[1][a[0]:len(b[1])] == b[1][b[0]:])


def given(image_path, options=None, image32=None):
    """--vdso-image FILE read and checked before anything is written:
    (bytes, FILE as given, options), or None without one. options: {option:
    bool} of OPTIONS as the image was built, where known (kbuild
    built it), else None: the variants state the shim's configuration.
    image32: kbuild's vdso32 image (bytes), a fourth item where there is one."""
    if image_path is None:
        return None
    data = read_image(image_path)
    checked(data, image_path)
    return (data, image_path, options) + ((image32,) if image32 is not None else ())


def keyed(key, image):
    """A tree's cache key with its image (given()'s) in it, the options it was
    built with included (the same key without one)."""
    if image is None:
        return key
    options = json.dumps(image[2], sort_keys=True)
    v32 = f"+vdso32:{hashlib.sha256(image[3]).hexdigest()}" if len(image) > 3 else ""
    return hashlib.sha256(f"{key}+image:{hashlib.sha256(image[0]).hexdigest()}+{options}{v32}"
                          .encode()).hexdigest()


def frame(layout):
    """(data offset, timens page) of an imported layout's image: where it keeps
    the kernel's data in a vvar page (0 or 128) and which of its vvar pages
    is the time namespace's (parse()'s reading of the stored image); None for
    a layout that is no import with an image. The image variants' vvar area
    is the image's pages, their field table the struct's own: a trace of
    their loads is read in the frame the rebuilds have (the data at 0 of
    page 0, the namespace's page next)."""
    from vdsobench_cli.kimport import store
    if not layout.startswith("kernel:"):
        return None
    entry = store.read_table().get(layout[len("kernel:"):])
    path = store.trees_dir() / entry["key"] / STORED if entry else None
    if path is None or not path.is_file():
        return None
    info = parse(path.read_bytes())
    return info["data_offset"], info["timens_page"]
