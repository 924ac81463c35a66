"""A hostile node of `recipe patch-review --fleet`: it controls its own
review file (and its cpuinfo and name as the host sees them), and the submit
host must neither crash, stall, nor print what the node chose, nor take a
file that contradicts itself. Each attack is a crafted edit of the recorded
file (review-node-6.12-quick.json), read the way the host reads it:
patch_review_fleet.node_inputs, then reports/fleet_review.reduce and lines,
then the block (reports/cover_letter.render). No timing is measured."""

import copy
import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli.errors import UsageError
from vdsobench_cli.core import limits
from vdsobench_cli.recipes import patch_review_fleet as pf
from vdsobench_cli.tests.support import TESTDATA, cli, one_line

from reports import cover_letter, fleet_review, fleet_review_text, review
from reports.testsupport import paired_rounds

RECORDED = TESTDATA / "review-node-6.12-quick.json"
BEFORE, AFTER = "kernel:rn-before", "kernel:rn-after"
KEY = "realtime/hot/cpu1"
B_SUBJECT, A_SUBJECT = "kernel:rn-before+rdtscp+always#0", "kernel:rn-after+rdtscp+always#0"
CPU = {"vendor": "GenuineIntel", "family": 6, "model": 167}
# what must never reach the block raw: C0/C1 controls, DEL, bidi controls
FORBIDDEN = [chr(c) for c in list(range(0x20)) + list(range(0x7f, 0xa0))] + [
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
    "\u2069", "\u200e", "\u200f", "\u2028", "\u2029"]


def outcome(path, rc=0, node="n1", cpu=CPU):
    return {"node": node, "state": "ok" if rc == 0 else "failed", "rc": rc,
            "results": path, "cpu": cpu, "kernel": "6.18.44",
            "reason": None if rc == 0 else f"exit {rc}: x"}


def block(reduced):
    """The cover letter's block with the fleet part, as patch_review.run
    builds it for --fleet."""
    reduced = dict(reduced, job="17", asked=len(reduced["failed"]) + sum(
        len(m["nodes"]) for m in reduced["models"]), job_dir="/shared/jobs/17")
    rv = {"subject": "vdso: x", "patches": 1, "measured": "the tree's read path",
          "tree": "Linux 6.12.118", "compiler": "gcc 12.2.0", "line": "kbuild",
          "machine": {"cpu": "here"}, "verify": {"after": (True, "PASS"),
                                                 "before": (True, "PASS")},
          "code": "identical", "sim": [], "rows": [], "page": [], "why": [],
          "notes": [], "target": review.TARGET, "fleet": reduced}
    return cover_letter.render(rv)


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="vdsobench-review-attack-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.good = json.loads(RECORDED.read_text())

    def edited(self, f):
        obj = copy.deepcopy(self.good)
        f(obj)
        return obj

    def write(self, obj, name="n1.json"):
        path = self.tmp / name
        path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
        return str(path)

    def refused(self, obj, rc=0, says=None):
        """The node is named as failed with one line (saying says), never
        pooled; the block still renders."""
        path = self.write(obj)
        [n] = pf.node_inputs([outcome(path, rc)], BEFORE, AFTER)
        self.assertIsNotNone(n["failed"], "a hostile file was taken")
        self.assertTrue(n["failed"].startswith("its review file is unusable: "), n["failed"])
        self.assertNotIn("\n", n["failed"])
        if says:
            self.assertIn(says, n["failed"])
        self.assertEqual(n["rounds"], {})
        red = fleet_review.reduce([n])
        self.assertEqual(red["models"], [])
        self.check_block(block(red))
        return n["failed"]

    def check_block(self, lines):
        self.assertLessEqual(len(lines), cover_letter.MAX_LINES, "\n".join(lines))
        for line in lines:
            self.assertLessEqual(len(line), cover_letter.WIDTH, line)
            for c in FORBIDDEN:
                self.assertNotIn(c, line, repr(line))


