"""Outputs and options, class by class (issue 10):

- odd output targets: --force replaces only a regular file; a directory,
  device, FIFO, socket or symbolic link is refused (one line, exit 2) and left
  as it was, by every command that writes a file or a directory;
- '-' is never a file named '-': every --out refuses it;
- work lost to a late failure: the target is checked before measuring (its
  directory, free space, an existing file); a write that still fails, or a
  second run that finishes after another wrote the same --out, keeps the
  output in a recovery file and says where (exit 1);
- every numeric option of every command is range-checked by one parser that
  states the valid range.

The commands run in-process with the real harness at its smallest settings
where a measurement is needed; nothing here asserts a time."""

import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import textwrap
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.measure import fingerprint, results
from vdsobench_cli import main
from vdsobench_cli.cli import atomic, lifecycle, ranged, targets
from vdsobench_cli.measure import sim
from vdsobench_cli.cli.errors import Failure, UsageError
from vdsobench_cli.tests.support import vdsobench

SCRIPTS = Path(__file__).resolve().parents[2]
LAUNCHER = SCRIPTS / "vdsobench"
TINY_RUN = ["run", "--variants", "floor/empty", "--min-time", "0.001", "--repetitions", "1",
            "--quiet"]
TINY_COMPARE = ["compare", "generic_5_3+lfence_rdtsc+always", "generic_6_10+lfence_rdtsc+always",
                "--clocks", "monotonic", "--rounds", "8", "--batch-ms", "1", "--quiet"]
KEPT = re.compile(r"kept in (\S+) instead")


