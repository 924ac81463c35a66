"""fleet's outcomes, collect and summaries without a cluster: what each node
left and the reasons, collect on recorded results files, the agreement and
verdict summaries on synthetic numbers, the feature lines, and the local
cluster's pure parts. The real cluster is fleet_local_test.py's."""

import contextlib
import io
import json
import re
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.fleet import (batch, collect, collect_out, features, fleet_local, fleet_slurm,
                                 outcomes, records)
from vdsobench_cli import main
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.core import hostlist
from reports import fleet_summary, testsupport
from vdsobench_cli.tests.fleet_support import SPR_CPUINFO, UNKNOWN_CPUINFO, ZEN3_CPUINFO, node

TESTDATA = Path(__file__).resolve().parent / "testdata"
SRUN_LINES = """\
srun: cluster configuration lacks support for cpu binding
srun: error: n2: task 1: Exited with exit code 3
srun: error: Node failure on n7
vdsobench fleet: srun exit 3
"""



def results_file(ns_scale=1.0, cpu_text=None):
    """The recorded small results file, its times scaled (a slower or faster node)."""
    data = json.loads((TESTDATA / "results_small.json").read_text())
    for b in data["benchmarks"]:
        for k in ("real_time", "cpu_time"):
            if k in b:
                b[k] *= ns_scale
    if cpu_text:
        cpu = fleet_slurm.cpu_of(cpu_text)
        data["context"]["vdsobench"]["fingerprint"]["cpu"].update(cpu)
    return data


class OutcomeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-fleet-test-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.jobs = self.tmp / "jobs"
        self.d = self.jobs / "9"
        self.d.mkdir(parents=True)

    def record(self, command=("run",), nodes=("n1", "n2", "n3", "n7"), state="FAILED", **more):
        r = {"format": records.FORMAT, "job": "9", "command": list(command),
             "output": batch.node_command(command, main.parser())[1], "nodes": list(nodes),
             "partition": "fleet", "conf": "/c", "exclusive": True,
             "slurm": {"JobState": state, "Reason": "NonZeroExitCode"}, **more}
        records.save_record(self.jobs, r)
        return r

    def node_files(self, name, rc=0, cpuinfo=ZEN3_CPUINFO, results=None, err="", phase="run"):
        base = self.d / f"9-{name}"
        Path(f"{base}.cpuinfo").write_text(cpuinfo)
        Path(f"{base}.err").write_text(err)
        Path(f"{base}.out").write_text(f"{name} says hello\n")
        if results is not None:
            Path(f"{base}.json").write_text(json.dumps(results))
        Path(f"{base}.exit").write_text(json.dumps(
            {"job": "9", "node": name, "host": "h", "kernel": "6.1.0", "cpus_allowed": "0-3",
             "phase": phase, "rc": rc, "started": 10.0, "ended": 12.5}))

    def test_reasons(self):
        self.node_files("n1", results=results_file())
        self.node_files("n2", rc=2, err="warning\nvdsobench: error: --cpus: 9 is not a CPU\n")
        (self.d / "batch.out").write_text(SRUN_LINES.replace("n2:", "n3:"))
        record = self.record()
        by = {o["node"]: o for o in outcomes.node_outcomes(self.jobs, record)}
        self.assertEqual(by["n1"]["state"], "ok")
        self.assertEqual(by["n1"]["seconds"], 2.5)
        self.assertEqual(fleet_slurm.feature_of(by["n1"]["cpu"]), "zen3")
        self.assertEqual(by["n2"]["reason"], "exit 2: vdsobench: error: --cpus: 9 is not a CPU")
        self.assertEqual(by["n3"]["state"], "failed")
        self.assertIn("Exited with exit code 3", by["n3"]["reason"])
        self.assertIn("left no file", by["n3"]["reason"])
        self.assertIn("node failure", by["n7"]["reason"])

    def test_job_state_when_srun_said_nothing(self):
        record = self.record(nodes=("n1",), state="CANCELLED",
                             cancelled="pending after 3 s (Resources)")
        (o,) = outcomes.node_outcomes(self.jobs, record)
        self.assertEqual(o["state"], "failed")
        self.assertIn("job CANCELLED (NonZeroExitCode), pending after 3 s (Resources)",
                      o["reason"])

    def test_running_and_exit_0_without_file(self):
        self.node_files("n1", rc=0)  # a run that wrote no results
        record = self.record(nodes=("n1", "n2"), state="RUNNING")
        by = {o["node"]: o for o in outcomes.node_outcomes(self.jobs, record)}
        self.assertEqual((by["n1"]["state"], by["n1"]["reason"]),
                         ("failed", "exit 0 but no results file"))
        self.assertEqual(by["n2"]["state"], "running")
        record = self.record(command=("verify",), nodes=("n1",))
        (o,) = outcomes.node_outcomes(self.jobs, record)
        self.assertEqual(o["state"], "ok")  # verify writes no file

    def test_status_without_the_cluster(self):
        self.node_files("n1", results=results_file())
        self.record(nodes=("n1", "n2"), state="RUNNING", conf=str(self.tmp / "gone.conf"))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                mock.patch.object(fleet_slurm.shutil, "which", return_value="/usr/bin/x"):
            rc = main.main(["fleet", "status", "9", "--jobs-dir", str(self.jobs)])
        self.assertEqual(rc, 0, err.getvalue())
        self.assertIn("cannot ask Slurm", err.getvalue())
        self.assertIn("gone.conf is not a file", err.getvalue())
        self.assertRegex(out.getvalue(), r"ok +n1: Zen 3")
        self.assertRegex(out.getvalue(), r"running n2: ")

    def test_unpack_failure(self):
        self.node_files("n1", rc=96, phase="unpack", err="tar: bad\n")
        (o,) = outcomes.node_outcomes(self.jobs, self.record(nodes=("n1",)))
        self.assertEqual(o["reason"], "exit 96 while unpacking the bundle: tar: bad")

    def test_names(self):
        o = {"node": "n1", "cpu": fleet_slurm.cpu_of(ZEN3_CPUINFO), "kernel": "6.1.0-13-amd64"}
        self.assertEqual(collect.collected_name("9", o), "9-n1-zen3-6.1.0-13-amd64.json")
        o = {"node": "n/2", "cpu": fleet_slurm.cpu_of(UNKNOWN_CPUINFO), "kernel": None}
        self.assertEqual(collect.collected_name("9", o), "9-n-2-AuthenticAMD-99-200-unknown.json")
        self.assertEqual(outcomes.srun_reasons(SRUN_LINES),
                         {"n2": "Exited with exit code 3",
                          "n7": "node failure (srun: Node failure)"})

    def test_a_copy_never_overwrites(self):
        a, b, out = self.tmp / "a", self.tmp / "b", self.tmp / "out"
        a.write_text("one")
        b.write_text("two")
        out.mkdir()
        target = collect_out.CollectOut(out, force=True)
        self.assertEqual(target.copy_name("x.json", a), "x.json")  # free
        (out / "x.json").write_text("one")
        target = collect_out.CollectOut(out, force=True)
        self.assertIsNone(target.copy_name("x.json", a))  # there already: nothing to write
        self.assertEqual(target.copy_name("x.json", b), "x-2.json")  # never over another
        self.assertEqual(target.copy_name("x.json", b), "x-3.json")  # nor over one planned
        self.assertEqual(target.copy_name("logs/9-n1.err", b), "logs/9-n1.err")
        self.assertEqual((out / "x.json").read_text(), "one")

    def test_collect(self):
        """Two Zen 3 nodes (one 30% slower), a Sapphire Rapids one, one that failed."""
        self.node_files("n1", results=results_file(1.0, ZEN3_CPUINFO))
        self.node_files("n2", results=results_file(1.3, ZEN3_CPUINFO))
        self.node_files("n3", results=results_file(0.8, SPR_CPUINFO), cpuinfo=SPR_CPUINFO)
        (self.d / "batch.out").write_text("srun: error: n7: task 3: Exited with exit code 1\n")
        self.record()
        out = self.tmp / "collected"
        argv = ["fleet", "collect", "9", "--jobs-dir", str(self.jobs), "--out", str(out)]
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            self.assertEqual(main.main(argv), 1)
        text = stdout.getvalue()
        self.assertIn("nodes: 3 of 4 answered", text)
        self.assertIn("FAILED  n7", text)
        self.assertIn("Zen 3 (AMD EPYC 7763, 25/1/1): 2 nodes (n[1-2])", text)
        self.assertIn("  differ: n1 and n2 on 2 of 2; most on ", text)
        self.assertIn("(+30% on n2)", text)
        self.assertIn("Sapphire Rapids", text)
        self.assertIn("one node: nothing to agree with", text)
        self.assertIn("n7", stderr.getvalue().splitlines()[-1])
        names = sorted(p.name for p in out.glob("*.json"))
        self.assertEqual(names, ["9-n1-zen3-6.1.0.json", "9-n2-zen3-6.1.0.json",
                                 "9-n3-sapphirerapids-6.1.0.json", "nodes-9.json"])
        index = (out / "report-9" / "index.md").read_text()
        self.assertIn("Zen 3 (AMD EPYC 7763, 25/1/1)", index)
        self.assertIn("Sapphire Rapids", index)
        self.assertIn("9-n3-sapphirerapids-6.1.0.json", index)
        self.assertEqual((out / "summary-9.txt").read_text(), text)
        nodes = json.loads((out / "nodes-9.json").read_text())
        self.assertEqual([n["state"] for n in nodes["nodes"]], ["ok", "ok", "ok", "failed"])
        self.assertEqual(nodes["nodes"][0]["collected"], str(out / "9-n1-zen3-6.1.0.json"))
        # written in a stage, then published: the report names the files where they are
        merged = json.loads((out / "report-9" / "merged.json").read_text())
        self.assertEqual(sorted(merged["sources"]), sorted(str(p) for p in out.glob("9-*.json")))
        self.assertEqual([p.name for p in out.iterdir() if p.name.startswith(".")], [])
        # n7 comes back later: a second collect (--force: it replaces the summary, the
        # table and the report) adds it and keeps what was there
        self.node_files("n7", results=results_file(1.0, ZEN3_CPUINFO))
        before = (out / "9-n1-zen3-6.1.0.json").read_bytes()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(main.main(argv + ["--force"]), 0)
        self.assertTrue((out / "9-n7-zen3-6.1.0.json").exists())
        self.assertEqual((out / "9-n1-zen3-6.1.0.json").read_bytes(), before)
        self.assertFalse(list(out.glob("*-2.json")))
        # one column per CPU model: the Zen 3 node nearest its model's medians, and n3
        per_model = self.tmp / "per-model"
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(main.main(argv[:-1] + [str(per_model), "--report", "per-model"]),
                             0)
        self.assertIn("report: one node per CPU model", stdout.getvalue())
        index = (per_model / "report-9" / "index.md").read_text()
        self.assertEqual(sorted(set(re.findall(r"9-n\d-[a-z0-9]+-6\.1\.0\.json", index))),
                         ["9-n1-zen3-6.1.0.json", "9-n3-sapphirerapids-6.1.0.json"])

    def test_collect_lines_up_own_counters(self):
        """A node without RDTSCP (its run read lfence_rdtsc) beside one with: the
        summary's and the report's rows line up, each model's counter named."""
        self.node_files("n1", results=results_file(1.0, ZEN3_CPUINFO))
        self.node_files("n2", results=testsupport.without_rdtscp(results_file(0.8, SPR_CPUINFO)),
                        cpuinfo=SPR_CPUINFO)
        self.record(nodes=("n1", "n2"), state="COMPLETED")
        out = self.tmp / "collected"
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(main.main(["fleet", "collect", "9", "--jobs-dir", str(self.jobs),
                                        "--out", str(out)]), 0)
        text = stdout.getvalue()
        self.assertIn("Zen 3 (AMD EPYC 7763, 25/1/1): 1 node (n1); own counter rdtscp", text)
        self.assertIn("(n2); own counter lfence_rdtsc", text)
        row = next(line for line in text.splitlines()
                   if line.startswith("generic_5_3+default+always monotonic hot"))
        self.assertEqual(len(row.split()), 3 + 2, row)  # the key, a value for each model
        self.assertNotIn("+rdtscp+", text)
        merged = json.loads((out / "report-9" / "merged.json").read_text())
        self.assertEqual(sorted(merged["own_counters"]), ["lfence_rdtsc", "rdtscp"])
        self.assertIn("generic_5_3+default+always", {r["variant"] for r in merged["rows"]})

    def test_unusable_results_file_fails_that_node_only(self):
        self.node_files("n1", results=results_file())
        self.node_files("n2", results={"benchmarks": "nope"})
        self.record(nodes=("n1", "n2"), state="COMPLETED")
        out = self.tmp / "c"
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(main.main(["fleet", "collect", "9", "--jobs-dir", str(self.jobs),
                                        "--out", str(out)]), 1)
        self.assertIn("its results file is unusable", stdout.getvalue())
        self.assertTrue((out / "report-9" / "index.md").exists())


