"""The variant list from vdsobench_verify, and choosing variants by name or glob."""

import fnmatch
import json
import subprocess

from vdsobench_cli.cli import build, labels, lifecycle
from vdsobench_cli.cli.errors import Failure, UsageError

AXES = (("layout", "layouts"), ("counter", "counters"), ("inline", "inline"))


def load():
    build.build([labels.VERIFY])
    binary = build.binary_path(labels.VERIFY)
    try:
        r = lifecycle.run(build.program(labels.VERIFY) + ["--list-json"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, errors="replace")
    except OSError as e:
        raise Failure(f"cannot run {binary}: {e.strerror}") from None
    if r.returncode != 0:
        raise Failure(f"{binary.name} --list-json failed (exit {r.returncode}): "
                      f"{build.tail(r.stderr, 1)}")
    return parse(r.stdout)


def parse(text):
    try:
        variants = json.loads(text)
    except json.JSONDecodeError as e:
        raise Failure(f"vdsobench_verify --list-json: not JSON: {e}") from None
    if not isinstance(variants, list) or not all(
            isinstance(v, dict) and isinstance(v.get("name"), str) for v in variants):
        raise Failure("vdsobench_verify --list-json: expected an array of objects "
                      "with a \"name\"")
    return variants


def axis_values(variants, key):
    return list(dict.fromkeys(str(v.get(key, "?")) for v in variants))


def split_patterns(values):
    """['a,b', 'c'] -> ['a', 'b', 'c']: commas and repeated arguments both work."""
    return [p.strip() for value in values for p in value.split(",") if p.strip()]


def select(variants, patterns, label="variant"):
    """Variants matching any pattern (exact name or fnmatch glob), in list order.

    Every pattern must match something: a typo must not silently shrink a run.
    """
    chosen = set()
    for pattern in patterns:
        hits = {v["name"] for v in variants
                if v["name"] == pattern or fnmatch.fnmatchcase(v["name"], pattern)}
        if not hits:
            valid = "; ".join(f"{plural}: {', '.join(axis_values(variants, key)) or '-'}"
                              for key, plural in AXES)
            raise UsageError(f"{label}: {pattern!r} matches no variant "
                             f"(names are LAYOUT+COUNTER+INLINE); valid {valid}")
        chosen |= hits
    return [v for v in variants if v["name"] in chosen]


def choose(patterns, label):
    """Load the list and select; all variants when no pattern is given."""
    variants = load()
    names = split_patterns(patterns or [])
    if patterns and not names:
        raise UsageError(f"{label}: empty pattern")
    return variants, (select(variants, names, label) if names else variants)
