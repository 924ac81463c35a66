"""fleet collect and merge at scale, without a cluster: 200 emulated nodes of
four CPU models (made from the recorded Zen 3 and Zen 4 runs in results/runs,
their CPU renamed, one model without RDTSCP), some slow, some failed in the
ways a node fails. The summary stays one screen and the work stays in
proportion to the nodes (each node's results read once; the report reads one
node per model); no timing is taken or asserted.

make_job() is also what measured the 10/100/1000-node figures in
docs/fleet.md ("Scale on paper")."""

import contextlib
import copy
import io
import json
import shutil
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli import main
from vdsobench_cli.measure import comparison_io
from vdsobench_cli.fleet import (batch as fleet_batch, collect as fleet_collect, fleet_slurm,
                                 records as fleet_records)
from reports import fleet_summary, merge, testsupport

JOB = "77"
NODES = 200
SUMMARY_MAX = 40  # lines: one screen, as the patch-review block
# the recorded run each model is made from, its /proc/cpuinfo, and whether it has RDTSCP
MODELS = (
    ("zen3", testsupport.ZEN3_RUN, """\
processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 25
model		: 1
model name	: AMD EPYC 7763 64-Core Processor
stepping	: 1
microcode	: 0xa001173
""", True),
    ("zen4", testsupport.ZEN4_RUN, """\
processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 25
model		: 17
model name	: AMD EPYC 9654 96-Core Processor
stepping	: 1
microcode	: 0xa101148
""", True),
    ("spr", testsupport.ZEN4_RUN, """\
processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 143
model name	: Intel(R) Xeon(R) Platinum 8480+
stepping	: 8
microcode	: 0x2b000181
""", True),
    # a guest whose hypervisor hides RDTSCP: its runs read lfence_rdtsc
    ("zen5", testsupport.ZEN3_RUN, """\
processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 26
model		: 2
model name	: AMD EPYC 9575F 64-Core Processor
stepping	: 1
microcode	: 0xb002116
""", False),
)
CLOCKS = ("monotonic", "realtime")


def trimmed(data):
    """A recorded run cut to CPU 0's hot rows of CLOCKS: a small run's file."""
    data = copy.deepcopy(data)
    data["benchmarks"] = [b for b in data["benchmarks"]
                          if any(b["name"].endswith(f"/{c}/hot/cpu0") for c in CLOCKS)]
    return data


def node_results(base, cpuinfo, rdtscp, scale):
    data = copy.deepcopy(base) if rdtscp else testsupport.without_rdtscp(base)
    data["context"]["vdsobench"]["fingerprint"]["cpu"].update(fleet_slurm.cpu_of(cpuinfo))
    for b in data["benchmarks"]:
        for k in ("real_time", "cpu_time"):
            if k in b:
                b[k] *= scale
    return data


def make_job(jobs, nodes=NODES):
    """A finished job of `nodes` nodes under jobs/JOB: a node in 25 fails (five
    ways), a node in 40 is 30% slow. Returns (the node names, {node: model},
    the failed nodes, the bytes the nodes left)."""
    d = jobs / JOB
    d.mkdir(parents=True)
    bases = {path: trimmed(json.loads(path.read_text())) for path in
             dict.fromkeys(m[1] for m in MODELS)}
    names, models, failed, size = [], {}, [], 0
    batch = []
    for i in range(1, nodes + 1):
        name = f"c{i}"
        model, path, cpuinfo, rdtscp = MODELS[i % len(MODELS)]
        names.append(name)
        models[name] = model
        base = d / f"{JOB}-{name}"
        how = ({1: "lost", 2: "cut", 3: "gone"}.get(i % 25)
               or {4: "unpack", 29: "malformed"}.get(i % 50))
        exit_rec = {"job": JOB, "node": name, "host": name, "kernel": "6.12.9",
                    "cpus_allowed": "0-63", "phase": "run", "rc": 0,
                    "started": 10.0, "ended": 40.0}
        if how == "gone":
            batch.append(f"srun: error: Node failure on {name}")  # left nothing
            failed.append(name)
            continue
        Path(f"{base}.cpuinfo").write_text(cpuinfo)
        Path(f"{base}.out").write_text("done\n")
        err = ""
        scale = 1.3 if i % 40 == 7 else 1.0 + (i % 5) * 0.004
        results = json.dumps(node_results(bases[path], cpuinfo, rdtscp, scale))
        if how == "lost":
            exit_rec["rc"], err, results = 3, "vdsobench: error: the CPU was lost\n", None
        elif how == "cut":
            results = '{"benchmarks": "cut short'  # a file cut short
        elif how == "unpack":
            exit_rec["phase"], exit_rec["rc"], results = "unpack", 96, None
            err = "tar: short read\n"
        elif how == "malformed":
            exit_rec = {"job": JOB, "node": "someone-else"}  # malformed
        if how:
            failed.append(name)
        Path(f"{base}.err").write_text(err)
        if results is not None:
            Path(f"{base}.json").write_text(results)
        Path(f"{base}.exit").write_text(json.dumps(exit_rec))
    (d / fleet_batch.BATCH_OUT).write_text("\n".join(batch) + "\n")
    command = ["run", "--clocks", ",".join(CLOCKS)]
    fleet_records.save_record(jobs, {
        "format": fleet_records.FORMAT, "job": JOB, "command": command,
        "output": fleet_batch.node_command(command, main.parser())[1], "nodes": names,
        "partition": "fleet", "conf": "/etc/slurm/slurm.conf", "exclusive": True,
        "slurm": {"JobState": "COMPLETED", "Reason": "None"}})
    size = sum(p.stat().st_size for p in d.iterdir())
    return names, models, failed, size


