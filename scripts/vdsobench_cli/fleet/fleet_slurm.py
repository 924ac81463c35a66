"""The Slurm client commands `fleet` uses, and parsers for what they print.

Only the client commands (sbatch, scontrol, scancel; srun inside a job) are
called, with SLURM_CONF naming the cluster. Their failures that are the
setting's, not ours (no slurm.conf, munge not running, no controller, an
unknown partition or feature), become one line saying what to do (exit 2);
anything else is the cluster refusing the job (exit 1) with its own words.

Parsers are pure functions of the text (tested on output recorded from
Slurm 22.05): `scontrol show ... -o` lines of Key=Value pairs, `scontrol show
config`'s "Key = value" lines (host lists: core/hostlist.py).
"""

import argparse
import io
import os
import re
import shutil
import subprocess
from pathlib import Path

from vdsobench_cli.measure import fingerprint
from vdsobench_cli.cli import lifecycle, safe_read
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.core import text as text_mod, uarch

DEFAULT_CONF = Path("/etc/slurm/slurm.conf")
CLIENTS = ("sbatch", "scontrol", "scancel")
CALL_TIMEOUT_S = 60
# A node's base state in which it may run a job now or later; anything else
# (DOWN, FUTURE, UNKNOWN...) or a flag below keeps it out of a fleet run.
USABLE_STATES = ("IDLE", "MIXED", "ALLOCATED", "COMPLETING", "PLANNED")
UNUSABLE_FLAGS = ("DRAIN", "DRAINING", "DRAINED", "DOWN", "FAIL", "FAILING", "MAINT",
                  "NOT_RESPONDING", "POWERED_DOWN", "POWERING_DOWN", "POWER_DOWN",
                  "REBOOT_REQUESTED", "REBOOT_ISSUED", "INVALID_REG", "FUTURE")
# Slurm job states after which nothing more will run.
FINISHED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
            "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "REVOKED", "SPECIAL_EXIT")


# ---- parsers ------------------------------------------------------------------------------

PAIR = re.compile(r"(?:^|\s)([A-Za-z][\w:/]*)=")


def parse_pairs(line):
    """{key: value} of one `scontrol show -o` line. A value runs to the next
    " Key=" (values such as OS=Linux 6.1 #1 SMP hold spaces)."""
    keys = list(PAIR.finditer(line))
    out = {}
    for m, nxt in zip(keys, keys[1:] + [None]):
        # printed and kept in job records: what a terminal would act on is replaced
        out[m.group(1)] = printable(line[m.end():nxt.start() if nxt else len(line)].strip())
    return out


def parse_show(text):
    """[{key: value}] of `scontrol show node|partition|job -o`: one record a line."""
    return [parse_pairs(line) for line in text.splitlines() if "=" in line]


def parse_config(text):
    """{key: value} of `scontrol show config` ("Key   = value" lines)."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and " " not in key.strip():
            out[key.strip()] = value.strip()
    return out


def state_words(state):
    """'IDLE+DRAIN' -> ('IDLE', {'DRAIN'}); a trailing '*' (not responding) and
    '~', '#', '!', '%', '$', '@' (power, reboot, maintenance marks) become flags."""
    state = (state or "UNKNOWN").upper()
    flags = set()
    marks = {"*": "NOT_RESPONDING", "~": "POWERED_DOWN", "#": "POWERING_UP",
             "!": "POWERING_DOWN", "%": "POWERING_DOWN", "$": "MAINT", "@": "REBOOT_REQUESTED"}
    while state and state[-1] in marks:
        flags.add(marks[state[-1]])
        state = state[:-1]
    base, *rest = state.split("+")
    return base, flags | set(rest)


def usable(node):
    """(True, None) or (False, why) for a node record of `scontrol show node -o`."""
    base, flags = state_words(node.get("State"))
    bad = sorted(flags & set(UNUSABLE_FLAGS))
    if base in USABLE_STATES and not bad:
        return True, None
    why = node.get("State") or "no state"
    reason = node.get("Reason")
    if reason and reason != "(null)":
        why += f": {reason}"
    return False, why


def features(node):
    """The node's available features, as a list ('zen5,fleet_a' -> [...])."""
    text = node.get("AvailableFeatures") or node.get("Features") or ""
    return [] if text in ("(null)", "") else [f for f in text.split(",") if f]


def exit_code(text):
    """Slurm's 'ExitCode=1:0' -> (1, 0): the exit status and the signal."""
    status, _, sig = (text or "0:0").partition(":")
    try:
        return int(status), int(sig or 0)
    except ValueError:
        return None, None


# ---- the CPU model as a node feature --------------------------------------------------------