class TempDirs(unittest.TestCase):
    """A fresh directory, and XDG_STATE_HOME in another (where recovery files go)."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="vdsobench-targets-")
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name, "work")
        self.dir.mkdir()
        self.state = Path(tmp.name, "state")
        env = mock.patch.dict(os.environ, {"XDG_STATE_HOME": str(self.state)})
        env.start()
        self.addCleanup(env.stop)

    def one_line(self, rc, err, code, *needles):
        self.assertEqual(rc, code, err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertTrue(lines[0].startswith("vdsobench: error: "), err)
        self.assertNotIn("Traceback", err)
        for needle in needles:
            self.assertIn(needle, lines[0])
        return lines[0]

    def recovered(self, line):
        """The recovery file a message names: it must be under XDG_STATE_HOME."""
        m = KEPT.search(line)
        self.assertIsNotNone(m, line)
        kept = Path(m.group(1))
        self.assertEqual(kept.parent, self.state / "vdsobench", line)
        self.assertTrue(kept.name.startswith("recovered-"), line)
        return kept


# ---- odd targets ----------------------------------------------------------------------------

def odd_targets(directory):
    """{kind word in the message: path} of everything --force must not replace."""
    d = Path(directory)
    (d / "a-directory").mkdir()
    os.mkfifo(d / "a-fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(d / "a-socket"))
    sock.close()
    (d / "their-file").write_text("theirs\n")
    (d / "link-to-file").symlink_to(d / "their-file")
    (d / "link-to-dir").symlink_to(d / "a-directory")
    (d / "dangling-link").symlink_to(d / "nowhere")
    targets = {"a directory": d / "a-directory", "a FIFO": d / "a-fifo",
               "a socket": d / "a-socket", "a symbolic link": d / "link-to-file",
               "a symbolic link (to": d / "link-to-dir", "link": d / "dangling-link"}
    try:  # a copy of /dev/full: only root may make one (and not in every container)
        os.mknod(d / "full", 0o600 | stat.S_IFCHR, os.makedev(1, 7))
        targets["a character device"] = d / "full"
    except OSError:
        pass
    return targets


def snapshot(directory):
    """What is in directory: name -> (file type, link target or file text)."""
    out = {}
    for p in sorted(Path(directory).iterdir()):
        st = os.lstat(p)
        what = (os.readlink(p) if stat.S_ISLNK(st.st_mode)
                else p.read_text() if stat.S_ISREG(st.st_mode) else None)
        out[p.name] = (stat.S_IFMT(st.st_mode), what)
    return out


class OddTargetTest(TempDirs):
    def setUp(self):
        super().setUp()
        self.targets = odd_targets(self.dir)
        self.before = snapshot(self.dir)

    def assert_untouched(self):
        self.assertEqual(snapshot(self.dir), self.before)
        self.assertEqual(os.listdir(self.dir / "a-directory"), [])

    def test_check_and_write_refuse_every_kind(self):
        for word, path in self.targets.items():
            for force in (False, True):
                for fn in (lambda: targets.check_writable(path, force),
                           lambda: atomic.write_atomic(path, {"x": 1}, force),
                           lambda: targets.check_writable(path, True, parents=False)):
                    with self.subTest(target=path.name, force=force), \
                            self.assertRaises(UsageError) as cm:
                        fn()
                    message = str(cm.exception)
                    self.assertIn(f"cannot write results to {path}: it is {word}"
                                  if word != "link" else "symbolic link", message)
                    if word not in ("a directory",):
                        self.assertIn("--force replaces only a regular file", message)
        self.assert_untouched()

    def test_every_file_output_refuses_them(self):
        fifo, link = str(self.targets["a FIFO"]), str(self.targets["a symbolic link"])
        commands = [
            [*TINY_RUN, "--out", fifo, "--force"],
            [*TINY_RUN, "--out", link, "--force"],
            [*TINY_COMPARE, "--out", fifo, "--force"],
            ["layout", "x86_gtod", "--out", link],
            ["gate", "--update-baseline", "--baseline", fifo],
            ["merge", str(SCRIPTS / "vdsobench_cli" / "tests" / "testdata" / "results_small.json"),
             "--out", link, "--force"],
        ]
        if "a character device" in self.targets:
            commands.append([*TINY_RUN, "--out", str(self.targets["a character device"]),
                             "--force"])
        for argv in commands:
            with self.subTest(argv=argv[:2]):
                rc, out, err = vdsobench(*argv)
                self.one_line(rc, err, 2, "cannot write", "--force replaces only a regular "
                                                          "file")
                self.assertNotIn("benchmarks on CPU", err + out, "it measured first")
        self.assert_untouched()

    def test_directory_outputs_refuse_non_directories(self):
        for argv in (["recipe", "timens", "--quick", "--out", str(self.targets["a FIFO"])],
                     ["plot", str(SCRIPTS / "vdsobench_cli" / "tests" / "testdata" / "results_small.json"),
                      "--out", str(self.targets["a socket"])],
                     [*TINY_COMPARE, "--plot", str(self.targets["link"])]):
            with self.subTest(argv=argv[:1]):
                rc, _, err = vdsobench(*argv)
                self.one_line(rc, err, 2, "is not a directory")
        self.assert_untouched()

    def test_force_replaces_a_regular_file_only_that_one(self):
        path = self.dir / "their-file"
        atomic.write_atomic(path, {"mine": 1}, force=True)
        self.assertEqual(json.loads(path.read_text()), {"mine": 1})
        self.assertEqual(os.readlink(self.targets["a symbolic link"]), str(path),
                         "the link to it is still a link")


# ---- "-" ------------------------------------------------------------------------------------

class StdoutTest(TempDirs):
    """`--out -` is refused by every command, the same way, and writes nothing."""

    def test_every_out_refuses_dash(self):
        fixture = str(SCRIPTS / "vdsobench_cli" / "tests" / "testdata" / "results_small.json")
        cwd = os.getcwd()
        os.chdir(self.dir)
        self.addCleanup(os.chdir, cwd)
        for argv in ([*TINY_RUN, "--out", "-"], [*TINY_COMPARE, "--out", "-"],
                     ["compare", "--results", fixture, fixture, "--out", "-"],
                     ["layout", "x86_gtod", "--out", "-"], ["recipe", "timens", "--out", "-"],
                     ["plot", fixture, "--out", "-"], ["merge", fixture, "--out", "-"],
                     [*TINY_COMPARE, "--plot", "-"]):
            with self.subTest(argv=argv[:2]):
                rc, out, err = vdsobench(*argv)
                self.one_line(rc, err, 2, "output '-': standard output is not supported")
                self.assertEqual(out, "")
                self.assertEqual(os.listdir(self.dir), [])


# ---- work lost to a late failure ----------------------------------------------------------

class PreflightTest(TempDirs):
    def fake_statvfs(self, free_blocks):
        real = os.statvfs

        def statvfs(path):
            st = real(path)
            if not str(path).startswith(str(self.dir)):
                return st
            return os.statvfs_result((4096, 4096, st.f_blocks, free_blocks, free_blocks,
                                      st.f_files, st.f_ffree, st.f_favail, st.f_flag,
                                      st.f_namemax))
        return mock.patch.object(targets.os, "statvfs", side_effect=statvfs)

    def test_check_writable_needs_the_space(self):
        path = self.dir / "runs" / "r.json"
        with self.fake_statvfs(1):
            with self.assertRaises(UsageError) as cm:
                targets.check_writable(path, need=1 << 20)
            self.assertIn("4.0 KiB free on its file system, about 1.0 MiB needed",
                          str(cm.exception))
            targets.check_writable(self.dir / "small.json", need=4096)
        with self.fake_statvfs(1 << 20):
            targets.check_writable(path, need=1 << 20)

    def test_run_refuses_before_measuring(self):
        with self.fake_statvfs(2):
            rc, out, err = vdsobench(*TINY_RUN, "--out", str(self.dir / "sub" / "r.json"))
        self.one_line(rc, err, 2, "free on its file system", "needed")
        self.assertEqual(out, "")
        self.assertEqual(os.listdir(self.dir), [], "the directory made for it is gone")

    def test_size_estimate_grows_with_the_run(self):
        from vdsobench_cli.commands import run
        self.assertGreater(run.expected_size(82, 3), run.expected_size(1, 1))
        # a real results file of 164 benchmarks x 10 entries is 0.7 to 1 MB
        self.assertGreater(run.expected_size(164, 6), 1_000_000)


@unittest.skipUnless(os.geteuid() == 0 and shutil.which("unshare"),
                     "a tmpfs mount needs root (unshare -m, mount -t tmpfs)")
class FullFilesystemTest(TempDirs):
    """A real full file system: a small tmpfs in a private mount namespace."""

    PROGRAM = textwrap.dedent("""
        import contextlib, io, json, os, sys
        sys.path.insert(0, {scripts!r})
        from vdsobench_cli import main
        from vdsobench_cli.cli import targets
        if {late}:
            targets.free_bytes = lambda d: None  # the check passed; the space went later
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = main.main({argv!r})
        print(json.dumps({{"rc": rc, "err": err.getvalue(), "left": os.listdir({mount!r})}}))
        """)

    def in_tmpfs(self, size, late):
        mount = self.dir / "full"
        mount.mkdir()
        code = self.PROGRAM.format(scripts=str(SCRIPTS), late=late, mount=str(mount),
                                   argv=[*TINY_RUN, "--out", str(mount / "r.json")])
        r = subprocess.run(["unshare", "-m", "sh", "-c",
                            'mount -t tmpfs -o size="$1" vdsobench-full "$2" && '
                            'exec /usr/bin/python3 -c "$3"', "sh", size, str(mount), code],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if r.returncode != 0 and "mount" in r.stderr:
            self.skipTest(f"no tmpfs here: {r.stderr.strip()}")
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout.strip().splitlines()[-1])

    def test_too_little_space_is_refused_before_measuring(self):
        got = self.in_tmpfs("64k", late=False)
        self.one_line(got["rc"], got["err"], 2, "free on its file system")
        self.assertEqual(got["left"], [])

    def test_a_late_full_disk_keeps_the_measurements(self):
        got = self.in_tmpfs("4k", late=True)  # smaller than one results file
        line = got["err"].strip().splitlines()[-1]
        self.assertEqual(got["rc"], 1, got["err"])
        self.assertIn("No space left on device", line)
        self.assertEqual(got["left"], [], "a partial file or temp file left on the tmpfs")
        names = {b["run_name"] for b in results.load(self.recovered(line))["benchmarks"]}
        self.assertEqual(len(names), 1, names)
        self.assertTrue(names.pop().startswith("floor/empty/none/hot/cpu"))


class RaceTest(TempDirs):
    """Two commands, one --out: the second to finish does not overwrite the first's
    file and keeps its own output in a recovery file."""

    def another_run_writes(self, path, replace=False):
        """fingerprint.collect (called after the target check, before the write)
        with the other run finishing first as a side effect."""
        real, done = fingerprint.collect, []

        def collect(*args, **kwargs):
            if done:
                return real(*args, **kwargs)
            done.append(True)
            tmp = path.with_name(path.name + ".theirs")
            tmp.write_text("theirs\n")
            (os.replace if replace else os.link)(tmp, path)
            tmp.unlink(missing_ok=True)
            return real(*args, **kwargs)
        return mock.patch.object(fingerprint, "collect", side_effect=collect)

    def assert_kept(self, rc, err, path, what="results"):
        line = err.strip().splitlines()[-1]
        self.assertEqual(rc, 1, err)
        self.assertNotIn("Traceback", err)
        self.assertIn(f"cannot write {what} to {path}: it exists now", line)
        self.assertEqual(path.read_text(), "theirs\n", "the other run's file was replaced")
        self.assertEqual(sorted(os.listdir(path.parent)), [path.name], "temp files left")
        return self.recovered(line)

    def test_run_new_file(self):
        path = self.dir / "r.json"
        with self.another_run_writes(path):
            rc, _, err = vdsobench(*TINY_RUN, "--out", str(path))
        kept = self.assert_kept(rc, err, path)
        self.assertTrue(results.load(kept)["benchmarks"])

    def test_run_force_replaces_only_the_file_it_checked(self):
        path = self.dir / "r.json"
        path.write_text("old\n")
        with self.another_run_writes(path, replace=True):
            rc, _, err = vdsobench(*TINY_RUN, "--out", str(path), "--force")
        kept = self.assert_kept(rc, err, path)
        self.assertTrue(results.load(kept)["benchmarks"])

    def test_compare_out(self):
        path = self.dir / "c.json"
        with self.another_run_writes(path):
            rc, _, err = vdsobench(*TINY_COMPARE, "--out", str(path))
        kept = self.assert_kept(rc, err, path, "the comparison")
        self.assertTrue(json.loads(kept.read_text())["rows"])

    def test_gate_update_baseline(self):
        path = self.dir / "baseline.json"
        variant = "generic_5_3+lfence_rdtsc+always"
        row = {"variant": variant, "measured_as": "generic_5_3+fake+always",
               "clock": "monotonic", "mode": "hot", "instructions_per_call": 53.0,
               "l1d_misses_per_call": 0.0, "net_instructions_per_call": 40.0,
               "net_l1d_misses_per_call": 0.0, "geometry": {"tool": "cachegrind"}}

        def measured(*args, **kwargs):  # the other gate wrote the baseline meanwhile
            path.write_text("theirs\n")
            return [row]
        with mock.patch.object(sim, "measure", side_effect=measured):
            rc, _, err = vdsobench("gate", "--update-baseline", "--baseline", str(path),
                                   "--variants", variant, "--clocks", "monotonic",
                                   "--modes", "hot")
        kept = self.assert_kept(rc, err, path, "the baseline")
        self.assertEqual(json.loads(kept.read_text())["sim"]["rows"][0]["variant"], variant)

    def test_layout_target(self):
        from vdsobench_cli.commands import layout
        path = self.dir / "map.txt"
        target = layout.check_out(path)
        path.write_text("theirs\n")
        with self.assertRaises(Failure) as cm:
            target.write_stream(lambda f: f.write(b"mine\n"))
        kept = self.assert_kept(1, f"vdsobench: error: {cm.exception}", path, "the layout")
        self.assertEqual(kept.read_text(), "mine\n")

    def kept_in_temporary_folder(self):
        """A results file someone else wrote meanwhile: where the recovery kept
        ours, asserted to be the temporary folder."""
        tmp = self.dir.parent / "tmp"
        tmp.mkdir()
        path = self.dir / "r.json"
        target = targets.check_writable(path)
        path.write_text("theirs\n")
        with mock.patch.object(targets.tempfile, "gettempdir", return_value=str(tmp)), \
                self.assertRaises(Failure) as cm:
            target.write_json({"mine": 1})
        kept = KEPT.search(str(cm.exception))
        self.assertIsNotNone(kept, str(cm.exception))
        self.assertEqual(Path(kept.group(1)).parent, tmp)
        return Path(kept.group(1))

    def test_recovery_falls_back_to_the_temporary_directory(self):
        (self.state).write_text("not a directory")
        kept = self.kept_in_temporary_folder()
        self.assertEqual(json.loads(kept.read_text()), {"mine": 1})

    def test_a_state_folder_another_user_may_write_is_passed_over(self):
        self.state.mkdir(parents=True, exist_ok=True)
        os.chmod(self.state, 0o777)
        os.chown(self.state, 65534, 65534)
        self.kept_in_temporary_folder()
        self.assertEqual([p for p in self.state.rglob("*") if not p.is_dir()], [],
                         "kept in the other user's folder")

    def test_nowhere_to_keep_it_says_lost(self):
        self.state.write_text("not a directory")
        path = self.dir / "r.json"
        target = targets.check_writable(path)
        path.write_text("theirs\n")
        with mock.patch.object(targets.tempfile, "gettempdir",
                               return_value=str(self.state / "x")), \
                self.assertRaises(Failure) as cm:
            target.write_json({"mine": 1})
        self.assertIn("could not be kept elsewhere either", str(cm.exception))
        self.assertIn("lost", str(cm.exception))


class StagedDirTest(TempDirs):
    """recipe's output directory: filled beside it, moved into place at the end."""

    def test_published_whole(self):
        out = self.dir / "recipes" / "x"
        stage = targets.StagedDir(out)
        (stage.path / "compare.json").write_text("{}")
        (stage.path / "compare").mkdir()
        (stage.path / "compare" / "ratio.png").write_bytes(b"png")
        self.assertFalse(out.exists())
        self.assertEqual(stage.publish(), out)
        self.assertEqual(sorted(os.listdir(out)), ["compare", "compare.json"])
        self.assertEqual(os.listdir(out.parent), ["x"])
        self.assertEqual(stage.final(stage.path / "compare.json"), out / "compare.json")

    def test_force_into_an_earlier_run(self):
        out = self.dir / "x"
        (out / "compare").mkdir(parents=True)
        (out / "compare.json").write_text("old")
        (out / "compare" / "ratio.png").write_bytes(b"old")
        (out / "notes.txt").write_text("mine")
        with self.assertRaises(UsageError):
            targets.StagedDir(out)
        stage = targets.StagedDir(out, force=True)
        (stage.path / "compare").mkdir()
        (stage.path / "compare.json").write_text("new")
        (stage.path / "compare" / "ratio.png").write_bytes(b"new")
        stage.publish()
        self.assertEqual((out / "compare.json").read_text(), "new")
        self.assertEqual((out / "compare" / "ratio.png").read_bytes(), b"new")
        self.assertEqual((out / "notes.txt").read_text(), "mine")
        self.assertEqual(os.listdir(self.dir), ["x"])

    def test_filled_by_another_meanwhile(self):
        out = self.dir / "x"
        stage = targets.StagedDir(out)
        (stage.path / "compare.json").write_text("mine")
        out.mkdir()
        (out / "compare.json").write_text("theirs")
        with self.assertRaises(Failure) as cm:
            stage.publish()
        self.assertIn("it exists now", str(cm.exception))
        self.assertEqual((out / "compare.json").read_text(), "theirs")
        kept = re.search(r"kept in (\S+)$", str(cm.exception))
        self.assertIsNotNone(kept, str(cm.exception))
        self.assertEqual((Path(kept.group(1)) / "compare.json").read_text(), "mine")
        self.assertEqual(sorted(os.listdir(self.dir)), ["x", Path(kept.group(1)).name])

    def test_interrupted_leaves_nothing(self):
        out = self.dir / "recipes" / "x"
        with self.assertRaises(lifecycle.Interrupted):
            with lifecycle.session():
                stage = targets.StagedDir(out)
                (stage.path / "compare.json").write_text("{}")
                raise lifecycle.Interrupted(signal.SIGTERM)
        self.assertEqual(os.listdir(self.dir), [], "the stage or the directories made "
                                                   "for it are left")

    def test_recipe_refuses_a_taken_out_before_measuring(self):
        out = self.dir / "x"
        out.mkdir()
        (out / "old.json").write_text("{}")
        rc, out_text, err = vdsobench("recipe", "timens", "--quick", "--out", str(out))
        self.one_line(rc, err, 2, "not empty", "--force")
        self.assertEqual(out_text, "")
        self.assertEqual(os.listdir(self.dir), ["x"])


