"""The one loader for every JSON file a person hands the CLI: results files
(plot, merge, report, compare --results), comparisons (plot) and baselines
(gate). Each problem is one line naming the file and what is wrong
(UsageError, exit 2), found in seconds and in memory bounded by the cap:

- size: checked with os.stat before a byte is read, and the read itself
  stops one byte past the cap (a pipe has no size);
- text: UTF-8, not empty;
- nesting: the depth is counted on the bytes, without recursion, before
  json.loads sees them (a file nested 100000 deep would otherwise be a
  RecursionError);
- numbers: JSON has no NaN or Infinity; Python's json module reads them
  anyway. They are refused, naming the line and the field, except where the
  caller's `allow` says the program that wrote the file puts them on purpose
  (Google Benchmark's NaN for the cv of a counter that never changed);
- keys: a key twice in one object is refused (json.loads would keep the last);
- then the caller's schema (check()), with the same one-line messages.
"""

import functools
import itertools
import json
import math
import operator
import os
import re
import stat

from . import packages
from .errors import Failure, UsageError

MB = 1 << 20
# Caps well above real files: a default run is about 0.3 MB per CPU, every
# mode on one CPU 1 MB (results/runs), a baseline 16 KB. Parsing needs about
# three times the file in memory.
LIMITS = {"results file": 128 * MB, "results file or comparison": 128 * MB, "baseline": 16 * MB}
# Real files nest 6 deep; the schema checker recurses, so this stays far below
# Python's recursion limit.
MAX_DEPTH = 64

