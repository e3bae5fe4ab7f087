"""Token budgets counted as the server counts them (pure)."""

from __future__ import annotations

import pytest

from aioeval.generation.ratelimit._limiter import Permit
from aioeval.generation.ratelimit._tokens import Ask, TokenBudget, estimate_tokens


def sent(tokens: int, n: int, at: float = 0.0) -> Permit:
    return Permit(id=1, started_at=at, parallel=1, tokens=tokens, n=n)


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 1
    assert estimate_tokens("x" * 9) == 3


def test_tokens_counted_like_openai_are_charged_up_front_and_kept() -> None:
    budget = TokenBudget(36000, "max_tokens", 0.0)  # 600/s, one second's burst
    assert budget.bucket.capacity == 600.0
    ask = Ask(prompt=30, max_tokens=100, n=2)
    assert budget.cost(ask) == 200
    assert budget.cost(Ask(prompt=500, max_tokens=100)) == 500  # the larger of the two
    budget.take(200, 0.0)
    budget.settle(sent(200, 2), 0.0, used=40, completion=10)  # usage changes nothing
    assert budget.bucket.level == pytest.approx(400.0)
    budget.take(200, 0.0)
    budget.refused(200, 0.0)  # a 429 was not charged
    assert budget.bucket.level == pytest.approx(400.0)


def test_tokens_counted_on_usage_hold_a_reservation_until_the_answer() -> None:
    budget = TokenBudget(36000, "usage", 0.0)
    ask = Ask(prompt=30, max_tokens=100, n=2)
    assert budget.cost(ask) == 230  # nothing seen yet: max_tokens
    budget.take(230, 0.0)
    assert budget.held == 230 and budget.bucket.level == 600.0
    assert budget.wait_s(400, 0.0) == pytest.approx(0.05)  # 600 - 230 held < 400
    budget.settle(sent(230, 2, at=-0.5), 0.0, used=70, completion=40)
    assert budget.held == 0 and budget.bucket.level == pytest.approx(530.0)
    assert budget.cost(ask) == 30 + 40  # 20 per sample seen
    # Requests in flight for the usual 0.5 s see 300 tokens refilled before
    # they are charged: that much of what they hold does not block others.
    budget.take(300, 0.0)
    assert budget.wait_s(500, 0.0) == 0.0
    budget.take(200, 0.0)
    assert budget.wait_s(500, 0.0) == pytest.approx((500 + (500 - 300) - 530) / 600)
