"""The relocatable bundle, built and used as on a machine without the suite.

Built once with `vdsobench bundle`, unpacked outside the clone, and run with a
clean environment (env -i), with stub packages that block numpy, scipy,
matplotlib and jsonschema first on the path, and (as root, in a private
mount namespace) with the system's copies of every library the build linked
against hidden behind /dev/null, so a binary that still reached for one
would fail to load. The results file it writes is then read at home: the
schema, the fingerprint, and a merge with the repository's own runs.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli import arch, build, labels
from vdsobench_cli.fleet import bundle
from vdsobench_cli.measure import fingerprint, results
from vdsobench_cli.tests import support as fixtures

SCRIPTS = Path(__file__).resolve().parents[2]
LAUNCHER = SCRIPTS / "vdsobench"
# what the bundle's binaries were linked against at home, by soname
HIDDEN = ("libbenchmark.so.1debian", "libstdc++.so.6", "libgcc_s.so.1", "libudev.so.1",
          "libhwloc.so.15", "libpfm.so.4")


def system_paths(sonames):
    """The files the dynamic linker would load for these sonames here."""
    r = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True)
    paths = set()
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(\S+) \(.*\) => (\S+)", line)
        if m and m.group(1) in sonames:
            paths.add(os.path.realpath(m.group(2)))
    return sorted(paths)


def can_hide_libraries():
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    r = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return r.returncode == 0


class SourceFilesTest(unittest.TestCase):
    """What a bundle carries of the Python: the code, none of the tests (no build)."""

    def test_no_test_file(self):
        files = {str(rel) for rel, _ in bundle.source_files()}
        self.assertIn("scripts/vdsobench_cli/core/stats.py", files)
        self.assertIn("reports/tables.py", files)
        self.assertIn("scripts/vdsobench_cli/cli/safe_read.py", files)
        tests = sorted(f for f in files if f.endswith(("_test.py", "testsupport.py"))
                       or "/tests/" in f)
        self.assertEqual(tests, [])


class BundleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="vdsobench-bundle-test-")
        tmp = Path(cls.tmp.name)
        cls.tarball = tmp / "vdsobench.tar.gz"
        r = subprocess.run([str(LAUNCHER), "bundle", "--out", str(cls.tarball)],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise AssertionError(f"bundle failed: {r.stdout}{r.stderr}")
        cls.build_output = r.stdout
        with tarfile.open(cls.tarball) as tar:
            tops = {m.name.split("/", 1)[0] for m in tar.getmembers()}
            assert len(tops) == 1, tops
            tar.extractall(tmp / "unpacked")
        cls.top = tmp / "unpacked" / tops.pop()
        cls.manifest = json.loads((cls.top / "BUNDLE.json").read_text())
        cls.stubs = fixtures.block_modules(tmp / "stubs")
        cls.hide = can_hide_libraries()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def bundled(self, *args, hide=True, **env):
        """./vdsobench ARGS from the unpacked bundle: env -i plus env, the stubs
        first on PYTHONPATH, and (where we may) the build's libraries hidden."""
        inner = ["env", "-i", f"PYTHONPATH={self.stubs}",
                 *(f"{k}={v}" for k, v in env.items()), "./vdsobench", *args]
        if hide and self.hide:
            mounts = "".join(f"mount --bind /dev/null '{p}' && "
                             for p in system_paths(HIDDEN))
            cmd = ["unshare", "-m", "sh", "-c", mounts + 'exec "$@"', "sh", *inner]
        else:
            cmd = inner
        return subprocess.run(cmd, capture_output=True, text=True, cwd=self.top,
                              stdin=subprocess.DEVNULL)

    def test_outside_the_clone(self):
        self.assertFalse(str(self.top).startswith(str(build.ROOT) + os.sep))
        self.assertTrue(os.access(self.top / "vdsobench", os.X_OK))

    def test_binaries_need_only_the_c_library_beyond_the_bundle(self):
        carried = {p.name for p in (self.top / "lib").iterdir()}
        for sub in ("bin", "lib"):
            for elf in (self.top / sub).iterdir():
                self.assertFalse(elf.is_symlink(), elf)
                for soname in bundle.needed(elf):
                    self.assertTrue(soname in carried or bundle.LIBC.match(soname),
                                    f"{elf.name} needs {soname}")
        # libpfm and hwloc are linked in, not carried
        self.assertFalse({"libhwloc.so.15", "libpfm.so.4"} & carried)
        self.assertEqual(sorted(p.name for p in (self.top / "bin").iterdir()),
                         sorted(label.rpartition(":")[2] for label in labels.BUNDLE_BINARIES))

    def test_manifest(self):
        m = self.manifest
        self.assertEqual(m["format"], bundle.FORMAT)
        self.assertRegex(m["glibc_min"], r"^2\.\d+$")
        self.assertIn(f"needs glibc {m['glibc_min']}+", self.build_output)
        # what a run here would record (None outside a git checkout)
        self.assertEqual(m["build"]["commit"], fingerprint.build_info(build.ROOT)["commit"])
        for rel, digest in m["files"].items():
            self.assertEqual(hashlib.sha256((self.top / rel).read_bytes()).hexdigest(), digest,
                             rel)
        self.assertNotIn("scripts/vdsobench_cli/tests/bundle_test.py", m["files"])

    def test_hiding_really_hides(self):
        # the premise of the clean runs: a binary from the build tree cannot load
        if not self.hide:
            self.skipTest("needs root and unshare -m to hide the build's libraries")
        build.build(["//counters:vdsobench_counters"])  # not left by another test
        inner = [str(build.binary_path("//counters:vdsobench_counters")), "--json"]
        mounts = "".join(f"mount --bind /dev/null '{p}' && " for p in system_paths(HIDDEN))
        r = subprocess.run(["unshare", "-m", "sh", "-c", mounts + 'exec "$@"', "sh", *inner],
                           capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("error while loading shared libraries", r.stderr)

    def test_run_writes_a_results_file_home_reads(self):
        out = Path(self.tmp.name, "bundle-run.json")
        r = self.bundled("run", "--variants", "generic_5_3+lfence_rdtsc+always,floor/empty",
                         "--clocks", "monotonic", "--repetitions", "1", "--min-time", "0.01",
                         "--out", str(out))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        data = results.load(out)  # the schema, checked at home with jsonschema
        ctx = data["context"]["vdsobench"]
        self.assertEqual(ctx["fingerprint"]["build"]["commit"], self.manifest["build"]["commit"])
        # the bundle is built with this build's compile line (the kernel's on x86-64)
        self.assertEqual(ctx["fingerprint"]["build"]["bundle_flags"],
                         arch.current().bazel_flags() + ["--config=bundle"])
        self.assertIsInstance(ctx["warnings"], list)
        names = {b["run_name"] for b in data["benchmarks"]}
        self.assertTrue(any(n.startswith("generic_5_3+lfence_rdtsc+always/monotonic/hot/cpu")
                            for n in names), names)
        # and it merges with the repository's own runs
        from reports import merge
        home = sorted((build.ROOT / "results" / "runs").glob("*.json"))[0]
        inputs = [(str(home), results.load(home)), (str(out), data)]
        columns, recs = merge.collect(inputs)
        self.assertEqual(len({r["source"] for r in recs}), 2)

    def test_verify_and_list(self):
        r = self.bundled("verify", "generic_5_3+lfence_rdtsc+always", "--duration-ms", "50")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("PASS", r.stdout)
        r = self.bundled("list", "--variants", "generic_6_10+*")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("generic_6_10+lfence_rdtsc+always", r.stdout)

    def test_compare_runs_without_numpy_or_scipy(self):
        # plumbing only: rows and their shape, never a verdict from live timing
        r = self.bundled("compare", "generic_5_3+lfence_rdtsc+always",
                         "generic_6_10+lfence_rdtsc+always",
                         "--clocks", "monotonic", "--rounds", "8", "--format", "json")
        self.assertIn(r.returncode, fixtures.LIVE_COMPARE_EXITS, r.stdout + r.stderr)
        rows = json.loads(r.stdout)["rows"]
        self.assertTrue(rows)
        self.assertTrue(all(row["n"] == 8 for row in rows if row.get("metric") == "ns/call"))

    def test_commands_that_need_the_repository_are_not_offered(self):
        r = self.bundled("sim", hide=False)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("sim", r.stderr)
        r = self.bundled("--help", hide=False)
        self.assertEqual(r.returncode, 0)
        self.assertNotRegex(r.stdout, r"\n\s+(setup|gate|sim|layout|test)\s")

    def test_the_manifest_is_what_its_schema_says(self):
        self.assertIsNone(bundle.manifest_problem(self.manifest))
        # and a damaged one is refused on the node, in one line, before any command
        copy = Path(self.tmp.name, "damaged")
        shutil.copytree(self.top, copy, symlinks=True)
        (copy / "BUNDLE.json").write_text(json.dumps(dict(self.manifest, arch="pdp11")))
        r = subprocess.run(["env", "-i", "./vdsobench", "list"], capture_output=True,
                           text=True, cwd=copy, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn('damaged bundle manifest: arch is "pdp11", not x86_64 or aarch64',
                      r.stderr)

    def test_refuses_an_older_c_library(self):
        copy = Path(self.tmp.name, "old-glibc")
        shutil.copytree(self.top, copy, symlinks=True)
        m = dict(self.manifest, glibc_min="99.0")
        (copy / "BUNDLE.json").write_text(json.dumps(m))
        r = subprocess.run(["env", "-i", "./vdsobench", "list"], capture_output=True,
                           text=True, cwd=copy, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn("99.0", r.stderr)
        self.assertIn(bundle.glibc_version_text(bundle.host_glibc()), r.stderr)

    def test_bad_out_name(self):
        r = subprocess.run([str(LAUNCHER), "bundle", "--out", str(Path(self.tmp.name, "x.zip"))],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        self.assertIn(".tar.gz", r.stderr)


if __name__ == "__main__":
    unittest.main()