class CrashTest(Base):
    """Values the schemas let through that the host's own code met raw: each
    was a traceback on the submit host before."""

    def both(self, obj, key, value):
        for subject in (B_SUBJECT, A_SUBJECT):
            obj["comparison"]["rounds"][KEY][subject][key] = value

    def test_round_keys_that_are_not_round_numbers(self):
        # int() raised on "x" and on 5000 digits; " 1", "1_0", "01" and an
        # Arabic-Indic digit would have been taken as numbers
        for key in ("x", "9" * 5000, " 1", "1_0", "01", "\u0663", "-1", ""):
            with self.subTest(key=key[:12]):
                self.refused(self.edited(lambda o: self.both(o, key, 5.0)),
                             says="is not a round number")

    def test_meta_refused_of_another_type(self):
        for value in ([1], None, 5, "realtime/hot/cpu1", {"a": 1}, [["x"]]):
            with self.subTest(value=value):
                self.refused(self.edited(
                    lambda o: o["comparison"]["meta"].update(refused=value)),
                    says="meta.refused: not a list of rows")

    def test_an_exit_status_that_is_not_a_number(self):
        path = self.write(self.good)
        for rc in (True, 1.0, "0", None):
            with self.subTest(rc=rc):
                o = outcome(path, 0)
                o["rc"] = rc
                [n] = pf.node_inputs([o], BEFORE, AFTER)
                self.assertIsNotNone(n["failed"])
                self.assertEqual(n["rounds"], {})


class StallTest(Base):
    """A node's file is capped at 16 MB, but a small file could still cost
    the host hours: every row re-read and re-sorted the rounds it names."""

    def test_many_rows_naming_one_rows_rounds(self):
        def edit(o):
            c = o["comparison"]
            row = c["rows"][0]
            c["rows"] = [dict(row, baseline=f"b{i}") for i in range(2000)]
            c["rounds"] = {KEY: {s: {str(k): 1.0 + k % 7 for k in range(20000)}
                                 for s in (B_SUBJECT, A_SUBJECT)}}
        obj = self.edited(edit)
        # before the fix each of the 2000 rows sorted 20000 keys (about half a
        # minute of CPU): the row cap refuses the file before any is sorted
        self.refused(obj, says="2000 rows, more than")

    def test_many_rows_of_the_right_pair(self):
        def edit(o):
            c = o["comparison"]
            row = c["rows"][0]
            c["rows"] = [dict(row, cpu=i) for i in range(fleet_review.MAX_KEYS + 1)]
        self.refused(self.edited(edit), says="rows, more than")

    def test_more_rounds_than_the_host_pools(self):
        def edit(o):
            for s in (B_SUBJECT, A_SUBJECT):
                o["comparison"]["rounds"][KEY][s] = {
                    str(k): 1.0 for k in range(limits.MAX_ROUNDS + 1)}
        self.refused(self.edited(edit), says="rounds, more than")


class ExtremeTimesTest(Base):
    """Times the schema takes (any number above 0, up to 2^64) whose ratio is
    infinite: the block said "+inf% [+inf,+inf] slower"."""

    def test_a_time_no_call_takes(self):
        for lo, hi in ((5e-324, 1e19), (1e19, 5e-324), (0.001, 20.0), (20.0, 2e9)):
            with self.subTest(before=lo, after=hi):
                def edit(o):
                    for subjects in o["comparison"]["rounds"].values():
                        subjects[B_SUBJECT] = dict.fromkeys(subjects[B_SUBJECT], lo)
                        subjects[A_SUBJECT] = dict.fromkeys(subjects[A_SUBJECT], hi)
                nodes = pf.node_inputs([outcome(self.write(self.edited(edit)))],
                                       BEFORE, AFTER)
                red = fleet_review.reduce(nodes)
                self.assertEqual(red["models"], [])
                [(name, _, why)] = red["failed"]
                self.assertIn("a time that is not between", why)
                lines = block(red)
                self.check_block(lines)
                self.assertNotIn("inf", "\n".join(lines))


