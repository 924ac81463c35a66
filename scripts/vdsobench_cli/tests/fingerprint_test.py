import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from vdsobench_cli.cli import arch
from vdsobench_cli.measure import fingerprint
from vdsobench_cli.core import vocab
from vdsobench_cli.tests.support import (CPU, I7_FLAGS, LAPTOP_TREE, VM_TREE, TreeTest,
                                      cpuinfo_block, write_tree)

class VmTest(TreeTest):
    tree = VM_TREE

    def test_vm(self):
        fp = fingerprint.collect([0, 1], root=self.root)
        self.assertEqual(fp["cpu"]["vendor"], "AuthenticAMD")
        self.assertEqual((fp["cpu"]["family"], fp["cpu"]["model"], fp["cpu"]["stepping"]),
                         (25, 1, 1))
        self.assertEqual(fp["cpu"]["microcode"], "0x1000065")
        self.assertEqual(fp["cpu"]["model_name"], "AMD EPYC")
        self.assertEqual(fp["cpu"]["uarch"], "Zen 3")
        # x86's flags; arm64's ecv unknown (no Features line), never False
        self.assertEqual(fp["cpu"]["flags"], dict(dict.fromkeys(fingerprint.FLAGS_OF_INTEREST,
                                                                True), ecv=None))
        self.assertEqual(fp["cpu"]["per_cpu"], {})
        self.assertEqual(fp["kernel"], {"release": "6.1.0-vm", "version": "#1 SMP PREEMPT_DYNAMIC",
                                        "machine": "x86_64", "vdso": None})
        self.assertEqual(fp["clocksource"], {"current": "tsc", "available": ["tsc", "kvm-clock"]})
        self.assertEqual(fp["hypervisor"], {"present": True, "vendor": "KVM",
                                            "vendor_source": "clocksource kvm-clock"})
        self.assertEqual(fp["smt"], {"active": False, "siblings": {"0": [0], "1": [1]}})
        self.assertEqual(fp["governor"], {"0": None, "1": None})
        self.assertIsNone(fp["cpufreq_driver"])
        self.assertIsNone(fp["boost"])
        self.assertIn("No such file", fp["unknown"]["governor"])
        self.assertIn("boost", fp["unknown"])
        self.assertEqual(fp["load_average"], [0.1, 0.2, 0.3])
        self.assertEqual(fp["nr_cpus_online"], 2)
        self.assertEqual(fp["hostname"], "guest.example.org")
        self.assertIsNone(fp["build"])
        self.assertEqual(json.loads(json.dumps(fp)), fp)

    def test_dmi_names_the_hypervisor(self):
        write_tree(self.root, {
            "sys/class/dmi/id/sys_vendor": "QEMU\n",
            "sys/class/dmi/id/product_name": "Standard PC (Q35 + ICH9, 2009)\n"})
        hv = fingerprint.collect([0], root=self.root)["hypervisor"]
        self.assertEqual(hv["vendor"], "QEMU Standard PC (Q35 + ICH9, 2009)")


