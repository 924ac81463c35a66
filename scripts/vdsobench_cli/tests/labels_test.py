"""cli/labels.py: each label names a target its BUILD file defines (a renamed
target fails here, not in the middle of a command), and no module of the
package spells a label of its own."""

import re
import unittest

from vdsobench_cli.cli import labels
from vdsobench_cli.cli.build import ROOT

LABEL = re.compile(r'"//[\w/]+:\w+"')


def all_labels():
    return {name: value for name, value in vars(labels).items()
            if isinstance(value, str) and value.startswith("//")}


class LabelsTest(unittest.TestCase):
    def test_each_label_is_a_target(self):
        self.assertIn("BENCH", all_labels())
        for name, label in all_labels().items():
            folder, _, target = label[2:].partition(":")
            build = ROOT / folder / "BUILD"
            self.assertTrue(build.is_file(), (name, label))
            self.assertRegex(build.read_text(), rf'name = "{target}"', (name, label))

    def test_the_bundle_carries_labels_of_this_table(self):
        self.assertLessEqual(set(labels.BUNDLE_BINARIES), set(all_labels().values()))
        self.assertIn("run", labels.BUNDLE_COMMANDS)

    def test_no_other_module_spells_a_label(self):
        package = ROOT / "scripts" / "vdsobench_cli"
        found = [f"{p.relative_to(ROOT)}: {m}" for p in sorted(package.rglob("*.py"))
                 if p.name != "labels.py" and not p.name.endswith("_test.py")
                 for m in LABEL.findall(p.read_text())]
        self.assertEqual(found, [])


if __name__ == "__main__":
    unittest.main()
