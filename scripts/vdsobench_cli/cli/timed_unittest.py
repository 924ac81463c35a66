"""`python3 -m vdsobench_cli.cli.timed_unittest ARGS`: `python3 -m unittest
ARGS` (discover, or module names) that also writes each test module's wall
time in seconds, as a JSON object, to the file $VDSOBENCH_TEST_TIMES names,
so that `test` can say where the suite's time went (CI's log is all there is
of a clean machine's run).

A module's time runs from the end of the test before its first one to the
end of its last: its setUpModule and setUpClass count, its tearDownClass
counts to the module after it."""

import json
import os
import time
import unittest

ENV = "VDSOBENCH_TEST_TIMES"


class _Result(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.times, self.last = {}, time.monotonic()

    def stopTest(self, test):
        super().stopTest(test)
        now = time.monotonic()
        module = type(test).__module__
        self.times[module] = self.times.get(module, 0.0) + now - self.last
        self.last = now


class _Runner(unittest.TextTestRunner):
    resultclass = _Result

    def run(self, test):
        result = super().run(test)
        path = os.environ.get(ENV)
        if path:
            with open(path, "w", encoding="utf-8") as f:
                json.dump({m: round(s, 1) for m, s in result.times.items()}, f)
        return result


if __name__ == "__main__":
    unittest.main(module=None, testRunner=_Runner)