class LaptopTest(TreeTest):
    tree = LAPTOP_TREE

    def test_laptop(self):
        fp = fingerprint.collect([0, 1], root=self.root)
        self.assertEqual(fp["cpu"]["flags"]["hypervisor"], False)
        # DMI on bare metal names the maker, not a hypervisor.
        self.assertEqual(fp["hypervisor"], {"present": False, "vendor": None,
                                            "vendor_source": None})
        self.assertEqual(fp["governor"], {"0": "powersave", "1": "powersave"})
        self.assertEqual(fp["cpufreq_driver"], "intel_pstate")
        self.assertIs(fp["boost"], True)
        self.assertEqual(fp["smt"], {"active": True, "siblings": {"0": [0, 2], "1": [1, 3]}})
        self.assertEqual(fp["clocksource"]["current"], "hpet")
        self.assertEqual(fp["nr_cpus_online"], 4)

    def test_boost_from_intel_pstate(self):
        os.unlink(Path(self.root, CPU, "cpufreq/boost"))
        write_tree(self.root, {f"{CPU}/intel_pstate/no_turbo": "1\n"})
        self.assertIs(fingerprint.collect([0], root=self.root)["boost"], False)
        write_tree(self.root, {f"{CPU}/intel_pstate/no_turbo": "0\n"})
        self.assertIs(fingerprint.collect([0], root=self.root)["boost"], True)
        write_tree(self.root, {f"{CPU}/intel_pstate/turbo_pct": "0\n"})
        self.assertIs(fingerprint.collect([0], root=self.root)["boost"], False)

    def test_hybrid_cpus_are_described_per_cpu(self):
        blocks = fingerprint.parse_cpuinfo(LAPTOP_TREE["proc/cpuinfo"])
        text = "".join(cpuinfo_block(n, "GenuineIntel", 6, 151 if n == 3 else 140, 1, "x",
                                     I7_FLAGS, "0xb4") for n in blocks)
        write_tree(self.root, {"proc/cpuinfo": text, "sys/devices/cpu_core/cpus": "0-1\n",
                               "sys/devices/cpu_atom/cpus": "2-3\n"})
        cpu = fingerprint.collect([0, 3], root=self.root)["cpu"]
        self.assertEqual(cpu["model"], 140)
        self.assertEqual(list(cpu["per_cpu"]), ["3"])
        self.assertEqual(cpu["per_cpu"]["3"]["model"], 151)
        self.assertEqual((cpu["uarch"], cpu["per_cpu"]["3"]["uarch"]),
                         ("Tiger Lake", "Alder Lake"))
        self.assertEqual(cpu["core_type"], {"0": "core", "3": "atom"})


# An arm64 guest's /proc/cpuinfo (Neoverse N1: implementer 0x41, part 0xd0c).
ARM64_CPUINFO = "".join(
    f"processor\t: {n}\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes crc32 cpuid\n"
    "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n"
    "CPU part\t: 0xd0c\nCPU revision\t: 1\n\n" for n in (0, 1))


class Arm64Test(TreeTest):
    tree = {"proc/cpuinfo": ARM64_CPUINFO}

    def test_midr_fields(self):
        cpu = fingerprint.collect([0], root=self.root)["cpu"]
        self.assertEqual((cpu["vendor"], cpu["family"], cpu["model"], cpu["stepping"]),
                         ("0x41", 8, 0xd0c, 1))
        self.assertEqual(cpu["uarch"], "Neoverse N1")

    def test_feat_ecv_absent_and_present(self):
        # Neoverse N1 (v8.2) has no FEAT_ECV: the kernel reads isb; mrs cntvct_el0
        fp = fingerprint.collect([0], root=self.root)
        self.assertIs(fp["cpu"]["flags"]["ecv"], False)
        self.assertIsNone(fp["cpu"]["flags"]["rdtscp"])
        self.assertEqual(vocab.own_counter("aarch64", fp["cpu"]["flags"]), "isb_cntvct_dep")
        # a v8.6 part's hwcaps; "ecvx" or "ecv2" would not be FEAT_ECV
        write_tree(self.root, {"proc/cpuinfo": ARM64_CPUINFO.replace(
            "cpuid\n", "cpuid ecv afp\n", 1)})
        fp = fingerprint.collect([0, 1], root=self.root)
        self.assertIs(fp["cpu"]["flags"]["ecv"], True)
        self.assertEqual(vocab.own_counter("aarch64", fp["cpu"]["flags"]), "cntvctss")
        # cpu 1 lacks it (a mixed system): recorded per cpu
        self.assertIs(fp["cpu"]["per_cpu"]["1"]["flags"]["ecv"], False)
        write_tree(self.root, {"proc/cpuinfo": ARM64_CPUINFO.replace("cpuid", "cpuid ecvx")})
        self.assertIs(fingerprint.collect([0], root=self.root)["cpu"]["flags"]["ecv"], False)

    def test_unknown_part(self):
        write_tree(self.root, {"proc/cpuinfo": ARM64_CPUINFO.replace("0xd0c", "0xd99")})
        cpu = fingerprint.collect([0], root=self.root)["cpu"]
        self.assertEqual(cpu["model"], 0xd99)
        self.assertIsNone(cpu["uarch"])


