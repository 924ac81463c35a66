"""The numbers every room agrees on: the test level, the lost-CPU rule and a
paired comparison's defaults. One owner each, so that compare, gate, the
recipes, a cluster node and the fleet's review judge by the same rule.

    ALPHA     the significance level before the Bonferroni correction
              (--alpha's default; core/stats.py documents the methods)
    MAX_LOST  the fraction of a row's rounds that may lose the CPU; more,
              and the row has no verdict (every batch of a round absorbs
              another task's time slices alike, so each ratio is pulled
              toward 1)
    ROUNDS, BATCH_MS              a paired comparison's rounds and the
                                  slowest subject's batch per round
    QUICK_ROUNDS, QUICK_BATCH_MS  the same for a recipe's --quick run

MIN_NS, MAX_NS, MAX_ROUNDS  what a file of paired rounds may hold (a
                            node's reply is hostile): a time per call
                            beyond these no call takes, and the rounds a
                            reader sorts at most

gate's threshold (0.05 too) is another quantity, a fraction of slowdown: it
stays gate's DEFAULT_THRESHOLD.
"""

ALPHA = 0.05
MAX_LOST = 0.10
ROUNDS = 40
BATCH_MS = 10
QUICK_ROUNDS = 12
QUICK_BATCH_MS = 1
# a time per call in ns: beyond these no call is timed, and a ratio of the
# two (5e-324 against 1e19) is an infinite change in a block
MIN_NS, MAX_NS = 0.01, 1e9
MAX_ROUNDS = 100000
# the batches the harness retries after one lost the CPU, where its rounds
# do not say (bench/lost_cpu.h)
RETRIES = 3


def lost_too_often(lost, measured, max_lost=MAX_LOST):
    """Whether `lost` of `measured` rounds is more than MAX_LOST of them."""
    return lost > max_lost * measured


def lost_reason(key, lost, measured, retries=RETRIES, max_lost=MAX_LOST):
    """Why a group's rounds have no verdict, or None when lost_too_often()
    does not say so: "monotonic/hot/cpu1: 5 of 40 rounds lost the CPU ...".
    key: the group's vocab.GroupKey."""
    if not measured or not lost_too_often(lost, measured, max_lost):
        return None
    return (f"{key}: {lost} of {measured} rounds lost the CPU even after {retries} retries: "
            f"another process is running on CPU {key.cpu}; no verdict (more than "
            f"{100 * max_lost:.0f}% of the rounds)")
