"""`python3 -m vdsobench_cli.cli.timed_unittest ARGS`: `python3 -m unittest
ARGS` (discover, or module names) that also writes each test module's wall
time in seconds, as a JSON object, to the file $VDSOBENCH_TEST_TIMES names,
its CPU seconds to the file $VDSOBENCH_TEST_CPU names, and each test's
wall time to the file $VDSOBENCH_TEST_EACH names, so that `test` can say
where the suite's time went (CI's log is all there is of a clean
machine's run). On two cores with processes side by side a module's wall
time is mostly its neighbours'; its CPU time is its own.

A module's time runs from the end of the test before its first one to the
end of its last: its setUpModule and setUpClass count, its tearDownClass
counts to the module after it. A test's time likewise runs from the end of
the test before it (a class's first test carries its setUpClass). A
module's CPU time is this process's and that of the children it waited
for (their own waited-for children included: the CLI, valgrind,
qemu-user, tar, kbuild's make), not the Bazel server's, which is no child
of it."""

import json
import os
import resource
import time
import unittest

ENV = "VDSOBENCH_TEST_TIMES"
CPU_ENV = "VDSOBENCH_TEST_CPU"
EACH_ENV = "VDSOBENCH_TEST_EACH"


def cpu_seconds():
    """User and system CPU of this process and its waited-for children."""
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


class _Result(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.times, self.cpu, self.each = {}, {}, {}
        self.last, self.last_cpu = time.monotonic(), cpu_seconds()

    def stopTest(self, test):
        super().stopTest(test)
        now, cpu = time.monotonic(), cpu_seconds()
        module = type(test).__module__
        self.times[module] = self.times.get(module, 0.0) + now - self.last
        self.cpu[module] = self.cpu.get(module, 0.0) + cpu - self.last_cpu
        self.each[test.id()] = self.each.get(test.id(), 0.0) + now - self.last
        self.last, self.last_cpu = now, cpu


class _Runner(unittest.TextTestRunner):
    resultclass = _Result

    def run(self, test):
        result = super().run(test)
        for env, values in ((ENV, result.times), (CPU_ENV, result.cpu),
                            (EACH_ENV, result.each)):
            path = os.environ.get(env)
            if path:
                with open(path, "w", encoding="utf-8") as f:
                    json.dump({m: round(s, 1) for m, s in values.items()}, f)
        return result


if __name__ == "__main__":
    unittest.main(module=None, testRunner=_Runner)
