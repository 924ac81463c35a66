"""fleet's records under attack (issue 18): damaged job records and node
exit records, odd node files, and odd collect targets. Each case builds its
hostile input, runs the real code (the command line in-process, or as a
subprocess where a blocking open would hang the suite), and checks the exit
status, the one line on stderr, and that nothing outside the work area
changed (a victim folder's snapshot before and after)."""

import json
import os
import shutil
import subprocess
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.fleet import batch, collect, outcomes, records
from vdsobench_cli.cli import labels
from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.tests.fleet_support import VDSOBENCH, Work, cli, good_exit, good_record, snapshot
from reports import fleet_summary

# ---- 9 and 11. damaged job and node records -----------------------------------------------------

class RecordWork(Work):
    def setUp(self):
        super().setUp()
        self.jobs = self.tmp / "jobs"
        self.d = self.jobs / "9"
        self.d.mkdir(parents=True)
        self.out = self.tmp / "out"

    def write_record(self, text):
        path = self.d / "job.json"
        if os.path.lexists(path):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
        path.write_bytes(text if isinstance(text, bytes) else text.encode())


class RecordTest(RecordWork):
    def damaged(self):
        """(what, bytes or a function that makes job.json) of each damaged record."""
        cases = []
        for field in ("format", "job", "command", "output", "nodes"):
            r = good_record()
            del r[field]
            cases.append((f"no {field}", json.dumps(r)))
        wrong = {"job": [9, "x", "10", None, ["9"]], "command": [[], "verify", [1], ["sim"],
                                                                 ["verify", "\x1b[2J"]],
                 "output": ["file2", None, 1], "nodes": ["n1", [1], ["a b"], [["n1"]]],
                 "conf": [1, ["c"], "a\nb"], "partition": [1, "a b"], "constraint": [["x"]],
                 "exclusive": ["yes", 1, None], "requested": [[1]], "skipped": ["n2", [["n2"]],
                                                                               [[1, 2]]],
                 "submitted": [1], "bundle": [[]], "fleet": ["run", [1]],
                 "slurm": [[], "COMPLETED", {"JobState": 1}, {"JobState": ["x"]}],
                 "cancelled": [None, 1]}
        for field, values in wrong.items():
            for v in values:
                cases.append((f"{field}={v!r}", json.dumps(good_record(**{field: v}))))
        cases += [("a list", "[]"), ("a string", '"x"'), ("null", "null"), ("a number", "9"),
                  ("empty", ""), ("not JSON", "{"), ("truncated", json.dumps(good_record())[:50]),
                  ("not UTF-8", b'{"format": "\xff"}'), ("deep", "[" * 100000 + "]" * 100000),
                  ("huge", b" " * (records.RECORD_MAX + 1) + b"{}"),
                  ("a 5000-digit number", '{"format": ' + "9" * 5000 + "}"),
                  ("another format", json.dumps(good_record(format="x/1")))]
        return cases

    def test_damaged_records(self):
        cases = self.damaged()
        self.assertGreater(len(cases), 50)
        for what, text in cases:
            self.write_record(text)
            for argv in (["status", "9"], ["collect", "9", "--out", str(self.out)]):
                with self.subTest(what=what, command=argv[0]):
                    rc, out, err = cli("fleet", *argv, "--jobs-dir", str(self.jobs))
                    self.assert_one_line(rc, err, str(self.d / "job.json"))
                    self.assertNotIn("Traceback", err)
                    field = what.split("=")[0].split()[-1]
                    if field in set(json.loads(records.SCHEMA.read_text())["properties"]):
                        self.assertIn(repr(field), err)
        self.assertFalse(self.out.exists())
        self.assert_victim_untouched()
        # the state left behind still works: a good record is read again
        self.write_record(json.dumps(good_record()))
        rc, out, err = cli("fleet", "status", "9", "--jobs-dir", str(self.jobs))
        self.assertEqual(rc, 1, err)  # n1 left nothing: no results
        self.assertIn("fleet: job 9: verify; COMPLETED", out)

    def test_the_schema_names_what_fleet_writes(self):
        """The job record's schema takes the words fleet itself uses (the
        bundle's commands, the payload's outputs) and every field a record of
        fleet run has, and says what each must be."""
        schema = json.loads(records.SCHEMA.read_text())
        self.assertEqual(schema["properties"]["command"]["prefixItems"][0]["enum"],
                         list(labels.BUNDLE_COMMANDS))
        self.assertEqual(schema["properties"]["output"]["enum"], list(batch.OUTPUTS))
        self.assertEqual(schema["properties"]["format"]["const"], records.FORMAT)
        self.assertLessEqual(set(good_record()), set(schema["properties"]))
        for name, field in schema["properties"].items():
            self.assertTrue(field.get("description"), name)
        exits = json.loads(outcomes.EXIT_SCHEMA.read_text())
        self.assertLessEqual(set(good_exit()), set(exits["properties"]))

    def test_odd_files_for_a_record(self):
        """A symbolic link (to a good record elsewhere), a FIFO, a directory, a
        job directory that is a link: refused in one line, without blocking."""
        elsewhere = self.victim / "job.json"
        elsewhere.write_text(json.dumps(good_record()))
        self.before = snapshot(self.victim)
        path = self.d / "job.json"
        for what, make in (("a symbolic link", lambda: path.symlink_to(elsewhere)),
                           ("a named pipe (FIFO)", lambda: os.mkfifo(path)),
                           ("a directory", lambda: path.mkdir())):
            make()
            with self.subTest(what=what):
                # a subprocess: a blocking open would hang it, not the suite
                r = subprocess.run([str(VDSOBENCH), "fleet", "status", "9", "--jobs-dir",
                                    str(self.jobs)], capture_output=True, text=True,
                                   stdin=subprocess.DEVNULL, timeout=60)
                self.assert_one_line(r.returncode, r.stderr, str(path), what)
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()
        shutil.rmtree(self.d)
        (self.jobs / "9").symlink_to(self.victim)
        rc, out, err = cli("fleet", "status", "9", "--jobs-dir", str(self.jobs))
        self.assert_one_line(rc, err, "a symbolic link")
        self.assert_victim_untouched()