class UntimedModelTest(Base):
    """A node whose every row it refused (it says it lost the CPU on each):
    its model has a column of "-" and the host exits 1 (fleet_complete), so
    the block's first line must say so; it said nothing."""

    def test_a_model_with_no_rounds(self):
        def refuse_all(o):
            for row in o["comparison"]["rows"]:
                row["refused"] = f"{row['clock']}/{row['mode']}: lost the CPU"
        outcomes = [outcome(self.write(self.good, "n1.json"), node="n1"),
                    outcome(self.write(self.edited(refuse_all), "n2.json"), node="n2",
                            cpu={"vendor": "AuthenticAMD", "family": 25, "model": 17})]
        nodes = pf.node_inputs(outcomes, BEFORE, AFTER)
        self.assertEqual([n["failed"] for n in nodes], [None, None])
        self.assertEqual(nodes[1]["rounds"], {})
        red = fleet_review.reduce(nodes)
        self.assertEqual(len(red["models"]), 2)
        tag = next(m["tag"] for m in red["models"] if m["nodes"] == ["n2"])
        status = fleet_review_text.status(red)
        self.assertTrue(status.startswith("INCOMPLETE: 6 of 6 cells"), status)
        self.assertIn(f"no rounds from {tag}", status)
        lines = block(red)
        self.check_block(lines)
        self.assertTrue(status.startswith(lines[0]), lines[0])  # wrapped at 72


class MisattributedTest(Base):
    """Rows or records that are not the node's own pair, or that say the
    patch passed where the file says it tore."""

    def test_rows_of_other_variants(self):
        for field, value in (("baseline", "kernel:other+rdtscp+always"),
                             ("variant", "kernel:rn-before+rdtscp+always")):
            with self.subTest(field):
                self.refused(self.edited(
                    lambda o: o["comparison"]["rows"][0].update({field: value})),
                    says="a row of")

    def test_rows_of_clocks_or_modes_vdsobench_lacks(self):
        def edit(clock, mode):
            def f(o):
                row = o["comparison"]["rows"][0]
                old = f"{row['clock']}/{row['mode']}/cpu{row['cpu']}"
                row.update(clock=clock, mode=mode)
                new = f"{clock}/{mode}/cpu{row['cpu']}"
                o["comparison"]["rounds"][new] = o["comparison"]["rounds"].pop(old)
            return f
        for clock, mode in (("bogus", "hot"), ("realtime", "bogus"),
                            ("\x1b[31mrealtime", "hot"), ("REALTIME", "hot")):
            with self.subTest(clock=clock, mode=mode):
                why = self.refused(self.edited(edit(clock, mode)),
                                   says="not a clock and mode")
                self.assertNotIn("\x1b", why)

    def test_a_clock_timed_twice(self):
        def edit(o):
            row = copy.deepcopy(o["comparison"]["rows"][0])
            row["cpu"] = 7
            o["comparison"]["rows"].append(row)
        self.refused(self.edited(edit), says="timed twice")

    def test_torn_but_every_record_passes(self):
        # was taken: the model showed the patch passing, no WRONG
        def edit(o):
            o["review"].update(torn="edges: torn", plan=None, seconds=None)
            o["comparison"] = None
        self.refused(self.edited(edit), rc=1, says="its verify records that it passed")

    def test_passed_but_a_record_of_the_patched_tree_fails(self):
        for status in ("FAIL", "CAUGHT"):
            with self.subTest(status=status):
                self.refused(self.edited(
                    lambda o: o["review"]["verify"][0].update(status=status)),
                    says="its verify records that it tore")

    def test_a_record_without_a_verdict(self):
        # was taken as a tear: a verify that never ran made the model WRONG
        for status in ("no result (exit 2)", "SKIP", "pass", "PASS\x1b[2J", "PASS "):
            with self.subTest(status=status):
                why = self.refused(self.edited(
                    lambda o: o["review"]["verify"][0].update(status=status)),
                    says="verify gave no verdict on kernel:rn-after+fake+always")
                self.assertNotIn("\x1b", why)

    def test_verify_records_not_the_four(self):
        def other(o):
            for r in o["review"]["verify"]:
                r["variant"] = r["variant"].replace("rn-", "zz-")

        def drop(side, i):
            def f(o):
                recs = [r for r in o["review"]["verify"] if r["side"] == side]
                o["review"]["verify"].remove(recs[i])
            return f

        def twice(o):
            o["review"]["verify"].append(copy.deepcopy(o["review"]["verify"][1]))

        def swapped(o):
            for r in o["review"]["verify"]:
                r["side"] = "before" if r["side"] == "after" else "after"
        for what, f in (("other variants", other), ("no own-counter after", drop("after", 1)),
                        ("no fake before", drop("before", 0)), ("one twice", twice),
                        ("sides swapped", swapped)):
            with self.subTest(what):
                self.refused(self.edited(f), says="its verify records are not")

    def test_the_fake_counter_forced_still_reads(self):
        # review-node --counter fake writes each record twice: that is its own
        def edit(o):
            o["review"].update(counter="fake", counter_forced=True)
            for r in o["review"]["verify"]:
                r["variant"] = r["variant"].replace("+rdtscp+", "+fake+")
            for row in o["comparison"]["rows"]:
                row["baseline"] = row["baseline"].replace("+rdtscp+", "+fake+")
                row["variant"] = row["variant"].replace("+rdtscp+", "+fake+")
            for key, subjects in o["comparison"]["rounds"].items():
                o["comparison"]["rounds"][key] = {
                    s.replace("+rdtscp+", "+fake+"): v for s, v in subjects.items()}
        [n] = pf.node_inputs([outcome(self.write(self.edited(edit)))], BEFORE, AFTER)
        self.assertIsNone(n["failed"])
        self.assertEqual(len(n["rounds"]), 3)


