"""Pacing arithmetic (pure): the bucket, and the rate learned from 429s."""

from __future__ import annotations

import math

import pytest

from aioeval.generation.ratelimit._bucket import Bucket
from aioeval.generation.ratelimit._fit import BucketFit, Region, Slice
from aioeval.generation.ratelimit._pace import (
    APPROACH_S,
    BACKOFF,
    CLOSE,
    GROWTH,
    PROBE_EVERY_S,
    SPAN_SLACK_S,
    TARGET,
    UNPACED_BACKOFF,
    UNPACED_SPREAD,
    UNTESTED_TARGET,
    Pace,
    RateLearner,
)
from aioeval.generation.ratelimit._tokens import (
    APPROACH_TOKENS_S,
    DEBT_SHARE,
    DEBT_TOP_SHARE,
    TOKEN_SPREAD,
    LearnedTokens,
    TokenBudget,
)


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
    b.give(5, 2.0)
    assert b.level == pytest.approx(-1.0)
    b.give(100, 2.0)
    assert b.level == 4.0  # never above capacity


def test_unpaced_sends_are_spread_over_the_latency() -> None:
    """Freed slots go out spaced, not in one millisecond (a budget left
    empty would refuse each of them before the first 429 came back)."""
    pace = Pace(0.0, None)
    pace.take(0.0)
    assert pace.wait_s(0.0, 10, 0.02) == 0.0  # no latency seen yet: nothing to spread over
    pace.on_success(0.0, 0.3)
    pace.take(0.3)
    gap = 0.3 / (UNPACED_SPREAD * 10)
    assert pace.wait_s(0.3, 10, 0.02) == pytest.approx(gap)
    assert pace.wait_s(0.3, 20, 0.02) == pytest.approx(gap / 2)  # more in flight, closer
    assert pace.wait_s(0.3 + gap, 10, 0.02) == pytest.approx(0.0, abs=1e-12)
    assert pace.wait_s(0.3, 10, 0.005) == pytest.approx(0.005)  # a 429's round trip at most
    assert pace.rate(0.3) is None  # still unpaced: the spread is no learned rate


def test_learner_after_an_unpaced_429_grows_from_below_the_measured_rate() -> None:
    learner = RateLearner()
    assert learner.rate(0.0) is None
    assert learner.on_throttle(sent_at=1.0, now=1.0, paced=None, sent=20.0)
    assert learner.top is None  # a measured rate is no ceiling
    start = UNPACED_BACKOFF * 20.0
    assert learner.rate(5.0) == pytest.approx(start)  # no growth while refused
    learner.on_success(sent_at=1.1, now=1.2)
    assert learner.rate(3.2) == pytest.approx(start * math.exp(2 * GROWTH))


def test_learner_brackets_the_rate_between_two_429s() -> None:
    learner = RateLearner()
    learner.on_throttle(sent_at=0.0, now=0.0, paced=None, sent=20.0)
    for i in range(41):  # 41 accepted in the 10 s between two 429s
        learner.on_success(sent_at=0.1 + i * 0.24, now=0.3 + i * 0.24)
    # Empty at the 429, and a request's worth there when the last success
    # arrived: more than the 40 accepted between, over the 9.7 s between.
    assert learner.floor == pytest.approx(40 / (9.7 + SPAN_SLACK_S))
    assert learner.on_throttle(sent_at=10.0, now=10.0, paced=5.0, sent=5.0)
    assert learner.top == 5.0
    floor = learner.floor
    assert learner.rate(10.0) == pytest.approx(floor)  # starts at the floor
    learner.on_success(sent_at=10.3, now=10.6)
    late = learner.rate(10.6 + 30.0)
    assert late is not None and floor < late < TARGET * 5.0  # stays inside the bracket


def test_learner_floor_counts_weights_and_only_what_was_sent_before() -> None:
    """In tokens, each success counts what it used; a success sent later
    but answered first is not counted for an earlier one."""
    learner = RateLearner()
    learner.on_throttle(sent_at=0.0, now=0.0, paced=None, sent=1000.0)
    learner.on_success(sent_at=1.5, now=1.6, weight=300.0)  # answered early
    learner.on_success(sent_at=0.5, now=1.7, weight=200.0)
    assert learner.floor is None  # 0.5 s is too short a span
    learner.on_success(sent_at=1.2, now=1.8, weight=100.0)
    # between 0 and 1.2 only the 200 sent at 0.5 (the 300 was sent after)
    assert learner.floor == pytest.approx(200 / (1.2 + SPAN_SLACK_S))


