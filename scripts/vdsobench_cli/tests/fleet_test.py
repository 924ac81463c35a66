"""fleet without a cluster: the parsers on output recorded from Slurm 22.05.8,
the choice of nodes, the payload run by sh with a made-up bundle, what each
node left and the reasons, the agreement and verdict summaries on synthetic
numbers, and collect on recorded results files. The real cluster is
fleet_local_test.py's."""

import contextlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.fleet import batch, fleet_slurm, node_choice, options as fleet_options
from vdsobench_cli import main
from vdsobench_cli.cli import packages
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.core import hostlist
from vdsobench_cli.tests.fleet_support import (SPR_CPUINFO, UNKNOWN_CPUINFO, ZEN3_CPUINFO,
                                               SubmitCase, node, partition)

TESTDATA = Path(__file__).resolve().parent / "testdata"

# Recorded from Slurm 22.05.8 (`scontrol show node -o`, `show partition -o`, `show job -o`).
NODE_N1 = (
    "NodeName=n1 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=2.53 "
    "AvailableFeatures=zen5,fleet_a ActiveFeatures=zen5,fleet_a Gres=(null) NodeAddr=localhost "
    "NodeHostName=localhost Port=16821 Version=22.05.8 OS=Linux 6.18.44-fc-v669 #1 SMP "
    "PREEMPT_DYNAMIC @0  RealMemory=1 AllocMem=0 FreeMem=20318 Sockets=1 Boards=1 State=IDLE "
    "ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=fleet  "
    "BootTime=2026-12-01T05:17:04 SlurmdStartTime=2026-12-01T05:44:27 "
    "LastBusyTime=2026-12-01T05:47:36 CfgTRES=cpu=1,mem=1M,billing=1 AllocTRES= CapWatts=n/a "
    "CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s")
PARTITION = (
    "PartitionName=fleet AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL "
    "Default=YES QoS=N/A DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 "
    "Hidden=NO MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO "
    "MaxCPUsPerNode=UNLIMITED Nodes=n[1-2] PriorityJobFactor=1 PriorityTier=1 RootOnly=NO "
    "ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF State=UP TotalCPUs=2 "
    "TotalNodes=2 SelectTypeParameters=NONE JobDefaults=(null) DefMemPerNode=UNLIMITED "
    "MaxMemPerNode=UNLIMITED TRES=cpu=2,mem=2M,node=2,billing=2")
JOB = (
    "JobId=2 JobName=job2.sh UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901758 "
    "Nice=0 Account=(null) QOS=(null) JobState=COMPLETED Reason=None Dependency=(null) "
    "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:05 "
    "TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12-01T05:47:30 "
    "StartTime=2026-12-01T05:47:31 EndTime=2026-12-01T05:47:36 Partition=fleet "
    "AllocNode:Sid=localhost:3079 ReqNodeList=(null) ExcNodeList=(null) NodeList=n[1-2] "
    "BatchHost=n1 NumNodes=2 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
    "TRES=cpu=2,node=2,billing=2 Socks/Node=* NtasksPerN:B:S:C=1:0:*:* CoreSpec=* "
    "Features=(null) Command=/tmp/fp/job2.sh WorkDir=/tmp/fp StdOut=/tmp/fp/jobs/batch-2.out "
    "Power= ")
CONFIG = """\
Configuration data as of 2026-12-01T05:48:20
AccountingStorageType   = accounting_storage/none
AuthInfo                = socket=/tmp/fp/munge.socket
JobCompLoc              = /tmp/fp/log/jobcomp.txt
MinJobAge               = 3600 sec
"""
MUNGE_DOWN = """\
sbatch: error: If munged is up, restart with --num-threads=10
sbatch: error: Munge encode failed: Failed to access "/tmp/fp/nomunge.socket": No such file \
or directory (Did you start munged?)
sbatch: error: slurm_send_node_msg: auth_g_create: REQUEST_SUBMIT_BATCH_JOB has authentication \
error
sbatch: error: Batch job submission failed: Protocol authentication error
"""
NO_CONTROLLER = "slurm_load_node error: Unable to contact slurm controller (connect failure)\n"
BAD_PARTITION = ("sbatch: error: invalid partition specified: nope\n"
                 "sbatch: error: Batch job submission failed: Invalid partition name specified\n")
