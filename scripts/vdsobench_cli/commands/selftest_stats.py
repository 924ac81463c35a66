"""`selftest-stats`: does `compare` keep its promises on this machine?

The unit tests check the statistics on synthetic noise; this runs the real
harness and checks them on the machine's own noise:

1. A/A: one variant measured twice per round (two copies, balanced order).
   Every verdict other than "no significant difference" is a false alarm:
   counted over consecutive chunks of --trial-rounds rounds (independent, few)
   and over --trials resampled trials of as many rounds drawn under the null
   (stats.null_pairs: the copies' labels exchanged, the position and the
   machine's noise and ties kept), whose rate is the test's level here and
   must stay within alpha. Also shown, not judged: the rate of trials drawn
   from the pairs as measured (each half from one order, as ABBA has them),
   which also finds what differs between these rounds' two copies, by chance
   or for real (their code's addresses), and the sign test over all rounds
   that says how much.
2. Known power: shifts of 1%, 2%, 5% injected into those same measured pairs
   are detected at the rate sign_test_power() claims for the measured noise.
3. Known differences, where the answer is not in doubt: sys/vdso against
   sys/syscall and floor/rdtsc against floor/lfence_rdtsc must come out
   faster with an interval excluding 1. And the footprint mode's
   (bench/footprint.h): x86_gtod_ts_multshift against x86_gtod, whose
   MONOTONIC reads one cache line more (seed 000's straddle, basetime
   48..71), REALTIME one line in both: MONOTONIC's extra cost to the
   caller's walk over REALTIME's (a difference of differences, so that the
   pair's code cancels) must exclude 0 and be one displaced line's cost
   within half a line, and REALTIME's extra lines displaced must stay under
   half a line. (The cold mode's difference, MONOTONIC slower in the call
   itself, is not checked: the second line's miss overlaps the first's and
   costs the call nothing measurable on the CPUs tried.)
4. The minimum detectable effect of a --trial-rounds compare (95% confidence,
   80% power) at the measured noise, and how long such a compare takes.
5. Another process on the measured CPU: a busy loop pinned there while
   floor/rdtsc is measured against floor/lfence_rdtsc again. The rounds must
   notice the CPU is lost (their batches are retried, and a compare with too
   many lost rounds gives no verdict: "cannot measure here"), or else the
   ratio must stay within the idle interval widened by BUSY_MARGIN; a ratio
   pulled toward 1 unnoticed fails.

Exit 0 when the false-alarm rate is within alpha, the known differences
are found (the footprint one as expected) and the busy loop is
noticed or harmless; 1 otherwise.
"""

import argparse
import contextlib
import random
import statistics
import subprocess
import sys
import time

from vdsobench_cli.cli import arch, lifecycle, ranged
from vdsobench_cli.measure import footprint, rounds
from vdsobench_cli.measure.harness import Selection
from vdsobench_cli.cli.errors import UsageError

from vdsobench_cli.core import limits, stats

SHIFTS = (1.01, 1.02, 1.05)
KNOWN = (("sys/syscall", "sys/vdso", "monotonic"),
         ("floor/lfence_rdtsc", "floor/rdtsc", "none"))
# the difference measured beside a busy loop, and how far its ratio may stray
# from the idle interval (each end moved out by 3%): the loss this check is
# about pulled 0.613 [0.612, 0.614] to 0.787, far outside
BUSY_PAIR = KNOWN[1]
BUSY_MARGIN = 0.03
# the busy loop: pinned to argv[1], says so, and spins until its parent is gone
# (so that not even a SIGKILL of this command leaves it spinning)
BUSY_LOOP = ("import os, sys\n"
             "parent = os.getppid()\n"
             "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
             "print('spinning', flush=True)\n"
             "while os.getppid() == parent:\n"
             "    for _ in range(100000):\n"
             "        pass\n")


