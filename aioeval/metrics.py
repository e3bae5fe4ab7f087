"""pass@k and streaming run statistics: pure functions, no I/O.

pass@k is the unbiased estimator 1 - C(n-c, k) / C(n, k) (Chen et al. 2021,
"Evaluating Large Language Models Trained on Code"), computed as a product so
it stays exact-ish for n in the hundreds instead of overflowing binomials.
Statistics stream: per problem only (n, c) is kept, so memory does not grow
with the number of samples.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn from n (c correct) passes."""
    if n < 1 or k < 1 or c < 0 or c > n:
        raise ValueError(f"pass_at_k needs 0 <= c <= n, n >= 1, k >= 1 (n={n}, c={c}, k={k})")
    if k > n:
        raise ValueError(f"pass_at_k needs k <= n (n={n}, k={k})")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """Average of pass@k over problems given (n, c) per problem."""
    values = [pass_at_k(n, c, k) for n, c in counts]
    if not values:
        return 0.0
    return math.fsum(values) / len(values)


def reportable_ks(counts: Mapping[str, tuple[int, int]], ks: Iterable[int]) -> list[int]:
    """The requested k values every problem has enough samples for, sorted."""
    if not counts:
        return []
    smallest = min(n for n, _ in counts.values())
    return sorted({k for k in ks if 1 <= k <= smallest} | ({1} if smallest >= 1 else set()))


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100]) of a sorted list."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)
