"""Results files: Google Benchmark JSON plus context.vdsobench, written atomically.

The schema is results/schema/results-v1.schema.json. Benchmark names are
<variant>/<clock>/<mode>/cpu<N> (variants may contain "/", e.g. sys/vdso);
aggregates are named <run_name>_<aggregate>, as Google Benchmark names them.
"""

import functools
import json
import os
import re
import tempfile
from pathlib import Path

from . import packages
from .build import ROOT
from .errors import Failure, UsageError

SCHEMA_ID = "vdsobench-results/1"
SCHEMA_PATH = ROOT / "results" / "schema" / "results-v1.schema.json"
CPU_PART = re.compile(r"cpu([0-9]+)")


def default_path(repo_root, host, when, short_hash):
    """repo_root/results/runs/<host>-<YYYYMMDD-HHMMSS>-<short hash>.json.

    Seconds are in the name so that two runs a minute apart do not collide; `when`
    is used as given (pass an aware UTC datetime to make names comparable).
    """
    return (Path(repo_root) / "results" / "runs"
            / f"{host}-{when:%Y%m%d-%H%M%S}-{short_hash or 'nocommit'}.json")


def benchmark_key(name):
    """'sys/vdso/monotonic/hot/cpu0' -> ('sys/vdso', 'monotonic', 'hot', 0).

    For an aggregate, pass its run_name (its name has an _<aggregate> suffix).
    """
    parts = str(name).rsplit("/", 3)
    m = CPU_PART.fullmatch(parts[-1])
    if len(parts) != 4 or not all(parts) or not m:
        raise UsageError(f"benchmark name {name!r} is not <variant>/<clock>/<mode>/cpu<N>")
    return parts[0], parts[1], parts[2], int(m.group(1))


# ---- writing ----------------------------------------------------------------------------

def cannot(path, e, what="results"):
    return UsageError(f"cannot write {what} to {path}: {e.strerror or e}")


def exists(path):
    return UsageError(f"results file exists: {path} (use --force to overwrite)")


def make_parent(path, what="results"):
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        if isinstance(e, FileExistsError):
            e.strerror = f"{e.filename} is not a directory"
        raise cannot(path, e, what) from None


def refuse_existing(path, force, what="results"):
    if path.is_dir():
        raise UsageError(f"cannot write {what} to {path}: it is a directory")
    if not force and os.path.lexists(path):
        raise exists(path)


def temp_file(path, what="results"):
    """(fd, name) of a new temp file beside path."""
    try:
        return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise cannot(path, e, what) from None


def check_writable(path, force=False):
    """Fail now, not after a long run, if write_atomic(path, ..., force) would fail.

    Creates the parent directory (as write_atomic would) and a temp file it removes.
    """
    path = Path(path)
    refuse_existing(path, force)
    make_parent(path)
    fd, tmp = temp_file(path)
    os.close(fd)
    os.unlink(tmp)


def file_mode():
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def publish(tmp, path, force):
    """Give tmp the name path: os.replace with force; else a hard link, which never
    clobbers (write_atomic removes tmp afterwards)."""
    if force:
        os.replace(tmp, path)
        return
    try:
        try:
            os.link(tmp, path)
        except PermissionError:
            # Filesystems without hard links (vfat, some FUSE): claim the name, then rename.
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            os.replace(tmp, path)
    except FileExistsError:
        raise exists(path) from None


def write_stream_atomic(path, write, force=False, what="results"):
    """write(f) into a binary temp file beside path, then give it the name path:
    complete or not at all, never over an existing file unless force. Creates
    the parent directory. Leaves no temp file behind, whatever write raises."""
    path = Path(path)
    refuse_existing(path, force, what)
    make_parent(path, what)
    fd, tmp = temp_file(path, what)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fchmod(f.fileno(), file_mode())
            os.fsync(f.fileno())
        publish(tmp, path, force)
    except OSError as e:
        raise cannot(path, e, what) from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    sync_dir(path.parent)
    return path


def write_atomic(path, obj, force=False):
    """Write obj as JSON to path (see write_stream_atomic)."""
    text = json.dumps(obj, indent=1) + "\n"
    return write_stream_atomic(path, lambda f: f.write(text.encode()), force)


def sync_dir(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---- reading and validating -------------------------------------------------------------

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


def json_path(parts):
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path


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
    else:
        what = error.message if len(error.message) <= 200 else error.message[:197] + "..."
    return f"{json_path(error.absolute_path) or 'top level'}: {what}"


@functools.lru_cache(maxsize=None)
def validator():
    packages.require("jsonschema", what="checking a results file against its schema")
    import jsonschema
    try:
        schema = json.loads(SCHEMA_PATH.read_text())
    except (OSError, ValueError) as e:
        raise Failure(f"cannot read the results schema {SCHEMA_PATH}: {e}") from None
    return jsonschema.validators.validator_for(schema)(schema), jsonschema.exceptions.best_match


def validate(obj, where):
    """Raise UsageError "WHERE: <what is wrong>" unless obj is a valid results object."""
    if not isinstance(obj, dict):
        raise UsageError(f"{where}: expected a JSON object at the top, "
                         f"found {TYPE_WORDS[json_type(obj)]}")
    check, best_match = validator()
    error = best_match(check.iter_errors(obj))
    if error is not None:
        raise UsageError(f"{where}: {describe(error)}")


def load(path):
    """The results file at path as a dict, validated; UsageError naming what is wrong."""
    try:
        text = Path(path).read_text()
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror or e}") from None
    if not text.strip():
        raise UsageError(f"{path}: empty file")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        # A string cannot span lines, so an unterminated one ran into the end of the file.
        cut = e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string")
        raise UsageError(f"{path}: not valid JSON{' (truncated?)' if cut else ''}: {e.msg} "
                         f"(line {e.lineno} column {e.colno})") from None
    validate(obj, path)
    return obj