def cpu_of(cpuinfo_text):
    """The CPU of a node as the results fingerprint records it (vendor, family,
    model, stepping, microcode, model name, uarch), from its /proc/cpuinfo (the
    first processor's block, as fingerprint.cpu_info takes it); {} when there is none."""
    blocks = fingerprint.parse_cpuinfo(cpuinfo_text or "")
    if not blocks:
        return {}
    cpu = fingerprint.describe_cpu(blocks[min(blocks)])
    cpu.pop("flags", None)
    return cpu


def feature_of(cpu):
    """The node feature naming a CPU model ('zen5', 'sapphirerapids'): uarch.slug;
    None for a CPU core/uarch.py does not know."""
    return uarch.slug(cpu) if cpu else None


def cpu_features():
    """Every feature name uarch.slug can give: the ones that name a CPU model."""
    return {uarch.slug({"uarch": e.name}) for e in uarch.TABLE}


# ---- constraints ----------------------------------------------------------------------------

FEATURE = re.compile(r"^[A-Za-z0-9_.\-]+$")


def constraint_words(constraint):
    """The feature names a constraint mentions ('zen5|sapphirerapids' -> both;
    counts, brackets and parentheses dropped)."""
    return [w for w in re.split(r"[&|,()\[\]]|\*\d+", constraint or "") if w.strip()]


def simple_constraint(constraint):
    """('&' or '|', [features]) for 'a', 'a&b' or 'a|b'; None for anything else
    (brackets, counts, parentheses, both operators), which only Slurm judges."""
    text = (constraint or "").strip()
    if re.search(r"[\[\]()*,]", text):
        return None
    if "&" in text and "|" in text:
        return None
    op = "|" if "|" in text else "&"
    words = [w.strip() for w in text.split(op)]
    if not all(FEATURE.match(w) for w in words):
        return None
    return op, words


def matches(node_features, constraint):
    """Whether a node with these features meets a simple constraint."""
    if not constraint:
        return True
    op, words = simple_constraint(constraint)
    have = set(node_features)
    return any(w in have for w in words) if op == "|" else all(w in have for w in words)


# ---- values that reach Slurm, its scripts and its configuration ------------------------------
#
# Every value fleet writes into a batch script, an sbatch option or a slurm.conf
# is checked here first against the grammar of the place it goes, and refused
# in one line naming the option and what is valid. The scripts quote what they
# hold as well, but some places do not quote at all: a comment ends at a
# newline, a slurm.conf line at a space or '#', Slurm expands '%' in --output
# and spool paths. A value that passes holds only characters that mean nothing
# in any of them.

class BadValue(ValueError):
    """A value refused: the text says what it is not and what is valid."""


def shown(text, limit=60):
    """A value as a message quotes it: repr (so a newline or an escape is seen,
    not acted on), cut to limit characters."""
    r = repr(text)
    return r if len(r) <= limit else r[:limit - 4] + "...'"


NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}", re.ASCII)
NAME_VALID = "1 to 128 letters, digits, '_', '.' or '-'"
PATH_MAX = 1024
JOB_ID = re.compile(r"[0-9]{1,10}", re.ASCII)
TIME = re.compile(r"(?:[0-9]{1,5}-[0-9]{1,5}(?::[0-9]{1,5}){0,2}|[0-9]{1,7}(?::[0-9]{1,5}){0,2}"
                  r"|INFINITE|UNLIMITED)", re.ASCII)
TIME_VALID = ("minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
              "days-hours:minutes, days-hours:minutes:seconds, INFINITE or UNLIMITED")
CONSTRAINT_TOKEN = re.compile(r"[A-Za-z0-9_.\-]+|\*[0-9]{1,6}|[&|,()\[\]]", re.ASCII)
CONSTRAINT_MAX = 1024
CONSTRAINT_VALID = ("feature names (letters, digits, '_', '.', '-') joined by & or | or ',', "
                    "with counts (*N), [ ] and ( ), e.g. zen5|sapphirerapids")
WORD_MAX = 4096


def is_name(v):
    """Whether v is a Slurm name (of a node, a partition): NAME."""
    return isinstance(v, str) and NAME.fullmatch(v) is not None


def slurm_name(text, what="name"):
    """A partition, node or feature name as Slurm writes them."""
    if not isinstance(text, str) or not NAME.fullmatch(text):
        raise BadValue(f"{shown(text)} is not a Slurm {what} (valid: {NAME_VALID})")
    return text