def measure_pairs(binary, variant, clock, mode, total_rounds, batch_ms):
    chosen = Selection(clocks=[clock], modes=[mode])
    _, groups = rounds.measure(binary, rounds.harness_args([variant], chosen), total_rounds,
                               batch_ms, copies=2, quiet=True)
    g = groups[0]
    a, b = g.paired((variant, 0), (variant, 1))
    return list(zip(a, b)), g.iterations


def balanced_resampler(pairs, trial_rounds):
    """Draw a trial's rounds with replacement, half from the rounds that ran in
    one order (copy 0 first) and half from the other, as a compare's ABBA
    rounds are: a plain resample would mix the orders unevenly and let the
    harness's position effect in, which a real compare cancels."""
    halves = [stats.resample_pairs(pairs[k::2], trial_rounds // 2 + k * (trial_rounds % 2))
              for k in (0, 1)]

    def sample(rng):
        (a0, b0), (a1, b1) = (h(rng) for h in halves)
        return a0 + a1, b0 + b1
    return sample


def position_effect(pairs):
    """Median ratio copy1/copy0 in the rounds where copy 0 ran first, and where
    it ran second: how much running second costs (cancelled by ABBA)."""
    return [float(statistics.median([b / a for a, b in pairs[k::2]])) for k in (0, 1)]


def aa(pairs, trial_rounds, trials, alpha, rng):
    """(contiguous chunks', trials drawn under the null's, trials drawn from the
    pairs as measured) false-alarm rates."""
    chunks = stats.split_pairs(pairs, trial_rounds)
    contiguous = stats.false_alarm_rate(chunks, alpha=alpha)
    null = stats.false_alarm_rate(
        stats.draws(stats.null_pairs(pairs, trial_rounds), trials, rng), alpha=alpha)
    as_measured = stats.false_alarm_rate(
        stats.draws(balanced_resampler(pairs, trial_rounds), trials, rng), alpha=alpha)
    return contiguous, null, as_measured


def power(pairs, trial_rounds, trials, alpha, sigma, rng):
    """Each shift injected into the measured A/A pairs: (shift, claimed, observed)."""
    out = []
    for shift in SHIFTS:
        shifted = [(a, b * shift) for a, b in pairs]
        counts = stats.verdict_counts(
            stats.draws(balanced_resampler(shifted, trial_rounds), trials, rng), alpha=alpha)
        observed = stats.rate(counts, ["slower"])["rate"]
        claimed = float(stats.sign_test_power(trial_rounds, shift, sigma, alpha=alpha))
        out.append((shift, claimed, observed))
    return out


def known_difference(binary, slow, fast, clock, trial_rounds, batch_ms, alpha):
    """(the paired result of fast against slow, seconds taken, the CPU, why the
    rounds lost the CPU too often for a verdict or None)."""
    chosen = Selection(clocks=None if clock == "none" else [clock], modes=["hot"])
    started = time.monotonic()
    context, groups = rounds.measure(binary, rounds.harness_args([slow, fast], chosen),
                                     trial_rounds, batch_ms, quiet=True)
    seconds = time.monotonic() - started
    g = next(g for g in groups if g.clock == clock)
    base, other = g.paired((slow, 0), (fast, 0))
    lost = rounds.lost_cpu(context, [g]).get(g.key)
    return stats.paired(base, other, alpha=alpha), seconds, g.cpu, lost


def known_differences(binary, trial_rounds, batch_ms, alpha):
    return [(slow, fast, clock)
            + known_difference(binary, slow, fast, clock, trial_rounds, batch_ms, alpha)
            for slow, fast, clock in KNOWN]


@contextlib.contextmanager
def busy_loop(cpu):
    """Another process spinning on cpu for the block (None if it could not be
    started there); stopped on every way out of it, and by the command's
    session on a signal."""
    proc = lifecycle.popen([sys.executable, "-c", BUSY_LOOP, str(cpu)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        yield proc if proc.stdout.readline().strip() == "spinning" else None
    finally:
        lifecycle.stop(proc)
        proc.stdout.close()


def busy_verdict(idle, busy, lost, margin=BUSY_MARGIN):
    """(passed, why) for the busy-loop check: idle and busy are paired results
    of the same pair, lost why the busy rounds lost the CPU too often (None if
    they did not). Noticing the loss passes: the command says it cannot measure
    here; not noticing it passes only if the ratio stayed near the idle one."""
    if lost:
        return True, f"noticed: cannot measure here ({lost})"
    low, high = idle["ci_low"] / (1 + margin), idle["ci_high"] * (1 + margin)
    where = (f"ratio {busy['ratio']:.3f} against the idle interval widened by "
             f"{100 * margin:.0f}%, [{low:.3f}, {high:.3f}]")
    if low <= busy["ratio"] <= high:
        return True, f"unharmed: {where}"
    return False, f"NOT NOTICED: {where}, and no round was reported lost"


def busy_check(binary, idle, cpu, trial_rounds, batch_ms, alpha):
    """Section 5: (passed, line)."""
    slow, fast, clock = BUSY_PAIR
    with busy_loop(cpu) as proc:
        if proc is None:
            return False, f"  a busy loop could not be started on CPU {cpu}: not checked"
        busy, _, _, lost = known_difference(binary, slow, fast, clock, trial_rounds,
                                            batch_ms, alpha)
        if proc.poll() is not None:
            return False, "  the busy loop ended during the measurement: not checked"
    ok, why = busy_verdict(idle, busy, lost)
    return ok, (f"  {fast} vs {slow} beside a busy loop on CPU {cpu}: ratio "
                f"{busy['ratio']:.3f} [{busy['ci_low']:.3f}, {busy['ci_high']:.3f}]; {why}")


def pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def run_selftest(args):
    if args.trial_rounds < stats.min_rounds():
        raise UsageError(f"--trial-rounds: at least {stats.min_rounds()} for a 95% interval")
    if args.rounds < 2 * args.trial_rounds:
        raise UsageError("--rounds: at least twice --trial-rounds, for two independent trials")
    from vdsobench_cli.cli import packages
    packages.ensure_setup()
    binary = rounds.binary()
    rng = random.Random(args.seed)
    print(f"A/A: {args.variant} {args.clock}/hot against itself, {args.rounds} rounds "
          f"of two copies", flush=True)
    pairs, iterations = measure_pairs(binary, args.variant, args.clock, "hot", args.rounds,
                                      args.batch_ms)
    sigma = stats.robust_sigma_log([b / a for a, b in pairs])
    contiguous, resampled, as_measured = aa(pairs, args.trial_rounds, args.trials,
                                            args.alpha, rng)
    copies = stats.paired([a for a, _ in pairs], [b for _, b in pairs], alpha=args.alpha)
    first, second = position_effect(pairs)
    print(f"  {iterations} calls per batch; per-round noise (robust sigma of log ratios): "
          f"{pct(sigma)}; copy 1 / copy 0 when copy 0 ran first {first:.4f}, second "
          f"{second:.4f} (the position effect ABBA cancels)")
    print(f"  false alarms, {contiguous['trials']} independent trials of {args.trial_rounds} "
          f"rounds: {contiguous['count']} ({pct(contiguous['rate'])})")
    print(f"  false alarms, {resampled['trials']} trials of {args.trial_rounds} rounds "
          f"resampled under the null: {resampled['count']} ({pct(resampled['rate'])}, 95% CI "
          f"{pct(resampled['ci_low'])}..{pct(resampled['ci_high'])}; alpha {args.alpha})")
    print(f"  (resampled from the pairs as measured: {as_measured['count']} "
          f"({pct(as_measured['rate'])}), which also finds these rounds' own difference "
          f"between the copies: copy 1 / copy 0 over all {copies['n']} rounds "
          f"{copies['ratio']:.4f} [{copies['ci_low']:.4f}, {copies['ci_high']:.4f}], "
          f"sign test p {copies['p']:.2g})")
    mde = stats.minimum_detectable_effect(args.trial_rounds, sigma, alpha=args.alpha)
    print(f"  minimum detectable effect of a {args.trial_rounds}-round compare (95% "
          f"confidence, 80% power): {pct(None if mde is None else mde - 1)}")
    print("injected shifts (resampled from the A/A pairs, orders balanced): shift, claimed power, observed")
    shifts = power(pairs, args.trial_rounds, args.trials, args.alpha, sigma, rng)
    for shift, claimed, observed in shifts:
        print(f"  +{100 * (shift - 1):.0f}%  {claimed:.3f}  {observed:.3f}")
    print("known differences:")
    found, idle = True, {}
    for slow, fast, clock, res, seconds, cpu, lost in known_differences(
            binary, args.trial_rounds, args.batch_ms, args.alpha):
        ok = res["verdict"] == "faster" and not lost
        found &= ok
        idle[(slow, fast, clock)] = res, cpu
        print(f"  {fast} vs {slow} ({clock}): ratio {res['ratio']:.3f} "
              f"[{res['ci_low']:.3f}, {res['ci_high']:.3f}], p {res['p']:.2g}: "
              f"{res['verdict']} ({'as expected' if ok else 'MISSED'}; {seconds:.1f} s)"
              + (f"; {lost}" if lost else ""))
    result, lost, seconds = footprint.measure(binary, args.trial_rounds, args.batch_ms)
    fp_ok, lines = footprint.verdict(result)
    fp_ok &= not lost
    found &= fp_ok
    print(f"known difference in the footprint mode (the lines a call displaces from its "
          f"caller's L1D sets; {seconds:.1f} s):")
    for line in lines + ([f"  {lost} (MISSED)"] if lost else []):
        print(line)
    print("another process on the measured CPU:")
    busy_ok, line = busy_check(binary, *idle[BUSY_PAIR], args.trial_rounds, args.batch_ms,
                               args.alpha)
    print(line)
    # sampling error: a rate up to alpha plus 3 standard errors passes
    limit = args.alpha + 3 * (args.alpha * (1 - args.alpha) / args.trials) ** 0.5
    within = resampled["rate"] <= limit
    print(f"selftest-stats: false-alarm rate {pct(resampled['rate'])} "
          f"{'within' if within else 'ABOVE'} alpha ({pct(limit)} with sampling error); "
          f"known differences {'found' if found else 'MISSED'}; busy loop "
          f"{'noticed or harmless' if busy_ok else 'NOT NOTICED'}")
    return 0 if within and found and busy_ok else 1


def add_parser(sub):
    p = sub.add_parser("selftest-stats", help="check compare's statistics on this machine's noise",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description=__doc__.split("\n\n", 1)[1])
    aa = f"generic_5_3+{arch.timed_counter()}+always"
    p.add_argument("--variant", default=aa,
                   help=f"the A/A variant (default {aa}: the kernel's own counter read here)")
    p.add_argument("--clock", default="monotonic", help="the A/A clock (default monotonic)")
    p.add_argument("--rounds", type=ranged.PAIRED_ROUNDS, default=400,
                   help="A/A rounds measured (default 400)")
    p.add_argument("--trial-rounds", type=ranged.PAIRED_ROUNDS, default=limits.ROUNDS,
                   help=f"rounds per compare, as `compare --rounds` (default {limits.ROUNDS})")
    p.add_argument("--trials", type=ranged.TRIALS, default=1000,
                   help=f"resampled trials (default 1000; {ranged.TRIALS.valid})")
    p.add_argument("--batch-ms", type=ranged.BATCH_MS, default=limits.BATCH_MS,
                   help=f"the slowest subject's batch per round (default {limits.BATCH_MS})")
    p.add_argument("--alpha", type=ranged.ALPHA, default=limits.ALPHA,
                   help=f"significance (default {limits.ALPHA}; {ranged.ALPHA.valid})")
    p.add_argument("--seed", type=ranged.SEED, default=1,
                   help=f"resampling seed (default 1; {ranged.SEED.valid})")
    p.set_defaults(func=run_selftest)
