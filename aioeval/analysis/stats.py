"""Paired statistics for comparing two runs: pure functions, no I/O.

Two runs on the same problems are paired: problem i was attempted by both,
so the question "does B beat A?" is answered on per-problem differences, not
on two independent means. Two tools:

- `paired_bootstrap`: resample problems with replacement (the same resampled
  problems for A and B), recompute the mean difference, take the percentile
  interval. Works on any per-problem value: pass@1 as c/n, or the unbiased
  pass@k estimator. Seeded with its own `random.Random`, so the same inputs
  and seed give the same interval on every machine and Python >= 3.11.
- `mcnemar_exact`: the exact (binomial) McNemar test on a paired binary
  outcome. Only discordant problems carry information; under H0 each one is
  equally likely to favour A or B, so the discordant split is Binomial(m, 1/2).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from fractions import Fraction

import msgspec

from aioeval.metrics import pass_at_k, percentile

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20260101


class Interval(msgspec.Struct, frozen=True, kw_only=True):
    """Observed mean difference (B - A) and its bootstrap percentile interval."""

    diff: float
    low: float
    high: float
    confidence: float
    resamples: int
    seed: int


def mean(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("mean of no values")
    return math.fsum(values) / len(values)


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> Interval:
    """Percentile bootstrap CI of mean(b) - mean(a) over paired problems.

    ``a[i]`` and ``b[i]`` are the two runs' values on problem i. Resampling
    the per-problem differences is the same as resampling problems and
    recomputing both means, and is cheaper.
    """
    if len(a) != len(b):
        raise ValueError(f"paired values need equal lengths ({len(a)} != {len(b)})")
    if not a:
        raise ValueError("paired_bootstrap needs at least one problem")
    if resamples < 1:
        raise ValueError("resamples must be >= 1")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    n = len(a)
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    observed = math.fsum(diffs) / n
    rng = random.Random(seed)
    population = range(n)
    take = diffs.__getitem__
    means = sorted(math.fsum(map(take, rng.choices(population, k=n))) / n for _ in range(resamples))
    tail = (1.0 - confidence) / 2.0 * 100.0
    return Interval(
        diff=observed,
        low=percentile(means, tail),
        high=percentile(means, 100.0 - tail),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts.

    ``a_only``: problems A solves and B does not; ``b_only``: the reverse.
    p = min(1, 2 * P(X <= min(a_only, b_only))) with X ~ Binomial(a_only +
    b_only, 1/2), computed exactly with integers; 1.0 when nothing differs.
    """
    if a_only < 0 or b_only < 0:
        raise ValueError("discordant counts must be >= 0")
    m = a_only + b_only
    if m == 0:
        return 1.0
    low = min(a_only, b_only)
    tail = Fraction(sum(math.comb(m, i) for i in range(low + 1)), 2**m)
    return float(min(Fraction(1), 2 * tail))


def pass_at_k_values(counts: Sequence[tuple[int, int]], k: int) -> list[float]:
    """Per-problem unbiased pass@k estimates from (n, c) pairs, for the bootstrap."""
    return [pass_at_k(n, c, k) for n, c in counts]


def majority_passed(n: int, c: int) -> bool:
    """The paired binary outcome used for McNemar with several samples: a
    problem counts as solved when more than half of its scored samples passed
    (with one sample, that sample's verdict)."""
    return n > 0 and 2 * c > n
