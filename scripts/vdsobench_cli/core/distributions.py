"""The distributions behind the statistics (stats.py, power.py, trials.py):
the sign test's null distribution and the rank that bounds the median's
interval, exact in integers; the binomial and normal distributions, a
bisection, Mann-Whitney's p-value and numpy's percentile, in floating point
from the largest term outward. Each is what scipy computes, checked against it
by stats_reference_test.py wherever scipy is installed; Python's standard
library only (see stats.py for why)."""

import fractions
import functools
import itertools
import math


def _half_counts(n):
    """2^n P(Binomial(n, 1/2) <= j) for j = 0, 1, ..., n: the running sums of
    C(n, j), exact integers (the sign test's null distribution)."""
    below, term = 0, 1
    for j in range(n + 1):
        below += term
        yield below
        term = term * (n - j) // (j + 1)


def sign_cdf(k, n):
    """P(Binomial(n, 1/2) <= k), exact and then rounded once (scipy's
    binomtest(k, n, alternative="less").pvalue)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return next(itertools.islice(_half_counts(n), k, None)) / 2 ** n


@functools.lru_cache(maxsize=None)
def depth(n, tail):
    """Largest j with P(Binomial(n, 1/2) <= j) <= tail; -1 where none. It is
    both the sign test's critical count and the rank that bounds the median's
    interval: [x(j+1), x(n-j)] covers the median with probability >= 1 - 2
    tail, and excludes a value exactly when the sign test rejects it. Exact:
    the integer counts are compared with tail's exact binary value times 2^n,
    so a tail that is a probability itself (1/8 = P(B <= 0) at n = 3) lands
    on the side the definition says."""
    if n <= 0:
        return -1
    limit = math.floor(fractions.Fraction(tail) * 2 ** n)
    j = -1
    for count in _half_counts(n):
        if count > limit:
            break
        j += 1
    return j


def binom_pmf(k, n, p):
    """P(Binomial(n, p) = k), through logarithms so that nothing overflows."""
    if p <= 0 or p >= 1:
        return float(k == (0 if p <= 0 else n))
    return math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                    + k * math.log(p) + (n - k) * math.log1p(-p))


def binom_cdf(k, n, p):
    """P(Binomial(n, p) <= k) in floating point. Below the mode the terms
    shrink from k down to 0, so they are summed from k down (the largest
    first, until what is left cannot change the sum); at or above it the cdf
    is at least 1/2, and 1 - the upper tail, summed from k + 1 up, loses
    nothing. Relative error about 1e-13 at n = 1000, 1e-10 at n = 100000
    (lgamma's)."""
    if k < 0:
        return 0.0
    if k >= n or p <= 0:
        return 1.0
    if p >= 1:
        return 0.0
    odds = p / (1 - p)
    down = k < (n + 1) * p
    i = k if down else k + 1
    term = binom_pmf(i, n, p)
    total = 0.0
    while term > 0:
        total += term
        if i == (0 if down else n):
            break
        ratio = i / ((n - i + 1) * odds) if down else (n - i) * odds / (i + 1)
        i += -1 if down else 1
        term *= ratio
        # the ratios only shrink from here, so the rest is < term / (1 - ratio)
        if term < total * 1e-17 * (1 - ratio):
            break
    return total if down else 1.0 - total


class LowerTail:
    """P(Binomial(n, p) <= k) and P(= k), carried from n to n + 1 and from k to
    k + 1 in O(1): the power of every n in one pass (rounds_needed)."""

    def __init__(self, k, n, p):
        self.k, self.n, self.p = k, n, p
        self.pmf, self.cdf = binom_pmf(k, n, p), binom_cdf(k, n, p)

    def grow(self):
        """n -> n + 1 (k kept): the extra trial must not succeed if X was k."""
        k, n, p = self.k, self.n, self.p
        self.cdf -= p * self.pmf
        self.pmf *= (1 - p) * (n + 1) / (n + 1 - k)
        self.n += 1

    def advance(self):
        """k -> k + 1 (n kept)."""
        k, n, p = self.k, self.n, self.p
        self.pmf *= (n - k) / (k + 1) * p / (1 - p)
        self.cdf += self.pmf
        self.k += 1


def norm_cdf(x):
    """Phi(x), as scipy's ndtr computes it (erf near 0, erfc in the tails)."""
    y = x * math.sqrt(0.5)
    if abs(y) < math.sqrt(0.5):
        return 0.5 + 0.5 * math.erf(y)
    tail = 0.5 * math.erfc(abs(y))
    return 1.0 - tail if y > 0 else tail


def bisect(f, lo, hi, xtol):
    """The x in [lo, hi] where the increasing f reaches 0, to within xtol
    (f(lo) < 0 <= f(hi)); returns the upper end, where f >= 0."""
    while hi - lo > xtol:
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return hi


def _average_ranks(values):
    """(ranks from 1, ties averaged; the size of each group of equal values)."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks, ties = [0.0] * len(values), []
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and values[order[end]] == values[order[start]]:
            end += 1
        for i in order[start:end]:
            ranks[i] = (start + 1 + end) / 2
        ties.append(end - start)
        start = end
    return ranks, ties


def _u_counts(m, n):
    """How many of the C(m + n, m) orderings of m values among n give U = u,
    for u = 0 .. m n: the coefficients of the Gaussian binomial
    prod_{i=1..m} (1 - x^(n+i)) / (1 - x^i), exact integers."""
    top = m * n
    c = [1] + [0] * top
    for i in range(1, m + 1):
        for u in range(top, n + i - 1, -1):  # times (1 - x^(n+i))
            c[u] -= c[u - n - i]
        for u in range(i, top + 1):  # divided by (1 - x^i)
            c[u] += c[u - i]
    return c


def mann_whitney_p(x, y):
    """Two-sided p-value of Mann-Whitney U, as scipy.stats.mannwhitneyu(x, y)
    with its defaults (method "auto", continuity correction): the exact null
    distribution when there are no ties and one sample has at most 8 values,
    otherwise the normal approximation with the tie correction."""
    n1, n2 = len(x), len(y)
    ranks, ties = _average_ranks(list(x) + list(y))
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)
    if min(n1, n2) <= 8 and max(ties) == 1:
        counts = _u_counts(min(n1, n2), max(n1, n2))
        p = sum(counts[int(u):]) / math.comb(n1 + n2, n1)
    else:
        n = n1 + n2
        tie_term = sum(t ** 3 - t for t in ties)
        s = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
        # every value tied: s = 0 and the (continuity-corrected) z is -inf
        p = norm_cdf((u - n1 * n2 / 2 - 0.5) / -s) if s > 0 else 1.0
    return min(1.0, 2 * p)


def percentile(ordered, fraction):
    """numpy's default (linear) percentile of sorted values, fraction in [0, 1]."""
    h = (len(ordered) - 1) * fraction
    i = math.floor(h)
    a = ordered[i]
    b = ordered[min(i + 1, len(ordered) - 1)]
    t = h - i
    if t == 0 or a == b:
        return a
    return a + (b - a) * t if t < 0.5 else b - (b - a) * (1 - t)