class ExitRecordTest(RecordWork):
    def setUp(self):
        super().setUp()
        self.write_record(json.dumps(good_record()))
        self.exit = self.d / "9-n1.exit"

    def outcome(self):
        (o,) = outcomes.node_outcomes(self.jobs, records.read_record(self.jobs, "9"))
        return o

    def test_malformed_exit_records(self):
        cases = [('"rc": "0"', good_exit(rc="0")), ("rc true", good_exit(rc=True)),
                 ("rc 1e400", '{"rc": 1e400}'), ("rc -1", good_exit(rc=-1)),
                 ("rc 256", good_exit(rc=256)), ("rc 401 digits", json.dumps(good_exit())
                                                  .replace('"rc": 0', '"rc": ' + "9" * 401)),
                 ("rc null", good_exit(rc=None)), ("phase", good_exit(phase="unreadable")),
                 ("started", good_exit(started="10")), ("ended", good_exit(ended=None)),
                 ("kernel", good_exit(kernel="\x1b[2J")), ("host", good_exit(host=["h"])),
                 ("job", good_exit(job="8")), ("node", good_exit(node="n2")),
                 ("a list", "[0]"), ("not JSON", "rc=0"), ("not UTF-8", b"\xff\xfe"),
                 ("huge", b" " * (outcomes.EXIT_MAX + 1)), ("deep", "[" * 50000)]
        for field in ("rc", "phase", "job", "node", "started", "ended"):
            e = good_exit()
            del e[field]
            cases.append((f"no {field}", e))
        for what, value in cases:
            data = value if isinstance(value, (str, bytes)) else json.dumps(value)
            self.exit.write_bytes(data if isinstance(data, bytes) else data.encode())
            with self.subTest(what=what):
                o = self.outcome()
                self.assertEqual(o["state"], "malformed", o)
                self.assertIn("malformed", o["reason"])
                (line,) = fleet_summary.outcome_lines([o])
                self.assertTrue(line.startswith("  MALFORMED n1: "), line)
                self.assertNotIn("exit 0", line)
                self.assertTrue(line.isprintable(), line)
        self.exit.write_text(json.dumps(good_exit(rc="0")))
        rc, out, err = cli("fleet", "status", "9", "--jobs-dir", str(self.jobs))
        self.assertEqual(rc, 1)  # a node gave no usable result: not bad usage
        self.assertIn("MALFORMED n1", out)
        self.assertIn("'rc' is \"0\", not a whole number", out)
        self.assertNotIn("exit 0", out)
        self.exit.write_text(json.dumps(good_exit()))
        self.assertEqual(self.outcome()["state"], "ok")

    def test_odd_node_files(self):
        """A node's files as links, FIFOs, huge logs, escapes: never followed,
        never blocking, never printed raw."""
        secret = self.victim / "secret"
        secret.write_text("root's secret\n")
        self.before = snapshot(self.victim)
        self.exit.symlink_to(secret)
        self.assertEqual(self.outcome()["state"], "malformed")
        self.assertIn("symbolic link", self.outcome()["reason"])
        self.exit.unlink()
        os.mkfifo(self.exit)
        self.assertIn("FIFO", self.outcome()["reason"])
        self.exit.unlink()
        self.exit.write_text(json.dumps(good_exit(rc=3)))
        os.mkfifo(self.d / "9-n1.err")
        os.mkfifo(self.d / "batch.out")
        (self.d / "9-n1.cpuinfo").symlink_to("/proc/cpuinfo")
        o = self.outcome()
        self.assertEqual(o["state"], "failed")
        self.assertIn("exit 3: (unreadable: ", o["reason"])
        self.assertEqual(o["cpu"], {})  # not read through the link
        (self.d / "9-n1.err").unlink()
        with open(self.d / "9-n1.err", "wb") as f:
            f.write(b"x" * (8 << 20) + "\n\x1b[2Jlast \u202e line\n".encode())
        o = self.outcome()
        self.assertEqual(o["reason"], "exit 3: \\x1b[2Jlast \\u202e line")
        # a results file that is a link is not taken, nor copied
        self.write_record(json.dumps(good_record(command=["run"], output="file")))
        self.exit.write_text(json.dumps(good_exit()))
        (self.d / "9-n1.json").symlink_to(secret)
        o = self.outcome()
        self.assertIsNone(o["results"])
        self.assertIn("symbolic link", o["reason"])
        # a file whose name is no node's is not a node
        (self.d / "9-\x1b[2J.out").write_text("x")
        self.assertEqual([o["node"] for o in outcomes.node_outcomes(
            self.jobs, records.read_record(self.jobs, "9"))], ["n1"])
        self.assert_victim_untouched()