def test_learner_stays_at_a_floor_close_under_the_refused_level() -> None:
    learner = RateLearner()
    learner.on_throttle(sent_at=0.0, now=0.0, paced=10.0, sent=10.0)
    for i in range(30):
        learner.on_success(sent_at=0.05 + i * 0.1, now=0.2 + i * 0.1)
    floor = learner.floor
    assert floor is not None and floor >= CLOSE * 10.0
    assert learner.rate(100.0) == pytest.approx(floor)  # no probe above it


def test_learner_reacts_once_per_episode() -> None:
    learner = RateLearner()
    learner.on_throttle(sent_at=0.0, now=0.0, paced=10.0, sent=10.0)
    assert learner.rate(0.0) == pytest.approx(BACKOFF * 10.0)
    # sent before the lowering: already reacted to
    assert not learner.on_throttle(sent_at=-0.1, now=0.01, paced=10.0, sent=10.0)
    # the first probe after the pause refused too: the pace was too high,
    # lowered once more within the same episode ...
    assert not learner.on_throttle(sent_at=0.5, now=0.5, paced=7.0, sent=7.0)
    pace = learner.rate(0.5)
    assert pace == pytest.approx(BACKOFF * 7.0) and learner.top == 7.0
    # ... but not again (a window refuses every probe until it resets)
    assert not learner.on_throttle(sent_at=0.9, now=0.9, paced=4.9, sent=4.9)
    assert learner.rate(0.9) == pace and learner.lowered == 1
    learner.on_success(sent_at=1.0, now=1.2)
    assert learner.on_throttle(sent_at=1.1, now=1.3, paced=4.0, sent=4.0)
    assert learner.lowered == 2 and learner.top == 4.0


def test_learner_probes_above_the_remembered_level_only_rarely() -> None:
    learner = RateLearner()
    learner.on_throttle(sent_at=0.0, now=0.0, paced=10.0, sent=10.0)
    learner.on_success(sent_at=0.1, now=0.2)
    before = learner.rate(0.2 + PROBE_EVERY_S - 1.0)
    after = learner.rate(0.2 + PROBE_EVERY_S + 1.0)
    assert before is not None and after is not None
    assert before < TARGET * 10.0 < after <= TARGET * 10.0 * 1.02 + 1e-9


def test_learner_reads_a_long_refusal_as_a_window_and_paces_at_the_served_rate() -> None:
    learner = RateLearner()
    for i in range(60):  # a minute's budget used in the first 2 s
        learner.on_success(sent_at=i / 30, now=i / 30 + 0.3)
    learner.on_throttle(sent_at=2.0, now=2.0, paced=None, sent=30.0)
    assert not learner.on_throttle(sent_at=55.0, now=55.0, paced=None, sent=0.0)  # probe refused
    learner.on_success(sent_at=60.0, now=60.3)  # refused until the next window
    assert learner.top == pytest.approx(61 / 60)
    assert learner.rate(60.3) == pytest.approx(TARGET * 61 / 60)


def test_a_fit_narrows_the_bracket_and_brings_a_start_above_it_down() -> None:
    learner = RateLearner()
    learner.on_throttle(0.0, 0.0, 10.0, 0.0)  # refused at a pace of 10
    assert learner.top == 10.0 and learner.start == pytest.approx(BACKOFF * 10.0)
    learner.bound(4.0, 5.0)  # the bucket fit proves 4 <= R < 5
    assert learner.top == 5.0 and learner.floor == 4.0
    goal = learner.goal(0.0)
    assert goal is not None and 4.0 <= goal < TARGET * 5.0
    assert learner.start is not None and 4.0 <= learner.start <= goal
    learner.bound(None, 7.0)  # a looser fit changes nothing
    assert learner.top == 5.0 and learner.floor == 4.0


def test_a_floor_far_under_the_top_is_not_taken_from_a_fit() -> None:
    """A fit whose rates run from almost nothing (a deep bucket explains
    everything) would pull the goal and the pause after a 429 down."""
    learner = RateLearner()
    learner.on_throttle(0.0, 0.0, 10.0, 0.0)
    learner.bound(0.02, 9.0)
    assert learner.floor is None and learner.top == 9.0


def test_with_no_refused_pace_a_loose_bound_is_no_top_to_climb_to() -> None:
    learner = RateLearner()
    learner.on_throttle(0.0, 0.0, None, 10.0)  # unpaced: the start is a measurement
    learner.bound(None, 100.0)
    assert learner.top is None  # growth continues, not a dash to 98
    learner.bound(None, 12.0)  # within 1/BACKOFF of the start: that is a top
    assert learner.top == 12.0


