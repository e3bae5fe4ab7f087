"""aioeval.analysis.stats against hand-computed values and known McNemar tables."""

from __future__ import annotations

import math

import pytest

from aioeval.analysis.stats import (
    majority_passed,
    mcnemar_exact,
    paired_bootstrap,
    pass_at_k_values,
)


def test_mcnemar_no_discordant_pairs_is_one() -> None:
    assert mcnemar_exact(0, 0) == 1.0


@pytest.mark.parametrize(
    ("a_only", "b_only", "expected"),
    [
        # 2 * P(X <= 0), X ~ Bin(5, 1/2) = 2/32
        (0, 5, 2 / 32),
        (5, 0, 2 / 32),
        # 2 * P(X <= 0), X ~ Bin(10, 1/2)
        (0, 10, 2 / 1024),
        # P(X <= 1 | Bin(2, 1/2)) = 3/4, doubled and capped at 1
        (1, 1, 1.0),
        # 2 * (C(10,0)+...+C(10,4)) / 2^10 = 2 * 386 / 1024
        (4, 6, 2 * 386 / 1024),
        # 2 * (1+12+66+220+495+792) / 4096
        (5, 7, 2 * 1586 / 4096),
    ],
)
def test_mcnemar_hand_computed(a_only: int, b_only: int, expected: float) -> None:
    assert mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_known_tables() -> None:
    # 2x2 table a=59, b=6, c=16, d=80: discordant 6 vs 16,
    # 2 * (1+22+231+1540+7315+26334+74613) / 2^22 = 0.0524787902...
    assert mcnemar_exact(6, 16) == pytest.approx(0.052478790283203125, rel=1e-12)
    # Agresti, Categorical Data Analysis, presidential approval (794, 150 / 86, 570):
    # exact two-sided binomial p for 86 of 236 discordant = 3.7159e-05
    # (the same figure scipy.stats.binomtest(86, 236).pvalue gives).
    assert mcnemar_exact(150, 86) == pytest.approx(3.7159361395713866e-05, rel=1e-9)


def test_mcnemar_rejects_negative_counts() -> None:
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def test_bootstrap_constant_difference_has_zero_width() -> None:
    ci = paired_bootstrap([0.0, 0.5, 1.0], [0.25, 0.75, 1.25], resamples=200)
    assert ci.diff == pytest.approx(0.25)
    assert ci.low == pytest.approx(0.25)
    assert ci.high == pytest.approx(0.25)


def test_bootstrap_identical_runs() -> None:
    vals = [0.0, 1.0, 0.2, 0.9]
    ci = paired_bootstrap(vals, vals)
    assert (ci.diff, ci.low, ci.high) == (0.0, 0.0, 0.0)


def test_bootstrap_two_problems_hand_computed() -> None:
    # Differences {0, 1}: a resample's mean is 0, 0.5 or 1 with probability
    # 1/4, 1/2, 1/4, so with 10,000 resamples the 2.5th and 97.5th
    # percentiles are exactly 0 and 1.
    ci = paired_bootstrap([0.0, 0.0], [0.0, 1.0], resamples=10_000, seed=3)
    assert ci.diff == 0.5
    assert ci.low == 0.0
    assert ci.high == 1.0


def test_bootstrap_close_to_normal_interval() -> None:
    # 100 of 400 problems gained, none lost: mean 0.25, standard error
    # sqrt(0.25 * 0.75 / 400) = 0.02165, so the interval is about 0.25 +- 0.0424.
    a = [0.0] * 400
    b = [1.0] * 100 + [0.0] * 300
    ci = paired_bootstrap(a, b, resamples=10_000, seed=11)
    se = math.sqrt(0.25 * 0.75 / 400)
    assert ci.diff == pytest.approx(0.25)
    assert ci.low == pytest.approx(0.25 - 1.96 * se, abs=0.006)
    assert ci.high == pytest.approx(0.25 + 1.96 * se, abs=0.006)


def test_bootstrap_is_seeded_and_reproducible() -> None:
    a = [((i * 37) % 101) / 101 for i in range(60)]
    b = [((i * 53) % 97) / 97 for i in range(60)]
    first = paired_bootstrap(a, b, resamples=2000, seed=5)
    again = paired_bootstrap(a, b, resamples=2000, seed=5)
    other = paired_bootstrap(a, b, resamples=2000, seed=6)
    assert first == again
    assert (first.low, first.high) != (other.low, other.high)
    assert first.low <= first.diff <= first.high


def test_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0, 0.0])
    with pytest.raises(ValueError):
        paired_bootstrap([], [])
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [0.0], confidence=1.0)


def test_pass_at_k_values_hand_computed() -> None:
    # n=5, c=1, k=2: 1 - C(4,2)/C(5,2) = 1 - 6/10
    assert pass_at_k_values([(5, 0), (5, 5), (5, 1)], 2) == pytest.approx([0.0, 1.0, 0.4])


@pytest.mark.parametrize(
    ("n", "c", "solved"),
    [(1, 1, True), (1, 0, False), (2, 1, False), (3, 2, True), (0, 0, False), (200, 101, True)],
)
def test_majority(n: int, c: int, solved: bool) -> None:
    assert majority_passed(n, c) is solved
