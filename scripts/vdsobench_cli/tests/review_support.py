"""What every --quick `recipe patch-review` of a correct patch on 6.12 must
show, whatever its few rounds of live timing gave: the block's shape, each
row one statistic with an honest verdict, the first line and the exit status
as those verdicts say, kbuild's images measured, every mode verified. The
reviews that carry it run in patch_review_isolation_test (two at once)."""

ROWS = sorted(["realtime", "monotonic", "monotonic_raw"])
VERDICTS = {"faster", "slower", "no significant difference", "incomplete"}


def check_row(test, r):
    test.assertIn(r["verdict"], VERDICTS, r)
    test.assertEqual(r["complete"], r["verdict"] != "incomplete", r)
    if r["ratio"] is not None:
        test.assertAlmostEqual(r["after"], r["before"] * r["ratio"], places=9)
    if r["ci_low"] is None:  # too few rounds for an interval: no verdict
        test.assertEqual(r["verdict"], "incomplete", r)
        return
    test.assertLessEqual(r["ci_low"], r["ratio"])
    test.assertLessEqual(r["ratio"], r["ci_high"])
    if r["verdict"] == "faster":
        test.assertLess(r["ci_high"], 1, r)
    elif r["verdict"] == "slower":
        test.assertGreater(r["ci_low"], 1, r)
    elif r["verdict"] == "no significant difference":
        test.assertLessEqual(r["ci_low"], 1, r)
        test.assertGreaterEqual(r["ci_high"], 1, r)


def check_review(test, rc, letter, record):
    """A correct patch's review: at most 40 lines of 72 columns, verified in
    every mode, timed (any verdict), measured on kbuild's images."""
    test.assertLessEqual(len(letter), 40, letter)
    test.assertLessEqual(max(map(len, letter)), 72, letter)
    test.assertEqual(record["block_lines"], len(letter))
    test.assertIsNone(record["torn"], record["verify"])
    test.assertIsNone(record["unverified"])
    rows = record["rows"]
    test.assertEqual(sorted(r["clock"] for r in rows), ROWS)
    for r in rows:
        check_row(test, r)
    missing = sum(not r["complete"] for r in rows)
    # the vdso32's timed rows, where it was timed (natively): counted apart
    rows32 = ((record.get("vdso32") or {}).get("timed") or {}).get("rows") or []
    for r in rows32:
        check_row(test, r)
    missing32 = sum(not r["complete"] for r in rows32)
    if missing or missing32:
        test.assertEqual(rc, 1, letter)
        what = " and ".join(([f"{missing} of 3 rows"] if missing else [])
                            + ([f"{missing32} of {len(rows32)} vdso32 rows"]
                               if missing32 else []))
        test.assertRegex(" ".join(" ".join(letter[:3]).split()),
                         rf"^INCOMPLETE: {what} without a verdict \((the time budget ran "
                         r"out|the rounds were too noisy|the CPU was lost too often)\) "
                         r"vdsobench patch-review: ")
    else:
        test.assertEqual(rc, 0, letter)
        test.assertTrue(letter[0].startswith("vdsobench patch-review: "), letter)
    text = " ".join(" ".join(letter).split())
    test.assertNotIn("WRONG", text)
    # measured as the kernel ships it: kbuild's images of both trees
    test.assertEqual(record["build"], "image", record["measured"])
    test.assertIn("its kbuild's vDSO image", text)
    subject = next(x for x in letter if x.startswith("vdsobench patch-review: "))
    test.assertIn("vdso: ", subject)
    test.assertTrue(any(x.startswith("verify, before and after: PASS") for x in letter),
                    letter)
    for side in ("after", "before"):
        ok, said = record["verify"][side]
        test.assertTrue(ok, said)
        test.assertTrue(said.startswith("PASS ("), said)
    # and under kvm-clock and Hyper-V, the images reading the simulated host's pages
    test.assertIn("; pvclock, hvclock: PASS (exact, edges, concurrency)", text)
    test.assertTrue(any(x.startswith("clock ") and x.endswith("verdict") for x in letter),
                    letter)
