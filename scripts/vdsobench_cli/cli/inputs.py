"""The one reader for every file a person hands the CLI, and the one loader
for the JSON ones: results files (plot, merge, report, compare --results),
comparisons (plot) and baselines (gate); patches and the like take
read_bytes or open_regular. Each problem is one line naming the file and what
is wrong (UsageError, exit 2), found in seconds and in memory bounded by the
cap:

- kind: a regular file only (a FIFO, a device, a directory, a symlink to one
  is refused by stat before it is opened, and opened without blocking): the
  reading is safe_read's, the one reader of user files;
- size: checked with stat before a byte is read, and the read itself
  stops one byte past the cap (a file that grows);
- text: UTF-8, not empty;
- nesting: the depth is counted on the bytes, without recursion, before
  json.loads sees them (a file nested 100000 deep would otherwise be a
  RecursionError);
- numbers: JSON has no NaN or Infinity; Python's json module reads them
  anyway. They are refused, naming the line and the field, except where the
  caller's `allow` says the program that wrote the file puts them on purpose
  (Google Benchmark's NaN for the cv of a counter that never changed). So is
  a number outside 64 bits' range (INT_MIN..INT_MAX, FLOAT_MAX), at parse
  time, before it overflows far from here (1e400 would be infinity);
- keys: a key twice in one object is refused (json.loads would keep the last);
- strings, keys too: what could act on a terminal or break a Markdown line
  or an SVG (controls, bidi overrides, separators) is escaped visibly
  (core/text.py) before any code sees them;
- then the caller's schema (check()), with the same one-line messages.
"""

import functools
import itertools
import json
import math
import operator
import re

from vdsobench_cli.cli import packages, safe_read
from vdsobench_cli.cli.errors import Failure, UsageError

from vdsobench_cli.core.text import cleaned

MB = 1 << 20
# Caps well above real files: a default run is about 0.3 MB per CPU, every
# mode on one CPU 1 MB (results/runs), a baseline 16 KB. Parsing needs about
# three times the file in memory.
# A patch: the largest series mailed to LKML are a few MB.
# a review file (review-node's): a full review's rounds are about 2 MB
LIMITS = {"results file": 128 * MB, "results file or comparison": 128 * MB, "baseline": 16 * MB,
          "patch": 32 * MB, "review file": 16 * MB}
# Real files nest 6 deep; the schema checker recurses, so this stays far below
# Python's recursion limit.
MAX_DEPTH = 64
# Every number a schema has (counts, sizes, ids, nanosecond clocks, times,
# ratios) fits in 64 bits: a whole number signed or not, any other number
# within 2^64 (1.8e19) of 0. Past that, arithmetic and drawing overflow far
# from here (1e308 ns per call is an infinite axis). The longest whole number
# in range is 20 digits and a sign.
INT_MIN, INT_MAX = -(1 << 63), (1 << 64) - 1
INT_DIGITS = 21
FLOAT_MAX = float(1 << 64)

