"""`import --agree LAYOUT`: vdsobench_agree between an import's fake-counter
variants and a transcribed layout's, each inline choice with its own, reading
by reading (every clock, getres, gettimeofday and time in a series of kernel
states)."""

from vdsobench_cli.cli import build, labels, lifecycle, variants
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.kimport import names


def agree(name, layout):
    """(exit status: 0 when the import reads as the layout does, else 1; the
    summary lines)."""
    build.build([labels.AGREE])
    registry = {v["name"] for v in variants.load()}
    if not any(n.startswith(f"{layout}+fake+") for n in registry):
        layouts = sorted({n.split("+")[0] for n in registry if not names.is_import(n)})
        raise UsageError(f"import: --agree {layout}: not a layout (valid: "
                         f"{', '.join(layouts)})")
    status, lines = 0, []
    for inline in ("always", "auto"):
        a, b = f"{names.layout_of(name)}+fake+{inline}", f"{layout}+fake+{inline}"
        if a not in registry or b not in registry:
            continue
        r = lifecycle.run(build.program(labels.AGREE) + [a, b], capture_output=True, text=True,
                          errors="replace")
        if r.returncode not in (0, 1):
            raise Failure(f"import: vdsobench_agree {a} {b} failed (exit {r.returncode}): "
                          f"{build.tail(r.stderr, 1)}")
        status = max(status, r.returncode)
        lines += r.stdout.splitlines()
    return status, lines