def collect(jobs, out):
    """fleet collect of the job, counting the work: (exit status, summary, the
    results files loaded, merge.records calls, the files the report was made of)."""
    loads, recs, report = [], [], []
    real_load, real_records = comparison_io.load_input, merge.records
    real_report = fleet_collect.report.write

    def load(path, *a, **k):
        loads.append(Path(path).name)
        return real_load(path, *a, **k)

    def records(results, source):
        recs.append(source)
        return real_records(results, source)

    def write_report(files, *a, **k):
        report.extend(files)
        return real_report(files, *a, **k)
    stdout = io.StringIO()
    with mock.patch.object(comparison_io, "load_input", load), \
            mock.patch.object(merge, "records", records), \
            mock.patch.object(fleet_collect.report, "write", write_report), \
            contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        rc = main.main(["fleet", "collect", JOB, "--jobs-dir", str(jobs), "--out", str(out)])
    return rc, stdout.getvalue(), loads, recs, report


class ScaleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-fleet-scale-"))
        cls.jobs, cls.out = cls.tmp / "jobs", cls.tmp / "out"
        cls.names, cls.models, cls.failed, cls.size = make_job(cls.jobs)
        cls.rc, cls.text, cls.loads, cls.recs, cls.report = collect(cls.jobs, cls.out)
        cls.lines = cls.text.splitlines()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def test_failures_named_and_counted(self):
        self.assertEqual(self.rc, 1)  # nodes failed
        ok = NODES - len(self.failed)
        self.assertGreater(len(self.failed), 10)
        self.assertIn(f"nodes: {ok} of {NODES} answered", self.text)
        for reason in ("exit 3: vdsobench: error: the CPU was lost",
                       "its results file is unusable", "node failure",
                       "while unpacking the bundle: tar: short read",
                       "its exit record is malformed"):
            self.assertIn(reason, self.text)
        # a line per reason where many failed, which together count every failed node
        counts = [int(line.split()[1]) for line in self.lines
                  if line.startswith(("  FAILED", "  MALFORMED")) and line.split()[2] == "x"]
        self.assertEqual(sum(counts), len(self.failed), self.text)
        self.assertLessEqual(len(counts), fleet_summary.SUMMARY_FAILED)
        nodes = json.loads((self.out / f"nodes-{JOB}.json").read_text())["nodes"]
        self.assertEqual(sorted(n["node"] for n in nodes if n["state"] != "ok"),
                         sorted(self.failed))

    def test_one_screen(self):
        self.assertLessEqual(len(self.lines), SUMMARY_MAX, self.text)
        for model in ("Zen 3", "Zen 4", "Sapphire Rapids", "Zen 5"):
            self.assertTrue(any(line.startswith(model) for line in self.lines), model)
        # the slow nodes are named as departures from their model
        slow = [f"c{i}" for i in range(7, NODES + 1, 40) if f"c{i}" not in self.failed]
        for node in slow:
            self.assertTrue(any(line.startswith(f"  differs: {node} on ") and "(+29%)" in line
                                for line in self.lines), node)
        # the models count the nodes that answered (a malformed node's file is not counted)
        counted = [int(line.split(": ")[1].split()[0]) for line in self.lines
                   if line.startswith(("Zen", "Sapphire")) and " nodes (" in line]
        self.assertEqual(sum(counted), NODES - len(self.failed))
        # the rows line up across the model without RDTSCP
        self.assertIn("own counter lfence_rdtsc", self.text)
        self.assertTrue(any(line.startswith("generic_5_3+default+always ")
                            and len(line.split()) == 3 + 4 and "-" not in line.split()
                            for line in self.lines), self.text)

    def test_work_in_proportion(self):
        answered = [n for n in self.names if n not in self.failed]
        left = list((self.jobs / JOB).glob(f"{JOB}-*.json"))
        models = len(MODELS)
        # each node's results file read once, the report's (one per model) once more
        self.assertLessEqual(len(self.loads), len(left) + models)
        self.assertEqual(len(self.report), models)
        # merge.records: once a node for the summary; the report's table and charts
        # merge only the models' representatives
        self.assertLessEqual(len(self.recs), len(answered) + 8 * models)
        self.assertFalse(set(self.recs[len(answered):]) - set(self.report))
        nodes = json.loads((self.out / f"nodes-{JOB}.json").read_text())
        self.assertEqual(len(nodes["nodes"]), NODES)
        # every file a node left is collected, usable or not
        self.assertEqual(len(list(self.out.glob(f"{JOB}-*.json"))), len(left))

    def test_merge_of_every_node(self):
        nodes = json.loads((self.out / f"nodes-{JOB}.json").read_text())["nodes"]
        files = [(Path(n["collected"]).name, json.loads(Path(n["collected"]).read_text()))
                 for n in nodes if n["state"] == "ok"]
        merged = merge.merge(files, clocks=["monotonic"])
        self.assertEqual(len(merged["columns"]), len(files))
        own = merged["own_counters"]
        self.assertEqual(sorted(own), ["lfence_rdtsc", "rdtscp"])
        self.assertEqual(len(own["lfence_rdtsc"]) + len(own["rdtscp"]), len(files))
        # a layout both runs measured is one row with a cell on every node
        row = next(r for r in merged["rows"] if r["variant"] == "generic_5_3+default+always")
        self.assertEqual(len(row["cells"]), len(files))


if __name__ == "__main__":
    unittest.main()