# A complete JSON string on one line (a raw newline in a string is invalid
# JSON anyway): replaced by "" before looking at brackets and constants, so
# neither is counted inside a string. Line numbers are unchanged.
STRING = re.compile(rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
CONSTANT = re.compile(rb"-?Infinity|NaN")
BRACKETS = re.compile(rb"[\[\]{}]")
# A JSON number, outside strings (the skeleton has none): to find the line of a
# refused one; only searched when one is refused.
NUMBER = re.compile(rb"-?\d+(\.\d+)?([eE][+-]?\d+)?")
# bytes.translate: '[' and '{' -> 2, ']' and '}' -> 0, everything else deleted
DEPTH_TABLE = bytes(2 if c in b"[{" else 0 for c in range(256))
NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


class NonFinite:
    """What json.loads makes of NaN, Infinity, -Infinity here: the token and its
    line, until the caller's policy allows it (as a float) or refuses it."""

    __slots__ = ("token", "line")

    def __init__(self, token, line):
        self.token, self.line = token, line


class OutOfRange:
    """What json.loads makes here of a number no field may hold: an integer
    outside 64 bits (a 401-digit one parses, then overflows a float or a
    format far from here; past 4300 digits int() itself raises), or another
    number beyond FLOAT_MAX (1e400 would be read as infinity). ordinal: its
    place among the refused numbers of its kind, to find its line when it is
    reported."""

    __slots__ = ("token", "integer", "ordinal")

    def __init__(self, token, integer, ordinal):
        self.token, self.integer, self.ordinal = token, integer, ordinal


def open_regular(path, what, limit, missing=None):
    """An unbuffered binary file object of the regular file at path, at most
    limit bytes when opened: the rules every file the CLI is handed is read by
    (safe_read.open_regular's). Anything else, one line: UsageError.

    Checked twice: stat before the open, so a device is never opened (as root,
    opening some has effects: a watchdog, a tape), and fstat of the opened
    descriptor, so what was read is what was checked."""
    return safe_read.open_regular(path, what, limit, missing=missing)


def read_bytes(path, what, limit, missing=None):
    """The bytes of the regular file at path, at most limit (safe_read's rules);
    the read stops one byte past the cap (a file that grows, a /proc file that
    says it is empty)."""
    return safe_read.read_regular(path, what, limit, missing=missing)


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


# Only a file with a 20-digit run or a positive exponent can hold a number out
# of range: the others parse on json's C path, without the hooks.
MAYBE_OUT_OF_RANGE = re.compile(rb"\d{20}|[eE]\+?\d")


def int_in_range(token):
    return len(token) <= INT_DIGITS and INT_MIN <= int(token) <= INT_MAX


def float_in_range(token):
    return abs(float(token)) <= FLOAT_MAX  # NaN is not <=: a caller's NaN never gets here


def number_hooks():
    """(parse_int, parse_float) for json.loads: each number no field may hold
    becomes an OutOfRange, counted by kind."""
    count = {True: 0, False: 0}

    def refused(token, integer):
        count[integer] += 1
        return OutOfRange(token, integer, count[integer] - 1)

    def parse_int(token):
        return int(token) if int_in_range(token) else refused(token, True)

    def parse_float(token):
        value = float(token)
        return value if abs(value) <= FLOAT_MAX else refused(token, False)
    return parse_int, parse_float


def line_of_number(skeleton, marker):
    """The line of the marker.ordinal-th refused number of its kind."""
    seen = 0
    for m in NUMBER.finditer(skeleton):
        integer = m.group(1) is None and m.group(2) is None
        if integer != marker.integer:
            continue
        token = m.group().decode()
        if not (int_in_range if integer else float_in_range)(token):
            if seen == marker.ordinal:
                return line_of(skeleton, m.start())
            seen += 1
    return 0


def shown_number(token):
    digits = sum(c.isdigit() for c in token)
    return token if len(token) <= 24 else f"{token[:10]}...{token[-4:]} ({digits} digits)"


def refusal(path, marker, where, data):
    """The one line for a NonFinite or OutOfRange at where (a json_path)."""
    if isinstance(marker, NonFinite):
        return UsageError(f"{path}: line {marker.line}: {marker.token} at {where}: not a "
                          "number (JSON has no NaN or Infinity)")
    line = line_of_number(STRING.sub(b'""', data), marker)
    what = ("a whole number outside the 64-bit range a field may hold" if marker.integer
            else "beyond the 1.8e19 (2^64) either side of 0 a number may be")
    return UsageError(f"{path}: line {line}: {shown_number(marker.token)} at {where}: {what}")


def resolve_numbers(path, obj, allow, data):
    """Replace each NonFinite by its float where allow(parts, token, parent) says
    so; refuse the first other one, and the first OutOfRange, naming its line
    (found in data) and field. Iterative."""
    if isinstance(obj, (NonFinite, OutOfRange)):
        raise refusal(path, obj, "top level", data)
    stack = [((), obj)]
    while stack:
        parts, node = stack.pop()
        items = (node.items() if isinstance(node, dict)
                 else enumerate(node) if isinstance(node, list) else ())
        for key, value in items:
            if isinstance(value, NonFinite) and allow is not None and allow(
                    parts + (key,), value.token, node):
                node[key] = float(value.token)
            elif isinstance(value, (NonFinite, OutOfRange)):
                raise refusal(path, value, json_path(parts + (key,)), data)
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
    hooks = number_hooks() if MAYBE_OUT_OF_RANGE.search(skeleton) else (None, None)
    del skeleton

    def constant(token):
        # json.loads meets them in the order the scan found them
        _, line = next(found, (token, 0))
        return NonFinite(token, line)

    try:
        obj = json.loads(text, parse_constant=constant, object_pairs_hook=unique_keys,
                         parse_int=hooks[0], parse_float=hooks[1])
    except json.JSONDecodeError as e:
        raise decode_error(path, text, e) from None
    except DuplicateKey as e:
        raise UsageError(f"{path}: the key {e.args[0]!r} appears twice in one object") from None
    except RecursionError:  # not reached past check_depth; kept as the last guard
        raise UsageError(f"{path}: nested too deep for a {what}") from None
    # every string escaped once, here, so that none reaches a terminal, a
    # Markdown file or an SVG raw (core/text.py)
    return cleaned(resolve_numbers(path, obj, allow, data))


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


def printable_text(value):
    return not isinstance(value, str) or value.isprintable()


def finite(value):
    return not isinstance(value, float) or math.isfinite(value)


@functools.lru_cache(maxsize=None)
def schema_of(schema_path):
    try:
        with open(schema_path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise Failure(f"cannot read the schema {schema_path}: {e}") from None


@functools.lru_cache(maxsize=None)
def validator(schema_path):
    """(jsonschema validator, best_match) for the schema file at schema_path.
    Two formats of our own are checked, and no other: "printable" (a string
    str.isprintable() takes) and "finite" (a number that is not NaN or
    infinite), for records read by json.loads rather than read()."""
    packages.require("jsonschema", what="checking a file against its schema")
    import jsonschema
    schema = schema_of(schema_path)
    formats = jsonschema.FormatChecker(formats=())
    formats.checks("printable")(printable_text)
    formats.checks("finite")(finite)
    return (jsonschema.validators.validator_for(schema)(schema, format_checker=formats),
            jsonschema.exceptions.best_match)


def field_problem(obj, schema_path):
    """(field, what is wrong) of the first field of the object obj (in the
    schema's order of properties) that the schema refuses, or None: "is missing
    (it is D)" or "is V, not D", D the field's description in the schema. For
    records whose messages name the top-level field."""
    validate, _ = validator(str(schema_path))
    fields = list(schema_of(str(schema_path)).get("properties", {}))
    found = []
    for error in validate.iter_errors(obj):
        if error.validator == "required" and not error.absolute_path:
            name = next(k for k in fields + list(error.validator_value)
                        if k in error.validator_value and k not in obj)
        elif error.absolute_path:
            name = error.absolute_path[0]
        else:
            continue
        found.append((fields.index(name) if name in fields else len(fields), name))
    if not found:
        return None
    _, name = min(found)
    valid = schema_of(str(schema_path)).get("properties", {}).get(name, {}).get(
        "description", "what the schema says")
    if name not in obj:
        return name, f"is missing (it is {valid})"
    return name, f"is {brief(obj[name])}, not {valid}"


def check(obj, schema_path, where, what):
    """Raise UsageError "WHERE: <what is wrong>" unless obj is valid against the schema."""
    if not isinstance(obj, dict):
        raise UsageError(f"{where}: expected a JSON object at the top, "
                         f"found {TYPE_WORDS[json_type(obj)]}: not a {what}")
    validate, best_match = validator(str(schema_path))
    error = best_match(validate.iter_errors(obj))
    if error is not None:
        raise UsageError(f"{where}: {describe(error)}")
