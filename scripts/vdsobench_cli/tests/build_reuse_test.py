"""build.reusing(): a target built once per view of the imports table, again
when another process rebuilt it, always outside the block (Bazel mocked: what
is checked is which builds are asked of it)."""

import contextlib
import io
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from vdsobench_cli.cli import arch, build

LABEL = "//verify:vdsobench_verify"


class ReuseTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.out = Path(tmp.name, "vdsobench_verify")
        self.calls = []

        def bazel(command, args):
            self.calls.append(args)
            self.out.write_text(str(len(self.calls)))  # Bazel's output, written anew
            return 0, ""
        for patcher in (mock.patch.object(build, "bazel", side_effect=bazel),
                        mock.patch.object(build, "binary_path", return_value=self.out),
                        mock.patch.object(build, "bundled", return_value=False),
                        mock.patch.object(arch.current(), "missing_toolchain",
                                          return_value=[]),
                        mock.patch.dict(os.environ, {"VDSOBENCH_IMPORTS_DIGEST": "a"})):
            patcher.start()
            self.addCleanup(patcher.stop)

    def test_outside_every_build_is_asked(self):
        build.build([LABEL])
        build.build([LABEL])
        self.assertEqual(len(self.calls), 2)

    def test_inside_the_same_build_is_asked_once(self):
        with build.reusing():
            for _ in range(3):
                build.build([LABEL])
        self.assertEqual(len(self.calls), 1)
        build.build([LABEL])  # the block ended: asked again
        self.assertEqual(len(self.calls), 2)

    def test_another_table_is_built(self):
        with build.reusing():
            build.build([LABEL])
            os.environ["VDSOBENCH_IMPORTS_DIGEST"] = "b"  # an import was added
            build.build([LABEL])
            build.build([LABEL])
        self.assertEqual(len(self.calls), 2)

    def test_an_output_rebuilt_by_another_process_is_built_again(self):
        with build.reusing():
            build.build([LABEL])
            os.unlink(self.out)  # another review's build replaced it, later
            self.out.write_text("theirs")
            os.utime(self.out, ns=(1, 1))
            build.build([LABEL])
            self.out.unlink()  # or removed it
            build.build([LABEL])
        self.assertEqual(len(self.calls), 3)

    def test_a_flag_among_the_targets_is_always_built(self):
        with build.reusing():
            build.build(["--config=bundle", LABEL])
            build.build(["--config=bundle", LABEL])
        self.assertEqual(len(self.calls), 2)

    def test_a_failed_build_is_not_reused(self):
        with build.reusing(), mock.patch.object(build, "bazel", return_value=(1, "no")), \
                contextlib.redirect_stderr(io.StringIO()):
            with self.assertRaises(build.Failure):
                build.build([LABEL])
            with self.assertRaises(build.Failure):
                build.build([LABEL])


if __name__ == "__main__":
    unittest.main()
