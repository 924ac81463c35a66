"""The names of an import: NAME as the user gives it, the layout kernel:NAME
its variants carry (kernel:NAME+COUNTER+INLINE), the C identifier of its
Bazel targets, and the objects the build makes of it."""

from vdsobench_cli.cli import variants
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.kimport import imports_table

NAME = imports_table.NAME
PREFIX = "kernel:"


def ident(name):
    return imports_table.ident(name)


def layout_of(name):
    return PREFIX + name


def is_import(layout):
    return str(layout).startswith(PREFIX)


def object_of(v, bin_dir, unit="writer.o"):
    """An object of an imported variant ({layout, counter, inline}): writer.o
    by default, the compile unit with the tree's own struct vdso_data (layout's
    pahole cross-check), or reader.o, its read path."""
    prefix = f"{ident(v['layout'][len(PREFIX):])}__{v['counter']}__{v['inline']}"
    return bin_dir / "impls" / "_objs" / f"variant_{prefix}_tree" / unit


def variant_names(name):
    """The variants the build made of an import."""
    return [v["name"] for v in variants.load() if v.get("layout") == layout_of(name)]


def check_name(name):
    if not NAME.match(name or ""):
        raise UsageError(f"import: --name {name!r}: 1 to 40 letters, digits, '.', '_' or "
                         "'-', starting with a letter or digit (e.g. 6.12-mine)")