class SummaryTest(unittest.TestCase):
    K1, K2 = ("v1", "monotonic", "hot"), ("v2", "monotonic", "hot")

    def test_agreement(self):
        values = {"n1": {self.K1: (10.0, 9.9, 10.1), self.K2: (20.0, 19.0, 21.0)},
                  "n2": {self.K1: (10.2, 10.1, 10.3), self.K2: (20.5, 20.0, 21.0)},
                  "n3": {self.K1: (14.0, 13.9, 14.1), self.K2: (20.1, 20.0, 20.2)},
                  "x1": {self.K1: (5.0, 4.9, 5.1)}}
        models = {"n1": "Zen 3", "n2": "Zen 3", "n3": "Zen 3", "x1": "Zen 5"}
        groups = fleet_summary.agreement(values, models, 0.10)
        zen3, zen5 = groups
        self.assertEqual(zen3["consensus"][self.K1], 10.2)
        self.assertEqual(list(zen3["differs"]), ["n3"])
        ((key, ns, consensus, dev),) = zen3["differs"]["n3"]
        self.assertEqual((key, ns), (self.K1, 14.0))
        self.assertAlmostEqual(dev, 14.0 / 10.2 - 1)
        self.assertEqual(zen5["nodes"], ["x1"])
        # wider tolerance: all agree; a node whose own range holds the consensus agrees too
        self.assertEqual(fleet_summary.agreement(values, models, 0.5)[0]["differs"], {})
        wide = dict(values, n3={self.K1: (14.0, 9.0, 15.0)})
        self.assertEqual(fleet_summary.agreement(wide, models, 0.10)[0]["differs"], {})
        pair = fleet_summary.agreement({n: values[n] for n in ("n1", "n3")}, models, 0.10)
        self.assertEqual(fleet_summary.run_summary(pair, 0.10)[1],
                         "  differ: n1 and n3 on 1 of 2; most on v1 monotonic hot: 10.00 "
                         "against 14.00 ns (+40% on n3)")
        lines = fleet_summary.run_summary(groups, 0.10)
        self.assertIn("  agree within 10% on all 2 benchmarks: n[1-2]", lines)
        self.assertTrue(any(line.startswith("  differs: n3 on 1 of 2") and "+37%" in line
                            for line in lines), lines)
        self.assertTrue(any(line.startswith("v1 monotonic hot") and "10.20" in line
                            and "5.00" in line for line in lines), lines)

    def test_many_nodes_one_screen(self):
        ok = [{"node": f"n{i}", "state": "ok", "cpu": fleet_slurm.cpu_of(ZEN3_CPUINFO),
               "kernel": "6.1"} for i in range(1, 999)]
        bad = [{"node": "n999", "state": "failed", "cpu": {}, "kernel": None,
                "reason": "exit 1: boom"},
               {"node": "n1000", "state": "running", "cpu": {}, "kernel": None}]
        lines = fleet_summary.outcome_lines(ok + bad, 20)
        self.assertEqual(len(lines), 3, lines)
        self.assertIn("  ok      998 x Zen 3 (AMD EPYC 7763, 25/1/1), kernel 6.1: n[1-998]",
                      lines)
        self.assertIn("FAILED  n999", lines[-1])
        self.assertEqual(len(fleet_summary.outcome_lines(ok[:20], 20)), 20)
        values = {f"n{i}": {self.K1: (10.0 + i, 10.0 + i, 10.0 + i)} for i in range(1, 30)}
        groups = fleet_summary.agreement(values, dict.fromkeys(values, "Zen 3"), 0.10)
        lines = fleet_summary.run_summary(groups, 0.10)
        self.assertEqual(len(lines), 3 + fleet_summary.SUMMARY_DIFFERS, lines)
        self.assertTrue(lines[-1].startswith("  and "), lines[-1])
        self.assertEqual(fleet_summary.representative(groups[0], values), "n15")  # the median's

    def test_host_lists_fit(self):
        self.assertEqual(fleet_summary.hosts([f"n{i}" for i in range(1, 999)]), "n[1-998]")
        odd = [f"n{i}" for i in range(1, 400, 2)]
        text = fleet_summary.hosts(odd)
        self.assertLessEqual(len(text.split(" and ")[0]), fleet_summary.HOSTS_WIDTH)
        shown = hostlist.expand(text.split(" and ")[0])
        self.assertEqual(shown, odd[:len(shown)])
        self.assertTrue(text.endswith(f" and {len(odd) - len(shown)} more"), text)

    def test_verdicts_per_model(self):
        def comp(verdict, ratio):
            return {"rows": [{"metric": "ns/call", "variant": "b", "baseline": "a",
                              "clock": "monotonic", "mode": "hot", "verdict": verdict,
                              "ratio": ratio},
                             {"metric": "cycles", "variant": "b", "baseline": "a",
                              "clock": "monotonic", "mode": "hot", "verdict": "faster",
                              "ratio": 0.5}]}
        comps = {"n1": comp("faster", 0.9), "n2": comp("faster", 0.92),
                 "n3": comp("no significant difference", 1.01),
                 "n4": comp("slower", 1.2)}
        models = {"n1": "Zen 3", "n2": "Zen 3", "n3": "Zen 5", "n4": "Zen 5"}
        lines = fleet_summary.compare_summary(fleet_summary.verdicts(comps, models))
        self.assertEqual(lines, [
            "b vs a, monotonic hot",
            "  Zen 3: faster (n1 0.900, n2 0.920)",
            "  Zen 5: nodes disagree: n3 no significant difference (1.010); n4 slower (1.200)"])


