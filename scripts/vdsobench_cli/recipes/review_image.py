"""Which build of the tree and the patched tree patch-review measures.

The images kbuild made of the two (import's +image variants: the vDSO as the
kernel ships it, its own compile line and linker script, mapped as the
kernel maps it with this CPU's alternatives applied; docs/image.md), where
both imports hold one: kbuild ran on the tree (Debian's linux-source-X.Y,
whose kbuild import runs by default) and made the patched tree's image
again (kimport/kbuild_patched.py); on a cluster too (the bundle carries
them; review-node --build image). Else the read path rebuilt in userspace
(+always), and the block says why. A series' end points are chosen so too (patch_series.py: each
patch between is its rebuild's code and counts).

    chosen(table, before, after)   (INLINE, why not the images or None)
    measured(inline, why, metas, labels)  what the block's "Measured:" line says
    read_path(table, before, after)  the object code comparison of the two
                                   images (review_parts.relocated: addresses
                                   as symbols) and how each reads the
                                   counter, each image disassembled once
"""

from vdsobench_cli.kimport import store, vdso_image
from vdsobench_cli.recipes import counter_read, review_provenance
from vdsobench_cli.recipes.review_parts import code_comparison, listing, relocated

IMAGE, REBUILT = "image", "always"
MEASURED_IMAGE = "its kbuild's vDSO image (vdso64.so), mapped as the kernel maps it"
MEASURED_REBUILT = review_provenance.MEASURED


def stored(table, name):
    """The image an import holds (vdso_image.STORED in its tree), or None."""
    entry = table.get(name)
    if not entry:
        return None
    path = store.trees_dir() / entry["key"] / vdso_image.STORED
    return path if path.is_file() else None


def chosen(table, before, after):
    """(IMAGE, None) where both imports hold an image, else (REBUILT, why)."""
    if stored(table, before) and stored(table, after):
        return IMAGE, None
    kb = ((table.get(before) or {}).get("identity") or {}).get("kbuild") or {}
    if not kb.get("line"):
        return REBUILT, ("no kbuild image: the tree's kbuild did not run ("
                         + (kb.get("why") or "--kbuild or --config runs it") + ")")
    if not stored(table, before):
        return REBUILT, "no kbuild image: the tree's kbuild made none"
    return REBUILT, "no kbuild image of the patched tree: kbuild could not make it"


def measured(inline, why, metas=None, labels=None):
    """The "Measured:" line; where an image's data page was written by the
    DWARF writer (the tree's update path could not be built), it says whose
    (labels: {import name: what the review calls it})."""
    dwarf = sorted((labels or {}).get(n, n) for n, m in (metas or {}).items()
                   if isinstance(m, dict) and m.get("writer") == "dwarf")
    writer = (f"; the data page of {' and '.join(dwarf)} written by the DWARF writer from "
              "the image's DWARF, not by the tree's update path" if dwarf else "")
    return (MEASURED_IMAGE if inline == IMAGE else
            MEASURED_REBUILT + (f" ({why})" if why else "")) + writer


def read_path(table, before, after):
    """(code_comparison() of the two images' code or None, why not, the
    counter read: {"before", "after": counter_read.reads(), "change": its line
    or None}, or {"why": ...} where it cannot be told)."""
    paths = [stored(table, n) for n in (before, after)]
    (a, why_a), (b, why_b) = (listing(p) if p else (None, "no kbuild image") for p in paths)
    if a is None or b is None:
        return None, why_a or why_b, {"why": why_a or why_b}
    (ra, why_a), (rb, why_b) = counter_read.reads(paths[0], a), counter_read.reads(paths[1], b)
    counter = ({"why": why_a or why_b} if ra is None or rb is None else
               {"before": ra, "after": rb, "change": counter_read.change(ra, rb)})
    return code_comparison(relocated(a), relocated(b)), None, counter
