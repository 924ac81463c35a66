"""fleet on a real Slurm: `fleet local-cluster up` (munged with a fresh key,
slurmctld, two slurmd on the loopback, each on a CPU of its own), jobs on it
through the command line as a user runs them, `collect`, and `down`, which
runs also when a test or the start fails (a class cleanup registered first).

Needs root and Debian's slurmctld, slurmd, slurm-client and munge (`fleet
local-cluster up` and `test` as root install them); skipped otherwise.
Nothing here depends on the CPU model or count: the expected labels are
computed from this machine's /proc/cpuinfo, and the checks that need two
CPUs skip on a machine that allows one.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.fleet import fleet_slurm
from vdsobench_cli.cli import packages
from vdsobench_cli.measure.fingerprint import uarch
from vdsobench_cli.tests.support import KERNEL_TESTDATA, NESTED, long_tier, tarball

SCRIPTS = Path(__file__).resolve().parents[2]
VDSOBENCH = SCRIPTS / "vdsobench"
SMALL = ["run", "--variants", "generic_5_3+lfence_rdtsc+always", "--clocks", "monotonic",
         "--repetitions", "1", "--min-time", "0.01"]
TORN_MASKED = str(KERNEL_TESTDATA / "6.12-torn-mult-shift-masked.patch")


def why_not():
    if os.geteuid() != 0:
        return "needs root (slurmd starts jobs as their user)"
    missing = packages.missing(packages.SLURM_PACKAGES)
    if missing:
        return f"needs {' '.join(missing)} (scripts/vdsobench fleet local-cluster up installs them)"
    return None


@unittest.skipIf(why_not(), why_not())
class LocalClusterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-fleet-local-"))
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.cluster_dir = cls.tmp / "cluster"
        cls.env = dict(os.environ, SLURM_CONF=str(cls.cluster_dir / "slurm.conf"))
        # first, so that it runs whatever fails after it: down is safe on a half-started one
        cls.addClassCleanup(cls.vdsobench, "fleet", "local-cluster", "down", "--dir",
                            str(cls.cluster_dir))
        cls.bundle = cls.tmp / "vdsobench.tar.gz"
        r = cls.vdsobench("bundle", "--out", str(cls.bundle))
        assert r.returncode == 0, f"bundle: {r.stdout}{r.stderr}"
        r = cls.vdsobench("fleet", "local-cluster", "up", "--dir", str(cls.cluster_dir))
        assert r.returncode == 0, f"local-cluster up: {r.stdout}{r.stderr}"
        cls.up_output = r.stdout
        cls.record = json.loads((cls.cluster_dir / "cluster.json").read_text())
        cls.jobs = cls.tmp / "jobs"
        cpu = fleet_slurm.cpu_of(Path("/proc/cpuinfo").read_text())
        cls.label, cls.slug = uarch.label(cpu), fleet_slurm.feature_of(cpu)

    @classmethod
    def vdsobench(cls, *args):
        return subprocess.run([str(VDSOBENCH), *args], env=getattr(cls, "env", None),
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)

    def fleet_run(self, *args, command=SMALL):
        r = self.vdsobench("fleet", "run", "--jobs-dir", str(self.jobs), "--bundle",
                           str(self.bundle), *args, "--", *command)
        m = re.search(r"^fleet: job (\d+) submitted", r.stdout, re.M)
        return r, (m.group(1) if m else None)

    def ran_on(self, job):
        return sorted(p.name.split("-", 1)[1].rsplit(".", 1)[0]
                      for p in (self.jobs / job).glob(f"{job}-*.exit"))

    def test_up_says_how_to_use_it(self):
        self.assertIn(f"export SLURM_CONF={self.cluster_dir / 'slurm.conf'}", self.up_output)
        self.assertEqual(self.record["features"]["n1"][-1], "local_n1")
        self.assertEqual(self.record["features"]["n1"][:-1], [self.slug] if self.slug else [])
        # up again: the running cluster is kept
        r = self.vdsobench("fleet", "local-cluster", "up", "--dir", str(self.cluster_dir))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("already up", r.stdout)
        self.assertEqual(json.loads((self.cluster_dir / "cluster.json").read_text())["pids"],
                         self.record["pids"])

    def test_every_node_collected_and_reported(self):
        r, job = self.fleet_run("--nodes", "all")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.ran_on(job), ["n1", "n2"])
        pinned = {}
        for node, cpu in zip(("n1", "n2"), self.record["cpus"]):
            data = json.loads((self.jobs / job / f"{job}-{node}.json").read_text())
            pinned[node] = data["context"]["vdsobench"]["pinning"]["cpus"]
            # each node measured on the CPU its slurmd was given, as run pins by default
            self.assertEqual(pinned[node], [cpu], node)
        if len(set(self.record["cpus"])) == 2:
            self.assertNotEqual(pinned["n1"], pinned["n2"])
        out = self.tmp / f"collected-{job}"
        r = self.vdsobench("fleet", "collect", job, "--jobs-dir", str(self.jobs), "--out",
                           str(out))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("nodes: 2 of 2 answered", r.stdout)
        self.assertIn(f"{self.label}: 2 nodes (n[1-2])", r.stdout)
        index = (out / f"report-{job}" / "index.md").read_text()
        self.assertIn(self.label, index)  # the report names the nodes' CPU
        kernel = os.uname().release
        for node in ("n1", "n2"):
            name = f"{job}-{node}-{self.slug or 'AuthenticAMD'}"
            files = list(out.glob(f"{job}-{node}-*-{kernel}.json"))
            self.assertEqual(len(files), 1, (node, list(out.iterdir())))
            self.assertIn(files[0].name, index)
            if self.slug:
                self.assertTrue(files[0].name.startswith(name), files[0].name)
        r = self.vdsobench("fleet", "status", job, "--jobs-dir", str(self.jobs))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("COMPLETED", r.stdout)

    def test_constraint_chooses_the_node(self):
        r, job = self.fleet_run("--nodes", "all", "--constraint", "local_n2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(self.ran_on(job), ["n2"])

    def test_one_per_feature(self):
        r, job = self.fleet_run("--one-per-feature")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # both nodes are this machine's CPU model: one of them runs
        self.assertEqual(len(self.ran_on(job)), 1, self.ran_on(job))

    def test_a_failing_node_and_the_others(self):
        if len(set(self.record["cpus"])) < 2:
            self.skipTest("one CPU allowed here: both nodes share it")
        n2_cpu = self.record["cpus"][1]
        # n1 may not use n2's CPU: run refuses there, and only there
        r, job = self.fleet_run("--nodes", "all", command=SMALL + ["--cpus", str(n2_cpu)])
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"FAILED  n1: .*exit 2: vdsobench: error: --cpus")
        self.assertRegex(r.stdout, r"ok +n2: ")
        s = self.vdsobench("fleet", "status", job, "--jobs-dir", str(self.jobs))
        self.assertEqual(s.returncode, 1)
        self.assertIn("FAILED  n1", s.stdout)
        out = self.tmp / f"collected-{job}"
        c = self.vdsobench("fleet", "collect", job, "--jobs-dir", str(self.jobs), "--out",
                           str(out))
        self.assertEqual(c.returncode, 1, c.stdout + c.stderr)
        self.assertIn("nodes: 1 of 2 answered", c.stdout)
        self.assertEqual(len(list(out.glob(f"{job}-n2-*.json"))), 1)
        self.assertEqual(len(list(out.glob(f"{job}-n1-*.json"))), 0)
        self.assertIn("n1", c.stderr.strip().splitlines()[-1])

    def test_pending_past_timeout(self):
        sleeper = subprocess.run(["sbatch", "--parsable", "--nodelist=n2", "--exclusive",
                                  "--output=/dev/null", "--wrap", "sleep 60"], env=self.env,
                                 capture_output=True, text=True)
        self.assertEqual(sleeper.returncode, 0, sleeper.stderr)
        try:
            r, job = self.fleet_run("--nodes", "all", "--timeout", "2")
        finally:
            subprocess.run(["scancel", sleeper.stdout.strip()], env=self.env)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        line = r.stderr.strip().splitlines()[-1]
        self.assertIn(f"job {job} was still pending after 2 s", line)
        self.assertIn("--timeout", line)
        info = fleet_slurm.Cluster(self.env["SLURM_CONF"]).job(job)
        self.assertEqual(info["JobState"], "CANCELLED")
        self.assertEqual(self.ran_on(job), [])

    def test_bad_input(self):
        for args, text in ((["--nodes", "all", "--constraint", "zen99"], "'zen99'"),
                           (["--nodes", "all", "--partition", "nope"], "valid: local"),
                           (["--nodes", "3"], "valid: 1 to 2, or all")):
            r, job = self.fleet_run(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIsNone(job)
            self.assertIn(text, r.stderr.strip().splitlines()[-1])
        bad = self.tmp / "no-munge.conf"
        bad.write_text((self.cluster_dir / "slurm.conf").read_text().replace(
            "munge.socket", "gone.socket"))
        r = self.vdsobench("fleet", "run", "--slurm-conf", str(bad), "--nodes", "all", "--",
                           "run")
        self.assertEqual(r.returncode, 2)
        self.assertIn("munge is not running", r.stderr)

    @long_tier("a review of 6.12 here and on each node, about 4 min on 2 cores")
    def test_patch_review_of_a_torn_patch(self):
        """`recipe patch-review --fleet`, one command: Debian's 6.12 with a patch
        that tears the read (mult and shift read outside the sequence count)
        is caught here and on each node with its own counter, each verifying
        kbuild's images of both trees; nothing is timed; exit 1."""
        if os.environ.get(NESTED):
            self.skipTest("inside the new-variant test's copy of the project")
        if not tarball("6.12"):
            self.skipTest("needs linux-source-6.12 (scripts/vdsobench setup --kernel-sources)")
        out = self.tmp / "review-torn"
        # the arm64 section is patch_review_arm64_test's (the same code after
        # the cluster's, and a minute of cross builds and qemu here)
        r = self.vdsobench("recipe", "patch-review", "--quick", "--no-arm64", "--fleet",
                           "--nodes", "all", "--jobs-dir", str(self.jobs), "--out", str(out),
                           "--patch", TORN_MASKED)
        self.assertEqual(r.returncode, 1, r.stdout[-3000:] + r.stderr[-3000:])
        block = (out / "cover-letter.txt").read_text().splitlines()
        self.assertTrue(block[0].startswith("WRONG"), block)
        self.assertLessEqual(len(block), 40)
        self.assertTrue(all(len(x) <= 72 for x in block), block)
        rec = json.loads((out / "patch-review.json").read_text())
        [model] = rec["fleet"]["models"]  # both nodes are this machine's CPU
        self.assertEqual(model["cpu"], self.label)
        self.assertEqual(sorted(model["nodes"]), ["n1", "n2"])
        self.assertTrue(model["caught"])
        self.assertFalse(model["verify"]["after"][0])
        self.assertEqual(rec["fleet"]["failed"], [])
        self.assertEqual(rec["rows"], [])
        self.assertEqual(rec["fleet"]["rows"] and [c for _, _, cs in rec["fleet"]["rows"]
                                                   for c in cs.values() if c], [])
        job = rec["fleet"]["job"]
        for node in ("n1", "n2"):
            review = json.loads((self.jobs / job / f"{job}-{node}.json").read_text())
            self.assertTrue(review["review"]["torn"], node)
            self.assertIsNone(review["comparison"], node)
        # measured as the kernel ships it, on the nodes too: kbuild's images
        self.assertEqual(rec["build"], "image", rec["measured"])
        for node in ("n1", "n2"):
            review = json.loads((self.jobs / job / f"{job}-{node}.json").read_text())
            self.assertEqual(review["review"]["build"], "image", node)
            self.assertTrue(all(v["variant"].endswith("+image")
                                for v in review["review"]["verify"]), node)

    def test_features(self):
        r = self.vdsobench("fleet", "features")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for node in ("n1", "n2"):
            features = ",".join(([self.slug] if self.slug else []) + [f"local_{node}"])
            self.assertIn(f"NodeName={node} Features={features}    # {self.label}", r.stdout)


if __name__ == "__main__":
    unittest.main()