def test_growth_slows_past_a_guessed_rate_and_never_drops_under_the_floor() -> None:
    learner = RateLearner()
    learner.begin(90.0, 0.0, guess=100.0)
    learner.on_success(0.5, 1.0)  # the climb starts once one sent since succeeds
    fast = math.log(100.0 / 90.0) / GROWTH
    assert learner.rate(1.0 + fast) == pytest.approx(100.0)
    later = learner.rate(1.0 + fast + 2.0)
    assert later is not None and 100.0 < later < 100.0 * math.exp(2.0 * GROWTH) / 2
    learner.floor = 500.0
    assert learner.rate(1.0 + fast) == 500.0


def test_a_likely_range_sets_the_goal_inside_it_and_never_above_the_top() -> None:
    learner = RateLearner()
    learner.on_throttle(0.0, 0.0, 10.0, 0.0)  # refused at a pace of 10
    learner.floor = 7.0
    learner.likely = (8.0, 8.5)  # narrow: a step above its low end
    goal = learner.goal(0.0)
    assert goal is not None and 8.0 < goal < 8.25
    learner.likely = (6.0, 12.0)  # wide: a probe far into it, capped by the top
    assert learner.goal(0.0) == pytest.approx(TARGET * 10.0)
    learner.likely = (5.0, 6.0)  # under the proven floor: the floor holds
    assert learner.goal(0.0) == 7.0


def test_a_likely_range_gives_a_goal_before_any_pace_was_refused() -> None:
    learner = RateLearner()
    learner.begin(3.0, 0.0, guess=4.0)
    assert learner.goal(0.0) is None  # growing: nothing to aim at
    learner.likely = (4.0, 4.2)
    goal = learner.goal(0.0)
    assert goal is not None and 4.0 < goal < 4.1
    learner.on_success(0.5, 1.0)
    rate = learner.rate(100.0)
    assert rate is not None and rate == pytest.approx(goal)
    learner.on_throttle(101.0, 101.0, rate, 0.0)  # refused inside it: refitted later
    assert learner.likely is None and learner.top == pytest.approx(rate)


def test_learned_tokens_climb_from_the_likely_low_end_requests_from_their_start() -> None:
    """A pace well under a token limit keeps the bucket full and proves
    little, so a token learner starts at the likely range's low end (in the
    virtual-time model, mean 0.967 of the limit instead of 0.961); a
    request learner keeps its start (there it cost a 4th 429 at 240 rpm)."""
    for from_likely, start in ((True, 6.0), (False, 4.0)):
        learner = RateLearner(from_likely=from_likely)
        learner.begin(4.0, 0.0)
        learner.bound(None, None, (6.0, 9.0))
        assert learner.start == start
        learner.top = 9.6  # refused at 9.6: the goal is TARGET x 9.6, under 9.5
        learner.bound(None, None, (9.5, 9.8))
        goal = learner.goal(0.0)
        assert goal == pytest.approx(TARGET * 9.6)
        assert learner.start == (goal if from_likely else 4.0)  # never past the goal


def test_a_learner_closes_in_on_its_goal_at_its_own_pace() -> None:
    """Learned tokens climb with a shorter time constant (APPROACH_TOKENS_S)."""
    rates = []
    for approach_s in (APPROACH_S, APPROACH_TOKENS_S):
        learner = RateLearner(approach_s=approach_s)
        learner.begin(5.0, 0.0)
        learner.likely = (9.0, 9.5)
        learner.on_success(0.5, 1.0)  # the climb starts here
        rates.append(learner.rate(2.0))
        goal = learner.goal(1.0)
        assert goal is not None and learner.rate(1.0 + 20 * approach_s) == pytest.approx(goal)
    slow, fast = rates
    assert slow is not None and fast is not None and 5.0 < slow < fast < 9.5


def test_learned_tokens_aim_at_an_untested_top() -> None:
    """With no paced refusal yet, the likely range's top came from the slow
    start's refusals (a bound from above), so learned tokens aim at TARGET
    of a wide range's top and UNTESTED_TARGET of a narrow one's: 0.3 into
    a narrow range held the pace near 0.94 of the limit for a whole run,
    and 0.75 into a wide one near 0.9 for seconds, as a 1 s bucket's
    admissions raise the low end only slowly. Once a pace was refused, and
    for requests, the shares apply again."""
    tokens, requests = RateLearner(from_likely=True), RateLearner()
    for learner in (tokens, requests):
        learner.begin(5.0, 0.0)
        learner.bound(None, None, (6.0, 10.0))  # wide
    assert tokens.goal(0.0) == pytest.approx(TARGET * 10.0)
    assert requests.goal(0.0) == pytest.approx(6.0 + 0.75 * 4.0)
    assert not tokens.untested_narrow()
    for learner in (tokens, requests):
        learner.bound(None, None, (9.2, 10.0))  # narrow
    assert tokens.goal(0.0) == pytest.approx(UNTESTED_TARGET * 10.0)
    assert requests.goal(0.0) == pytest.approx(9.2 + 0.3 * 0.8)
    assert tokens.untested_narrow()
    tokens.on_success(0.5, 1.0)
    tokens.on_throttle(20.0, 20.0, 9.9, 0.0)  # refused at 9.9: the top is tested
    tokens.bound(None, None, (9.2, 9.6))
    assert tokens.goal(0.0) == pytest.approx(9.2 + 0.3 * 0.4)
    assert not tokens.untested_narrow()


