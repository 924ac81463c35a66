"""fleet under attack (issue 18): hostile values for every option that reaches
a generated script or a Slurm option, damaged job and node records, odd
collect targets, and a local cluster's directory that is not one.

Each case builds its hostile input, runs the real code (the command line
in-process, or as a subprocess where a blocking open would hang the suite),
and checks the exit status, the one line on stderr, and that nothing outside
the work area changed (a victim folder's snapshot before and after). No
cluster is needed: the batch script runs under sh and bash with stub srun and
rm on PATH, and only the commands it means to run may run."""

import io
import json
import os
import subprocess
import tarfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.fleet import (batch, bundle_check, fleet_local, fleet_slurm, node_choice,
                                 outcomes, records)
from vdsobench_cli import main
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.tests import fleet_support
from vdsobench_cli.tests.fleet_support import VDSOBENCH, Work, cli, good_record, hostile, snapshot

# ---- 1. nothing reaches the batch script but what was meant -----------------------------------

STUB = """#!/bin/sh
# records its name and arguments, NUL-separated, one call after another
{{ printf '%s\\0' CALL {name}; for a in "$@"; do printf '%s\\0' "$a"; done; }} >>"$STUB_LOG"
"""


class BatchScriptTest(Work):
    def values(self):
        return hostile(self.victim / "VICTIM")

    def test_every_path_option_refused(self):
        for value in self.values():
            for option, call in (
                    ("--node-tmp", lambda v: batch.batch_script("/jobs", ["verify"], "none", v)),
                    ("--jobs-dir", lambda v: batch.batch_script(v, ["verify"], "none")),
                    ("--jobs-dir", lambda v: batch.sbatch_options(
                        {"partition": "p", "count": 1, "nodelist": None},
                        mock.Mock(constraint=None, exclusive=True, time=None), v))):
                if option == "--jobs-dir" and value.startswith("/") and value.count("/") == 1 \
                        and value[1:].isalnum():
                    continue  # "/aaa...": a jobs directory's path, too long only for --node-tmp
                with self.subTest(option=option, value=value), \
                        self.assertRaises(UsageError) as cm:
                    call(value)
                self.assertIn(option, str(cm.exception))
                self.assertIn("valid:", str(cm.exception))
                self.assertEqual(len(str(cm.exception).splitlines()), 1)
        self.assert_victim_untouched()

    def test_every_slurm_option_refused(self):
        choice = {"partition": "p", "count": 1, "nodelist": None}
        bad_names = ["a b", "a,b", "n[1-2]", "a\nb", "a;b", "$(x)", "", "a" * 200, "a#b",
                     "a%b", "n\u2028", "é"]
        for name in bad_names:
            for option, call in (
                    ("--partition", lambda v: batch.sbatch_options(
                        dict(choice, partition=v), mock.Mock(constraint=None, time=None), "/j")),
                    ("--nodelist", lambda v: batch.sbatch_options(
                        dict(choice, nodelist=["n1", v]), mock.Mock(constraint=None, time=None),
                        "/j"))):
                with self.subTest(option=option, value=name), self.assertRaises(UsageError) as cm:
                    call(name)
                self.assertIn(option, str(cm.exception))
        for value in ["zen5\nx", "zen5;touch V", "zen5 x", "zen5&", "&zen5", "zen5||x", "(zen5",
                      "zen5)", "[a|b", "a*", "a*2*3", "*2", "a$b", "a`b`", "a#b", "a" * 2000,
                      "zen5\u2028", "a%j", "a&(b"]:
            with self.subTest(option="--constraint", value=value), \
                    self.assertRaises(UsageError) as cm:
                batch.sbatch_options(choice, mock.Mock(constraint=value, time=None), "/j")
            self.assertIn("--constraint", str(cm.exception))
        for value in ["1\nx", "1;x", "1:2:3:4", "x", "-1", "1-", "99999999", "1 2", "1٣"]:
            with self.subTest(option="--time", value=value), self.assertRaises(UsageError) as cm:
                batch.sbatch_options(choice, mock.Mock(constraint=None, time=value), "/j")
            self.assertIn("--time", str(cm.exception))
        good = mock.Mock(constraint="[zen3*1&zen5*2]|(a,b.c-d_e)", exclusive=False,
                         time="1-02:03:04")
        opts = batch.sbatch_options(dict(choice, nodelist=["n1", "n-2.x"]), good, "/j d")
        self.assertIn("--constraint=[zen3*1&zen5*2]|(a,b.c-d_e)", opts)
        self.assertIn("--time=1-02:03:04", opts)
        self.assertIn("--nodelist=n1,n-2.x", opts)
        for t in ("30", "30:00", "1:00:00", "2-0", "2-1:30", "INFINITE", "UNLIMITED"):
            self.assertEqual(fleet_slurm.time_limit(t), t)

    def test_command_words_refused_or_quoted(self):
        for word in ("a\nb", "a\0b", "a\rb", "\x1b[2J", "a\u2028b", "a\u2029b", "a\x85b",
                     "\u202eevil", "a\u00a0b", "x" * 5000):
            with self.subTest(word=word):
                with self.assertRaises(UsageError) as cm:
                    batch.node_command(["verify", "--variants", word], main.parser())
                self.assertIn("the node command", str(cm.exception))
                with self.assertRaises(UsageError):
                    batch.batch_script("/jobs", ["verify", word], "none")

    def render_and_run(self, jobs_dir, node_tmp, command):
        """The batch script for these values, run by sh and by bash with stub srun
        and rm: [(name, args)] of each call, for each shell."""
        text = batch.batch_script(jobs_dir, command, "file", node_tmp)
        stubs = self.tmp / "stubs"
        stubs.mkdir(exist_ok=True)
        for name in ("srun", "rm"):
            (stubs / name).write_text(STUB.format(name=name))
            (stubs / name).chmod(0o755)
        script = self.tmp / "batch.sh"
        script.write_text(text)
        calls = {}
        for shell in ("/bin/sh", "/bin/bash"):
            r = subprocess.run([shell, "-n", str(script)], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            log = self.tmp / f"calls-{Path(shell).name}"
            work = self.tmp / f"cwd-{Path(shell).name}"
            work.mkdir()
            # only the stubs on PATH: any other command the script ran would say "not found"
            r = subprocess.run([shell, str(script)], cwd=work, capture_output=True, text=True,
                               env={"PATH": str(stubs), "STUB_LOG": str(log),
                                    "SLURM_JOB_ID": "42", "SLURM_JOB_NUM_NODES": "2"})
            self.assertEqual((r.returncode, r.stdout, r.stderr),
                             (0, "vdsobench fleet: srun exit 0\n", ""), shell)
            self.assertEqual(os.listdir(work), [], shell)  # nothing made where it ran
            parts = log.read_bytes().decode().split("\0")[:-1]
            found, call = [], None
            for p in parts:
                if p == "CALL":
                    call = []
                    found.append(call)
                else:
                    call.append(p)
            calls[shell] = [(c[0], c[1:]) for c in found]
        self.assertEqual(calls["/bin/sh"], calls["/bin/bash"])
        # every comment is the template's own: no value ever goes into one
        comments = [line for line in text.splitlines() if line.lstrip().startswith("#")]
        self.assertEqual(comments, [line for line in batch.BATCH_SCRIPT.splitlines()
                                    if line.lstrip().startswith("#")])
        return calls["/bin/sh"]

    def test_quoting_holds_for_what_is_accepted(self):
        victim = self.victim / "VICTIM"
        words = ["verify", f"$(touch {victim})", f"`touch {victim}`", f";touch {victim}",
                 f"&& touch {victim}", f"| touch {victim}", f">{victim}", "'", '"', "#", "\\",
                 "*", "~", "-n", "a b", "$HOME", "${IFS}", "é", "--variants=x'y\"z"]
        jobs_dir = str(self.tmp / "shared jobs+dir")
        node_tmp = "/var/tmp/node-local_x.y+z"
        calls = self.render_and_run(jobs_dir, node_tmp, words)
        d = f"{jobs_dir}/42"
        self.assertEqual(calls, [
            ("srun", ["--kill-on-bad-exit=0", "--ntasks-per-node=1", "--nodes=2", "--whole",
                      "--cpu-bind=none", f"--bcast={node_tmp}/", f"{d}/payload.run", d, "file",
                      *words]),
            ("rm", ["-f", f"{d}/payload.run"])])
        self.assertFalse(victim.exists())
        self.assert_victim_untouched()

    def test_cli_refuses_before_any_cluster(self):
        """The real command line: one line, exit 2, no cluster asked, nothing made."""
        victim = self.victim / "VICTIM"
        jobs = self.tmp / "jobs"
        cases = [("--node-tmp", v) for v in (f"/tmp\ntouch {victim}", f"/tmp;touch {victim}",
                                              "/tmp/$(id)", "rel")]
        cases += [("--constraint", "zen5\ntouch x"), ("--constraint", "a;b"),
                  ("--constraint", ""), ("--time", "10\nx"), ("--time", ""),
                  ("--partition", "p\nq"), ("--partition", "a,b"),
                  ("--jobs-dir", str(self.tmp / "j\nk")), ("--jobs-dir", str(self.tmp / "j%j"))]
        with mock.patch.object(node_choice, "cluster_of", side_effect=AssertionError("asked")):
            for option, value in cases:
                argv = ["fleet", "run", "--jobs-dir", str(jobs), option, value, "--nodes", "1",
                        "--", "verify"]
                with self.subTest(option=option, value=value):
                    rc, out, err = cli(*argv)
                    self.assert_one_line(rc, err, option)
            for word in ("a\nb", "\x1b[2J"):
                rc, out, err = cli("fleet", "run", "--nodes", "1", "--", "verify", word)
                self.assert_one_line(rc, err, "the node command")
            for action in ("status", "collect"):
                for job in ("9\n", "../9", "²", "9;x"):
                    rc, out, err = cli("fleet", action, job, "--jobs-dir", str(jobs),
                                       *(["--out", str(self.tmp / "o")] if action == "collect"
                                         else []))
                    self.assert_one_line(rc, err, "not a job id")
        self.assertFalse(jobs.exists())
        self.assertFalse((self.tmp / "o").exists())
        self.assert_victim_untouched()

    def test_the_real_command(self):
        victim = self.victim / "VICTIM"
        r = subprocess.run([str(VDSOBENCH), "fleet", "run", "--node-tmp",
                            f"/tmp\ntouch {victim}", "--jobs-dir", str(self.tmp / "jobs"),
                            "--nodes", "1", "--", "run"],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
        self.assert_one_line(r.returncode, r.stderr, "--node-tmp", "valid:")
        self.assertFalse(victim.exists())
        self.assertFalse((self.tmp / "jobs").exists())
        self.assert_victim_untouched()


class ClusterSaysTest(Work):
    """What the cluster's controller says is input too: a node name that is no
    name, escapes in a reason, a host list that is not one."""

    def test_names_and_reasons(self):
        nodes = fleet_slurm.parse_show(
            "NodeName=n1 State=IDLE AvailableFeatures=zen3\n"
            "NodeName=n1;touch$IFS/tmp/x State=IDLE AvailableFeatures=zen3\n"
            "NodeName=n3 State=DOWN Reason=\x1b]0;owned\x07 AvailableFeatures=zen3\n")
        parts = fleet_slurm.parse_show("PartitionName=p Default=YES Nodes=n1,n1;touch$IFS/tmp/x,n3")
        c = node_choice.choose(nodes, parts, count="all")
        self.assertEqual(c["nodelist"], ["n1"])
        self.assertEqual([why for _, why in c["skipped"]],
                         ["not a Slurm node name", "DOWN: \\x1b]0;owned\\x07"])
        with self.assertRaises(UsageError) as cm:
            node_choice.choose(nodes,
                               fleet_slurm.parse_show("PartitionName=p Default=YES Nodes=n[a-b]"),
                               count="all")
        self.assertIn("not a host list", str(cm.exception))
        # a node's architecture and srun's reasons, as they reach the terminal
        arm = fleet_slurm.parse_pairs("NodeName=n4 State=IDLE Partitions=p")
        arm["Arch"] = "aarch64\x1b[2J\u202e"  # as a JSON-speaking controller could give it
        with self.assertRaises(UsageError) as cm:
            node_choice.choose([arm],
                               fleet_slurm.parse_show("PartitionName=p Default=YES Nodes=n4"),
                               count="all", arch="x86_64")
        self.assertTrue(str(cm.exception).isprintable(), str(cm.exception))
        self.assertIn("aarch64\\x1b[2J", str(cm.exception))
        reasons = outcomes.srun_reasons("srun: error: n1: task 0: Exited \x1b]0;x\x07\u2028y\n"
                                     "srun: error: n\x1b2: tasks 1-2: Killed\n")
        self.assertTrue(all(k.isprintable() and v.isprintable() for k, v in reasons.items()),
                        reasons)
        # what it says of the job is kept printable and read back
        jobs = self.tmp / "jobs"
        (jobs / "9").mkdir(parents=True)
        record = good_record()
        info = fleet_slurm.parse_pairs("JobId=9 JobState=FAILED Reason=\x1b[2Jgone "
                                       "NodeList=n[x-y]")
        records.save_record(jobs, records.remember(record, info))
        back = records.read_record(jobs, "9")
        self.assertEqual(back["slurm"]["Reason"], "\\x1b[2Jgone")
        self.assertEqual(back["nodes"], ["n1"])  # not a host list: the nodes as they were


class PayloadTest(Work):
    """The payload's own values: the node's name and the job id become file names,
    the host name and kernel go into JSON."""

    def setUp(self):
        super().setUp()
        top = self.tmp / "src" / "vdsobench-x"
        top.mkdir(parents=True)
        (top / "vdsobench").write_text("#!/bin/sh\nexit 0\n")
        (top / "vdsobench").chmod(0o755)
        bundle = self.tmp / "b.tar.gz"
        subprocess.run(["tar", "-czf", str(bundle), "-C", str(top.parent), top.name], check=True)
        self.jobs = self.tmp / "jobs" / "42"
        self.jobs.mkdir(parents=True)
        self.payload = self.tmp / "node" / "slurm_bcast_42.0_n1"
        self.payload.parent.mkdir()
        batch.write_payload(self.payload, bundle)

    def run_payload(self, path_first=None, **env):
        e = dict(os.environ, **{"SLURM_JOB_ID": "42", "SLURMD_NODENAME": "n1", **env})
        if path_first:
            e["PATH"] = f"{path_first}:{e['PATH']}"
        return subprocess.run([str(self.payload), str(self.jobs), "none", "verify"], env=e,
                              capture_output=True, text=True)

    def test_hostile_names_refused(self):
        for name, job in (("../../victim/x", "42"), ("n1/../../x", "42"), (".hidden", "42"),
                          ("n1\nx", "42"), ("n1", "42/../../victim"), ("n1", "4 2")):
            with self.subTest(node=name, job=job):
                r = self.run_payload(SLURMD_NODENAME=name, SLURM_JOB_ID=job)
                self.assertEqual(r.returncode, 95, r.stderr)
                self.assertIn("job id or node name", r.stderr)
        self.assertEqual(os.listdir(self.jobs), [])
        self.assert_victim_untouched()

    def test_exit_record_stays_json(self):
        stubs = self.tmp / "stubs"
        stubs.mkdir()
        for name, text in (("hostname", 'h", "rc": 0, "x": "\\033[31m'),
                           ("uname", '6.1"\\\\\n}')):
            (stubs / name).write_text(f"#!/bin/sh\nprintf '{text}\\n'\n")
            (stubs / name).chmod(0o755)
        r = self.run_payload(path_first=stubs)
        self.assertEqual(r.returncode, 0, r.stderr)
        info = json.loads((self.jobs / "42-n1.exit").read_text())
        self.assertEqual(info["rc"], 0)
        self.assertNotIn("x", info)
        self.assertTrue(info["host"].isprintable() and '"' not in info["host"], info["host"])
        self.assertTrue(info["kernel"].isprintable() and "\\" not in info["kernel"])
        record = {"job": "42", "command": ["verify"], "output": "none", "nodes": ["n1"]}
        (o,) = outcomes.node_outcomes(self.tmp / "jobs", record)
        self.assertEqual(o["state"], "ok", o)


# ---- the local cluster's directory ---------------------------------------------------------------

class BundleAttackTest(Work):
    """fleet run --bundle: the file read by the safe reader, its BUNDLE.json's
    fields checked, and a failed submit leaving a record that says so."""

    def setUp(self):
        super().setUp()
        helper = fleet_support.SubmitCase()
        helper.setUp()
        self.addCleanup(helper.doCleanups)
        self.cluster, self.jobs = helper.cluster, self.tmp / "jobs"

    def fleet_run(self, bundle_path):
        with mock.patch.object(node_choice, "cluster_of", return_value=self.cluster):
            return cli("fleet", "run", "--jobs-dir", str(self.jobs), "--bundle",
                       str(bundle_path), "--no-wait", "--nodes", "1", "--", "verify")

    def bundle(self, manifest, name="b.tar.gz", link=False):
        """A bundle whose vdsobench-x/BUNDLE.json holds manifest (bytes or JSON)."""
        path = self.tmp / name
        raw = manifest if isinstance(manifest, bytes) else json.dumps(manifest).encode()
        with tarfile.open(path, "w:gz") as tar:
            info = tarfile.TarInfo("vdsobench-x/BUNDLE.json")
            if link:
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tar.addfile(info)
            else:
                info.size = len(raw)
                tar.addfile(info, io.BytesIO(raw))
        return path

    def refused(self, bundle_path, *words):
        rc, out, err = self.fleet_run(bundle_path)
        self.assert_one_line(rc, err, "--bundle", *words)
        self.cluster.submit.assert_not_called()
        self.assert_victim_untouched()
        self.assertEqual(list(self.jobs.glob("*/job.json")), [])

    def test_odd_files(self):
        fifo = self.tmp / "fifo"
        os.mkfifo(fifo)
        big = self.tmp / "big.tar.gz"
        with open(big, "wb") as f:
            f.truncate(bundle_check.BUNDLE_MAX + 1)
        (self.tmp / "to-fifo").symlink_to(fifo)
        (self.tmp / "dir").mkdir()
        truncated = self.tmp / "cut.tar.gz"
        truncated.write_bytes(self.bundle({"arch": "x86_64"}).read_bytes()[:40])
        for path, words in ((fifo, ("named pipe",)), ("/dev/zero", ("character device",)),
                            (big, ("larger than",)), (self.tmp / "to-fifo", ("named pipe",)),
                            (self.tmp / "dir", ("directory",)),
                            (truncated, ("not a vdsobench bundle",))):
            with self.subTest(str(path)):
                self.refused(path, *words)

    def test_manifest_fields_checked(self):
        cases = ((["x86_64"], "not a JSON object"), ({}, "not a JSON object"),
                 ({"arch": 5}, "arch is 5"), ({"arch": "x86_64\nx"}, "not x86_64"),
                 ({"arch": "x86_64", "build": "abc"}, "build is"),
                 ({"arch": "x86_64", "build": {"short": [1]}}, "build.short"),
                 ({"arch": "x86_64", "build": {"short": "\x1b[2J"}}, "build.short"),
                 ({"arch": "x86_64", "build": {"dirty": "yes"}}, "build.dirty"),
                 ({"arch": "x86_64", "files": {"bin/x": "zz"}},
                  'files.bin/x is "zz", not a SHA-256 in hex'),
                 ({"format": "vdsobench-bundle/0"}, "format is"),
                 ({"arch": "x86_64", "commands": ["run; rm -rf /"]}, "commands.0 is"),
                 (b"[" * 100000, "not JSON"), (b"\xff", "not JSON"),
                 (b" " * (bundle_check.MANIFEST_MAX + 1), "over 1024 KB"))
        for i, (manifest, words) in enumerate(cases):
            with self.subTest(words=words, i=i):
                self.refused(self.bundle(manifest, f"m{i}.tar.gz"), words)
        self.refused(self.bundle({}, "link.tar.gz", link=True), "not a regular file")

    def test_a_bundle_that_unpacks_too_far(self):
        """BUNDLE.json is the last member: a bomb before it is refused as soon as a
        member's header says how far it reaches, not inflated."""
        path = self.tmp / "bomb.tar.gz"
        with tarfile.open(path, "w:gz") as tar:
            info = tarfile.TarInfo("vdsobench-x/big")
            info.size = 5000
            tar.addfile(info, io.BytesIO(b"\0" * 5000))
            info = tarfile.TarInfo("vdsobench-x/BUNDLE.json")
            raw = json.dumps({"arch": "x86_64"}).encode()
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
        with mock.patch.object(bundle_check, "UNPACKED_MAX", 4096):
            self.refused(path, "unpacks to over")
        with mock.patch.object(bundle_check, "MEMBERS_MAX", 1):
            self.refused(path, "first 1 members")

    def test_a_failed_submit_leaves_its_record(self):
        self.cluster.submit.side_effect = fleet_slurm.Failure(
            "sbatch: error: Batch job submission failed: Invalid partition")
        rc, out, err = self.fleet_run(self.bundle({"arch": "x86_64"}))
        self.assertEqual(rc, 1, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        [path] = self.jobs.glob("submission-*.json")
        record = json.loads(path.read_text())
        self.assertEqual(record["state"], "submit failed")
        self.assertIn("Invalid partition", record["reason"])
        self.assertEqual(record["command"], ["verify"])
        self.assert_victim_untouched()

    def test_a_good_submit_leaves_only_the_job(self):
        rc, out, err = self.fleet_run(self.bundle({"arch": "x86_64"}))
        self.assertEqual(rc, 0, err)
        self.assertEqual(list(self.jobs.glob("submission-*")), [])
        self.assertTrue((self.jobs / "77" / "job.json").is_file())


class LocalClusterTest(Work):
    def test_conf_values(self):
        ports = [7001, 7002, 7003, 7004]
        features = {"n1": ["zen3", "local_n1"], "n2": ["local_n2"]}
        for value in hostile(self.victim / "VICTIM") + ["/tmp/a b", "/tmp/a=b", "/tmp/a#b"]:
            with self.subTest(value=value), self.assertRaises(UsageError) as cm:
                fleet_local.render_conf(value, ports, features)
            self.assertIn("--dir", str(cm.exception))
        for bad in ("zen3\nProlog=/tmp/x", "a b", "a#b"):
            with self.assertRaises(UsageError):
                fleet_local.render_conf("/x", ports, {"n1": [bad], "n2": []})
        with self.assertRaises(ValueError):
            fleet_local.render_conf("/x", [7001, "7002\nProlog=/x", 1, 2], features)
        text = fleet_local.render_conf(str(self.tmp / "c-1.x+y"), ports, features, 1234)
        keys = [line.split("=", 1)[0] for line in text.splitlines()
                if line and not line.startswith("#")]
        template = [line.split("=", 1)[0] for line in fleet_local.CONF.splitlines()
                    if line and not line.startswith(("#", "{"))]
        self.assertEqual([k for k in keys if k not in ("NodeName",)], template)

    def test_cli_refuses_a_hostile_dir(self):
        for action in ("up", "down"):
            for value in (f"{self.tmp}/c\nProlog={self.victim}/x", f"{self.tmp}/c %n",
                          f"{self.tmp}/c#x"):
                with self.subTest(action=action, value=value):
                    rc, out, err = cli("fleet", "local-cluster", action, "--dir", value)
                    self.assert_one_line(rc, err, "--dir", "valid:")
        self.assertEqual(sorted(os.listdir(self.tmp)), ["victim"])  # no cluster directory
        odd = self.tmp / "t\nx"
        odd.mkdir()
        with mock.patch.dict(os.environ, TMPDIR=str(odd)), \
                mock.patch.object(fleet_local.tempfile, "tempdir", None):
            rc, out, err = cli("fleet", "local-cluster", "down")
        self.assert_one_line(rc, err, "$TMPDIR")

    @unittest.skipIf(os.geteuid() != 0, "needs root: the directories are another user's")
    def test_down_leaves_what_is_not_ours(self):
        def made(name, mode=0o700, uid=0, files=()):
            d = self.victim / name
            d.mkdir()
            for f, text in files:
                (d / f).write_text(text.replace("DIR", str(d)))
            os.chmod(d, mode)
            os.chown(d, uid, -1)
            return d
        ours = fleet_local.CONF.splitlines()[0] + "\n"
        record = '{"dir": "DIR", "pids": {}}'
        cases = [made("etc-slurm", 0o755, files=[("slurm.conf", "ClusterName=x\n")]),
                 made("etc-munge", files=[("munge.key", "k")]),
                 made("world-writable", 0o1777, files=[("cluster.json", record)]),
                 made("another-users", 0o700, 65534, files=[("slurm.conf", ours)]),
                 made("record-of-another", files=[("cluster.json",
                                                   '{"dir": "/elsewhere", "pids": {}}')])]
        self.before = snapshot(self.victim)
        for d in cases:
            with self.subTest(d=d.name):
                rc, out, err = cli("fleet", "local-cluster", "down", "--dir", str(d))
                self.assert_one_line(rc, err, "not a local cluster's directory")
        link = self.tmp / "link"
        link.symlink_to(cases[0])
        rc, out, err = cli("fleet", "local-cluster", "down", "--dir", str(link))
        self.assert_one_line(rc, err, "not a local cluster's directory")
        with mock.patch.object(fleet_local.packages, "ensure_group"):
            rc, out, err = cli("fleet", "local-cluster", "up", "--dir", str(cases[2]))
        self.assert_one_line(rc, err, "not a local cluster's directory")
        self.assert_victim_untouched()

    @unittest.skipIf(os.geteuid() != 0, "needs root, as local-cluster does")
    def test_down_stops_only_its_own(self):
        """A record naming a pid that is not the cluster's: that process lives."""
        sleeper = subprocess.Popen(["sleep", "60"])
        self.addCleanup(sleeper.wait)
        self.addCleanup(sleeper.kill)
        d = self.tmp / "cluster"
        d.mkdir(mode=0o700)
        (d / "cluster.json").write_text(json.dumps(
            {"dir": str(d), "conf": "", "socket": "", "pids": {"n1": sleeper.pid}}))
        rc, out, err = cli("fleet", "local-cluster", "down", "--dir", str(d))
        self.assertEqual(rc, 0, err)
        self.assertFalse(d.exists())
        self.assertIsNone(sleeper.poll())  # an empty marker named it once: not any more
        self.assert_victim_untouched()


if __name__ == "__main__":
    unittest.main()
