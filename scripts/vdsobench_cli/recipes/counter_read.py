"""How an image's read path reads the counter, so that patch-review's code
section can name a change to it (seed 003's question asked as a patch:
`__arch_get_hw_counter()` reading the TSC with its own RDTSCP).

A read is one of: an rdtsc_ordered() site (an alternative the image check
finds a slot in, which the loader patches as this CPU's kernel would,
docs/image.md), or an instruction the tree writes itself: rdtscp, rdtsc, or
rdtsc right after an lfence or mfence. Functions are compared as a set of
kinds over the whole read path, not function by function: a patch that only
moves the read (do_hres no longer inlined) has not changed it.

    reads(image, code)      {function: [kind, ...]} or (None, why)
    change(before, after)   "rdtsc_ordered() -> rdtscp (do_hres)", or None
"""

from pathlib import Path

from vdsobench_cli.cli.errors import Failure
from vdsobench_cli.kimport import vdso_image
from vdsobench_cli.recipes.review_parts import listing

ORDERED = "rdtsc_ordered()"
FENCES = ("lfence", "mfence")


def kind(text, previous, site):
    """The read an instruction makes, or None: text and previous are
    objdump's instruction texts, site whether it is an alternative's slot."""
    op = text.split()[0] if text.split() else ""
    if op not in ("rdtsc", "rdtscp"):
        return None
    if site:
        return ORDERED
    fence = (previous or "").split()[:1]
    return f"{fence[0]}; rdtsc" if op == "rdtsc" and fence and fence[0] in FENCES else op


def reads(image, code=None):
    """{function: [kind, ...]} of an image's read path (each function's reads
    in order; functions that read none left out), or (None, why); image None:
    the import holds none. code: its listing() where the caller made it."""
    if image is None:
        return None, "no kbuild image"
    try:
        sites = set(vdso_image.parse(Path(image).read_bytes())["sites"])
    except (OSError, vdso_image.ImageError, Failure) as e:
        return None, f"the image's counter sites: {getattr(e, 'strerror', None) or e}"
    if code is None:
        code, why = listing(Path(image))
        if code is None:
            return None, why
    out = {}
    for function, instructions in code.items():
        found, previous = [], None
        for address, text in instructions:
            k = kind(text, previous, address in sites)
            if k:
                found.append(k)
            previous = text
        if found:
            out[function] = found
    return out, None


def kinds(r):
    return {k for found in r.values() for k in found}


def change(before, after):
    """One line on how the read path's counter read changed between two
    reads() results, with the functions that make a new kind of read; None
    when the kinds are the same."""
    a, b = kinds(before), kinds(after)
    if a == b:
        return None
    new = sorted(b - a)
    # the function as written: do_hres.constprop.0 -> do_hres
    where = sorted({f.split(".")[0] for f, found in after.items() if set(found) & set(new)})
    return (f"{' + '.join(sorted(a)) or 'none'} -> {' + '.join(sorted(b)) or 'none'}"
            + (f" ({', '.join(where[:3])})" if where else ""))