class EmulatedCpuTest(TreeTest):
    """Under qemu-user the guest's CPU is qemu's, whatever the host's is: no
    FEAT_ECV, so the kernel's read would be the one without it."""

    tree = {"proc/cpuinfo": cpuinfo_block(0, "GenuineIntel", 6, 207, 2, "Xeon", I7_FLAGS)}

    def tearDown(self):
        arch.use(None)

    def test_native_records_none(self):
        arch.use(None)
        self.assertIsNone(fingerprint.collect([0], root=self.root)["emulated_cpu"])

    @unittest.skipUnless(arch.host() == "x86_64", "arm64 is emulated from x86-64")
    def test_arm64_under_qemu_has_no_ecv(self):
        arch.use("arm64")
        fp = fingerprint.collect([0], root=self.root)
        self.assertEqual(fp["emulated_cpu"], {"machine": "aarch64", "emulator": "qemu-user",
                                              "flags": {"ecv": False},
                                              "counter": "isb_cntvct_dep"})
        self.assertEqual(fp["emulated_cpu"]["counter"], arch.timed_counter())
        # the host's own fields stay the host's
        self.assertIs(fp["cpu"]["flags"]["rdtscp"], True)
        self.assertIsNone(fp["cpu"]["flags"]["ecv"])


class MissingTest(TreeTest):
    def test_empty_tree(self):
        fp = fingerprint.collect([0, 5], root=self.root)
        self.assertEqual(fp["cpu"]["flags"], dict.fromkeys(fingerprint.FLAGS_OF_INTEREST
                                                           + fingerprint.FEATURES_OF_INTEREST))
        self.assertIsNone(fp["cpu"]["family"])
        self.assertIsNone(fp["cpu"]["uarch"])
        self.assertEqual(fp["clocksource"], {"current": None, "available": None})
        self.assertIsNone(fp["hypervisor"]["present"])
        self.assertEqual(fp["smt"], {"active": None, "siblings": {"0": None, "5": None}})
        self.assertIsNone(fp["load_average"])
        self.assertIsNone(fp["nr_cpus_online"])
        for field in ("cpu", "clocksource", "smt.active", "governor", "boost", "load_average"):
            self.assertIn(field, fp["unknown"])
        # Kernel falls back to uname(); the hostname to the real one.
        self.assertEqual(fp["kernel"]["release"], os.uname().release)
        self.assertTrue(fp["hostname"])

    def test_garbage(self):
        write_tree(self.root, {"proc/cpuinfo": "processor : 0\ncpu family : ?\n"
                                               "stepping : unknown\n",
                               "proc/loadavg": "x y\n", f"{CPU}/online": "zero\n",
                               f"{CPU}/smt/active": "forceoff\n",
                               f"{CPU}/cpu0/topology/thread_siblings_list": "a-b\n"})
        fp = fingerprint.collect([0], root=self.root)
        self.assertIsNone(fp["cpu"]["stepping"])
        self.assertIsNone(fp["load_average"])
        self.assertIsNone(fp["smt"]["active"])
        self.assertEqual(fp["smt"]["siblings"], {"0": None})