BAD_FEATURE = "sbatch: error: Batch job submission failed: Invalid feature specification\n"
class ParseTest(unittest.TestCase):
    def test_node_line(self):
        n = fleet_slurm.parse_pairs(NODE_N1)
        self.assertEqual(n["NodeName"], "n1")
        self.assertEqual(n["OS"], "Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0")
        self.assertEqual(fleet_slurm.features(n), ["zen5", "fleet_a"])
        self.assertEqual(n["State"], "IDLE")
        self.assertEqual(n["AllocTRES"], "")
        self.assertEqual(fleet_slurm.usable(n), (True, None))

    def test_job_and_partition_lines(self):
        (j,) = fleet_slurm.parse_show(JOB + "\n")
        self.assertEqual((j["JobId"], j["JobState"], j["NodeList"], j["BatchHost"]),
                         ("2", "COMPLETED", "n[1-2]", "n1"))
        self.assertEqual(j["AllocNode:Sid"], "localhost:3079")
        self.assertEqual(fleet_slurm.exit_code(j["ExitCode"]), (0, 0))
        self.assertEqual(fleet_slurm.exit_code("1:15"), (1, 15))
        p = fleet_slurm.parse_pairs(PARTITION)
        self.assertEqual((p["PartitionName"], p["Default"], p["Nodes"]), ("fleet", "YES", "n[1-2]"))

    def test_config(self):
        c = fleet_slurm.parse_config(CONFIG)
        self.assertEqual(c["AccountingStorageType"], "accounting_storage/none")
        self.assertEqual(c["AuthInfo"], "socket=/tmp/fp/munge.socket")
        self.assertNotIn("Configuration data as of 2026-12-01T05:48:20", c)

    def test_hostlists(self):
        self.assertEqual(hostlist.expand("n[1-3,07],gpu1"),
                         ["n1", "n2", "n3", "n07", "gpu1"])
        self.assertEqual(hostlist.expand("rack[1-2]-n[01-02]"),
                         ["rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"])
        self.assertEqual(hostlist.expand("n[08-10]"), ["n08", "n09", "n10"])
        self.assertEqual(hostlist.expand("(null)"), [])
        self.assertEqual(hostlist.expand(""), [])
        with self.assertRaises(ValueError):
            hostlist.expand("n[a-b]")

    def test_compressed_hostlists(self):
        self.assertEqual(hostlist.compress(["n1", "n2", "n3", "n07", "gpu1"]),
                         "gpu1,n[1-3,07]")
        self.assertEqual(hostlist.compress(["n10", "n9", "login"]), "login,n[9-10]")
        self.assertEqual(hostlist.compress(["n5"]), "n5")
        names = [f"node{i:03d}" for i in range(1, 1001) if i != 500]
        text = hostlist.compress(names)
        self.assertEqual(text, "node[001-499,501-1000]")
        self.assertEqual(hostlist.expand(text), names)

    def test_states(self):
        self.assertEqual(fleet_slurm.state_words("IDLE+DRAIN"), ("IDLE", {"DRAIN"}))
        self.assertEqual(fleet_slurm.state_words("DOWN*"), ("DOWN", {"NOT_RESPONDING"}))
        self.assertTrue(fleet_slurm.usable({"State": "MIXED"})[0])
        self.assertTrue(fleet_slurm.usable({"State": "ALLOCATED"})[0])
        for state in ("IDLE+DRAIN", "DOWN*", "IDLE*", "ALLOCATED+DRAIN", "FUTURE", "UNKNOWN"):
            self.assertFalse(fleet_slurm.usable({"State": state})[0], state)
        ok, why = fleet_slurm.usable({"State": "IDLE+DRAIN", "Reason": "bad DIMM"})
        self.assertEqual(why, "IDLE+DRAIN: bad DIMM")

    def test_constraints(self):
        self.assertEqual(fleet_slurm.simple_constraint("zen5|sapphirerapids"),
                         ("|", ["zen5", "sapphirerapids"]))
        self.assertEqual(fleet_slurm.simple_constraint("zen5&local_n1"),
                         ("&", ["zen5", "local_n1"]))
        for complex_one in ("[zen3*1&zen5*1]", "(a|b)&c", "a|b&c", "a*2"):
            self.assertIsNone(fleet_slurm.simple_constraint(complex_one), complex_one)
        self.assertEqual(fleet_slurm.constraint_words("[zen3*1&zen5*2]"), ["zen3", "zen5"])
        self.assertTrue(fleet_slurm.matches(["zen5", "a"], "zen3|zen5"))
        self.assertFalse(fleet_slurm.matches(["zen5"], "zen5&a"))
        self.assertTrue(fleet_slurm.matches(["zen5"], None))

    def test_cpu_features(self):
        self.assertEqual(fleet_slurm.feature_of(fleet_slurm.cpu_of(ZEN3_CPUINFO)), "zen3")
        self.assertEqual(fleet_slurm.feature_of(fleet_slurm.cpu_of(SPR_CPUINFO)),
                         "sapphirerapids")
        self.assertIsNone(fleet_slurm.feature_of(fleet_slurm.cpu_of(UNKNOWN_CPUINFO)))
        self.assertEqual(fleet_slurm.cpu_of(""), {})
        self.assertIn("zen3", fleet_slurm.cpu_features())
        self.assertNotIn("local_n1", fleet_slurm.cpu_features())