def test_a_confirmed_reading_sends_on_one_token_while_the_top_is_untested() -> None:
    """`LearnedTokens.confirm` (a success after the last 429) lets the budget
    send on one token only while the likely range is narrow and untested."""
    learned = LearnedTokens()
    learned.learner = RateLearner(from_likely=True)
    learned.learner.begin(900.0, 0.0)
    budget = TokenBudget(54000.0, "usage", 0.0)
    learned.confirm(budget)
    assert learned.confirmed and not budget.positive  # no likely range yet
    learned.learner.bound(None, None, (960.0, 1000.0))
    learned.confirm(budget)
    assert budget.positive
    learned.learner.bound(None, None, (700.0, 1000.0))  # wide again
    learned.confirm(budget)
    assert not budget.positive


def test_learned_tokens_space_requests_by_the_last_ones_tokens() -> None:
    """The gap after a send is that request's tokens at TOKEN_SPREAD x the
    learned rate, not a typical request's: the budget lets the smallest
    requests go first, and a gap sized for the typical one held them to a
    fraction of the rate while the server's bucket sat full."""
    learned = LearnedTokens()
    for at in range(4):
        learned.used(float(at), 400)
    fit = BucketFit("usage", 0.0)
    learned.begin(Region((Slice(100.0, 100.0, 2000.0),), "usage", 5000.0), fit, RateLearner(), 4.0)
    assert learned.learner is not None
    rate = learned.learner.rate(4.0)
    assert rate is not None
    assert learned.gap_s(4.0, 4.0) == pytest.approx(400 / (TOKEN_SPREAD * rate))  # the mean
    learned.last_cost = 100
    assert learned.gap_s(4.0, 4.0) == pytest.approx(100 / (TOKEN_SPREAD * rate))
    assert learned.gap_s(4.0, 5.0) < 0.0  # long past: no wait


def test_a_debt_is_reckoned_at_no_less_than_a_share_of_the_windows_top() -> None:
    """At the switch to tokens the 1 s window's rates run from a loose low
    end (the admissions) to a tight top (the refusal that made the switch):
    the debt is reckoned at DEBT_TOP_SHARE of that top, not at DEBT_SHARE
    of the range's geometric middle, which waited the debt out up to 2.4 s
    too long in the virtual-time model."""
    wide = Region((Slice(381.0, 100.0, 2000.0), Slice(1000.0, 100.0, 1001.0)), "usage", 5000.0)
    window = wide.windowed((1.0,))
    assert window is not None and window[1] == pytest.approx(1000.0, rel=0.01)
    middle = wide.sized(1.0)[0]
    assert DEBT_SHARE * middle < DEBT_TOP_SHARE * window[1]  # the middle would be slower
    fit = BucketFit("usage", 0.0)
    fit.charged(0.5, 3000)  # the slow start's debt
    budget = LearnedTokens().begin(wide, fit, RateLearner(), 1.0)
    rate = DEBT_TOP_SHARE * window[1]
    assert budget.bucket.rate == pytest.approx(rate)
    reckoned = fit.level(1.0, rate, rate / DEBT_SHARE)
    assert budget.bucket.level == pytest.approx(reckoned)
    assert reckoned > fit.level(1.0, DEBT_SHARE * middle, wide.sized(1.0)[1])


def test_after_a_refusal_the_budget_holds_no_more_than_the_server_can() -> None:
    """A refused request found under one token in the server's bucket; since
    then it refilled at most at the learned rate and was charged what the
    requests then out used. The budget is held to that, however full the
    fitted bucket would be."""
    learned = LearnedTokens()
    learned.learner = RateLearner(from_likely=True)
    learned.learner.begin(1000.0, 0.0)
    budget = TokenBudget(60000.0, "usage", 0.0)
    assert budget.bucket.level == pytest.approx(1000.0)
    learned.used(4.9, 300)  # answered before the refused request was sent
    learned.used(5.1, 200)
    learned.used(5.2, 250)
    learned.sync(budget, None, BucketFit("usage", 0.0), 5.0, 5.3)
    assert budget.bucket.level == pytest.approx(1.0 + 1000.0 * 0.3 - 450)
    before = budget.bucket.level
    learned.sync(budget, None, BucketFit("usage", 0.0), 2.0, 5.3)  # an older refusal
    assert budget.bucket.level == pytest.approx(before)  # never raises it
