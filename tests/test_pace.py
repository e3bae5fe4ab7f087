"""Pacing arithmetic (pure): the bucket, the pace, and the rule that keeps
a rate from 429s. Properties over many random draws, not one trajectory."""

from __future__ import annotations

import itertools
import random

import pytest

from aioeval.generation.ratelimit._pace import (
    BACKOFF,
    CLIMB_SENDS,
    FLOOR_S,
    HINT_MARGIN,
    SLACK,
    Learner,
    Pace,
)
from aioeval.generation.ratelimit._tokens import Bucket

DRAWS = [random.Random(seed) for seed in range(100)]


def test_bucket_refills_continuously_and_allows_debt() -> None:
    b = Bucket(rate=2.0, capacity=4.0, now=0.0)
    assert b.wait_s(4, 0.0) == 0.0
    b.take(4, 0.0)
    assert b.wait_s(1, 0.0) == pytest.approx(0.5)
    assert b.wait_s(1, 0.5) == 0.0
    assert b.wait_s(1, 0.5, held=2.0) == pytest.approx(1.0)  # set aside for others
    # an amount above capacity needs a full bucket, then leaves debt
    assert b.wait_s(10, 0.5) == pytest.approx(1.5)
    b.take(10, 2.0)
    assert b.level == pytest.approx(-6.0)
    b.take(-5, 2.0)
    assert b.level == pytest.approx(-1.0)
    b.take(-100, 2.0)
    assert b.level == 4.0  # never above capacity


def test_the_lowest_known_rate_wins_and_a_configured_rate_is_exact() -> None:
    pace = Pace(0.0, 600)
    assert pace.rate(0.0) == 10.0
    pace.hinted = 20.0  # looser than configured: the configured rate, exactly
    assert pace.rate(0.0) == 10.0
    pace.hinted = 5.0  # tighter: its margin below it
    assert pace.rate(0.0) == pytest.approx(5.0 * HINT_MARGIN)
    assert Pace(0.0, None).rate(0.0) is None  # nothing known: unpaced


@pytest.mark.parametrize("r", DRAWS[:50])
def test_sends_at_a_pace_never_outrun_it(r: random.Random) -> None:
    """Whenever sends go (late, early, after idling), any k+1 consecutive
    sends span at least (k - 1/4) intervals: one request plus the quarter
    interval of slack kept for timers that fire late."""
    rate = r.uniform(0.5, 50.0)
    pace = Pace(0.0, rate * 60.0)
    now, sent = 0.0, []
    for _ in range(100):
        now += pace.wait_s(now) + r.choice([0.0, 0.0, r.uniform(0, 3 / rate)])
        assert pace.wait_s(now) <= 1e-9
        pace.take(now)
        sent.append(now)
    for i in range(len(sent)):
        for j in range(i + 1, min(len(sent), i + 20)):
            assert j - i <= rate * (sent[j] - sent[i]) + 1 + SLACK + 1e-6


@pytest.mark.parametrize("r", DRAWS)
def test_a_refusal_lowers_the_pace_but_never_below_what_got_through(r: random.Random) -> None:
    learner = Learner()
    paced = r.uniform(0.1, 100.0)
    accepted = r.choice([None, r.uniform(0.05, 150.0)])
    delivered = r.choice([None, r.uniform(0.0, paced)])
    learner.start, learner.climb_from = paced, 0.0
    assert learner.on_refused(1.0, 1.0, paced, (accepted, delivered))
    after = learner.rate(1.0)
    level = learner.level
    assert after is not None and level is not None and after <= paced + 1e-9
    if accepted is not None and accepted < BACKOFF * paced:  # held back: what got through
        assert BACKOFF * accepted - 1e-9 <= level <= accepted + 1e-9
    else:
        assert BACKOFF * paced - 1e-9 <= level <= paced + 1e-9
    assert after >= BACKOFF * level - 1e-9
    if delivered is not None:  # the floor: what the endpoint let through
        assert after >= min(delivered, level) - 1e-9