class ClientTest(unittest.TestCase):
    def test_explain(self):
        e = fleet_slurm.explain("sbatch", MUNGE_DOWN, "/c")
        self.assertIsInstance(e, UsageError)
        self.assertIn("munge is not running", str(e))
        self.assertIn("/tmp/fp/nomunge.socket", str(e))
        e = fleet_slurm.explain("scontrol show", NO_CONTROLLER, "/c")
        self.assertIsInstance(e, UsageError)
        self.assertIn("slurmctld", str(e))
        self.assertIsInstance(fleet_slurm.explain("sbatch", BAD_PARTITION, "/c"), UsageError)
        self.assertIsInstance(fleet_slurm.explain("sbatch", BAD_FEATURE, "/c"), UsageError)
        e = fleet_slurm.explain("sbatch", "sbatch: error: something else\n", "/c")
        self.assertIsInstance(e, Failure)
        self.assertIn("something else", str(e))

    def test_conf_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            conf = Path(tmp, "slurm.conf")
            with self.assertRaises(UsageError) as cm:
                fleet_slurm.conf_path(None, {"SLURM_CONF": str(conf)})
            self.assertIn("SLURM_CONF", str(cm.exception))
            self.assertIn("local-cluster up", str(cm.exception))
            conf.write_text("ClusterName=x\n")
            self.assertEqual(fleet_slurm.conf_path(None, {"SLURM_CONF": str(conf)}),
                             conf.resolve())
            self.assertEqual(fleet_slurm.conf_path(str(conf), {}), conf.resolve())
            with self.assertRaises(UsageError) as cm:
                fleet_slurm.conf_path(str(conf) + ".no", {"SLURM_CONF": str(conf)})
            self.assertIn("--slurm-conf", str(cm.exception))

    def test_no_clients(self):
        with mock.patch.object(fleet_slurm.shutil, "which", return_value=None), \
                self.assertRaises(UsageError) as cm:
            fleet_slurm.check_clients()
        self.assertIn("sbatch", str(cm.exception))
        self.assertIn("slurm-client", str(cm.exception))

    def test_slurm_group_on_demand(self):
        with mock.patch.object(packages, "missing", return_value=["slurmd", "munge"]), \
                mock.patch.object(packages.os, "geteuid", return_value=1000), \
                self.assertRaises(UsageError) as cm:
            packages.ensure_group(packages.SLURM_PACKAGES, "fleet local-cluster")
        self.assertIn("slurmd munge", str(cm.exception))
        install = mock.Mock()
        with mock.patch.object(packages, "missing", return_value=[]), \
                mock.patch.object(packages, "install", install):
            packages.ensure_group(packages.SLURM_PACKAGES, "fleet local-cluster")
        install.assert_not_called()
        self.assertNotIn("slurmd", packages.PACKAGES)  # never installed by setup


