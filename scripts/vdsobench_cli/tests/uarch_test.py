"""Microarchitecture names from cpuinfo ids: one lookup per vendor family of
the table, steppings where they decide, arm64 MIDR parts, the fallback for a
CPU the table does not know, and the slug for a Slurm node feature."""

import re
import unittest

from vdsobench_cli.core import uarch


def x86(vendor, family, model, stepping=0, model_name=None):
    return {"vendor": vendor, "family": family, "model": model, "stepping": stepping,
            "model_name": model_name}


def amd(family, model, stepping=0):
    return x86(uarch.AMD, family, model, stepping)


def intel(model, stepping=0, family=6):
    return x86(uarch.INTEL, family, model, stepping)


def arm(implementer, part, revision=1):
    """As fingerprint.describe_cpu() reads an arm64 /proc/cpuinfo block."""
    return {"vendor": implementer, "family": 8, "model": part, "stepping": revision,
            "model_name": None}


class AmdTest(unittest.TestCase):
    def test_family_0x17(self):
        for model, want in ((0x01, "Zen"), (0x11, "Zen"), (0x20, "Zen"), (0x08, "Zen+"),
                            (0x18, "Zen+"), (0x31, "Zen 2"), (0x60, "Zen 2"),
                            (0x71, "Zen 2"), (0xa0, "Zen 2")):
            self.assertEqual(uarch.name(amd(0x17, model)), want, hex(model))

    def test_family_0x19(self):
        # Milan, Vermeer, Rembrandt; Genoa, Raphael, Bergamo
        for model, want in ((0x01, "Zen 3"), (0x21, "Zen 3"), (0x44, "Zen 3"),
                            (0x11, "Zen 4"), (0x61, "Zen 4"), (0xa0, "Zen 4")):
            self.assertEqual(uarch.name(amd(0x19, model)), want, hex(model))
        self.assertEqual(uarch.name(amd(25, 1, 1)), "Zen 3")
        self.assertEqual(uarch.name(amd(25, 17, 1)), "Zen 4")

    def test_family_0x1a(self):
        # Turin, Granite Ridge, Strix Point; Zen 6 by the kernel's ranges
        for model, want in ((0x02, "Zen 5"), (0x11, "Zen 5"), (0x44, "Zen 5"),
                            (0x70, "Zen 5"), (0x50, "Zen 6"), (0x90, "Zen 6")):
            self.assertEqual(uarch.name(amd(0x1a, model)), want, hex(model))
        self.assertEqual(uarch.name(amd(26, 2, 1)), "Zen 5")

    def test_outside_the_ranges(self):
        self.assertIsNone(uarch.name(amd(0x19, 0xf0)))
        self.assertIsNone(uarch.name(amd(0x17, 0x80)))
        self.assertIsNone(uarch.name(amd(0x15, 0x01)))


class IntelTest(unittest.TestCase):
    def test_family_6(self):
        for model, want in ((0x4e, "Skylake"), (0x5e, "Skylake"), (0x6a, "Ice Lake-SP"),
                            (0x7e, "Ice Lake"), (0x8c, "Tiger Lake"), (0x97, "Alder Lake"),
                            (0x9a, "Alder Lake"), (0xb7, "Raptor Lake"), (0xbf, "Raptor Lake"),
                            (0x8f, "Sapphire Rapids"), (0xcf, "Emerald Rapids"),
                            (0xaa, "Meteor Lake"), (0xc6, "Arrow Lake"), (0xbd, "Lunar Lake"),
                            (0xad, "Granite Rapids"), (0xaf, "Sierra Forest")):
            self.assertEqual(uarch.name(intel(model)), want, hex(model))

    def test_skylake_server_steppings(self):
        self.assertEqual(uarch.name(intel(0x55, 4)), "Skylake-SP")
        self.assertEqual(uarch.name(intel(0x55, 5)), "Cascade Lake")
        self.assertEqual(uarch.name(intel(0x55, 7)), "Cascade Lake")
        self.assertEqual(uarch.name(intel(0x55, 11)), "Cooper Lake")
        # without the stepping the model alone does not say which
        self.assertIsNone(uarch.name(intel(0x55, None)))

    def test_kaby_and_coffee_lake(self):
        self.assertEqual(uarch.name(intel(0x9e, 9)), "Kaby Lake")
        self.assertEqual(uarch.name(intel(0x9e, 12)), "Coffee Lake")
        self.assertEqual(uarch.name(intel(0x8e, 10)), "Kaby Lake")

    def test_vendor_and_family_matter(self):
        self.assertIsNone(uarch.name(x86(uarch.AMD, 6, 0x8f)))
        self.assertIsNone(uarch.name(x86(uarch.INTEL, 0x19, 0x01)))
        self.assertIsNone(uarch.name(intel(0x8f, family=15)))
        self.assertEqual(uarch.name(intel(0x01, family=19)), "Diamond Rapids")


