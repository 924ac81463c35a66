"""What the fleet's tests share: a made-up Slurm cluster (its node and
partition records, fleet run against it with a made-up bundle), recorded
cpuinfo blocks, and the attack tests' work area with a victim folder beside
it. The real cluster is fleet_local_test.py's."""

import contextlib
import io
import json
import os
import shutil
import stat
import tarfile
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli import main
from vdsobench_cli.fleet import fleet_slurm, node_choice, records

ZEN3_CPUINFO = """\
processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 25
model		: 1
model name	: AMD EPYC 7763 64-Core Processor
stepping	: 1
microcode	: 0xa001173
flags		: fpu tsc rdtscp constant_tsc nonstop_tsc
"""
SPR_CPUINFO = """\
processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 143
model name	: Intel(R) Xeon(R) Platinum 8480+
stepping	: 8
microcode	: 0x2b000181
"""
UNKNOWN_CPUINFO = """\
processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 99
model		: 200
model name	: AMD Future
stepping	: 0
"""


def node(name, state="IDLE", features="", partitions="fleet", arch="x86_64", reason=None):
    text = (f"NodeName={name} Arch={arch} AvailableFeatures={features or '(null)'} "
            f"State={state} Partitions={partitions}")
    if reason:
        text += f" Reason={reason} [root@2026-12-01T05:00:00]"
    return fleet_slurm.parse_pairs(text)


def partition(name, nodes, default=True):
    return fleet_slurm.parse_pairs(f"PartitionName={name} Default={'YES' if default else 'NO'} "
                                   f"Nodes={nodes} State=UP")


class SubmitCase(unittest.TestCase):
    """fleet run against a made-up cluster (self.cluster, two zen3 nodes, partition
    fleet, job 77), with a made-up bundle (self.bundle) and self.jobs to stage in."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-fleet-test-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        top = self.tmp / "src" / "vdsobench-x"
        top.mkdir(parents=True)
        (top / "BUNDLE.json").write_text(json.dumps({"arch": "x86_64",
                                                     "build": {"short": "abc"}}))
        self.bundle = self.tmp / "b.tar.gz"
        with tarfile.open(self.bundle, "w:gz") as tar:
            tar.add(top, arcname=top.name)
        self.cluster = mock.Mock()
        self.cluster.conf = Path("/c/slurm.conf")
        self.cluster.nodes.return_value = [node("n1", features="zen3,local_n1"),
                                           node("n2", features="zen3,local_n2")]
        self.cluster.partitions.return_value = [partition("fleet", "n[1-2]")]
        self.cluster.submit.return_value = "77"
        self.jobs = self.tmp / "jobs"

    def fleet_run(self, *extra):
        argv = ["fleet", "run", "--jobs-dir", str(self.jobs), "--bundle", str(self.bundle),
                "--no-wait", *extra, "--", "run", "--clocks", "monotonic"]
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.object(node_choice, "cluster_of", return_value=self.cluster), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            return main.main(argv), out.getvalue(), err.getvalue()


# ---- the attack tests: a work area, and a good job record and exit record -------------------

VDSOBENCH = Path(__file__).resolve().parents[2] / "vdsobench"


def hostile(victim):
    """Values a shell, a comment, slurm.conf or Slurm's patterns would act on."""
    return [f"/tmp\ntouch {victim}", f"/tmp;touch {victim}", f"/tmp/$(touch {victim})",
            f"/tmp/`touch {victim}`", "/tmp/'quoted'", '/tmp/"q"', "/tmp/#c", "/tmp/a\0b",
            f"/tmp\u2028touch {victim}", "/tmp\u2029x", "/tmp\x85x", "/tmp\rx", "/tmp\tx",
            "/tmp/\x1b[31mred", "/tmp/\u202eevil", "/tmp/%j", "/tmp/a\\b", "/tmp/*",
            "/tmp/../etc", "relative/dir", "", "/" + "a" * 2000, "/tmp/a,b", "/tmp/é"]


def snapshot(root):
    """Everything under root: relative path -> (type, link target or bytes)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            st = os.lstat(p)
            what = (os.readlink(p) if stat.S_ISLNK(st.st_mode)
                    else p.read_bytes() if stat.S_ISREG(st.st_mode) else None)
            out[str(p.relative_to(root))] = (stat.S_IFMT(st.st_mode), what)
    return out


def cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main.main(list(argv))
    return rc, out.getvalue(), err.getvalue()


class Work(unittest.TestCase):
    """A work area of the test's own and a victim folder beside it."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-fleet-attack-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.victim = self.tmp / "victim"
        self.victim.mkdir()
        (self.victim / "precious").write_text("keep me\n")
        self.before = snapshot(self.victim)

    def assert_victim_untouched(self):
        self.assertEqual(snapshot(self.victim), self.before)

    def assert_one_line(self, rc, err, *words):
        self.assertEqual(rc, 2, err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        for w in words:
            self.assertIn(w, lines[0])


def good_record(**more):
    return {"format": records.FORMAT, "job": "9", "command": ["verify"], "output": "none",
            "nodes": ["n1"], "partition": "fleet", "conf": "/c", "constraint": None,
            "exclusive": True, "requested": {"nodes": 1}, "skipped": [["n2", "DOWN"]],
            "submitted": "2026-12-01T00:00:00Z", "bundle": {"arch": "x86_64"},
            "fleet": ["run", "--nodes", "1"],
            "slurm": {"JobState": "COMPLETED", "Reason": "None"}, **more}


def good_exit(**more):
    return {"job": "9", "node": "n1", "host": "h", "kernel": "6.1.0", "cpus_allowed": "0-1",
            "phase": "run", "rc": 0, "started": 10.0, "ended": 12.5, **more}
