import math

import pytest

from aioeval.metrics import mean_pass_at_k, pass_at_k, percentile, reportable_ks


def binom_reference(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (1, 1, 1, 1.0),
        (1, 0, 1, 0.0),
        (10, 3, 1, 0.3),
        (10, 0, 5, 0.0),
        (10, 10, 10, 1.0),
        (5, 1, 5, 1.0),  # n - c < k: every draw of 5 includes the correct one
        (2, 1, 2, 1.0),
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    ],
)
def test_known_values(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("n", [1, 7, 20, 200])
def test_matches_binomial_form(n: int) -> None:
    for c in range(0, n + 1, max(1, n // 7)):
        for k in (1, 2, 5, 10, 100):
            if k <= n:
                assert pass_at_k(n, c, k) == pytest.approx(binom_reference(n, c, k), abs=1e-12)


def test_pass_at_1_is_fraction_correct() -> None:
    assert pass_at_k(200, 37, 1) == pytest.approx(37 / 200)


def test_rejects_impossible_inputs() -> None:
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 5)


def test_mean_and_reportable_ks() -> None:
    counts = {"a": (10, 10), "b": (10, 0), "c": (5, 1)}
    assert mean_pass_at_k(counts.values(), 1) == pytest.approx((1 + 0 + 0.2) / 3)
    assert reportable_ks(counts, [1, 5, 10, 100]) == [1, 5]
    assert reportable_ks({}, [1]) == []


def test_percentile() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert percentile([5.0], 99) == 5.0
    assert percentile([0.0, 10.0], 90) == pytest.approx(9.0)