def path_value(text, what, spaces=False):
    """An absolute path of letters, digits and . _ + - / (and spaces where
    allowed), without '.' or '..' components: nothing a shell, a comment,
    slurm.conf or Slurm's % patterns read as anything but the path."""
    chars = r"A-Za-z0-9._+/\-" + (" " if spaces else "")
    valid = ("an absolute path of letters, digits, '.', '_', '+', '-', '/'"
             + (" and spaces" if spaces else "") + f", no '..', at most {PATH_MAX} characters")
    ok = (isinstance(text, str) and text.startswith("/") and len(text) <= PATH_MAX
          and re.fullmatch(f"[{chars}]+", text, re.ASCII)
          and not {".", ".."} & set(text.split("/")))
    if not ok:
        raise BadValue(f"{shown(text)} is not {what} (valid: {valid})")
    return text


def node_path(text):
    """A node-local directory (--node-tmp): the payload is copied and unpacked there."""
    return path_value(text, "a node-local directory")


def shared_path(text):
    """The jobs directory: in the batch script and in sbatch's --chdir and --output."""
    return path_value(text, "a jobs directory", spaces=True)


def conf_dir(text):
    """A directory named in a slurm.conf (the local cluster's)."""
    return path_value(text, "a directory slurm.conf can name")


def time_limit(text):
    """sbatch --time."""
    if not isinstance(text, str) or not TIME.fullmatch(text):
        raise BadValue(f"{shown(text)} is not a Slurm time limit (valid: {TIME_VALID})")
    return text


def job_id(text):
    """A Slurm job id: digits (ASCII: str.isdigit also takes '²')."""
    if not isinstance(text, str) or not JOB_ID.fullmatch(text):
        raise BadValue(f"{shown(text)} is not a job id (a number, as `fleet run` printed it)")
    return text


def constraint(text):
    """sbatch --constraint in Slurm's feature grammar: names, & | , between
    operands, a count *N after a name or a bracket, [ ] and ( ) balanced."""
    bad = BadValue(f"{shown(text)} is not a Slurm constraint (valid: {CONSTRAINT_VALID})")
    if not isinstance(text, str) or not 0 < len(text) <= CONSTRAINT_MAX:
        raise bad
    tokens = CONSTRAINT_TOKEN.findall(text)
    if "".join(tokens) != text:
        raise bad
    closing, stack, operand, counted = {")": "(", "]": "["}, [], False, False
    for t in tokens:
        if t in "([":
            if operand:
                raise bad
            stack.append(t)
        elif t in ")]":
            if not operand or not stack or stack.pop() != closing[t]:
                raise bad
            counted = False
        elif t in "&|,":
            if not operand:
                raise bad
            operand = False
        elif t.startswith("*"):
            if not operand or counted:
                raise bad
            counted = True
        else:
            if operand:
                raise bad
            operand, counted = True, False
    if stack or not operand:
        raise bad
    return text


def command_word(text):
    """A word of the node command: printable text (no control character, line
    or paragraph separator, or format character such as a bidi override)."""
    if not isinstance(text, str) or not text.isprintable() or len(text) > WORD_MAX:
        raise BadValue(f"{shown(text)} is not a command word (valid: printable text, at most "
                       f"{WORD_MAX} characters, no control or line-separating character)")
    return text


def printable(value, limit=4096):
    """value with each character a terminal or a record should not take as it is
    (a control character, an escape, a bidi override) as its escape, cut to
    limit: core/text.py's printable(), the one sanitiser."""
    return text_mod.printable(str(value), limit)


def checked(check, option, text, *args):
    """check(text) or the UsageError naming option."""
    try:
        return check(text, *args)
    except BadValue as e:
        raise UsageError(f"{option}: {e}") from None


def argtype(check, *args):
    """check as an argparse type: argparse names the option in its one line."""
    def parse(text):
        try:
            return check(text, *args)
        except BadValue as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    parse.__name__ = check.__name__
    return parse


# ---- files the jobs and the local cluster leave -------------------------------------------
#
# A job's directory is shared with the nodes, and the local cluster's may be in
# /tmp: what is found there is read as a regular file only, never through a
# symbolic link (root would read what the link names), never by an open that
# blocks (a FIFO) or one with effects (a device), and never past a size cap.

def open_left(path, what):
    """A binary file object of the regular file at path, or None if there is
    none; UsageError naming path for anything else (a symbolic link too):
    safe_read's rules, lstat before the open (a device is never opened), fstat
    after it (what is read is what was checked)."""
    raw = safe_read.open_regular(path, what, missing=False, follow=False)
    return None if raw is None else io.BufferedReader(raw)


def read_left(path, what, limit, tail=False):
    """The bytes of the regular file at path (open_left's rules), None if there is
    none. At most limit: a larger file is refused, or with tail its last limit
    bytes are read (the last line of a log that may be long)."""
    if not tail:
        return safe_read.read_regular(path, what, limit, missing=False, follow=False)
    f = open_left(path, what)
    if f is None:
        return None
    with f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            f.seek(size - limit)
        data = f.read(limit + 1)
    return data[-limit:]