class Arm64Test(unittest.TestCase):
    def test_midr_parts(self):
        for part, want in ((0xd0c, "Neoverse N1"), (0xd40, "Neoverse V1"),
                           (0xd4f, "Neoverse V2"), (0xd49, "Neoverse N2"),
                           (0xd0b, "Cortex-A76"), (0xd41, "Cortex-A78")):
            self.assertEqual(uarch.name(arm("0x41", part)), want, hex(part))

    def test_implementer_matters(self):
        # Microsoft's Cobalt 100 reuses Arm's N2 part number under its own implementer
        self.assertEqual(uarch.name(arm("0x6d", 0xd49)), "Azure Cobalt 100 (Neoverse N2)")
        self.assertEqual(uarch.name(arm("0xc0", 0xac3)), "AmpereOne")
        self.assertIsNone(uarch.name(arm("0x61", 0xd0c)))
        self.assertIsNone(uarch.name(arm("0xzz", 0xd0c)))

    def test_label_prints_the_part_in_hex(self):
        self.assertEqual(uarch.label(arm("0x41", 0xd0c)), "Neoverse N1 (Arm, 8/0xd0c/1)")
        self.assertEqual(uarch.label(arm("0x41", 0xd99, 2)),
                         "0x41 family 8 model 0xd99 stepping 2 (Arm)")


class LabelTest(unittest.TestCase):
    def test_known(self):
        self.assertEqual(uarch.label(x86(uarch.AMD, 25, 1, 1, "AMD EPYC")),
                         "Zen 3 (AMD EPYC, 25/1/1)")
        self.assertEqual(uarch.label(x86(uarch.INTEL, 6, 143, 8,
                                         "Intel(R) Xeon(R) Platinum 8480+")),
                         "Sapphire Rapids (Intel Xeon Platinum 8480+, 6/143/8)")
        # no model name: the vendor's
        self.assertEqual(uarch.label(amd(26, 2, 1)), "Zen 5 (AMD, 26/2/1)")

    def test_recorded_name_wins(self):
        cpu = dict(x86(uarch.AMD, 25, 1, 1, "AMD EPYC"), uarch="Milan")
        self.assertEqual(uarch.label(cpu), "Milan (AMD EPYC, 25/1/1)")
        self.assertEqual(uarch.slug(cpu), "milan")
        # recorded as unknown: the table still answers
        self.assertEqual(uarch.name(dict(cpu, uarch=None)), "Zen 3")

    def test_unknown_cpu_is_named_by_its_ids(self):
        self.assertEqual(uarch.label(x86(uarch.AMD, 25, 240, 0, "AMD EPYC")),
                         "AuthenticAMD family 25 model 240 stepping 0 (AMD EPYC)")
        self.assertEqual(uarch.label(x86("HygonGenuine", 24, 1, 1)),
                         "HygonGenuine family 24 model 1 stepping 1 (Hygon)")
        self.assertEqual(uarch.label(x86(uarch.INTEL, 6, 0x55, None)),
                         "GenuineIntel family 6 model 85 (Intel)")
        self.assertEqual(uarch.label({"model_name": "AMD EPYC"}), "unknown CPU (AMD EPYC)")
        self.assertEqual(uarch.label({}), "unknown CPU")
        self.assertEqual(uarch.label(None), "unknown CPU")

    def test_ids(self):
        self.assertEqual(uarch.ids(amd(25, 1, 1)), "25/1/1")
        self.assertEqual(uarch.ids({"family": 6, "model": 85}), "6/85/?")
        self.assertEqual(uarch.ids(arm("0x41", 0xd0c, 3)), "8/0xd0c/3")

    def test_short_model(self):
        self.assertEqual(uarch.short_model("11th Gen Intel(R) Core(TM) i7-1165G7 @ 2.80GHz"),
                         "11th Gen Intel Core i7-1165G7")
        self.assertEqual(uarch.short_model("AMD EPYC 7763 64-Core Processor"), "AMD EPYC 7763")
        self.assertEqual(uarch.short_model(None), "unknown CPU")


class SlugTest(unittest.TestCase):
    def test_slugs(self):
        self.assertEqual(uarch.slug(amd(26, 2)), "zen5")
        self.assertEqual(uarch.slug(amd(0x17, 0x08)), "zenplus")
        self.assertEqual(uarch.slug(amd(0x17, 0x01)), "zen")
        self.assertEqual(uarch.slug(intel(0x8f)), "sapphirerapids")
        self.assertEqual(uarch.slug(intel(0x55, 4)), "skylakesp")
        self.assertEqual(uarch.slug(arm("0x41", 0xd0c)), "neoversen1")
        self.assertIsNone(uarch.slug(amd(0x19, 0xf0)))

    def test_every_name_has_its_own_slug(self):
        slugs = {}
        for e in uarch.TABLE:
            s = uarch.slug({"uarch": e.name})
            self.assertRegex(s, r"^[a-z0-9]+$")
            slugs.setdefault(s, set()).add(e.name)
        self.assertEqual({s: n for s, n in slugs.items() if len(n) > 1}, {})


class TableTest(unittest.TestCase):
    def test_every_entry_is_reachable(self):
        """No entry hidden behind an earlier, wider one."""
        for e in uarch.TABLE:
            vendor = f"0x{e.vendor:x}" if isinstance(e.vendor, int) else e.vendor
            steppings = [lo for lo, _ in e.steppings] if e.steppings else range(16)
            hits = [(m, s) for lo, hi in e.models for m in range(lo, hi + 1) for s in steppings
                    if uarch.lookup({"vendor": vendor, "family": e.family or 8, "model": m,
                                     "stepping": s}) is e]
            with self.subTest(entry=e.name):
                self.assertTrue(hits)

    def test_ranges_are_ordered(self):
        for e in uarch.TABLE:
            for ranges in (e.models, e.steppings or ()):
                for lo, hi in ranges:
                    self.assertLessEqual(lo, hi, e.name)
            self.assertTrue(re.fullmatch(r"[A-Za-z0-9+ ().-]+", e.name), e.name)


if __name__ == "__main__":
    unittest.main()