class JobDirectoryTest(Base):
    """The job's directory as node_outcomes reads it: a node can write
    there, so it can leave files under another node's name, or a name
    Slurm never placed the job on."""

    def leave(self, d, node, cpu_model):
        base = d / f"17-{node}"
        base.with_suffix(".json").write_text(json.dumps(self.good))
        base.with_suffix(".exit").write_text(json.dumps(
            {"rc": 0, "phase": "run", "job": "17", "node": node, "started": 1.0,
             "ended": 2.0, "kernel": "6.18.44"}))
        base.with_suffix(".cpuinfo").write_text(
            f"processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
            f"model\t\t: {cpu_model}\nmodel name\t: \x1b[2JFake CPU\nstepping\t: 1\n\n")

    def test_files_of_a_node_slurm_did_not_place(self):
        from vdsobench_cli.fleet import outcomes as fleet_outcomes
        d = self.tmp / "17"
        d.mkdir()
        self.leave(d, "n1", 167)
        self.leave(d, "n9", 143)  # n1 wrote these too
        record = {"job": "17", "nodes": ["n1"], "slurm": {"JobState": "COMPLETED"},
                  "output": "file"}
        outcomes = fleet_outcomes.node_outcomes(str(self.tmp), record)
        self.assertEqual([o["node"] for o in outcomes], ["n1", "n9"])
        nodes = pf.node_inputs(outcomes, BEFORE, AFTER, record["nodes"])
        red = fleet_review.reduce(nodes)
        self.assertEqual([m["nodes"] for m in red["models"]], [["n1"]])
        [(name, cpu, why)] = red["failed"]
        self.assertEqual((name, cpu), ("n9", None))
        self.assertIn("not a node of the job", why)
        self.check_block(block(red))
        # where Slurm's placement is not known, every node that left files
        # is read, each its own
        self.assertEqual(len(pf.node_inputs(outcomes, BEFORE, AFTER)), 2)