# ---- 8. collect: every target checked first, written all at once --------------------------------

class CollectTest(RecordWork):
    def setUp(self):
        super().setUp()
        self.write_record(json.dumps(good_record(nodes=["n1", "n2"])))
        for node, rc in (("n1", 0), ("n2", 1)):
            (self.d / f"9-{node}.exit").write_text(json.dumps(good_exit(node=node, rc=rc)))
            (self.d / f"9-{node}.out").write_text(f"{node} out\n")
            (self.d / f"9-{node}.err").write_text(f"{node} err\n")
        self.out.mkdir()

    def collect(self, *extra):
        return cli("fleet", "collect", "9", "--jobs-dir", str(self.jobs), "--out",
                   str(self.out), *extra)

    def assert_refused(self, *words, force=False):
        before = snapshot(self.out)
        rc, out, err = self.collect(*(["--force"] if force else []))
        self.assert_one_line(rc, err, *words)
        self.assertEqual(snapshot(self.out), before)  # nothing written, no stage left
        self.assert_victim_untouched()

    def test_first_collect_then_never_over_unasked(self):
        rc, out, err = self.collect()
        self.assertEqual(rc, 1, err)  # n2 failed
        names = sorted(snapshot(self.out))
        self.assertEqual(names, ["logs", "logs/9-n1.err", "logs/9-n1.exit", "logs/9-n1.out",
                                 "logs/9-n2.err", "logs/9-n2.exit", "logs/9-n2.out",
                                 "nodes-9.json", "summary-9.txt"])
        # again, unasked: the node table is there
        self.assert_refused("nodes-9.json", "--force")
        (self.out / "nodes-9.json").unlink()
        self.assert_refused("summary-9.txt", "--force")
        # --force replaces the table and the summary (regular files), keeps the copies
        (self.out / "nodes-9.json").write_text("old\n")
        (self.d / "9-n2.err").write_text("n2 err, again\n")
        rc, out, err = self.collect("--force")
        self.assertEqual(rc, 1, err)
        self.assertNotEqual((self.out / "nodes-9.json").read_text(), "old\n")
        self.assertEqual((self.out / "logs" / "9-n2.err").read_text(), "n2 err\n")
        self.assertEqual((self.out / "logs" / "9-n2-2.err").read_text(), "n2 err, again\n")

    def test_odd_targets_refused_before_anything(self):
        secret = self.victim / "precious"
        for rel, make, words in (
                ("nodes-9.json", lambda p: p.symlink_to(secret), ("symbolic link",)),
                ("summary-9.txt", lambda p: p.symlink_to(secret), ("symbolic link",)),
                ("nodes-9.json", lambda p: p.symlink_to(self.victim / "new"), ("symbolic",)),
                ("nodes-9.json", lambda p: p.mkdir(), ("a directory",)),
                ("nodes-9.json", lambda p: os.mkfifo(p), ("FIFO",)),
                ("logs", lambda p: p.symlink_to(self.victim), ("symbolic link",)),
                ("logs", lambda p: p.write_text("x"), ("not a directory", "a regular file")),
                ("logs/9-n1.err", lambda p: (p.parent.mkdir(), p.symlink_to(secret)),
                 ("symbolic link",)),
                ("logs/9-n2.exit", lambda p: (p.parent.mkdir(), os.mkfifo(p)), ("FIFO",))):
            for force in (False, True):
                shutil.rmtree(self.out)
                self.out.mkdir()
                make(self.out / rel)
                with self.subTest(target=rel, force=force, words=words):
                    before = snapshot(self.out)
                    rc, out, err = self.collect(*(["--force"] if force else []))
                    self.assertEqual(rc, 2, err)
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                    self.assertTrue(any(w in err for w in words), err)
                    self.assertEqual(snapshot(self.out), before)
                    self.assertFalse((self.victim / "new").exists())
                    self.assert_victim_untouched()

    def test_report_directory_of_run(self):
        self.write_record(json.dumps(good_record(command=["run"], output="file")))
        report = self.out / "report-9"
        report.symlink_to(self.victim)
        self.assert_refused("report-9", "symbolic link", force=True)
        report.unlink()
        report.mkdir()
        (report / "index.md").write_text("old\n")
        self.assert_refused("index.md", "--force")
        (report / "index.md").unlink()
        (report / "index.md").symlink_to(self.victim / "precious")
        self.assert_refused("index.md", "symbolic link", force=True)

    def test_a_failure_leaves_nothing(self):
        """The report fails after the copies are made: none of it is published."""
        self.write_record(json.dumps(good_record(command=["run"], output="file")))
        results = json.loads((Path(__file__).parent / "testdata" /
                              "results_small.json").read_text())
        (self.d / "9-n1.json").write_text(json.dumps(results))
        with mock.patch.object(collect.report, "write", side_effect=UsageError("boom")):
            rc, out, err = self.collect()
        self.assert_one_line(rc, err, "boom")
        self.assertEqual(snapshot(self.out), {})
        shutil.rmtree(self.out)
        with mock.patch.object(collect.report, "write", side_effect=UsageError("boom")):
            rc, out, err = self.collect()
        self.assertFalse(self.out.exists())  # made for the output, removed with it


if __name__ == "__main__":
    unittest.main()