class FeaturesTest(unittest.TestCase):
    PROBE = "".join(f"{task}: {line}\n" for task, text in (
        ("0", f"@node a1\n@kernel 6.1.0\n{ZEN3_CPUINFO}"),
        ("1", f"@node b1\n@kernel 6.1.0\n{SPR_CPUINFO}"),
        ("2", f"@node c1\n@kernel 6.2.0\n{UNKNOWN_CPUINFO}")) for line in text.splitlines())

    def test_lines(self):
        probed = features.parse_srun_labels(self.PROBE)
        self.assertEqual(sorted(probed), ["a1", "b1", "c1"])
        self.assertEqual(probed["c1"]["kernel"], "6.2.0")
        nodes = [node("a1", features="zen2,rack1"), node("b1", features="sapphirerapids"),
                 node("c1"), node("d1", features="gpu")]
        lines = features.feature_lines(nodes, probed)
        self.assertTrue(lines[0].startswith("NodeName=a1 Features=zen3,rack1    # Zen 3 "),
                        lines[0])
        self.assertIn("(now: zen2,rack1)", lines[0])  # a stale CPU-model feature is replaced
        self.assertTrue(lines[1].startswith("NodeName=b1 Features=sapphirerapids    # "
                                            "Sapphire Rapids"), lines[1])
        self.assertNotIn("now:", lines[1])
        self.assertIn("NodeName=c1 Features=(none)", lines[2])
        self.assertIn("unknown to core/uarch.py", lines[2])
        self.assertEqual(lines[3], "# NodeName=d1: not probed (not usable or did not answer)")