class ResistedTest(Base):
    """Attacks the reader already stood: each stays a test."""

    def test_json_the_reader_refuses(self):
        text = json.dumps(self.good)
        cases = {
            "NaN": text.replace("17.755044", "NaN", 1),
            "Infinity where base is not 0": text.replace("17.755044", "Infinity", 1),
            "1e999": text.replace("17.755044", "1e999", 1),
            "a 400-digit whole number": text.replace('"lost": 0', '"lost": ' + "9" * 400, 1),
            "nested 100000 deep": "[" * 100000 + "]" * 100000,
            "a key twice": '{"review": 1, "review": 2}',
            "not UTF-8": b"\xff\xfe".decode("latin-1"),
            "empty": "",
        }
        for what, body in cases.items():
            with self.subTest(what):
                self.refused(body)

    def test_hostile_strings_stay_escaped(self):
        evil = "\x1b]0;pwn\x07\u202eMVK\u2066\x9b2J"

        def edit(o):
            o["review"]["hypervisor"] = evil
            o["review"]["verify"][2].update(status="CAUGHT", verdict=evil * 20)
        [n] = pf.node_inputs([outcome(self.write(self.edited(edit)), node=evil,
                                      cpu=dict(CPU, model_name=evil * 10))], BEFORE, AFTER)
        self.assertIsNone(n["failed"])
        red = fleet_review.reduce([n])
        lines = block(red)
        self.check_block(lines)
        self.assertIn("\\x1b", "\n".join(lines))

    def test_a_link_swapped_in_after_the_outcome(self):
        # node_outcomes saw a regular file; by the read it is a link to
        # one the node may not show the host (the host's own)
        secret = self.write(self.good, "host-secret.json")
        path = self.tmp / "n1.json"
        o = outcome(str(path))
        path.symlink_to(secret)
        [n] = pf.node_inputs([o], BEFORE, AFTER)
        self.assertIsNotNone(n["failed"])
        self.assertEqual(n["rounds"], {})
        os.unlink(path)
        os.mkfifo(path)
        with self.assertRaises(UsageError):
            pf.load_review(str(path), BEFORE, AFTER, 0)  # returns: no read of a FIFO

    def test_a_second_reply_under_one_name(self):
        path = self.write(self.good)
        nodes = pf.node_inputs([outcome(path), outcome(path)], BEFORE, AFTER)
        red = fleet_review.reduce(nodes)
        self.assertEqual([m["nodes"] for m in red["models"]], [["n1"]])
        self.assertEqual([why for _, _, why in red["failed"]],
                         ["a second reply under this node name"])


class BlockTest(Base):
    """Many models, many failed nodes with long hostile reasons and names:
    the block stays within 40 lines of 72 columns, every character printable."""

    def test_the_block_keeps_its_shape(self):
        path = self.write(self.good)
        outcomes = []
        for i in range(40):
            cpu = dict(CPU, model=100 + i, model_name=f"\u202eCPU{i}\x1b[2J" + "w" * 200)
            outcomes.append(outcome(path, node=f"n{i}", cpu=cpu))
        bad = self.write("{", "bad.json")
        for i in range(30):
            o = outcome(bad, rc=0, node=f"bad{i}\x1b[2J\u202e" + "v" * 100)
            outcomes.append(o)
        for i in range(20):
            o = outcome(None, rc=3, node=f"gone{i}")
            o["reason"] = f"exit 3: \x1b[31m{i}" + "reason " * 50
            outcomes.append(o)
        nodes = pf.node_inputs(outcomes, BEFORE, AFTER)
        red = fleet_review.reduce(nodes)
        self.assertEqual(len(red["models"]), 40)
        self.assertEqual(len(red["failed"]), 50)
        self.check_block(block(red))
        self.check_block(fleet_review_text.lines(red))

    def test_every_row_a_node_may_send(self):
        # 63 rows (under MAX_KEYS), 60 models with names a sentence cannot
        # hold, 300 failed nodes with distinct long reasons, torn on some
        import random
        from vdsobench_cli.core import stats, vocab
        rng = random.Random(2)
        keys = [(c, m) for c in vocab.CLOCKS for m in vocab.BENCH_MODES[:9]]
        nodes = []
        for i in range(120):
            nodes.append({"node": f"n{i}", "cpu": f"M{i % 60} \u202e (V, {i % 60}/1/1)",
                          "counter": "c" * 40, "kernel": "k" * 64, "hypervisor": "h" * 40,
                          "verify": {"after": (i % 7 != 0, "FAIL " * 30),
                                     "before": (i % 5 != 0, "B " * 60)},
                          "rounds": {k: paired_rounds(k, *stats.simulate_rounds(
                              rng, 12, 0.95 + 0.1 * rng.random(), 0.01, 0.0)) for k in keys},
                          "failed": None})
        nodes += [{"node": f"bad{i}", "cpu": None, "failed": f"reason {i} " * 20}
                  for i in range(300)]
        passing = [dict(n, verify={"after": (True, "PASS"), "before": (True, "PASS")})
                   if not n["failed"] else n for n in nodes]
        for what, ns in (("torn on some", nodes), ("all pass", passing),
                         ("one mode", [dict(n, rounds={k: v for k, v in n["rounds"].items()
                                                       if k[1] == "hot"})
                                       if not n["failed"] else n for n in passing])):
            with self.subTest(what):
                red = fleet_review.reduce(ns)
                self.assertEqual(len(red["models"]), 60)
                self.check_block(block(red))