# A complete JSON string on one line (a raw newline in a string is invalid
# JSON anyway): replaced by "" before looking at brackets and constants, so
# neither is counted inside a string. Line numbers are unchanged.
STRING = re.compile(rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
CONSTANT = re.compile(rb"-?Infinity|NaN")
BRACKETS = re.compile(rb"[\[\]{}]")
# bytes.translate: '[' and '{' -> 2, ']' and '}' -> 0, everything else deleted
DEPTH_TABLE = bytes(2 if c in b"[{" else 0 for c in range(256))
NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


class NonFinite:
    """What json.loads makes of NaN, Infinity, -Infinity here: the token and its
    line, until the caller's policy allows it (as a float) or refuses it."""

    __slots__ = ("token", "line")

    def __init__(self, token, line):
        self.token, self.line = token, line


def size_text(size):
    return f"{math.ceil(size / MB)} MB" if size >= MB else f"{size} bytes"


def too_large(path, size, what, limit):
    return UsageError(f"{path}: {size_text(size)} is larger than the {size_text(limit)} "
                      f"a {what} may be")


def read_bytes(path, what, limit, missing=None):
    """The file's bytes, at most limit; refused by size before reading."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UsageError(missing or f"{path}: No such file or directory") from None
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{path}: is a directory, not a {what}")
    if stat.S_ISREG(st.st_mode) and st.st_size > limit:
        raise too_large(path, st.st_size, what, limit)
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror or e}") from None
    if len(data) > limit:  # a pipe, or a file that grew
        raise UsageError(f"{path}: more than the {size_text(limit)} a {what} may be "
                         "(stopped reading there)")
    return data


def line_of(data, pos):
    return data.count(b"\n", 0, pos) + 1


def depths(skeleton):
    """The nesting depth after each bracket, as C-level iterators: no recursion,
    no Python loop per byte. (A running sum of 2 per opening bracket and 0 per
    closing one, less the number of brackets so far.)"""
    steps = skeleton.translate(DEPTH_TABLE, NOT_BRACKETS)
    return map(operator.sub, itertools.accumulate(steps), itertools.count(1))


def check_depth(path, skeleton, what):
    depth = max(depths(skeleton), default=0)
    if depth > MAX_DEPTH:
        # the first bracket past the limit: where the reader should look
        first = next(i for i, d in enumerate(depths(skeleton)) if d > MAX_DEPTH)
        pos = next(itertools.islice(BRACKETS.finditer(skeleton), first, None)).start()
        raise UsageError(f"{path}: line {line_of(skeleton, pos)}: nested {depth} deep; "
                         f"a {what} is at most {MAX_DEPTH} deep")


def constants(skeleton):
    """[(token, line)] of each NaN / Infinity / -Infinity outside strings, in order."""
    found, line, last = [], 1, 0
    if b"NaN" not in skeleton and b"Infinity" not in skeleton:
        return found  # the usual case, at memchr speed
    for m in CONSTANT.finditer(skeleton):
        line += skeleton.count(b"\n", last, m.start())
        last = m.start()
        found.append((m.group().decode(), line))
    return found


def unique_keys(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise DuplicateKey(key)
    return obj


class DuplicateKey(Exception):
    pass


def decode_error(path, text, e):
    # A string cannot span lines, so an unterminated one ran into the end of the file.
    cut = e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string")
    return UsageError(f"{path}: not valid JSON{' (truncated?)' if cut else ''}: {e.msg} "
                      f"(line {e.lineno} column {e.colno})")


def json_path(parts):
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path


def resolve_constants(path, obj, allow):
    """Replace each NonFinite by its float where allow(parts, token, parent) says
    so; refuse the first other one, naming its line and field. Iterative."""
    stack = [((), obj)]
    while stack:
        parts, node = stack.pop()
        items = (node.items() if isinstance(node, dict)
                 else enumerate(node) if isinstance(node, list) else ())
        for key, value in items:
            if isinstance(value, NonFinite):
                where = parts + (key,)
                if allow is None or not allow(where, value.token, node):
                    raise UsageError(f"{path}: line {value.line}: {value.token} at "
                                     f"{json_path(where)}: not a number (JSON has no NaN or "
                                     "Infinity)")
                node[key] = float(value.token)
            elif isinstance(value, (dict, list)):
                stack.append((parts + (key,), value))
    return obj


def read(path, what, allow=None, missing=None):
    """The JSON value in the file at path, checked as the module docstring says.

    what: the kind of file (a key of LIMITS: "results file", "baseline", ...): its cap
    is LIMITS[what] and messages name it. allow(parts, token, parent) -> bool:
    where NaN / Infinity may stand (default nowhere). missing: the message
    when the file does not exist."""
    data = read_bytes(path, what, LIMITS[what], missing)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: line {line_of(data, e.start)}: not UTF-8 text") from None
    if not text.strip():
        raise UsageError(f"{path}: empty file")
    skeleton = STRING.sub(b'""', data)
    check_depth(path, skeleton, what)
    found = iter(constants(skeleton))
    del skeleton

    def constant(token):
        # json.loads meets them in the order the scan found them
        _, line = next(found, (token, 0))
        return NonFinite(token, line)

    try:
        obj = json.loads(text, parse_constant=constant, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as e:
        raise decode_error(path, text, e) from None
    except DuplicateKey as e:
        raise UsageError(f"{path}: the key {e.args[0]!r} appears twice in one object") from None
    except RecursionError:  # not reached past check_depth; kept as the last guard
        raise UsageError(f"{path}: nested too deep for a {what}") from None
    return resolve_constants(path, obj, allow) if isinstance(obj, (dict, list)) else obj


# ---- schemas ------------------------------------------------------------------------------

TYPE_WORDS = {"object": "an object", "array": "an array", "string": "a string",
              "integer": "a whole number", "number": "a number", "boolean": "true or false",
              "null": "null"}


def json_type(value):
    for name, t in (("null", type(None)), ("boolean", bool), ("integer", int),
                    ("number", float), ("string", str), ("array", list)):
        if isinstance(value, t):
            return name
    return "object"


def brief(value, limit=60):
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def describe(error):
    """One line for a jsonschema ValidationError: "where: what is wrong"."""
    kind, expected, value = error.validator, error.validator_value, error.instance
    if kind == "type":
        wanted = [expected] if isinstance(expected, str) else expected
        what = (f"expected {' or '.join(TYPE_WORDS.get(t, t) for t in wanted)}, "
                f"found {TYPE_WORDS[json_type(value)]}")
    elif kind == "required":
        what = f"missing {next((k for k in expected if k not in value), '?')!r}"
    elif kind == "const":
        what = f"expected {brief(expected)}, found {brief(value)}"
    elif kind == "enum":
        what = f"expected one of {', '.join(map(brief, expected))}, found {brief(value)}"
    elif kind == "pattern":
        what = f"{brief(value)} is not {error.schema.get('description') or expected}"
    elif kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        word = {"minimum": "at least", "exclusiveMinimum": "above",
                "maximum": "at most", "exclusiveMaximum": "below"}[kind]
        what = (f"{brief(value)} is not {word} {expected:g}"
                + (f" ({error.schema['description']})" if error.schema.get("description")
                   else ""))
    elif kind == "minItems" and expected == 1:
        what = "empty, expected at least one"
    else:
        what = error.message if len(error.message) <= 200 else error.message[:197] + "..."
    return f"{json_path(error.absolute_path) or 'top level'}: {what}"


@functools.lru_cache(maxsize=None)
def validator(schema_path):
    """(jsonschema validator, best_match) for the schema file at schema_path."""
    packages.require("jsonschema", what="checking a file against its schema")
    import jsonschema
    try:
        with open(schema_path, encoding="utf-8") as f:
            schema = json.load(f)
    except (OSError, ValueError) as e:
        raise Failure(f"cannot read the schema {schema_path}: {e}") from None
    return jsonschema.validators.validator_for(schema)(schema), jsonschema.exceptions.best_match


def check(obj, schema_path, where, what):
    """Raise UsageError "WHERE: <what is wrong>" unless obj is valid against the schema."""
    if not isinstance(obj, dict):
        raise UsageError(f"{where}: expected a JSON object at the top, "
                         f"found {TYPE_WORDS[json_type(obj)]}: not a {what}")
    validate, best_match = validator(str(schema_path))
    error = best_match(validate.iter_errors(obj))
    if error is not None:
        raise UsageError(f"{where}: {describe(error)}")