class ChooseTest(unittest.TestCase):
    NODES = [node("a1", features="zen3,rack1"), node("a2", features="zen3,rack2"),
             node("a10", features="zen3", state="ALLOCATED"),
             node("b1", features="sapphirerapids"),
             node("b2", features="sapphirerapids", state="IDLE+DRAIN", reason="bad DIMM"),
             node("c1", features="gpu"), node("d1", features="zen5", arch="aarch64")]
    PARTS = [partition("fleet", "a[1-2],a10,b[1-2],c1,d1"), partition("small", "a1", False)]

    def test_partitions(self):
        self.assertEqual(node_choice.choose(self.NODES, self.PARTS, count=1)["partition"], "fleet")
        with self.assertRaises(UsageError) as cm:
            node_choice.choose(self.NODES, self.PARTS, "nope", count=1)
        self.assertIn("'nope'", str(cm.exception))
        self.assertIn("valid: fleet, small", str(cm.exception))
        with self.assertRaises(UsageError) as cm:
            node_choice.choose(self.NODES, [partition("small", "a1", False)], count=1)
        self.assertIn("--partition", str(cm.exception))

    def test_all(self):
        c = node_choice.choose(self.NODES, self.PARTS, count="all", arch="x86_64")
        self.assertEqual(c["nodelist"], ["a1", "a2", "a10", "b1", "c1"])
        self.assertEqual(c["count"], 5)
        skipped = dict(c["skipped"])
        self.assertEqual(skipped["b2"], "IDLE+DRAIN: bad DIMM [root@2026-12-01T05:00:00]")
        self.assertIn("aarch64", skipped["d1"])

    def test_constraint(self):
        c = node_choice.choose(self.NODES, self.PARTS, constraint="zen3|sapphirerapids",
                               count="all")
        self.assertEqual(c["nodelist"], ["a1", "a2", "a10", "b1"])
        c = node_choice.choose(self.NODES, self.PARTS, constraint="zen3&rack2", count="all")
        self.assertEqual(c["nodelist"], ["a2"])
        with self.assertRaises(UsageError) as cm:
            node_choice.choose(self.NODES, self.PARTS, constraint="zen9|zen3", count="all")
        self.assertIn("'zen9'", str(cm.exception))
        self.assertIn("valid: gpu, rack1, rack2, sapphirerapids, zen3, zen5", str(cm.exception))
        # only Slurm judges a complex one, so fleet does not pick nodes against it
        c = node_choice.choose(self.NODES, self.PARTS, constraint="[zen3*1&gpu*1]", count=2)
        self.assertEqual((c["nodelist"], c["count"]), (None, 2))
        with self.assertRaises(UsageError):
            node_choice.choose(self.NODES, self.PARTS, constraint="[zen3*1&gpu*1]", count="all")

    def test_count(self):
        c = node_choice.choose(self.NODES, self.PARTS, count=3)
        self.assertEqual((c["nodelist"], c["count"]), (None, 3))
        with self.assertRaises(UsageError) as cm:
            node_choice.choose(self.NODES, self.PARTS, constraint="sapphirerapids", count=2)
        self.assertIn("1 usable node", str(cm.exception))
        self.assertIn("valid: 1 to 1, or all", str(cm.exception))

    def test_one_per_feature(self):
        c = node_choice.choose(self.NODES, self.PARTS, one_per_feature=True, arch="x86_64")
        self.assertEqual(c["groups"], {"zen3": ["a1", "a2", "a10"], "sapphirerapids": ["b1"],
                                       "(no CPU-model feature)": ["c1"]})
        self.assertEqual(c["nodelist"], ["a1", "b1", "c1"])
        busy = [node("a1", features="zen3", state="ALLOCATED"), node("a2", features="zen3")]
        c = node_choice.choose(busy, [partition("p", "a[1-2]")], one_per_feature=True)
        self.assertEqual(c["nodelist"], ["a2"])  # the idle one

    def test_nothing_usable(self):
        with self.assertRaises(UsageError) as cm:
            node_choice.choose([node("x", state="DOWN*")], [partition("p", "x")], count="all")
        self.assertIn("x DOWN*", str(cm.exception))