class CommandTest(Base):
    """A new user's mistakes with review-node and with --fleet's options:
    one line naming the value and what is valid, exit 2 (no Slurm needed:
    each is refused before a cluster is looked for)."""

    def test_review_node_outs_it_cannot_write(self):
        fifo = self.tmp / "fifo"
        os.mkfifo(fifo)
        there = self.write("{}", "there.json")
        for out, says in ((str(self.tmp), "it is a directory"), (str(fifo), "it is a FIFO"),
                          (there, "exists")):
            with self.subTest(out=out):
                rc, _, err = cli("review-node", "kernel:a", "kernel:b", "--out", out)
                one_line(self, rc, err, says)
        self.assertEqual(Path(there).read_text(), "{}")

    def test_review_node_usage(self):
        rc, _, err = cli("review-node", "kernel:a", "kernel:b", "--out",
                         str(self.tmp / "r.json"), "--clocks", "bogus")
        one_line(self, rc, err, "'bogus'", "monotonic_raw")
        rc, _, err = cli("review-node", "kernel:a")
        one_line(self, rc, err, "AFTER")
        rc, out, _ = cli("review-node", "--help")
        self.assertEqual(rc, 0)
        self.assertIn("patch-review --fleet", out)
        self.assertIn("2: bad usage", " ".join(out.split()))

    def test_fleet_options(self):
        for argv, says in (
                (["--fleet"], ["--nodes N, --nodes all or --one-per-feature"]),
                (["--fleet", "--nodes", "0"], ["0 is out of range", "1 to"]),
                (["--fleet", "--nodes", "abc"], ["'abc'", "or all"]),
                (["--fleet", "--nodes", "9" * 30], ["out of range"]),
                (["--fleet", "--nodes", "all", "--one-per-feature"], ["exclude each other"]),
                (["--fleet", "--constraint", "zen4;rm -rf /"], ["not a Slurm constraint",
                                                                "e.g. zen5"]),
                (["--fleet", "--nodes", "2", "--jobs-dir", "/tmp/a\x1b[2Jb"],
                 ["\\x1b", "not a jobs directory", "valid:"]),
                (["--fleet", "--nodes", "2", "--partition", "a b"], ["'a b'", "valid:"]),
                (["--fleet", "--nodes", "2", "--timeout", "-5"], ["-5", "valid:"]),
                (["--nodes", "2"], ["--nodes is for --fleet"])):
            with self.subTest(argv=argv):
                rc, _, err = cli("recipe", "patch-review", *argv)
                one_line(self, rc, err, *says)
                self.assertNotIn("\x1b", err)


if __name__ == "__main__":
    unittest.main()
