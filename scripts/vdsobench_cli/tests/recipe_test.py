"""Every recipe end to end in its short mode (what CI can afford), and the
command's bad input. The recipes' numbers are not asserted: they are timings."""

import os
import tempfile
import unittest

from vdsobench_cli.recipes import recipes
from vdsobench_cli.tests.support import NESTED, TEST_BUDGET_S, long_tier, vdsobench


class EveryRecipeTest(unittest.TestCase):
    # Four minutes of live runs on two cores. Inside new_variant_test's copy
    # (one more layout and counter) they would measure exactly what they
    # measure here: in --quick every recipe names its variants (line-cost
    # keeps three layouts), so the new row is in none of them.
    @unittest.skipIf(os.environ.get(NESTED), "the quick recipes name their variants: "
                     "the copy's new layout and counter are in none of them")
    def test_each_recipe_runs_end_to_end(self):
        # patch-review's own seed (6.12 and its layout patch) is the long
        # tier's: patch_review_isolation_test reviews 6.12 three times
        for recipe in recipes.RECIPES:
            if recipe.name != recipes.patch_review.NAME:
                self.runs_end_to_end(recipe.name)

    @unittest.skipIf(os.environ.get(NESTED), "the quick recipes name their variants")
    @long_tier("patch-review's own seed, a review of 6.12, about 1 min on 2 cores")
    def test_patch_review_runs_its_seed_end_to_end(self):
        self.runs_end_to_end(recipes.patch_review.NAME)

    def runs_end_to_end(self, name):
        with self.subTest(recipe=name), \
                tempfile.TemporaryDirectory(prefix="vdsobench-recipe-") as tmp:
            out = os.path.join(tmp, "out")
            # patch-review's timed rounds in a smoke-test budget (any
            # verdict will do; --quick's own is 60 s), and without its
            # arm64 section, which patch_review_arm64_test runs end to end
            budget = (["--budget", TEST_BUDGET_S, "--no-arm64"]
                      if name == recipes.patch_review.NAME else [])
            rc, stdout, err = vdsobench("recipe", name, "--quick", *budget, "--out", out)
            if name == recipes.patch_review.NAME:
                # a row without a verdict (too few rounds on a busy machine)
                # exits 1, and then the block says so first, and only then
                with open(os.path.join(out, "cover-letter.txt")) as f:
                    incomplete = f.readline().startswith("INCOMPLETE: ")
                self.assertEqual(rc, 1 if incomplete else 0, err + stdout[-2000:])
            else:
                self.assertEqual(rc, 0, err + stdout[-2000:])
            self.assertIn(f"== recipe {name}", stdout)
            self.assertIn("-- the seed", stdout)
            self.assertIn("This machine:", stdout)
            written = os.listdir(out)
            self.assertTrue(any(f.endswith(".json") for f in written), written)


class RecipeUsageTest(unittest.TestCase):
    def test_list(self):
        rc, out, _ = vdsobench("recipe", "--list")
        self.assertEqual(rc, 0)
        self.assertEqual([line.split()[0] for line in out.splitlines()], recipes.NAMES)
        self.assertEqual(len(recipes.NAMES), 10)

    def assert_bad(self, needle, *argv):
        rc, _, err = vdsobench("recipe", *argv)
        self.assertEqual(rc, 2, err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn(needle, err)

    def test_bad_input(self):
        self.assert_bad("'souffle'", "souffle")
        self.assert_bad("a name is required")
        self.assert_bad("--budget is for patch-review", "inline", "--budget", "5")
        self.assert_bad("--no-arm64 is for patch-review", "inline", "--no-arm64")
        self.assert_bad("--no-i386 is for patch-review", "inline", "--no-i386")
        self.assert_bad("argument --budget: 0 is out of range (valid: 1 to 86400)",
                        "patch-review", "--budget", "0")
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "old.json"), "w") as f:
                f.write("{}")
            self.assert_bad("not empty", "inline", "--out", tmp)
            blocker = os.path.join(tmp, "file")
            open(blocker, "w").close()
            self.assert_bad(blocker, "inline", "--out", os.path.join(blocker, "dir"))
            self.assertEqual(sorted(os.listdir(tmp)), ["file", "old.json"], "nothing left")


if __name__ == "__main__":
    unittest.main()