@pytest.mark.parametrize("r", DRAWS)
def test_after_a_refusal_the_pace_climbs_back_within_the_climb_and_past_it(
    r: random.Random,
) -> None:
    learner = Learner()
    level = r.uniform(0.1, 100.0)
    learner.start, learner.climb_from = level, 0.0
    refused_at = r.uniform(1.0, 100.0)
    learner.on_refused(refused_at, refused_at, level, (None, None))
    assert learner.rate(refused_at + 30.0) == pytest.approx(BACKOFF * level)  # nothing served yet
    served = refused_at + r.uniform(0.1, 5.0)
    learner.on_success(served, served)
    k = CLIMB_SENDS / level
    rates = [learner.rate(served + k * i / 10) or 0.0 for i in range(0, 31)]
    assert all(b >= a for a, b in itertools.pairwise(rates))  # it only climbs
    assert rates[10] == pytest.approx(level)  # back at the refused pace after the climb ...
    assert rates[20] > level  # ... then past it


def test_refusals_someone_else_caused_do_not_ratchet_the_pace_down() -> None:
    """Refused again and again while 4 a second got through each time: the
    pace stays at 4 however often, and the floor is the best of the last
    FLOOR_S, so one short episode does not sink it."""
    learner = Learner()
    learner.start, learner.climb_from = 5.0, 0.0
    now = 1.0
    assert learner.on_refused(now, now, 5.0, (None, 4.0))
    for _ in range(50):
        learner.on_success(now + 0.1, now + 0.2)
        now += 0.5
        assert learner.on_refused(now, now, learner.rate(now), (None, 4.0))
        assert learner.rate(now) == pytest.approx(4.0)
    learner.on_success(now + 0.1, now + 0.2)
    now += 0.5
    assert learner.on_refused(now, now, learner.rate(now), (None, 1.0))  # one short episode
    assert learner.rate(now) == pytest.approx(4.0)
    now += FLOOR_S + 1.0
    learner.on_success(now - 0.5, now - 0.5)
    assert learner.on_refused(now, now, 4.0, (None, 1.0))  # the good episodes are long past
    assert learner.rate(now) == pytest.approx(BACKOFF * 4.0)


def test_one_reaction_per_episode() -> None:
    learner = Learner()
    learner.start, learner.climb_from = 10.0, 0.0
    assert learner.on_refused(5.0, 5.1, 10.0, (None, None))
    # sent before the lowering: already reacted to
    assert not learner.on_refused(5.05, 5.2, 10.0, (None, None))
    # sent after it, but nothing sent since has succeeded: the same episode
    assert not learner.on_refused(6.0, 6.0, 8.0, (None, None))
    learner.on_success(6.5, 7.0)
    assert learner.on_refused(8.0, 8.0, 8.0, (None, None))
    assert learner.rate(8.0) == pytest.approx(BACKOFF * 8.0)


def test_an_unpaced_refusal_starts_from_what_was_accepted_and_grows() -> None:
    learner = Learner()
    assert learner.rate(0.0) is None
    assert not learner.on_refused(1.0, 1.0, None, (None, None))  # nothing to go by
    assert learner.on_refused(1.0, 1.0, None, (4.0, None))
    assert learner.level is None  # a measurement, not a refused pace
    assert learner.rate(1.0) == pytest.approx(BACKOFF * 4.0)
    learner.on_success(1.5, 2.0)
    assert learner.rate(12.0) > 2 * learner.rate(2.0)  # type: ignore[operator]


def test_the_accepted_rate_is_what_was_sent_less_what_was_refused() -> None:
    pace = Pace(0.0, None)
    for i in range(10):
        pace.take(i * 0.1)
    assert pace.accepted(1.0) == pytest.approx(10.0)
    pace.refused.extend([0.5, 0.6])
    assert pace.accepted(1.0) == pytest.approx(8.0)
    pace.resumed = 0.65  # a pause ended: only what was sent since counts
    assert pace.accepted(1.0) == pytest.approx(3 / 0.3)
    assert pace.accepted(0.05) is None  # too few to tell


def test_the_delivered_rate_counts_from_the_last_lowering_across_pauses() -> None:
    pace = Pace(0.0, None)
    for i in range(20):
        pace.take(i * 0.5)
    pace.refused.extend([2.0, 3.0])
    assert pace.delivered(10.0) == pytest.approx(18 / 10.0)  # from the first send
    pace.learner.since = 5.0  # lowered then: the budget was empty
    pace.resumed = 8.0  # a pause does not restart it
    assert pace.delivered(10.0) == pytest.approx(10 / 5.0)
    assert pace.delivered(5.1) is None  # too short to tell