class LocalClusterTest(unittest.TestCase):
    """The local cluster's configuration, without starting it."""

    def test_conf(self):
        text = fleet_local.render_conf(Path("/x"), [7001, 7002, 7003, 7004],
                                       {"n1": ["zen3", "local_n1"], "n2": ["local_n2"]})
        self.assertIn("SlurmctldPort=7001\nSlurmdPort=7002\n", text)
        self.assertIn("NodeName=n1 NodeHostname=localhost Port=7003 CPUs=1 "
                      "Features=zen3,local_n1 State=UNKNOWN", text)
        self.assertIn("NodeName=n2 NodeHostname=localhost Port=7004 CPUs=1 "
                      "Features=local_n2", text)
        self.assertIn("AuthInfo=socket=/x/munge.socket", text)
        self.assertIn("TaskPlugin=task/none", text)
        self.assertIn("PartitionName=local Nodes=n1,n2 Default=YES", text)
        self.assertIn("FirstJobId=1\n", text)
        first = [fleet_local.first_job_id(t) for t in (1796105340.0, 1796105340.1, 1796105400)]
        self.assertEqual(len(set(first)), 3)
        self.assertTrue(all(1000 <= f < 67043328 for f in first))

    def test_cpus_and_features(self):
        self.assertEqual(fleet_local.node_cpus({5, 2, 9}), [2, 5])
        self.assertEqual(fleet_local.node_cpus({3}), [3, 3])
        self.assertEqual(fleet_local.node_features("zen4", "n1"), ["zen4", "local_n1"])
        self.assertEqual(fleet_local.node_features(None, "n2"), ["local_n2"])
        ports = fleet_local.free_ports(4)
        self.assertEqual(len(set(ports)), 4)

    def test_down_leaves_a_foreign_directory(self):
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "precious").write_text("x")
            with self.assertRaises(UsageError):
                fleet_local.down(tmp, quiet=True)
            self.assertTrue(Path(tmp, "precious").exists())
            gone = Path(tmp, "nothing")
            self.assertEqual(fleet_local.down(gone, quiet=True), 0)


if __name__ == "__main__":
    unittest.main()