# ---- numeric options ----------------------------------------------------------------------

# what a number's placeholder looks like in --help
NUMERIC_METAVARS = {"N", "MS", "S", "A", "F", "SECONDS", "N|max"}


def numeric_options():
    """[(command, option, parse)] for every option of every command that takes a
    number (an int or float type, a ranged one, or a number's metavar), found by
    walking the parser, so a new one is covered."""
    sub = next(a for a in main.parser()._actions if a.choices and a.dest == "command")
    found = []
    for command, parser in sub.choices.items():
        for action in parser._actions:
            if action.option_strings and (action.type in (int, float)
                                          or hasattr(action.type, "valid")
                                          or action.metavar in NUMERIC_METAVARS):
                found.append((command, action.option_strings[0], action.type))
    return found


def bad_values(parse):
    """Texts just outside the range, and ones that are no number."""
    if parse.whole:
        values = [str(parse.high + 1), str(parse.low - 1), "1.5"]
    else:
        values = [repr(parse.high * 10 or 1.0), repr(parse.low / 10 if parse.low else -1.0),
                  "nan", "inf"]
    return values + ["abc"]


class NumericOptionTest(unittest.TestCase):
    def test_every_numeric_option_uses_the_ranged_parser(self):
        options = numeric_options()
        self.assertGreater(len(options), 20)
        for command, option, parse in options:
            with self.subTest(command=command, option=option):
                self.assertNotIn(parse, (int, float), "a bare int/float type states no range")
                self.assertTrue(hasattr(parse, "valid"), f"{parse} is not ranged.number()")
        covered = {(c, o) for c, o, _ in options}
        for expected in (("run", "--min-time"), ("run", "--repetitions"), ("run", "--hz"),
                         ("compare", "--batch-ms"), ("compare", "--alpha"),
                         ("compare", "--calls-per"), ("gate", "--threshold"),
                         ("gate", "--tolerance-misses"), ("sim", "--jobs"),
                         ("selftest-stats", "--trials"), ("verify", "--duration-ms"),
                         ("layout", "--jobs")):
            self.assertIn(expected, covered)

    def test_each_bad_value_gets_one_line_with_the_range(self):
        for command, option, parse in numeric_options():
            for value in bad_values(parse):
                with self.subTest(command=command, option=option, value=value):
                    rc, out, err = vdsobench(command, option, value)
                    self.assertEqual(rc, 2, err)
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                    self.assertIn(f"{option}: ", err)
                    self.assertIn(value, err)
                    self.assertIn(f"(valid: {parse.valid})", err)
                    self.assertEqual(out, "")

    def test_the_reported_example(self):
        rc, _, err = vdsobench("compare", "a", "b", "--batch-ms", "1e9")
        self.assertEqual(rc, 2)
        self.assertEqual(err.strip(), "vdsobench: error: argument --batch-ms: 1e9 is out of "
                                      "range (valid: 0.1 to 3600)")

    def test_values_in_range_pass_through(self):
        self.assertEqual(ranged.BATCH_MS("0.1"), 0.1)
        self.assertEqual(ranged.HZ("max"), "max")
        self.assertEqual(ranged.CALLS_PER("10s"), 10.0)
        self.assertEqual(ranged.ROUNDS("100000"), 100000)
        p = main.parser().parse_args(["run", "--min-time", "0.001", "--repetitions", "2"])
        from vdsobench_cli.commands import run
        self.assertEqual(run.harness_args(p)[-4:], ["--min-time", "0.001",
                                                    "--repetitions", "2"])


if __name__ == "__main__":
    unittest.main()