class CommandTest(unittest.TestCase):
    def test_node_command(self):
        self.assertEqual(batch.node_command(["--", "run", "--clocks", "monotonic"],
                                            main.parser()),
                         (["run", "--clocks", "monotonic"], "file"))
        self.assertEqual(batch.node_command(["compare", "a", "b"], main.parser())[1], "file")
        self.assertEqual(batch.node_command(["verify"], main.parser())[1], "none")
        for bad, word in ((["recipe", "raw-vdso"], "recipe"), (["sim"], "sim"), ([], "--"),
                          (["run", "--out", "x"], "--out"), (["compare", "--out=x"], "--out"),
                          (["compare", "a", "b", "--plot", "d"], "--plot"),
                          (["run", "--repetitions", "0"], "out of range"),
                          (["verify", "--no-such-option"], "--no-such-option")):
            with self.assertRaises(UsageError) as cm:
                batch.node_command(bad, main.parser())
            self.assertIn(word, str(cm.exception))

    def test_cli_usage(self):
        err = io.StringIO()
        for argv, text in ((["fleet"], "an action is required"),
                           (["fleet", "run", "--", "run"], "--nodes N"),
                           (["fleet", "run", "--nodes", "0", "--", "run"], "1 to 100000 or all"),
                           (["fleet", "run", "--nodes", "2", "--one-per-feature", "--", "run"],
                            "exclude"),
                           (["fleet", "collect", "7"], "--out"),
                           (["fleet", "status", "x", "--jobs-dir", "/nonexistent"],
                            "not a job id"),
                           (["fleet", "local-cluster", "sideways"], "invalid choice")):
            with contextlib.redirect_stderr(err):
                self.assertEqual(main.main(argv), 2, argv)
            self.assertIn(text, err.getvalue().splitlines()[-1], argv)

    def test_batch_script(self):
        text = batch.batch_script("/shared/jobs dir", ["run", "--variants", "generic_*+rdtscp"],
                                  "file", "/scratch/")
        self.assertIn("dir='/shared/jobs dir'/$SLURM_JOB_ID", text)
        self.assertIn("--bcast=/scratch/", text)
        self.assertIn("'generic_*+rdtscp'", text)  # quoted: no glob on the node
        self.assertIn('"$dir/payload.run" "$dir" file run', text)
        self.assertIn("--kill-on-bad-exit=0", text)
        r = subprocess.run(["sh", "-n"], input=text, text=True, capture_output=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_sbatch_options(self):
        request = fleet_options.JobRequest(constraint="zen3|zen5", exclusive=True, time=None)
        opts = batch.sbatch_options({"partition": "p", "count": 2, "nodelist": ["a", "b"]},
                                    request, Path("/j"))
        for o in ("--hold", "--nodes=2", "--nodelist=a,b", "--constraint=zen3|zen5",
                  "--exclusive", "--no-kill", "--no-requeue", "--ntasks-per-node=1",
                  "--output=/j/%j/batch.out"):
            self.assertIn(o, opts)
        request = fleet_options.JobRequest(constraint=None, exclusive=False, time=None)
        opts = batch.sbatch_options({"partition": "p", "count": 3, "nodelist": None}, request,
                                    Path("/j"))
        self.assertNotIn("--exclusive", opts)
        self.assertFalse([o for o in opts if o.startswith(("--nodelist", "--constraint"))])


class SubmitTest(SubmitCase):
    """fleet run against a made-up cluster: what is staged, recorded and released."""

    def test_staged_recorded_released(self):
        rc, out, err = self.fleet_run("--nodes", "all", "--constraint", "local_n2")
        self.assertEqual(rc, 0, err)
        options, script = self.cluster.submit.call_args.args
        self.assertIn("--nodelist=n2", options)
        self.assertIn("--hold", options)
        self.cluster.release.assert_called_once_with("77")
        self.cluster.cancel.assert_not_called()
        d = self.jobs / "77"
        record = json.loads((d / "job.json").read_text())
        self.assertEqual((record["job"], record["nodes"], record["command"], record["output"]),
                         ("77", ["n2"], ["run", "--clocks", "monotonic"], "file"))
        self.assertEqual(record["bundle"]["commit"], "abc")
        payload = (d / "payload.run").read_bytes()
        self.assertTrue(payload.startswith(batch.payload_head().encode()))
        self.assertEqual(payload[len(batch.payload_head()):], self.bundle.read_bytes())
        self.assertTrue(os.access(d / "payload.run", os.X_OK))
        self.assertIn(f"dir={self.jobs.resolve()}/$SLURM_JOB_ID", (d / "batch.sh").read_text())
        self.assertIn("fleet: job 77 submitted", out)

    def test_a_job_id_seen_before_is_cancelled(self):
        (self.jobs / "77").mkdir(parents=True)
        (self.jobs / "77" / "precious").write_text("x")
        rc, out, err = self.fleet_run("--nodes", "2")
        self.assertEqual(rc, 2)
        self.assertIn("same id", err)
        self.cluster.cancel.assert_called_once_with("77")
        self.cluster.release.assert_not_called()
        self.assertEqual(os.listdir(self.jobs / "77"), ["precious"])

    def test_not_a_bundle(self):
        self.bundle.write_bytes(b"nope")
        rc, out, err = self.fleet_run("--nodes", "1")
        self.assertEqual(rc, 2)
        self.assertIn("not a vdsobench bundle", err)
        self.cluster.submit.assert_not_called()


FAKE_VDSOBENCH = """\
#!/bin/sh
# a made-up bundle's entry point: says its arguments, writes --out, exits as told
echo "args: $*"
out=
while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
[ -n "$out" ] && echo '{"made": "up"}' > "$out"
echo "a line on stderr" >&2
exit ${FAKE_RC:-0}
"""


class PayloadTest(unittest.TestCase):
    """The payload's shell lines, run by sh as srun would run them on a node."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-fleet-test-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        top = self.tmp / "src" / "vdsobench-test-x86_64"
        top.mkdir(parents=True)
        (top / "vdsobench").write_text(FAKE_VDSOBENCH)
        (top / "vdsobench").chmod(0o755)
        self.bundle = self.tmp / "b.tar.gz"
        with tarfile.open(self.bundle, "w:gz") as tar:
            tar.add(top, arcname=top.name)
        self.jobdir = self.tmp / "jobs" / "42"
        self.jobdir.mkdir(parents=True)
        self.node_tmp = self.tmp / "nodetmp"
        self.node_tmp.mkdir()
        self.payload = self.node_tmp / "slurm_bcast_42.0_n7"
        batch.write_payload(self.payload, self.bundle)

    def run_payload(self, output="file", *command, payload=None, **env):
        e = dict(os.environ, **{"SLURM_JOB_ID": "42", "SLURMD_NODENAME": "n7", **env})
        return subprocess.run([str(payload or self.payload), str(self.jobdir), output,
                               *(command or ("run", "--clocks", "monotonic"))],
                              env=e, capture_output=True, text=True)

    def test_a_node_that_runs(self):
        r = self.run_payload()
        self.assertEqual(r.returncode, 0, r.stderr)
        base = self.jobdir / "42-n7"
        self.assertEqual(Path(f"{base}.out").read_text(),
                         f"args: run --clocks monotonic --out {base}.json\n")
        self.assertEqual(json.loads(Path(f"{base}.json").read_text()), {"made": "up"})
        info = json.loads(Path(f"{base}.exit").read_text())
        self.assertEqual((info["job"], info["node"], info["rc"], info["phase"]),
                         ("42", "n7", 0, "run"))
        self.assertEqual(info["kernel"], os.uname().release)
        self.assertGreaterEqual(info["ended"], info["started"])
        self.assertEqual(info["cpus_allowed"],
                         Path("/proc/self/status").read_text().split(
                             "Cpus_allowed_list:")[1].split()[0])
        self.assertTrue(Path(f"{base}.cpuinfo").read_text().startswith("processor"))
        # the broadcast copy and the unpacked bundle are gone
        self.assertEqual(list(self.node_tmp.iterdir()), [])

    def test_a_failing_command(self):
        r = self.run_payload("none", "verify", FAKE_RC="3")
        self.assertEqual(r.returncode, 3)
        base = self.jobdir / "42-n7"
        self.assertEqual(json.loads(Path(f"{base}.exit").read_text())["rc"], 3)
        self.assertEqual(Path(f"{base}.err").read_text(), "a line on stderr\n")
        self.assertFalse(Path(f"{base}.json").exists())  # output none: no --out
        self.assertIn("args: verify\n", Path(f"{base}.out").read_text())

    def test_a_broken_bundle(self):
        broken = self.node_tmp / "slurm_bcast_42.0_n8"
        broken.write_bytes(batch.payload_head().encode() + b"not a tarball")
        broken.chmod(0o755)
        r = self.run_payload(payload=broken, SLURMD_NODENAME="n8")
        self.assertEqual(r.returncode, 96)
        info = json.loads((self.jobdir / "42-n8.exit").read_text())
        self.assertEqual((info["rc"], info["phase"]), (96, "unpack"))
        self.assertIn("could not unpack", (self.jobdir / "42-n8.err").read_text())

    def test_no_shared_directory(self):
        shutil.rmtree(self.jobdir)
        r = self.run_payload()
        self.assertEqual(r.returncode, 97)
        self.assertIn("must be on a file system the nodes share", r.stderr)

    def test_not_a_broadcast_copy_is_kept(self):
        kept = self.tmp / "payload.run"
        batch.write_payload(kept, self.bundle)
        self.assertEqual(self.run_payload(payload=kept).returncode, 0)
        self.assertTrue(kept.exists())


if __name__ == "__main__":
    unittest.main()
