"""One parser for every numeric option: each states its valid range, and a bad
value gets one line naming it and the range ("argument --batch-ms: 1e9 is out
of range (valid: 0.1 to 3600)")."""

import argparse
import math


def shown(x):
    """3600, 0.1, 1e-06: as short as it reads."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(float(x))


def number(low, high, whole=False, words=(), suffix=""):
    """An argparse type: the text as a float (an int if whole) in [low, high].

    words: texts accepted as they are (e.g. "max"); suffix: a unit the text may
    end with (e.g. "s" in 10s), dropped before parsing.
    """
    valid = f"{shown(low)} to {shown(high)}"
    if suffix:
        valid += f", optionally followed by {suffix!r}"
    if words:
        valid += " or " + " or ".join(words)
    kind = "a whole number" if whole else "a number"

    def parse(text):
        if text in words:
            return text
        body = text[:-len(suffix)] if suffix and text.endswith(suffix) else text
        try:
            value = int(body, 10) if whole else float(body)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind} (valid: {valid})") \
                from None
        if math.isnan(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is out of range (valid: {valid})")
        return value

    parse.valid = valid  # for help texts
    parse.low, parse.high, parse.whole = low, high, whole
    return parse


# Every command's numeric options, so that one option has one range everywhere. The
# harness's and the verify driver's own limits are the outer bounds where they apply.
MIN_TIME = number(0.001, 3600)  # seconds per benchmark (the harness: up to 3600)
REPETITIONS = number(1, 1000, whole=True)
HZ = number(1, 1000000, whole=True, words=("max",))
CPU = number(0, 4095, whole=True)
ROUNDS = number(1, 100000, whole=True)  # the harness's limits
PAIRED_ROUNDS = number(2, 100000, whole=True)  # where a ratio's interval needs two
BATCH_MS = number(0.1, 3600)  # the harness takes up to 3600
ALPHA = number(0.000001, 0.5)
CALLS_PER = number(0.001, 86400, suffix="s")
THRESHOLD = number(0, 10)  # a fraction: 0.05 is 5%
TOLERANCE = number(0, 1000000)
JOBS = number(1, 256, whole=True)
DURATION_MS = number(1, 600000, whole=True)  # vdsobench_verify's limits
TRIALS = number(1, 1000000, whole=True)
SEED = number(0, 2 ** 32 - 1, whole=True)
BUDGET_S = number(1, 86400, whole=True)  # seconds patch-review's timed rounds may take
