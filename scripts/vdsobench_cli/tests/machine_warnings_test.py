import collections
import unittest
from unittest import mock

from vdsobench_cli.measure import fingerprint, machine_warnings as mw
from vdsobench_cli.tests.support import (LAPTOP_STAT_LATER, LAPTOP_TREE, VM_TREE, TreeTest,
                                      proc_stat, write_tree)


def ids(warnings):
    return [w["id"] for w in warnings]


class VmTest(TreeTest):
    tree = VM_TREE

    def check(self, pinned):
        fp = fingerprint.collect([0, 1], root=self.root)
        return mw.check(fp, pinned, [0, 1], sample_s=0, root=self.root)

    def test_pinned(self):
        warnings = self.check(True)
        self.assertEqual(ids(warnings), ["hypervisor"])
        self.assertIn("(KVM)", warnings[0]["message"])

    def test_not_pinned(self):
        warnings = self.check(False)
        self.assertEqual(ids(warnings), ["not-pinned", "hypervisor"])
        self.assertIn("--no-pin", warnings[0]["message"])


class LaptopTest(TreeTest):
    tree = LAPTOP_TREE

    def test_every_warning_once(self):
        fp = fingerprint.collect([0], root=self.root)

        def sleep(seconds):
            self.assertEqual(seconds, 0.2)
            write_tree(self.root, {"proc/stat": LAPTOP_STAT_LATER})

        with mock.patch.object(mw.time, "sleep", side_effect=sleep) as slept:
            warnings = mw.check(fp, False, [0], root=self.root)
        slept.assert_called_once()
        counts = collections.Counter(ids(warnings))
        self.assertEqual(set(counts), {"not-pinned", "governor", "boost", "clocksource", "load",
                                       "smt-sibling-busy"})
        self.assertEqual(set(counts.values()), {1})
        text = {w["id"]: w["message"] for w in warnings}
        self.assertIn("cpu0: powersave", text["governor"])
        self.assertIn("hpet", text["clocksource"])
        self.assertIn("syscall", text["clocksource"])
        self.assertIn("echo tsc >", text["clocksource"])
        self.assertIn("3.50 on 4 online cpus", text["load"])
        self.assertIn("cpu2 (sibling of cpu0) 60%", text["smt-sibling-busy"])

    def test_idle_sibling(self):
        fp = fingerprint.collect([0], root=self.root)
        with mock.patch.object(mw.time, "sleep"):
            warnings = mw.check(fp, True, [0], root=self.root)
        self.assertNotIn("smt-sibling-busy", ids(warnings))

    def test_one_governor_warning_for_several_cpus(self):
        write_tree(self.root, {"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor":
                               "schedutil\n"})
        fp = fingerprint.collect([0, 1], root=self.root)
        warnings = mw.governor_warning(fp, [0, 1])
        self.assertEqual(len(warnings), 1)
        self.assertIn("cpu0: powersave; cpu1: schedutil", warnings[0]["message"])


class MissingTest(TreeTest):
    def test_nothing_known_is_no_warning(self):
        fp = fingerprint.collect([0], root=self.root)
        self.assertEqual(mw.check(fp, True, [0], sample_s=0, root=self.root), [])

    def test_empty_fingerprint(self):
        self.assertEqual(mw.check({}, True, [0], root=self.root), [])

    def test_unreadable_proc_stat(self):
        fp = {"smt": {"siblings": {"0": [0, 1]}}}
        with mock.patch.object(mw.time, "sleep") as slept:
            self.assertEqual(mw.check(fp, True, [0], root=self.root), [])
        slept.assert_not_called()


class ClocksourceTest(unittest.TestCase):
    def fp(self, current, machine="x86_64", available=("tsc", "kvm-clock")):
        return {"clocksource": {"current": current, "available": list(available)},
                "kernel": {"machine": machine}}

    def test_tsc_and_arm64_counter_are_fine(self):
        self.assertEqual(mw.clocksource_warning(self.fp("tsc")), [])
        self.assertEqual(mw.clocksource_warning(self.fp("arch_sys_counter", "aarch64")), [])

    def test_kvm_clock_is_paravirtual(self):
        [w] = mw.clocksource_warning(self.fp("kvm-clock"))
        self.assertIn("pvclock", w["message"])

    def test_no_vdso_mode(self):
        [w] = mw.clocksource_warning(self.fp("acpi_pm", available=("acpi_pm",)))
        self.assertIn("no vDSO clock mode", w["message"])
        self.assertNotIn("echo", w["message"])

    def test_unknown_architecture_or_clocksource(self):
        self.assertEqual(mw.clocksource_warning(self.fp("timebase", "ppc64le")), [])
        self.assertEqual(mw.clocksource_warning(self.fp(None)), [])


class ProcStatTest(unittest.TestCase):
    BEFORE = proc_stat({0: (100, 50, 1000, 5), 1: (10, 0, 0, 0)})

    def test_parse(self):
        stat = mw.parse_proc_stat(self.BEFORE + "cpuX 1 2 3\ncpu7 a b c d\n\n")
        self.assertEqual(stat, {0: (150, 1155), 1: (10, 10)})

    def test_old_kernel_with_four_columns(self):
        self.assertEqual(mw.parse_proc_stat("cpu0 1 2 3 4\n"), {0: (6, 10)})

    def test_busy_fraction(self):
        before = mw.parse_proc_stat(self.BEFORE)
        after = mw.parse_proc_stat(proc_stat({0: (130, 50, 1070, 5), 1: (10, 0, 0, 0)}))
        self.assertAlmostEqual(mw.busy_fraction(before, after, 0), 0.3)
        self.assertIsNone(mw.busy_fraction(before, after, 1))     # no time passed
        self.assertIsNone(mw.busy_fraction(before, after, 2))     # no such cpu

    def test_iowait_going_backwards_is_clamped(self):
        before = mw.parse_proc_stat(proc_stat({0: (0, 0, 0, 50)}))
        after = mw.parse_proc_stat(proc_stat({0: (0, 0, 100, 0)}))
        self.assertEqual(mw.busy_fraction(before, after, 0), 0.0)

    def test_format(self):
        self.assertEqual(mw.format_warnings([mw.warning("load", "high")]), ["warning: high"])


class RealMachineTest(unittest.TestCase):
    def test_check_root(self):
        fp = fingerprint.collect([0])
        warnings = mw.check(fp, True, [0], sample_s=0.01)
        for w in warnings:
            self.assertEqual(set(w), {"id", "message"})
            self.assertNotIn("\n", w["message"])


if __name__ == "__main__":
    unittest.main()