# ---- the client commands -------------------------------------------------------------------


def conf_path(option=None, environ=None):
    """The cluster's slurm.conf: --slurm-conf, else $SLURM_CONF, else Slurm's
    default; UsageError if that file is not there (the clients would retry for a
    minute before failing)."""
    environ = os.environ if environ is None else environ
    given = option or environ.get("SLURM_CONF")
    path = Path(given) if given else DEFAULT_CONF
    if not str(path).isprintable():  # it is kept in the job's record and printed
        raise UsageError(f"{'--slurm-conf' if option else 'SLURM_CONF'} {shown(str(path))}: "
                         "not a printable path")
    if not path.is_file():
        where = ("--slurm-conf" if option else "SLURM_CONF" if given else
                 "no --slurm-conf, no SLURM_CONF, and Slurm's default")
        raise UsageError(f"no Slurm cluster: {where} {path} is not a file; give the cluster's "
                         "slurm.conf with --slurm-conf or SLURM_CONF, or start a local one "
                         "with `scripts/vdsobench fleet local-cluster up`")
    return path.resolve()


def check_clients(names=CLIENTS):
    missing = [n for n in names if shutil.which(n) is None]
    if missing:
        raise UsageError(f"Slurm's client commands are not installed here ({', '.join(missing)} "
                         "not on PATH): run fleet on the cluster's login node, or install "
                         "them (Debian: apt-get install slurm-client)")


def explain(command, stderr, conf):
    """One line for a client's failure: UsageError for the setting (munge,
    controller, partition, feature), Failure for the rest."""
    text = " ".join((stderr or "").split())
    m = re.search(r'Munge encode failed: Failed to access "([^"]+)"', text)
    if m or "Munge encode failed" in text or "Munge decode failed" in text:
        socket = m.group(1) if m else "its socket"
        return UsageError(f"munge is not running for this cluster ({socket} cannot be reached): "
                          "start munged with the cluster's key (local cluster: `scripts/vdsobench "
                          "fleet local-cluster up`)")
    if "Unable to contact slurm controller" in text or "Could not establish a configuration" \
            in text:
        return UsageError(f"the Slurm controller of {conf} does not answer ({command}: "
                          "connect failure): is slurmctld running? (`scontrol ping`)")
    if "Invalid partition" in text:
        return UsageError(f"{command}: Slurm refused the partition (Invalid partition name)")
    if "Invalid feature specification" in text:
        return UsageError(f"{command}: Slurm refused the constraint (Invalid feature "
                          "specification)")
    last = [line for line in (stderr or "").strip().splitlines() if line.strip()][-1:]
    return Failure(f"{command} failed: {last[0].strip() if last else 'no message'}")


class Cluster:
    """One Slurm cluster, named by its slurm.conf."""

    def __init__(self, conf):
        self.conf = Path(conf)
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))

    def call(self, args, timeout=CALL_TIMEOUT_S, ok=(0,)):
        """The client's stdout; its failure explained in one line."""
        try:
            proc = lifecycle.popen(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, errors="replace", env=self.env)
        except FileNotFoundError:
            check_clients([args[0]])
            raise
        with lifecycle.owned(proc):
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise Failure(f"{args[0]} did not answer within {timeout} s (is the "
                              f"controller of {self.conf} overloaded or unreachable?)") from None
        if proc.returncode not in ok:
            raise explain(" ".join(args[:2]), err, self.conf)
        return out

    def nodes(self):
        return parse_show(self.call(["scontrol", "show", "node", "-o"]))

    def partitions(self):
        return parse_show(self.call(["scontrol", "show", "partition", "-o"]))

    def config(self):
        return parse_config(self.call(["scontrol", "show", "config"]))

    def job(self, job):
        """The job's record, or None once the controller has forgotten it
        (MinJobAge after it ended)."""
        try:
            out = self.call(["scontrol", "show", "job", "-o", str(job)])
        except Failure as e:
            if "Invalid job id" in str(e):
                return None
            raise
        records = [r for r in parse_show(out) if r.get("JobId") == str(job)]
        return records[0] if records else None

    def submit(self, options, script):
        """sbatch --parsable OPTIONS SCRIPT -> the job id."""
        out = self.call(["sbatch", "--parsable", *options, str(script)])
        jobid = out.strip().split(";")[0]
        if not JOB_ID.fullmatch(jobid):
            raise Failure(f"sbatch printed no job id: {out.strip()!r}")
        return jobid

    def release(self, job):
        self.call(["scontrol", "release", str(job)])

    def cancel(self, job):
        self.call(["scancel", str(job)], ok=(0, 1))