class HelpersTest(unittest.TestCase):
    def test_cpulist(self):
        self.assertEqual(fingerprint.parse_cpulist("0-2,8"), [0, 1, 2, 8])
        self.assertEqual(fingerprint.parse_cpulist(""), [])
        self.assertIsNone(fingerprint.parse_cpulist(None))

    def test_as_int(self):
        self.assertEqual(fingerprint.as_int("0xd0c"), 0xd0c)
        self.assertEqual(fingerprint.as_int("08"), 8)
        self.assertIsNone(fingerprint.as_int("unknown"))

    def test_short_host(self):
        self.assertEqual(fingerprint.short_host("tc-bench1.example.org"), "tc-bench1")
        self.assertEqual(fingerprint.short_host("my box_2"), "mybox_2")
        self.assertEqual(fingerprint.short_host(".local"), "host")
        self.assertRegex(fingerprint.short_host(), r"^[A-Za-z0-9_-]+$")

    def test_bazelrc_flags(self):
        text = ("# comment\nbuild --compilation_mode=dbg\nbuild -c opt   # trailing\n"
                "build --copt=-g --copt -O3\nbuild --conlyopt=-std=c11 --cxxopt='-std=c++17'\n"
                "build:asan --copt=-fsanitize=address\ntest --copt=-DTEST\n"
                "build --strip=never\nbuild --copt='unbalanced\n")
        self.assertEqual(fingerprint.bazelrc_flags(text),
                         {"compilation_mode": "opt", "copts": ["-g", "-O3"],
                          "conlyopts": ["-std=c11"], "cxxopts": ["-std=c++17"]})
        self.assertEqual(fingerprint.bazelrc_flags("")["compilation_mode"], "fastbuild")


class BuildInfoTest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.repo = Path(tmp.name)

    def git(self, *args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org",
                        "-C", str(self.repo), *args], check=True, capture_output=True)

    def test_repository(self):
        write_tree(self.repo, {".bazelrc": "build -c opt\nbuild --copt=-Wall\n"
                                           "build:asan --copt=-fsanitize=address\n"})
        self.git("init", "-q")
        self.git("add", ".bazelrc")
        self.git("commit", "-q", "-m", "x")
        info = fingerprint.build_info(self.repo)
        self.assertRegex(info["commit"], r"^[0-9a-f]{40}$")
        self.assertEqual(info["short"], info["commit"][:12])
        self.assertIs(info["dirty"], False)
        self.assertEqual((info["compilation_mode"], info["copts"]), ("opt", ["-Wall"]))
        self.assertIn("compiler", info)
        # A results file is not a change to what is measured; a source change is.
        write_tree(self.repo, {"results/runs/h-20261130-010203-abc.json": "{}\n"})
        self.assertIs(fingerprint.build_info(self.repo)["dirty"], False)
        write_tree(self.repo, {".bazelrc": "build -c dbg\n"})
        self.assertIs(fingerprint.build_info(self.repo)["dirty"], True)

    def test_not_a_repository(self):
        info = fingerprint.build_info(self.repo)
        self.assertIsNone(info["commit"])
        self.assertIsNone(info["dirty"])
        self.assertIsNone(info["compilation_mode"])
        self.assertIn("commit", info["unknown"])
        self.assertIn(".bazelrc", info["unknown"]["flags"])


class RealMachineTest(unittest.TestCase):
    def test_collect_root(self):
        fp = fingerprint.collect([0], repo_root=Path(__file__).resolve().parents[3])
        self.assertLessEqual({"cpu", "kernel", "clocksource", "hypervisor", "smt", "governor",
                              "cpufreq_driver", "boost", "load_average", "nr_cpus_online",
                              "hostname", "build"}, set(fp))
        self.assertIsInstance(fp["kernel"]["release"], str)
        self.assertIsInstance(fp["hostname"], str)
        self.assertIn(fp["boost"], (True, False, None))
        self.assertIsInstance(fp["cpu"]["flags"], dict)
        self.assertEqual(list(fp["governor"]), ["0"])
        self.assertIsInstance(fp["build"], dict)
        self.assertEqual(json.loads(json.dumps(fp)), fp)


if __name__ == "__main__":
    unittest.main()
